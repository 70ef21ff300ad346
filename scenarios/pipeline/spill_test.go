package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
)

// A run whose records go to a temporary file as jobs finish (one record
// kept in memory: every chunk of 1,024 records is written as it fills)
// writes the same output folder, byte for byte, as the run that keeps
// every record in memory: jobs.csv, summary.json, the report, the charts.
// The scenarios (each more than a chunk of jobs) cover a plain trace
// replay (jobs recorded as they finish, the job table dropped as it
// empties: 8 chunks), the built-in default (spot nodes under a capacity
// controller: records built at the end; its all-on-demand twin) and GPU
// sharing (time-slicing and MIG, with variants).
func TestSpilledRecordsWriteTheSameFolder(t *testing.T) {
	for _, ex := range []string{"openb-replay.yaml", "", "gpu-sharing.yaml"} {
		t.Run("scenario="+ex, func(t *testing.T) {
			sc, err := scenarios.Default()
			if ex != "" {
				sc = load(t, filepath.Join("../examples", ex))
			}
			require.NoError(t, err)
			folder := func(keep int) (map[string][]byte, int, bool) {
				o := Options{File: ex, NoSensitivity: true}
				o.recordsInMemory = keep
				out, err := Scenario(sc, o)
				require.NoError(t, err)
				dir := filepath.Join(t.TempDir(), "out")
				require.NoError(t, out.WriteDir(dir, nil))
				return readTree(t, dir), out.Main.Result.NumJobs(), out.Main.Result.Spilled()
			}
			want, n, spilled := folder(-1)
			require.False(t, spilled)
			require.Greater(t, n, 1024, "jobs enough for a chunk of records")
			for range 2 { // twice: the same bytes each time
				got, m, spilled := folder(1)
				require.True(t, spilled, "records went to the temporary file")
				require.Equal(t, n, m)
				require.Equal(t, len(want), len(got))
				for name, b := range want {
					require.True(t, string(b) == string(got[name]), "%s differs when the records are spilled", name)
				}
			}
		})
	}
}
