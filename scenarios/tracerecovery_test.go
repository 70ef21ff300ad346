package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// A replayed trace under the scenario's recovery settings keeps the
// trace reader's description, which the pipeline reads to reserve the
// run's records and to parse the trace on another core: the jobs get the
// settings and the source still says which file it reads.
func TestTraceWithRecoveryKeepsItsInfo(t *testing.T) {
	text := strings.Replace(string(DefaultYAML()), "  workload:\n", "  workload:\n    recovery: {backoffLimit: 2}\n", 1)
	sc, err := Parse(DefaultName, "", []byte(text))
	require.NoError(t, err)
	b, err := sc.Build(Options{Trace: &TraceSpec{Path: "testdata/native.csv", Format: "csv"}})
	require.NoError(t, err)
	defer b.Close()
	src, ok := b.Config.Workload.(interface{ Info() traces.TraceInfo })
	require.True(t, ok, "%T has no Info", b.Config.Workload)
	require.Equal(t, "testdata/native.csv", src.Info().File)

	var j cluster.JobSpec
	ok, err = b.Config.Workload.Next(&j)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "train-a", j.Name) // the file's first row
	require.NotNil(t, j.Recovery)
	require.Equal(t, int32(2), j.Recovery.BackoffLimit)
}
