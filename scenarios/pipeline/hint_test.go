package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
)

// The records hint of a streamed trace is its line count: at least its
// rows (here 3, with a header line), never a parse.
func TestJobsHintCountsTheTraceLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "philly.csv")
	rows := "timestamp,duration,num_gpus,gpu_time,cluster\n" +
		"2017-10-01 00:00:01,60,1,60,vc1\n" +
		"2017-10-01 00:00:02,60,2,120,vc1\n" +
		"2017-10-01 00:00:03,60,4,240,vc2\n"
	require.NoError(t, os.WriteFile(path, []byte(rows), 0o644))
	src, err := traces.OpenTrace(path, traces.FormatPhilly, traces.TraceOptions{})
	require.NoError(t, err)
	defer src.Close()
	hint := jobsHint(src)
	require.GreaterOrEqual(t, hint, 3)
	require.LessOrEqual(t, hint, 5, "4 lines, and one for a last line without a newline")
	require.Zero(t, jobsHint(&sim.SliceSource{}), "not a trace: no hint")
}
