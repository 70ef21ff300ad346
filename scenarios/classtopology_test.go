package scenarios

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The kueue-tas example: 32-GPU gangs (4 pods of 8 H100s, 14 GB of
// gradients) on 16 nodes, 4 a rack, 2 racks a block. A ring all-reduce of
// 32 ranks moves 2 x 31/32 x 14e9 = 27.125e9 bytes a rank; over the IB
// rails (ib-ndr-400, 155.66 GB/s bus bandwidth for a node's 8 rails) plus
// 50 us latency: 27.125e9 / 155.66e9 + 50e-6 = 0.17431 s inside a rack;
// across racks the spine's 2:1 halves the bandwidth: 0.34857 s; across
// blocks the core's 4:1 quarters it: 0.69709 s.
//
// Required (podset-required-topology rack): every gang in one rack, each
// step's all-reduce 0.17431 s. Preferred: some gangs start across racks or
// blocks at 0.34857 or 0.69709 s, and none at any other price.
func TestKueueTASExampleLocality(t *testing.T) {
	run := func(preferred bool) []sim.JobRecord {
		s, err := LoadFile("examples/kueue-tas/scenario.yaml")
		require.NoError(t, err)
		c := &s.Spec.Workload.Synthetic.Classes[0]
		require.Equal(t, "llm", c.Name)
		if preferred {
			c.Topology = &ClassTopologySpec{Preferred: c.Topology.Required}
		}
		b, err := s.Build(Options{})
		require.NoError(t, err)
		defer b.Close()
		require.Equal(t, []string{"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack", "kubernetes.io/hostname"}, b.Config.TASLevels)
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		require.NoError(t, validate.Invariants(res))
		return res.Jobs
	}
	prices := func(jobs []sim.JobRecord) map[string]int {
		out := map[string]int{}
		for _, j := range jobs {
			if j.Queue != "pretrain" || j.Step() == nil {
				continue
			}
			s := j.Step().CommMs / 1000
			switch {
			case math.Abs(s-0.17431) < 5e-5:
				out["rack"]++
			case math.Abs(s-0.34857) < 5e-5:
				out["spine"]++
			case math.Abs(s-0.69709) < 5e-5:
				out["core"]++
			default:
				out["other"]++
			}
		}
		return out
	}
	req := prices(run(false))
	require.Positive(t, req["rack"])
	require.Equal(t, map[string]int{"rack": req["rack"]}, req)
	pref := prices(run(true))
	require.Zero(t, pref["other"])
	require.Positive(t, pref["spine"]+pref["core"])
}

// A class's topology level must be one of the run's levels, and one of
// required and preferred is given: errors at the field.
func TestClassTopologyChecked(t *testing.T) {
	s, err := LoadFile("examples/kueue-tas/scenario.yaml")
	require.NoError(t, err)
	s.Spec.Workload.Synthetic.Classes[0].Topology = &ClassTopologySpec{Required: "example.com/pod"}
	_, err = s.Build(Options{})
	var ie *strict.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "spec.workload.synthetic.classes[0].topology.required", ie.Field)
	require.Contains(t, ie.Msg, `topology level "example.com/pod" is not a level of the run's topology`)

	s.Spec.Workload.Synthetic.Classes[0].Topology = &ClassTopologySpec{}
	_, err = s.Build(Options{})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "spec.workload.synthetic.classes[0].topology", ie.Field)
}
