package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
	"gpuplan.dev/gpuplan/validate/strict"
)

// volcanoHN is Volcano's published HyperNodes (the ones its benchmark's
// create-hypernodes.sh applies: racks rack-0..rack-3 of tier 1 selecting
// nodes labelled type: kwok, topology-rack: rack-N; spines spine-0 =
// {rack-0, rack-1}, spine-1 = {rack-2, rack-3} of tier 2) on 8 nodes of 4
// CPUs, 2 a rack, with Volcano Jobs of 4-CPU pods (one a node).
const volcanoHN = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: volcano-hypernodes}
spec:
  horizon: 4h
  cluster:
    pools:
    - {name: r0, count: 2, gpuModel: A100-80GB, gpusPerNode: 0, cpu: "4", memory: 32Gi, labels: {type: kwok, topology-rack: rack-0}}
    - {name: r1, count: 2, gpuModel: A100-80GB, gpusPerNode: 0, cpu: "4", memory: 32Gi, labels: {type: kwok, topology-rack: rack-1}}
    - {name: r2, count: 2, gpuModel: A100-80GB, gpusPerNode: 0, cpu: "4", memory: 32Gi, labels: {type: kwok, topology-rack: rack-2}}
    - {name: r3, count: 2, gpuModel: A100-80GB, gpusPerNode: 0, cpu: "4", memory: 32Gi, labels: {type: kwok, topology-rack: rack-3}}
  policy:
    manifests: [QUEUE, kube/published/testdata/volcano/benchmark/scripts/create-hypernodes.yaml]
  workload:
    manifests:
JOBS`

// vcjob is a Volcano Job of n 4-CPU pods with the networkTopology given.
func vcjob(name string, n int, topo string) string {
	return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name + "}\nspec:\n  minAvailable: " + itoa(n) +
		"\n  queue: gpu\n  networkTopology: " + topo + "\n  tasks:\n  - name: t\n    replicas: " + itoa(n) +
		"\n    template:\n      spec:\n        containers: [{name: c, image: x, resources: {requests: {cpu: \"4\"}}}]\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func buildHN(t *testing.T, jobs ...string) (*Built, error) {
	t.Helper()
	dir := t.TempDir()
	var list strings.Builder
	for i, j := range jobs {
		p := filepath.Join(dir, "job"+itoa(i)+".yaml")
		require.NoError(t, os.WriteFile(p, []byte(j), 0o644))
		list.WriteString("    - {path: " + p + ", count: 1, duration: 30m}\n")
	}
	q := filepath.Join(dir, "queue.yaml")
	require.NoError(t, os.WriteFile(q, []byte("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: gpu}\nspec: {weight: 1}\n"), 0o644))
	s, err := Parse("hn.yaml", ".", []byte(strings.NewReplacer("JOBS", list.String(), "QUEUE", q).Replace(volcanoHN)))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	if b != nil {
		t.Cleanup(func() { b.Close() })
	}
	return b, err
}

// Four jobs arriving at 0, in this order, each pod a whole node:
//
//   - a: hard, tier 1, 2 pods: every rack holds 2; the tie goes to the
//     first by name, rack-0 (nodes r0-0, r0-1). Starts at 0.
//   - b: hard, tier 2, 4 pods: no rack holds 4 (tier 1 first), so tier 2:
//     spine-0 holds 2 (rack-1), spine-1 4: spine-1, racks 2 and 3. Starts 0.
//   - c: hard, tier 1, 2 pods: rack-1 is the one rack left. Starts 0.
//   - d: hard, tier 1, 2 pods: no room; a waits for its 30 min, then
//     rack-0 holds it. Starts at 30 min.
//
// Without the bound, d would have waited just the same (no node free);
// the bound shows against e: soft, 6 pods on the empty cluster, which no
// spine holds (4 each), spread over both; hard tier 2 with 6 pods can
// never be placed: an input error at spec.networkTopology.
func TestVolcanoHyperNodesSimulate(t *testing.T) {
	b, err := buildHN(t, vcjob("a", 2, "{mode: hard, highestTierAllowed: 1}"), vcjob("b", 4, "{mode: hard, highestTierAllowed: 2}"),
		vcjob("c", 2, "{mode: hard, highestTierName: rack}"), vcjob("d", 2, "{mode: hard, highestTierAllowed: 1}"))
	require.NoError(t, err)
	require.Len(t, b.Config.HyperNodes, 6)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "Volcano network topology: Volcano Jobs' spec.networkTopology is placed over the 6 HyperNodes' tiers [2 1]")
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	starts := map[string]sim.Time{}
	pools := map[string]int32{}
	for _, j := range res.Jobs {
		require.Equal(t, sim.Completed, j.Outcome, j.Name)
		starts[j.Name] = j.Start
		pools[j.Name] = j.Pool
	}
	require.Equal(t, map[string]sim.Time{"a-0": 0, "b-0": 0, "c-0": 0, "d-0": 30 * sim.Minute}, starts)
	// The first pod's pool: rack-0 is pool r0 (0), and so on.
	require.Equal(t, map[string]int32{"a-0": 0, "b-0": 2, "c-0": 1, "d-0": 0}, pools)

	b, err = buildHN(t, vcjob("e", 6, "{mode: soft}"))
	require.NoError(t, err)
	res, err = sim.Run(b.Config)
	require.NoError(t, err)
	require.Equal(t, sim.Time(0), res.Jobs[0].Start)

	_, err = buildHN(t, vcjob("f", 6, "{mode: hard, highestTierAllowed: 2}"))
	var ie *strict.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 2, ie.ExitCode())
	require.Equal(t, "spec.networkTopology", ie.Field)
	require.Contains(t, ie.Msg, "Volcano network-topology-aware scheduling (hard, within one HyperNode of hypernode tier 2) can never place the job's 6 pods")

	_, err = buildHN(t, vcjob("g", 2, "{mode: hard, highestTierAllowed: 0}"))
	require.ErrorAs(t, err, &ie)
	require.Contains(t, ie.Msg, "highestTierAllowed 0 is below every HyperNode's tier (the lowest is 1)")
}

// HyperNodes are checked as Volcano's CRD and webhook check them, each
// refusal at its file, line and field.
func TestHyperNodeFieldsChecked(t *testing.T) {
	dir := t.TempDir()
	queue := "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: gpu}\nspec: {weight: 1}\n---\n"
	for _, c := range []struct{ member, field, msg string }{
		{"{type: Node, selector: {exactMatch: {name: a}, regexMatch: {pattern: b}}}", "spec.members[0].selector", "give exactly one of exactMatch, regexMatch and labelMatch"},
		{"{type: Rack, selector: {exactMatch: {name: a}}}", "spec.members[0].type", `"Rack" is not Node or HyperNode`},
		{"{type: HyperNode, selector: {labelMatch: {matchLabels: {a: b}}}}", "spec.members[0].selector.labelMatch", "takes effect only for members of type Node"},
		{"{type: Node, selector: {regexMatch: {pattern: \"(\"}}}", "spec.members[0].selector.regexMatch.pattern", "is not a regular expression"},
	} {
		p := filepath.Join(dir, "hn.yaml")
		require.NoError(t, os.WriteFile(p, []byte(queue+"apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: s0}\nspec:\n  tier: 1\n  members:\n  - "+c.member+"\n"), 0o644))
		_, err := LoadPolicy([]string{p})
		var ie *InputError
		require.ErrorAs(t, err, &ie, c.member)
		require.Equal(t, c.field, ie.Field, c.member)
		require.Equal(t, 12, ie.Line, c.member)
		require.Contains(t, ie.Msg, c.msg)
	}
}
