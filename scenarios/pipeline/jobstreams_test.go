package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// drawn is every job of b's own workload.
func drawn(t *testing.T, b *scenarios.Built) []cluster.JobSpec {
	t.Helper()
	var out []cluster.JobSpec
	for {
		var j cluster.JobSpec
		more, err := b.Config.Workload.Next(&j)
		require.NoError(t, err)
		if !more {
			return out
		}
		out = append(out, j)
	}
}

func built(t *testing.T, sc *scenarios.Scenario, seed uint64) *scenarios.Built {
	t.Helper()
	b, err := sc.Build(scenarios.Options{Seed: &seed})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// A sweep's runs share the synthetic job streams: a run replays the jobs
// an earlier run of the same workload section, seed and horizon drew,
// which are the jobs its own generator would draw, field for field; a
// new seed or a changed workload (a checkpoint interval) is a stream of
// its own, drawn once; past the limit, runs draw their own.
func TestJobStreamsReplayTheJobsTheRunWouldDraw(t *testing.T) {
	sc, err := scenarios.Default()
	require.NoError(t, err)
	js := NewJobStreams(1_000_000)
	first := js.source(sc, built(t, sc, 1)).(*sim.SliceSource)
	require.Equal(t, drawn(t, built(t, sc, 1)), first.Jobs)
	require.NotEmpty(t, first.Jobs)
	again := js.source(sc, built(t, sc, 1)).(*sim.SliceSource)
	require.Same(t, &first.Jobs[0], &again.Jobs[0], "drawn once")

	other := js.source(sc, built(t, sc, 2)).(*sim.SliceSource)
	require.Equal(t, drawn(t, built(t, sc, 2)), other.Jobs)
	require.NotEqual(t, first.Jobs, other.Jobs)

	patched, err := sc.Patched("ckpt", []byte(`{"workload":{"recovery":{"checkpoint":{"interval":"45m"}}}}`))
	require.NoError(t, err)
	ck := js.source(patched, built(t, patched, 1)).(*sim.SliceSource)
	require.Equal(t, drawn(t, built(t, patched, 1)), ck.Jobs)
	require.Equal(t, int64(45*60*1000), ck.Jobs[0].Recovery.CheckpointInterval)
	require.Len(t, js.streams, 3)
	require.Equal(t, 2*len(first.Jobs)+len(other.Jobs), js.jobs)

	// A cluster of another size draws the same jobs.
	bigger, err := sc.Patched("big", []byte(`{"cluster":{"pools":[{"name":"h100-train","count":10}]}}`))
	require.NoError(t, err)
	require.Same(t, &first.Jobs[0], &js.source(bigger, built(t, bigger, 1)).(*sim.SliceSource).Jobs[0])

	// Full: the run reads its own generator.
	b := built(t, sc, 3)
	require.Same(t, b.Config.Workload, NewJobStreams(0).source(sc, b))

	// The run on the replayed jobs is the run on its own.
	seed := uint64(1)
	o := Options{Build: scenarios.Options{Seed: &seed}, NoVariants: true, NoSpotTwin: true, NoSensitivity: true}
	own, err := One(sc, o, "own", false)
	require.NoError(t, err)
	o.Jobs = js
	shared, err := One(sc, o, "own", false)
	require.NoError(t, err)
	a, _ := json.Marshal(own.Summary)
	c, _ := json.Marshal(shared.Summary)
	require.Equal(t, string(a), string(c))
	require.Equal(t, own.Result.Jobs, shared.Result.Jobs)
}
