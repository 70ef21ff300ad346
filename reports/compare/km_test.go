package compare

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// kmMedianFromJobs is the Kaplan-Meier median time from submission to
// completion worked from a run's jobs.csv, written here apart from the
// product's estimator: a completed job is an event at end_s - submit_s;
// any other is censored, at its end when it has one, else at the end of
// the run (horizon). Events come before censorings at the same time.
func kmMedianFromJobs(t *testing.T, path string, horizon float64) float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	type obs struct {
		t     float64
		event bool
	}
	var xs []obs
	for _, r := range recs[1:] {
		submit, err := strconv.ParseFloat(r[col["submit_s"]], 64)
		require.NoError(t, err)
		end := horizon
		if r[col["end_s"]] != "" {
			end, err = strconv.ParseFloat(r[col["end_s"]], 64)
			require.NoError(t, err)
		}
		xs = append(xs, obs{end - submit, r[col["outcome"]] == "completed"})
	}
	sort.Slice(xs, func(i, j int) bool {
		if xs[i].t != xs[j].t {
			return xs[i].t < xs[j].t
		}
		return xs[i].event && !xs[j].event
	})
	s, atRisk := 1.0, float64(len(xs))
	for _, x := range xs {
		if x.event {
			s *= 1 - 1/atRisk
			if s <= 0.5 {
				return x.t
			}
		}
		atRisk--
	}
	return -1
}

// compare on spot-what-if against its tight-spot variant: the median
// completion time is the Kaplan-Meier one over all 40 jobs, as simulate
// prints it (11.90 h -> 12.37 h, +4.0%: 44,527 s over 42,825 s), not the plain median over the
// jobs each run completed (11.45 h -> 8.86 h, -22.6%), which flattered
// the variant that completed 32 jobs against 35.
func TestCompareMedianIsKaplanMeierOverAllJobs(t *testing.T) {
	dirA := filepath.Join("testdata", "spot-what-if")
	dirB := filepath.Join("testdata", "spot-what-if-tight")
	read := func(dir string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		require.NoError(t, err)
		return b
	}
	a, err := Decode(dirA, read(dirA))
	require.NoError(t, err)
	b, err := Decode(dirB, read(dirB))
	require.NoError(t, err)
	c := New(dirA, a, dirB, b)

	wantA := kmMedianFromJobs(t, filepath.Join(dirA, "jobs.csv"), a.SimulatedSeconds)
	wantB := kmMedianFromJobs(t, filepath.Join(dirB, "jobs.csv"), b.SimulatedSeconds)
	r := row(t, c, "p50 completion time, all jobs (KM)")
	require.InDelta(t, wantA, r.A, 0.01)
	require.InDelta(t, wantB, r.B, 0.01)
	require.Equal(t, "11.90h", r.Format(r.A))
	require.Equal(t, "12.37h", r.Format(r.B))
	// The tight market is slower over all jobs, not 22.6% faster.
	require.Greater(t, r.Change, 0.0)
	require.Equal(t, "+4.0%", r.FormatChange())
	for _, r := range c.Rows {
		require.NotEqual(t, "p50 completion time", r.Metric)
	}
}

// A quantile more than the unfinished share never reaches (-1) prints as
// "not reached", with no change.
func TestCompareNotReached(t *testing.T) {
	var c Comparison
	c.add(P95CompletionTime, 3600, -1, Seconds)
	r := c.Rows[0]
	require.Equal(t, "1.00h", r.Format(r.A))
	require.Equal(t, "not reached", r.Format(r.B))
	require.Equal(t, "", r.FormatChange())
	require.Equal(t, 0.0, r.Change)
}
