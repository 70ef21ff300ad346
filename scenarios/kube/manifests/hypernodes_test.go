package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// hyperNodeRun is a scenario of Volcano's published HyperNodes (its
// benchmark's create-hypernodes.sh: racks rack-0..rack-3 of tier 1
// selecting nodes labelled type: kwok, topology-rack: rack-N; spines
// spine-0 = {rack-0, rack-1} and spine-1 = {rack-2, rack-3} of tier 2) on
// 8 one-GPU g5.xlarge nodes, 2 a rack, with two Volcano Jobs of one-GPU
// pods arriving at 0 and running 30 min: a, 3 pods with no network
// topology, and b, 2 pods hard within tier 1 (one rack).
func hyperNodeRun(t *testing.T) *scenarios.Scenario {
	t.Helper()
	dir := t.TempDir()
	hn, err := filepath.Abs("../published/testdata/volcano/benchmark/scripts/create-hypernodes.yaml")
	require.NoError(t, err)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	queue := write("queue.yaml", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: gpu}\nspec: {weight: 1, reclaimable: true}\n")
	job := func(name string, n int, topo string) string {
		if topo != "" {
			topo = "\n  networkTopology: " + topo
		}
		return write(name+".yaml", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: "+name+"}\nspec:\n  minAvailable: "+
			string(rune('0'+n))+"\n  queue: gpu"+topo+"\n  tasks:\n  - name: t\n    replicas: "+string(rune('0'+n))+
			"\n    template:\n      spec:\n        containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1, cpu: \"1\"}}}]\n")
	}
	a, b := job("a", 3, ""), job("b", 2, "{mode: hard, highestTierAllowed: 1}")
	var pools strings.Builder
	for r := range 4 {
		n := string(rune('0' + r))
		pools.WriteString("    - {name: r" + n + ", count: 2, instanceType: g5.xlarge, labels: {type: kwok, topology-rack: rack-" + n + "}}\n")
	}
	body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: hypernodes}\nspec:\n  horizon: 2h\n  cluster:\n    pools:\n" + pools.String() +
		"  policy:\n    manifests: [" + queue + ", " + hn + "]\n  workload:\n    manifests:\n    - {path: " + a + ", count: 1, duration: 30m}\n    - {path: " + b + ", count: 1, duration: 30m}\n"
	s, err := scenarios.Parse(write("scenario.yaml", body), dir, []byte(body))
	require.NoError(t, err)
	return s
}

// poolGPUHours is a summary's GPU-hours allocated in pool name.
func poolGPUHours(t *testing.T, sum map[string]any, name string) float64 {
	t.Helper()
	for _, p := range sum["pools"].([]any) {
		if m := p.(map[string]any); m["name"] == name {
			return m["gpuHoursAllocated"].(float64)
		}
	}
	t.Fatalf("no pool %s", name)
	return 0
}

// TestHyperNodesRoundTrip: the policy's HyperNodes are written back
// (kubernetes/20-volcano-hypernodes.yaml, checked against Volcano's CRD
// schema by TestCustomResourcesMatchTheirCRDs' kinds here), and the
// written Volcano files read back as the policy give the run's summary.
// By hand: a's 3 pods take r0-0, r0-1 and r1-0; b must have one rack of 2
// free nodes: rack-2 and rack-3 both hold it, the tie going to rack-2 by
// name, so pool r2 holds b's 2 GPUs for 30 min (1 GPU-hour) and r1 a's one
// (0.5). Without the HyperNodes (the policy's Queue alone), b's
// networkTopology constrains nothing and b takes r1-1 and r2-0: r1 holds
// 1 GPU-hour, r2 0.5, and the summaries differ.
func TestHyperNodesRoundTrip(t *testing.T) {
	s := hyperNodeRun(t)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	set := newSchemaSet()
	n := 0
	for _, f := range files {
		for _, o := range f.Objects {
			if h, ok := o.(*HyperNode); ok {
				n++
				checked, err := set.validate(t, h)
				require.True(t, checked)
				require.NoError(t, err, h.Name)
				require.Equal(t, PathHyperNodes, f.Path)
			}
		}
	}
	require.Equal(t, 6, n, "4 racks and 2 spines")
	rack0 := find[HyperNode](t, files, "rack-0")
	require.Equal(t, 1, rack0.Spec.Tier)
	require.Equal(t, "rack", rack0.Spec.TierName)
	spine1 := find[HyperNode](t, files, "spine-1")
	require.Equal(t, []HyperNodeMember{{Type: "HyperNode", Selector: HyperNodeSelector{ExactMatch: &HyperNodeExactMatch{Name: "rack-2"}}},
		{Type: "HyperNode", Selector: HyperNodeSelector{ExactMatch: &HyperNodeExactMatch{Name: "rack-3"}}}}, spine1.Spec.Members)

	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, files))
	var policy []string
	for _, p := range []string{PathVolcano, PathHyperNodes, PathPriorityClasses} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			policy = append(policy, filepath.Join(dir, filepath.FromSlash(p)))
		}
	}
	want := summaryJSON(t, s, pipeline.Options{})
	require.InDelta(t, 1.0, poolGPUHours(t, want, "r2"), 1e-9, "b in rack-2")
	require.InDelta(t, 0.5, poolGPUHours(t, want, "r1"), 1e-9, "a's third pod in rack-1")
	got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: policy}})
	require.Equal(t, want, got, "the Volcano Queue and HyperNodes read back")

	queueOnly := slices.DeleteFunc(slices.Clone(policy), func(p string) bool { return strings.HasSuffix(filepath.ToSlash(p), PathHyperNodes) })
	without := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: queueOnly}})
	require.InDelta(t, 0.5, poolGPUHours(t, without, "r2"), 1e-9, "without HyperNodes b takes r1-1 and r2-0")
	require.NotEqual(t, want, without)
}
