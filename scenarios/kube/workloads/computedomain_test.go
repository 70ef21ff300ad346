package workloads_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Two NVLink domains of two 4-GPU nodes (pools d1 and d2, each its own
// nvidia.com/gpu.clique), the default-scheduler plugins with
// LeastAllocated.
const cliquesScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: cd}
spec:
  cluster:
    pools:
    - {name: d1, count: 2, gpuModel: GB200, gpusPerNode: 4, cpu: "64", memory: 512Gi, labels: {nvidia.com/gpu.clique: d1}}
    - {name: d2, count: 2, gpuModel: GB200, gpusPerNode: 4, cpu: "64", memory: 512Gi, labels: {nvidia.com/gpu.clique: d2}}
  workload:
    manifests:
    - {path: gpuplan/JOB.yaml, count: 1}
  scheduler:
    plugins:
    - {name: PrioritySort}
    - {name: NodeResourcesFit}
    - {name: InterPodAffinity}
    - {name: LeastAllocated, weight: 1}
`

// heldPerPool is the GPU-milli-ms each pool held of the run's one job.
func heldPerPool(t *testing.T, job string) map[int32]int64 {
	t.Helper()
	res := run(t, strings.Replace(cliquesScenario, "JOB", job, 1))
	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	require.Equal(t, []int64{0, hour}, []int64{j.Start, j.End})
	held := map[int32]int64{}
	for u := range j.Usage() {
		held[u.Pool] += u.Held[0]
	}
	return held
}

// A Job of 3 two-GPU pods claiming a ComputeDomain's channel: its 6 GPUs
// fit one domain's 8, and the channel keeps them there (3 pods x 2 GPUs
// x 1 h, all in one pool). Without the claim, LeastAllocated puts each
// pod on an empty node while one is free: 3 nodes, and a domain has only
// 2, so both pools hold some. Before ComputeDomains were read, the
// channel's template was "not in the file", exit 2.
func TestComputeDomainKeepsTheJobInOneNVLinkDomain(t *testing.T) {
	held := heldPerPool(t, "computedomain-job")
	require.Len(t, held, 1)
	for _, h := range held {
		require.Equal(t, int64(6*1000*hour), h)
	}
	held = heldPerPool(t, "nochannel-job")
	require.Len(t, held, 2)
	require.Equal(t, int64(6*1000*hour), held[0]+held[1])
}

// A cluster whose NVLink domains are single nodes (no pool topology, no
// clique label) can never place the job's pods together: an input error
// naming the claim.
func TestComputeDomainWithoutMultiNodeNVLinkDomainIsRefused(t *testing.T) {
	body := strings.Replace(cliquesScenario, "JOB", "computedomain-job", 1)
	body = strings.ReplaceAll(body, ", labels: {nvidia.com/gpu.clique: d1}", "")
	body = strings.ReplaceAll(body, ", labels: {nvidia.com/gpu.clique: d2}", "")
	s, err := scenarios.Parse("s.yaml", "testdata", []byte(body))
	if err == nil {
		_, err = s.Build(scenarios.Options{})
	}
	var ie *strict.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "spec.template.spec.resourceClaims[0].resourceClaimTemplateName", ie.Field)
	require.Contains(t, ie.Msg, `ComputeDomain "train-cd"`)
	require.Contains(t, ie.Msg, "no node pool of the cluster has an NVLink domain of more than one node")
}

// Submitted twice at once, each submission is a domain of its own: the
// first's 6 GPUs in one pool, the second's in the other, both from 0 to
// 1 h. (Keyed alike, the second would be drawn to the first's domain,
// 2 GPUs free there, and wait an hour.)
func TestComputeDomainPerSubmission(t *testing.T) {
	body := strings.Replace(cliquesScenario, "JOB", "computedomain-job", 1)
	res := run(t, strings.Replace(body, "count: 1", "count: 2", 1))
	require.Len(t, res.Jobs, 2)
	pools := map[int32]bool{}
	for _, j := range res.Jobs {
		require.Equal(t, []int64{0, hour}, []int64{j.Start, j.End}, j.Name)
		held := map[int32]int64{}
		for u := range j.Usage() {
			held[u.Pool] += u.Held[0]
		}
		require.Len(t, held, 1, j.Name)
		for p, h := range held {
			require.Equal(t, int64(6*1000*hour), h, j.Name)
			pools[p] = true
		}
	}
	require.Len(t, pools, 2)
}
