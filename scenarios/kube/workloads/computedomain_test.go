package workloads_test

import (
	"errors"
	"gpuplan.dev/gpuplan/sim"
	"os"
	"path/filepath"
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

// buildWith builds the cliques scenario with the ComputeDomain job
// edited by the replacements (old, new pairs), its manifest in a folder
// of its own; pools edits the scenario's text likewise.
func buildWith(t *testing.T, job, pools []string) (*scenarios.Built, error) {
	t.Helper()
	b, err := os.ReadFile("testdata/gpuplan/computedomain-job.yaml")
	require.NoError(t, err)
	m := string(b)
	for i := 0; i < len(job); i += 2 {
		require.Contains(t, m, job[i])
		m = strings.Replace(m, job[i], job[i+1], 1)
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gpuplan"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gpuplan", "cd.yaml"), []byte(m), 0o644))
	body := strings.Replace(cliquesScenario, "JOB", "cd", 1)
	for i := 0; i < len(pools); i += 2 {
		require.Contains(t, body, pools[i])
		body = strings.ReplaceAll(body, pools[i], pools[i+1])
	}
	s, err := scenarios.Parse("s.yaml", dir, []byte(body))
	if err != nil {
		return nil, err
	}
	return s.Build(scenarios.Options{})
}

// A ComputeDomain job larger than the largest NVLink domain can never
// start: each clique is 2 nodes x 4 GPUs = 8 GPUs, and 3 pods x 3 GPUs
// = 9 GPUs (or a ComputeDomain of numNodes 3) do not fit one. Refused at
// the pod's claim of the channel, with both sizes. (Before, the job was
// accepted and waited forever.) 4 pods x 2 GPUs = 8 GPUs and numNodes 2
// fit exactly and run 0-1 h; with both pools in one clique (16 GPUs on
// 4 nodes) the 9-GPU job runs too.
func TestComputeDomainLargerThanTheLargestNVLinkDomainIsRefused(t *testing.T) {
	const field = "spec.template.spec.resourceClaims[0].resourceClaimTemplateName"
	for _, c := range []struct {
		job  []string
		want []string
	}{
		{[]string{"nvidia.com/gpu: 2", "nvidia.com/gpu: 3"},
			[]string{`ComputeDomain "train-cd"`, "ask for 9 GPUs at once", "holds 8 GPUs (nvidia.com/gpu.clique=d1: pool d1, 2 nodes x 4 GPUs)"}},
		{[]string{"numNodes: 0", "numNodes: 3"},
			[]string{`ComputeDomain "train-cd"`, "spec.numNodes is 3 nodes", "has 2 nodes"}},
	} {
		_, err := buildWith(t, c.job, nil)
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Equal(t, field, ie.Field)
		require.Equal(t, 26, ie.Line, "the claim's line in the manifest")
		for _, w := range c.want {
			require.Contains(t, ie.Msg, w)
		}
	}
	for _, c := range []struct{ job, pools []string }{
		{[]string{"parallelism: 3", "parallelism: 4", "completions: 3", "completions: 4", "numNodes: 0", "numNodes: 2"}, nil},
		{[]string{"nvidia.com/gpu: 2", "nvidia.com/gpu: 3"}, []string{"nvidia.com/gpu.clique: d2", "nvidia.com/gpu.clique: d1"}},
	} {
		b, err := buildWith(t, c.job, c.pools)
		require.NoError(t, err)
		res, err := sim.Run(b.Config)
		b.Close()
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1)
		require.Equal(t, []int64{0, hour}, []int64{res.Jobs[0].Start, res.Jobs[0].End})
	}
}
