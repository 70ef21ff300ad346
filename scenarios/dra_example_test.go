package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// TestDRAClusterExampleAsTheDevicePluginForm runs the shipped example
// dra-cluster as given (its jobs' GPUs by DRA claim of the policy's
// DeviceClasses) and its variant device-plugin (the same jobs asking for
// nvidia.com/gpu, nvidia.com/mig-1g.10gb, and nvidia.com/gpu on the L4s),
// and checks, job by job, the same pool, submission, start and end.
//
// By hand, what each claim is: train's template asks for 8 devices of
// class h100, whose selectors (NVIDIA's driver, type gpu, productName
// "NVIDIA H100 80GB HBM3") select the H100 80GB's whole GPUs: 8 whole
// H100-80GB, the plugin form's nvidia.com/gpu: 8 on the nodes labelled
// NVIDIA-H100-80GB-HBM3 (finetune: 2 of them). batch-infer's asks for one
// device of class mig-1g.10gb (type mig, profile 1g.10gb): one 1g.10gb
// instance, on the H100 node cut all-1g.10gb (7 per GPU), as
// nvidia.com/mig-1g.10gb: 1 is. notebooks' template asks for one device
// of class l4 with an MPS config (noted, held whole): one whole L4 a pod,
// as nvidia.com/gpu: 1 on the L4 node is; a submission's four pods hold
// the node's four L4s, 4000 milli-GPU. The pods are the same in both
// forms, and Kueue v0.19.2 charges them alike: 8, 2 and 1 a pod of
// nvidia.com/gpu (h100 and l4 mapped to it), 1 of nvidia.com/mig-1g.10gb.
func TestDRAClusterExampleAsTheDevicePluginForm(t *testing.T) {
	s, err := LoadFile("examples/dra-cluster/scenario.yaml")
	require.NoError(t, err)
	dp, err := s.Variant("device-plugin")
	require.NoError(t, err)
	run := func(s *Scenario) *sim.Result {
		b, err := s.Build(Options{})
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		return res
	}
	byClaim, byPlugin := run(s), run(dp)
	require.Len(t, byClaim.Jobs, len(byPlugin.Jobs))
	pools := func(r *sim.Result, j *sim.JobRecord) string {
		if j.Pool < 0 {
			return ""
		}
		return r.Pools[j.Pool].Spec.Name
	}
	waited, perQueue := 0, map[string]int{}
	for i := range byClaim.Jobs {
		a, b := &byClaim.Jobs[i], &byPlugin.Jobs[i]
		require.Equal(t, b.Name, a.Name)
		what := a.Name
		require.Equal(t, pools(byPlugin, b), pools(byClaim, a), what)
		require.Equal(t, b.Submit, a.Submit, what)
		require.Equal(t, b.Start, a.Start, what)
		require.Equal(t, b.End, a.End, what)
		require.Equal(t, b.AllocMilli, a.AllocMilli, what)
		require.Equal(t, b.Outcome, a.Outcome, what)
		require.NotZero(t, a.Flags&cluster.FlagDRAClaims, "%s: its GPUs come by claim", what)
		if a.Start > a.Submit {
			waited++
		}
		perQueue[a.Queue]++
		require.Equal(t, podGPUs(b.Pod), podGPUs(a.Pod), "%s: the same pod", what)
		if a.Queue == "notebooks" {
			require.Equal(t, cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 16 << 10, GPUs: 1}, podGPUs(a.Pod), what)
			require.Equal(t, "l4", pools(byClaim, a), what)
			require.Equal(t, int64(4000), a.AllocMilli, "%s: four whole L4s", what)
		}
	}
	// Every file's jobs ran, and some waited for GPUs: the placements
	// are not trivially equal.
	for _, q := range []string{"train", "finetune", "batch-infer", "notebooks"} {
		require.Positive(t, perQueue[q], q)
	}
	require.Positive(t, waited)
}

// podGPUs is what a pod asks of a node: CPU, memory and GPUs.
func podGPUs(p *cluster.PodSpec) cluster.PodSpec {
	return cluster.PodSpec{MilliCPU: p.MilliCPU, MemoryMiB: p.MemoryMiB, GPUs: p.GPUs, MIG: p.MIG, GPUMilli: p.GPUMilli}
}
