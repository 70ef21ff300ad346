package pipeline

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// mainOnly runs a scenario's own run alone (no twin, no sensitivity).
func mainOnly(t *testing.T, file string, seed uint64) *Run {
	t.Helper()
	r, err := One(load(t, file), Options{Build: scenarios.Options{Seed: &seed}, File: file, NoSpotTwin: true, NoSensitivity: true}, "", false)
	require.NoError(t, err)
	return r
}

// A spot node under notice is cordoned: the job it stopped waits for the
// replacement launched when the node goes. That reclaim must keep a run
// without a horizon going. By hand (spot-times.yaml): one 1-GPU spot node,
// interrupted at 2h with AWS's 2-minute notice; the 8h job (no
// checkpoints) stops at 2h and is back in the queue after the Job
// controller's 10 s backoff; the node goes at 2h02m and its replacement
// is Ready 5 minutes later, at 2h07m, when the job starts again and runs
// its 8h: it completes at 10h07m, the end of the run. The pool supplies
// one GPU throughout (the old node to 2h02m, the new one from its
// launch), 10h07m of GPU time, of which the job held 2h + 8h. Before the
// fix the run stopped at 2h00m10s, "drained", with the job pending.
func TestNoticedNodeReplacementKeepsRunGoing(t *testing.T) {
	r := mainOnly(t, "testdata/no-horizon-spot/spot-times.yaml", 1)
	end := (10*sim.Hour + 7*sim.Minute)
	require.Equal(t, end, r.Result.End)
	require.Len(t, r.Result.Jobs, 1)
	j := r.Result.Jobs[0]
	require.Equal(t, sim.Completed, j.Outcome)
	require.Equal(t, end, j.End)
	p := r.Result.Pools[0]
	require.Equal(t, 1000*end, p.SuppliedMilliMs)
	require.Equal(t, 1000*(10*sim.Hour), p.AllocatedMilliMs)
	var buf strings.Builder
	require.NoError(t, reports.WriteTable(&buf, r.Summary))
	require.Contains(t, buf.String(), "until the workload drained")
}

// A run without a horizon whose last change comes from an event that
// does not keep it going (an interruption that stops the job) ends at
// that change, not at the last event that does: the supply ledger has
// reached it. ign-only.yaml: one 1-GPU spot node that is always replaced
// the moment it goes, so the pool supplies exactly one GPU for the whole
// run, 1000 x End milli-GPU ms, and the run ends when its one job
// completes. Before the fix seed 1 exited 4 (ledger past the end).
func TestRunEndCoversEveryEvent(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		r := mainOnly(t, "testdata/no-horizon-spot/ign-only.yaml", seed)
		j := r.Result.Jobs[0]
		require.Equal(t, sim.Completed, j.Outcome, "seed %d", seed)
		require.Equal(t, j.End, r.Result.End, "seed %d", seed)
		require.Equal(t, 1000*r.Result.End, r.Result.Pools[0].SuppliedMilliMs, "seed %d", seed)
	}
}

// A run without a horizon that cannot drain ends at its last event and
// says so, not "drained". spot-times-no-replace.yaml is spot-times.yaml
// with a pool that does not replace lost nodes: the job stops at the 2h
// notice, the node goes at 2h02m and nothing comes after it, so the run
// ends at 2h02m with the job pending; the pool supplied its GPU for
// those 2h02m, of which the job held 2h.
func TestRunThatCannotDrainSaysSo(t *testing.T) {
	r := mainOnly(t, "testdata/no-horizon-spot/spot-times-no-replace.yaml", 1)
	end := 2*sim.Hour + 2*sim.Minute
	require.Equal(t, end, r.Result.End)
	require.Equal(t, sim.Pending, r.Result.Jobs[0].Outcome)
	require.Equal(t, 1000*end, r.Result.Pools[0].SuppliedMilliMs)
	require.Equal(t, 1000*2*sim.Hour, r.Result.Pools[0].AllocatedMilliMs)
	var buf strings.Builder
	require.NoError(t, reports.WriteTable(&buf, r.Summary))
	require.NotContains(t, buf.String(), "drained")
	require.Contains(t, buf.String(), "simulated 2.03h (until nothing more could happen, 1 job(s) unfinished)")
}
