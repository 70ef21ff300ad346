package sweep

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
)

// spec writes a sweep spec beside a copy of testdata/small.yaml.
func spec(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/small.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.yaml"), b, 0o644))
	f := filepath.Join(dir, "sweep.yaml")
	require.NoError(t, os.WriteFile(f, []byte(body), 0o644))
	return f
}

const head = `apiVersion: gpuplan.dev/v1alpha1
kind: Sweep
metadata: {name: t}
spec:
  scenario: small.yaml
  metrics: [cost.total]
  parameters:
`

func TestMalformedSpecsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, params, field, msg string
		line                     int
	}{
		{"unknown field", "  - {path: \"cluster.pools[t4].cuont\", values: [2]}\n", "spec.parameters[0].path", "cuont", 8},
		{"unknown pool", "  - {path: \"cluster.pools[h100].count\", values: [2]}\n", "spec.parameters[0].path", `no item named "h100"`, 8},
		{"unknown top field", "  - {path: clustr.pools, values: [2]}\n", "spec.parameters[0].path", "clustr", 8},
		{"empty range", "  - {path: \"cluster.pools[t4].count\", range: {from: 5, to: 2, step: 1}}\n", "spec.parameters[0].range", "is empty", 8},
		{"empty duration range", "  - {path: horizon, range: {from: 2h, to: 1h, step: 30m}}\n", "spec.parameters[0].range", "is empty", 8},
		{"empty values", "  - {path: horizon, values: []}\n", "spec.parameters[0].values", "is empty", 8},
		{"empty log range", "  - {path: horizon, logRange: {from: 10, to: 1, points: 3}}\n", "spec.parameters[0].logRange", "is empty", 8},
		{"contradictory: one field twice", "  - {path: \"cluster.pools[t4].count\", values: [2]}\n  - {name: again, path: \"cluster.pools[0].count\", values: [3]}\n", "spec.parameters[1]", "sets the same field as spec.parameters[0]", 9},
		{"bad value", "  - {path: \"cluster.pools[t4].count\", values: [2, -1]}\n", "spec.parameters[0].values", "must not be negative", 8},
		{"spot share out of range", "  - {spotShareOf: t4, values: [0.5, 2]}\n", "spec.parameters[0].values[1]", "0..1", 8},
		{"both path and spot", "  - {path: horizon, spotShareOf: t4, values: [1]}\n", "spec.parameters[0]", "not both", 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := spec(t, head+c.params)
			_, err := Load(f)
			var ie *scenarios.InputError
			require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
			require.Equal(t, f, ie.File)
			require.Equal(t, c.field, ie.Field, err.Error())
			require.Equal(t, c.line, ie.Line, err.Error())
			require.Contains(t, err.Error(), c.msg)
			require.Equal(t, 2, ie.ExitCode())
		})
	}
	// Whole-spec mistakes.
	for _, c := range []struct{ body, field string }{
		{strings.Replace(head, "[cost.total]", "[cost.totl]", 1) + "  - {path: horizon, values: [1d]}\n", "spec.metrics[0]"},
		{strings.Replace(head, "  parameters:\n", "  design: {kind: grid, points: 3}\n  parameters:\n", 1) + "  - {path: horizon, values: [1d]}\n", "spec.design.points"},
		{strings.Replace(head, "kind: Sweep", "kind: Sweeps", 1) + "  - {path: horizon, values: [1d]}\n", "kind"},
		{strings.Replace(head, "metrics: [cost.total]", "metrics: [cost.total]\n  constraints: [\"cost.total <= 10\", \"cost.total >= 20\"]", 1) + "  - {path: horizon, values: [1d]}\n", "spec.constraints[1]"},
		{strings.Replace(head, "metrics: [cost.total]", "metrics: [cost.total]\n  constraints: [\"wait.p95 <= 10m\"]", 1) + "  - {path: horizon, values: [1d]}\n", "spec.constraints[0]"},
		{strings.Replace(head, "metrics: [cost.total]", "metrics: [cost.total]\n  replications: 0\n  bogus: 1", 1), "spec.bogus"},
	} {
		_, err := Load(spec(t, c.body))
		var ie *scenarios.InputError
		require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
		require.Equal(t, c.field, ie.Field, err.Error())
		require.Positive(t, ie.Line, err.Error())
	}
}

func TestConstraints(t *testing.T) {
	c, err := ParseConstraint("wait.p95{queue=team-a} <= 30m")
	require.NoError(t, err)
	require.Equal(t, "<=", c.Op)
	require.Equal(t, 1800.0, c.Bound)
	require.Equal(t, Met, c.Judge(Stat{Mean: 1000, Lo: 900, Hi: 1800}))
	require.Equal(t, Unsure, c.Judge(Stat{Mean: 1700, Lo: 1500, Hi: 1900}))
	require.Equal(t, Missed, c.Judge(Stat{Mean: 2000, Lo: 1801, Hi: 2200}))
	c, err = ParseConstraint("completed >= 99%")
	require.NoError(t, err)
	require.InDelta(t, 0.99, c.Bound, 1e-12)
	a, _ := ParseConstraint("queue.team-a.wait.p95 >= 2h")
	require.Equal(t, "queue.team-a.wait.p95 >= 2h contradicts wait.p95{queue=team-a} <= 30m: no value is both",
		Contradiction([]Constraint{mustConstraint(t, "wait.p95{queue=team-a} <= 30m"), a}))
	require.Empty(t, Contradiction([]Constraint{mustConstraint(t, "wait.p95 <= 2h"), mustConstraint(t, "wait.p95 >= 30m")}))
	for _, bad := range []string{"wait.p95 = 3", "wait.p95 <= 3x", "cost.total <= 5%", "nope <= 1"} {
		_, err := ParseConstraint(bad)
		require.Error(t, err, bad)
	}
}

func mustConstraint(t *testing.T, s string) Constraint {
	c, err := ParseConstraint(s)
	require.NoError(t, err)
	return c
}

func TestValuesOfRanges(t *testing.T) {
	v, err := (&Range{From: 2.0, To: 5.0, Step: 1.0}).values()
	require.NoError(t, err)
	require.Equal(t, []any{2.0, 3.0, 4.0, 5.0}, v)
	// 0.1 steps do not drift: 0.1+0.1+0.1 reads 0.3.
	v, err = (&Range{From: 0.0, To: 0.3, Step: 0.1}).values()
	require.NoError(t, err)
	require.Equal(t, []any{0.0, 0.1, 0.2, 0.3}, v)
	v, err = (&Range{From: "30m", To: "2h", Step: "30m"}).values()
	require.NoError(t, err)
	require.Equal(t, []any{"30m", "1h", "90m", "2h"}, v)
	// 1, 10, 100: evenly spaced in log scale.
	v, err = (&LogRange{From: 1, To: 100, Points: 3}).values()
	require.NoError(t, err)
	require.Equal(t, []any{1.0, 10.0, 100.0}, v)
	// 1..8 in 4 points is 1, 2, 4, 8.
	v, err = (&LogRange{From: 1, To: 8, Points: 4, Integer: true}).values()
	require.NoError(t, err)
	require.Equal(t, []any{1.0, 2.0, 4.0, 8.0}, v)
}

func TestDesigns(t *testing.T) {
	sw, err := Load("testdata/small-sweep.yaml")
	require.NoError(t, err)
	// Grid: 4 node counts x 2 spot shares x 1 mtbf x 2 intervals, the last
	// parameter fastest.
	pts := sw.Points()
	require.Len(t, pts, 16)
	require.Equal(t, []any{2.0, 0.0, "6h", "30m"}, pts[0].Values)
	require.Equal(t, []any{2.0, 0.0, "6h", "2h"}, pts[1].Values)
	require.Equal(t, []any{2.0, 0.5, "6h", "30m"}, pts[2].Values)
	require.Equal(t, []any{5.0, 0.5, "6h", "2h"}, pts[15].Values)

	// A Latin hypercube of 8 points over parameters of 8 and 4 values puts
	// one point in each eighth of the first (each value once) and two in
	// each quarter of the second.
	sw.Params = []Param{{Name: "a", Values: []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}}, {Name: "b", Values: []any{"w", "x", "y", "z"}}}
	sw.Doc.Spec.Design = DesignSpec{Kind: LatinHypercube, Points: 8, Seed: 3}
	pts = sw.Points()
	require.Len(t, pts, 8)
	ca, cb := map[any]int{}, map[any]int{}
	for _, p := range pts {
		ca[p.Values[0]]++
		cb[p.Values[1]]++
	}
	require.Len(t, ca, 8)
	require.Equal(t, map[any]int{"w": 2, "x": 2, "y": 2, "z": 2}, cb)
	// Seeded: the same seed, the same points; another seed, others.
	again := sw.Points()
	require.Equal(t, pts, again)
	sw.Doc.Spec.Design.Seed = 4
	require.NotEqual(t, pts, sw.Points())
	// Random draws from the values only.
	sw.Doc.Spec.Design = DesignSpec{Kind: Random, Points: 50, Seed: 1}
	for _, p := range sw.Points() {
		require.Contains(t, sw.Params[0].Values, p.Values[0])
	}
}

func TestSpotShareSplitsThePool(t *testing.T) {
	sw, err := Load("testdata/small-sweep.yaml")
	require.NoError(t, err)
	// 5 nodes at a share of 0.5: round(2.5) = 3 spot, 2 on-demand.
	sc, err := sw.Scenario(Point{Index: 14, Values: []any{5.0, 0.5, "6h", "30m"}})
	require.NoError(t, err)
	pools := sc.Spec.Cluster.Pools
	require.Len(t, pools, 2)
	require.Equal(t, "t4", pools[0].Name)
	require.Equal(t, 2, pools[0].Count)
	require.Equal(t, "", pools[0].CapacityType)
	require.Equal(t, "t4-spot", pools[1].Name)
	require.Equal(t, 3, pools[1].Count)
	require.Equal(t, "spot", pools[1].CapacityType)
	require.Equal(t, "g4dn.xlarge", pools[1].InstanceType)
	require.Equal(t, "6h0m0s", pools[1].Interruptions.MTBF.Duration.String())
	require.Equal(t, "30m0s", sc.Spec.Workload.Recovery.Checkpoint.Interval.Duration.String())
}

func TestSummarizeIsStudentsT(t *testing.T) {
	// 1, 2, 3: mean 2, sd 1; t(0.975, 2 df) = 4.302653 (tables), so the
	// half-width is 4.302653/sqrt(3) = 2.484138.
	s := Summarize([]float64{1, 2, 3})
	require.InDelta(t, 2, s.Mean, 1e-12)
	require.InDelta(t, 1, s.SD, 1e-12)
	require.InDelta(t, 2-2.484138, s.Lo, 1e-6)
	require.InDelta(t, 2+2.484138, s.Hi, 1e-6)
	one := Summarize([]float64{7})
	require.Equal(t, Stat{Mean: 7, Lo: 7, Hi: 7, N: 1}, one)
}

func TestPareto(t *testing.T) {
	// Cost against wait, both minimised: (1,9) (2,5) (3,6) (4,1) (5,1):
	// (3,6) is beaten by (2,5); (5,1) by (4,1).
	x := []float64{3, 1, 5, 2, 4}
	y := []float64{6, 9, 1, 5, 1}
	require.Equal(t, []int{1, 3, 4}, Pareto(x, y, false, false))
	// Maximising y instead: only (1,9) is not dominated.
	require.Equal(t, []int{1}, Pareto(x, y, false, true))
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	}))
	return out
}

func runSweep(t *testing.T, sw *Sweep, o Options) Stats {
	t.Helper()
	st, err := sw.Run(context.Background(), o)
	require.NoError(t, err)
	if o.Shards <= 1 {
		tab, err := Merge([]string{o.Out})
		require.NoError(t, err)
		require.NoError(t, tab.Write(o.Out))
	}
	return st
}

func TestWorkersResumeAndShardsGiveTheSameBytes(t *testing.T) {
	sw, err := Load("testdata/small-sweep.yaml")
	require.NoError(t, err)
	one, two := t.TempDir(), t.TempDir()
	st := runSweep(t, sw, Options{Out: one, Workers: 1})
	require.Equal(t, Stats{Points: 16, Ran: 16, Runs: 48}, st)
	runSweep(t, sw, Options{Out: two, Workers: 2})
	a, b := readAll(t, one), readAll(t, two)
	require.Len(t, a, 16+4) // the points, sweep.csv, .json, .html and decision.html
	require.Equal(t, a, b, "1 and 2 workers must write the same bytes")

	// More nodes, less waiting; spot nodes cost less than on-demand ones.
	tab, err := Merge([]string{one})
	require.NoError(t, err)
	require.Less(t, tab.Rows[15].Stats[1].Mean, tab.Rows[0].Stats[1].Mean)
	require.Less(t, tab.Rows[2].Stats[0].Mean, tab.Rows[0].Stats[0].Mean)
	// On-demand cost is the node-hours times the catalog's price: 2 nodes
	// x 24 h x $0.526 = $25.248 whatever the seed.
	require.InDelta(t, 25.248, tab.Rows[0].Stats[0].Mean, 1e-9)
	require.Equal(t, tab.Rows[0].Stats[0].Lo, tab.Rows[0].Stats[0].Hi)

	// Resume: three points lost, then the sweep again runs only those.
	for _, i := range []int{0, 7, 15} {
		require.NoError(t, os.Remove(filepath.Join(two, DirPoints, pointFileName(i))))
	}
	require.NoError(t, os.WriteFile(filepath.Join(two, DirPoints, ".tmp-000003.json-123"), []byte("{half"), 0o644))
	st = runSweep(t, sw, Options{Out: two, Workers: 2})
	require.Equal(t, Stats{Points: 16, Skipped: 13, Ran: 3, Runs: 9}, st)
	require.Equal(t, a, readAll(t, two))

	// Shards: three folders, merged, are the same table.
	var dirs []string
	for i := range 3 {
		d := t.TempDir()
		st := runSweep(t, sw, Options{Out: d, Workers: 1, Shard: i, Shards: 3})
		require.Equal(t, []int{6, 5, 5}[i], st.Points)
		dirs = append(dirs, d)
	}
	merged, err := Merge(dirs)
	require.NoError(t, err)
	require.Equal(t, tab.CSV(), merged.CSV())
	mj, _ := merged.JSON()
	require.Equal(t, a[FileJSON], mj)

	// Merge refuses a point missing and a point twice.
	_, err = Merge(dirs[:2])
	require.ErrorContains(t, err, "5 of the sweep's 16 points are missing (first: [2 5 8 11 14])")
	_, err = Merge(append(dirs, one))
	require.ErrorContains(t, err, "a point may be merged once")
	// And a folder of another sweep.
	other := *sw
	other.Doc.Metadata.Name = "other"
	require.Equal(t, sw.Digest(), sw.Digest())
	require.NotEqual(t, sw.Digest(), other.Digest())
	_, err = other.Run(context.Background(), Options{Out: one, Workers: 1})
	require.ErrorContains(t, err, "is a point of another sweep")
}

func TestHTMLHasTheCharts(t *testing.T) {
	tab := &Table{Sweep: "s", Parameters: []string{"nodes"}, Metrics: []string{"cost.total", "wait.p95"}, Seeds: []uint64{1}}
	for i, n := range []float64{2, 3, 4} {
		tab.Rows = append(tab.Rows, Row{Index: i, Values: []any{n}, Stats: []Stat{{Mean: 10 * n}, {Mean: 100 / n}}})
	}
	h, err := tab.HTML()
	require.NoError(t, err)
	for _, want := range []string{"Pareto front: wait.p95 against cost.total", "cost.total against nodes", "wait.p95 against nodes", "<svg"} {
		require.True(t, bytes.Contains(h, []byte(want)), want)
	}
	require.False(t, math.IsNaN(tab.Rows[0].Stats[0].Mean))
}

// Fields of one object set by two parameters are checked together: over a
// base without recovery, a checkpoint's cost alone has no interval
// ("must be positive"), so the cost parameter of the shipped sweep was
// refused; checked with the interval's first value it builds, and a bad
// value is still named at its own parameter.
func TestSiblingParametersCheckedTogether(t *testing.T) {
	f := spec(t, head+"  - {name: ckpt, path: workload.recovery.checkpoint.interval, values: [30m, 2h]}\n"+
		"  - {name: ckptCost, path: workload.recovery.checkpoint.cost, values: [1m, -1m]}\n")
	b, err := os.ReadFile(filepath.Join(filepath.Dir(f), "small.yaml"))
	require.NoError(t, err)
	plain := strings.Replace(string(b), "    recovery:\n      checkpoint: {interval: 1h, cost: 1m}\n", "", 1)
	require.NotEqual(t, string(b), plain)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(f), "small.yaml"), []byte(plain), 0o644))
	_, err = Load(f)
	var ie *scenarios.InputError
	require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
	require.Equal(t, "spec.parameters[1].values", ie.Field, err.Error())
	require.Contains(t, err.Error(), "ckptCost = -1m")

	body, err := os.ReadFile(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f, bytes.Replace(body, []byte("[1m, -1m]"), []byte("[1m]"), 1), 0o644))
	sw, err := Load(f)
	require.NoError(t, err)
	sc, err := sw.Scenario(sw.Points()[1])
	require.NoError(t, err)
	ck := sc.Spec.Workload.Recovery.Checkpoint
	require.Equal(t, "2h0m0s", ck.Interval.Duration.String())
	require.Equal(t, "1m0s", ck.Cost.Duration.String())
}
