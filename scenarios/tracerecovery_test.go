package scenarios

import (
	"os"
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

// The same through Kueue admission: the queue mapper keeps the trace
// reader's Info, and over a synthetic workload it claims none (the
// pipeline would otherwise take the generator for a trace).
func TestTraceThroughKueueKeepsItsInfo(t *testing.T) {
	sc, err := Default()
	require.NoError(t, err)
	b, err := sc.Build(Options{Trace: &TraceSpec{Path: "testdata/native.csv", Format: "csv"},
		PolicyManifests: []string{"examples/two-teams/policy"}})
	require.NoError(t, err)
	defer b.Close()
	require.NotNil(t, b.Config.Admission)
	src, ok := b.Config.Workload.(interface{ Info() traces.TraceInfo })
	require.True(t, ok, "%T has no Info", b.Config.Workload)
	require.Equal(t, "testdata/native.csv", src.Info().File)

	text, err := os.ReadFile("examples/two-teams/scenario.yaml")
	require.NoError(t, err)
	teams, err := Parse("examples/two-teams/scenario.yaml", "examples/two-teams", text)
	require.NoError(t, err)
	b2, err := teams.Build(Options{PolicyManifests: []string{"examples/two-teams/policy"}})
	require.NoError(t, err)
	defer b2.Close()
	require.NotNil(t, b2.Config.Admission)
	_, ok = b2.Config.Workload.(interface{ Info() traces.TraceInfo })
	require.False(t, ok, "a synthetic workload through Kueue claims a trace's Info (%T)", b2.Config.Workload)
}
