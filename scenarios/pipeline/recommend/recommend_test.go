package recommend

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/manifests"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

func TestParseVary(t *testing.T) {
	p, err := ParseVary("cluster.pools[l4].count=3..10")
	require.NoError(t, err)
	require.Equal(t, "cluster.pools[l4].count", p.Path)
	require.Equal(t, &sweep.Range{From: 3.0, To: 10.0, Step: 1.0}, p.Range)
	p, err = ParseVary("workload.recovery.checkpoint.interval=30m..2h/30m")
	require.NoError(t, err)
	require.Equal(t, &sweep.Range{From: "30m", To: "2h", Step: "30m"}, p.Range)
	p, err = ParseVary("spot:h100=0,0.5,1")
	require.NoError(t, err)
	require.Equal(t, "h100", p.SpotShareOf)
	require.Equal(t, []any{0.0, 0.5, 1.0}, p.Values)
	p, err = ParseVary("policy.manifests=[[policy/], [policy-cohort/]]")
	require.NoError(t, err)
	require.Equal(t, []any{[]any{"policy/"}, []any{"policy-cohort/"}}, p.Values)
	// YAML 1.2, as Kubernetes reads names and label values: no and on are
	// strings (YAML 1.1 made them false and true); true stays a boolean.
	p, err = ParseVary("workload.synthetic.classes[0].queue=[no, on, yes, true]")
	require.NoError(t, err)
	require.Equal(t, []any{"no", "on", "yes", true}, p.Values)
	for _, bad := range []string{"nopath", "=1,2", "a=", "a=[1,"} {
		_, err := ParseVary(bad)
		require.Error(t, err, bad)
	}
}

func TestSpread(t *testing.T) {
	require.Equal(t, []int{0, 2, 5, 7}, spread(8, 4))
	require.Equal(t, []int{0, 1, 2}, spread(3, 4))
	require.Equal(t, []int{0, 5, 10}, spread(11, 3))
}

// The two-teams example: the fewest L4 nodes (and which Kueue policy)
// that keep team-a's p95 wait under 5 hours with 80% of the jobs
// completed. The search must name the winner a sweep of every setting at
// the same seeds names, with fewer runs.
func TestRecommendMatchesTheExhaustiveSweep(t *testing.T) {
	file := "../../examples/two-teams/scenario.yaml"
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	base, err := scenarios.Parse(file, filepath.Dir(file), data)
	require.NoError(t, err)
	var vary []sweep.Parameter
	for _, v := range []string{"cluster.pools[l4].count=3..10", "policy.manifests=[[policy/], [policy-cohort/]]"} {
		p, err := ParseVary(v)
		require.NoError(t, err)
		vary = append(vary, p)
	}
	obj, err := sweep.ParseMetric("cost.total")
	require.NoError(t, err)
	var cons []sweep.Constraint
	for _, c := range []string{"wait.p95{queue=team-a} <= 5h", "completed >= 0.8"} {
		k, err := sweep.ParseConstraint(c)
		require.NoError(t, err)
		cons = append(cons, k)
	}
	sw, err := Space(base, data, vary, obj, cons, 5)
	require.NoError(t, err)
	o := Options{Objective: obj, Constraints: cons, MinReps: 3, MaxReps: 5, Workers: 2}
	res, err := Search(context.Background(), sw, o)
	require.NoError(t, err)
	require.NotNil(t, res.Winner)

	// Every setting at 5 seeds: the cheapest whose means meet both bounds.
	out := t.TempDir()
	_, err = sw.Run(context.Background(), sweep.Options{Out: out, Workers: 2})
	require.NoError(t, err)
	tab, err := sweep.Merge([]string{out})
	require.NoError(t, err)
	best := -1
	for i, r := range tab.Rows {
		if r.Stats[1].Mean <= 5*3600 && r.Stats[2].Mean >= 0.8 && (best < 0 || r.Stats[0].Mean < tab.Rows[best].Stats[0].Mean) {
			best = i
		}
	}
	require.GreaterOrEqual(t, best, 0)
	require.Equal(t, tab.Rows[best].Index, res.Winner.Point.Index, "winner %s, the exhaustive sweep's %v", sw.Describe(res.Winner.Point), tab.Rows[best].Values)
	require.Equal(t, tab.Rows[best].Stats[0].Mean, res.Winner.Stats[0].Mean)
	require.Equal(t, 80, res.GridRuns)
	require.Less(t, res.Runs, res.GridRuns)
	t.Logf("winner %s: %d runs against %d for the whole grid", sw.Describe(res.Winner.Point), res.Runs, res.GridRuns)
	// The runner-up is feasible and no cheaper than the winner.
	require.NotNil(t, res.RunnerUp)
	require.Equal(t, Feasible, res.RunnerUp.Status)
	require.GreaterOrEqual(t, res.RunnerUp.Stats[0].Mean, res.Winner.Stats[0].Mean)

	// The winner written: a scenario that loads, and its manifests.
	dir := t.TempDir()
	require.NoError(t, res.WriteDir(dir))
	sc, err := scenarios.LoadFile(filepath.Join(dir, FileScenario))
	require.NoError(t, err)
	require.Equal(t, res.Winner.Point.Values[0], float64(sc.Spec.Cluster.Pools[0].Count))
	_, err = os.Stat(filepath.Join(dir, DirManifests, filepath.FromSlash(manifests.PathKueue)))
	require.NoError(t, err)
}
