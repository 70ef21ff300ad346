package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sweep's points share each seed's synthetic job stream (issue 34:
// drawn once, replayed at every point with the same workload section):
// every point's figures are those of the point run on its own, each run
// drawing its jobs. The small sweep's checkpoint interval is in the
// workload (two streams a seed), its node counts and spot share are not.
func TestSharedJobStreamsGiveEachPointsOwnFigures(t *testing.T) {
	sw, err := Load("testdata/small-sweep.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	runSweep(t, sw, Options{Out: dir, Workers: 2})
	for _, pt := range sw.Points() {
		b, err := os.ReadFile(filepath.Join(dir, DirPoints, pointFileName(pt.Index)))
		require.NoError(t, err)
		var pf PointFile
		require.NoError(t, json.Unmarshal(b, &pf))
		own, err := sw.RunPoint(pt, sw.Seeds)
		require.NoError(t, err)
		require.Equal(t, own.Metrics, pf.Metrics, "point %d (%s)", pt.Index, sw.Describe(pt))
	}
}

// A random design over listed values draws some settings more than once;
// a setting runs once and its figures go to each point drawn with it:
// 12 points over 2 x 2 settings (the design's seed 5 draws all four) run
// 4 x 2 seeds, not 12 x 2, and every point's figures are its setting's
// run on its own.
func TestASettingDrawnTwiceRunsOnce(t *testing.T) {
	f := spec(t, head+`  - {name: nodes, path: "cluster.pools[t4].count", values: [2, 3]}
  - {name: ckpt, path: workload.recovery.checkpoint.interval, values: [30m, 2h]}
  design: {kind: random, points: 12, seed: 5}
  replications: 2
`)
	sw, err := Load(f)
	require.NoError(t, err)
	distinct := map[string]bool{}
	for _, pt := range sw.Points() {
		distinct[pointKey(pt)] = true
	}
	require.Len(t, distinct, 4)
	dir := t.TempDir()
	st := runSweep(t, sw, Options{Out: dir, Workers: 2})
	require.Equal(t, Stats{Points: 12, Ran: 12, Runs: 8}, st)
	for _, pt := range sw.Points() {
		b, err := os.ReadFile(filepath.Join(dir, DirPoints, pointFileName(pt.Index)))
		require.NoError(t, err)
		var pf PointFile
		require.NoError(t, json.Unmarshal(b, &pf))
		own, err := sw.RunPoint(pt, sw.Seeds)
		require.NoError(t, err)
		require.Equal(t, pt.Index, pf.Index)
		require.Equal(t, own.Metrics, pf.Metrics, "point %d (%s)", pt.Index, sw.Describe(pt))
	}
}

// Points whose settings make the same scenario run once: spot shares of
// 0, 0.1, 0.2 and 0.25 of 2 nodes round to 0, 0, 0 and 1 spot nodes
// (0.5 rounds up), of 4 nodes to 0, 0, 1 and 1, so the 8 points make 4
// scenarios and run 4 x 2 seeds, not 8 x 2; every point's figures are
// its own run's.
func TestSettingsMakingOneScenarioRunOnce(t *testing.T) {
	f := spec(t, head+`  - {name: nodes, path: "cluster.pools[t4].count", values: [2, 4]}
  - {name: spot, spotShareOf: t4, values: [0, 0.1, 0.2, 0.25]}
  - {name: mtbf, path: "cluster.pools[t4-spot].interruptions.mtbf", values: [6h]}
  replications: 2
`)
	sw, err := Load(f)
	require.NoError(t, err)
	require.Equal(t, 8, sw.NumPoints())
	dir := t.TempDir()
	st := runSweep(t, sw, Options{Out: dir, Workers: 2})
	require.Equal(t, Stats{Points: 8, Ran: 8, Runs: 8}, st)
	for _, pt := range sw.Points() {
		b, err := os.ReadFile(filepath.Join(dir, DirPoints, pointFileName(pt.Index)))
		require.NoError(t, err)
		var pf PointFile
		require.NoError(t, json.Unmarshal(b, &pf))
		own, err := sw.RunPoint(pt, sw.Seeds)
		require.NoError(t, err)
		require.Equal(t, pt.Index, pf.Index)
		require.Equal(t, pt.Values, pf.Values)
		require.Equal(t, own.Metrics, pf.Metrics, "point %d (%s)", pt.Index, sw.Describe(pt))
	}
}
