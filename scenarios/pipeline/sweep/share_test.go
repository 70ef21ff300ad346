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
