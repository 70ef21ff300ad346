package traces

import (
	"cmp"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// peakByEdges is how DeriveCluster found the peaks before peakUse: every
// job's start and end as edges, sorted by time with, at one instant, every
// end before every start, summed in that order.
func peakByEdges(jobs []sizedJob) [3]int64 {
	type edge struct{ at, gpu, cpu, mem int64 }
	var edges []edge
	for _, j := range jobs {
		edges = append(edges, edge{j.at, j.use[0], j.use[1], j.use[2]}, edge{j.end, -j.use[0], -j.use[1], -j.use[2]})
	}
	sort.Slice(edges, func(x, y int) bool {
		ex, ey := &edges[x], &edges[y]
		if ex.at != ey.at {
			return ex.at < ey.at
		}
		return ex.gpu+ex.cpu+ex.mem < ey.gpu+ey.cpu+ey.mem
	})
	var g, c, m, pg, pc, pm int64
	for _, e := range edges {
		g, c, m = g+e.gpu, c+e.cpu, m+e.mem
		pg, pc, pm = max(pg, g), max(pc, c), max(pm, m)
	}
	return [3]int64{pg, pc, pm}
}

// peakUse is peakSweep over jobs sorted by start.
func peakUse(jobs []sizedJob) [3]int64 {
	var p peakSweep
	for i := range jobs {
		p.add(&jobs[i])
	}
	return p.peaks()
}

func TestPeakUseMatchesEdges(t *testing.T) {
	// By hand: A holds 2 GPUs over [0, 10), B 3 over [5, 10), C 4 over
	// [10, 12) (starts as A and B end), D 1 over [11, 11) (no time at
	// all). The peak is 5 (A and B), then 4 (C), never 9.
	jobs := []sizedJob{
		{at: 0, end: 10, use: [3]int64{2000, 100, 1}},
		{at: 5, end: 10, use: [3]int64{3000, 0, 7}},
		{at: 10, end: 12, use: [3]int64{4000, 50, 1}},
		{at: 11, end: 11, use: [3]int64{1000, 1000, 1000}},
	}
	if got := peakUse(jobs); got != [3]int64{5000, 100, 8} {
		t.Fatalf("peaks %v, want [5000 100 8]", got)
	}
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 300 {
		n := 1 + r.IntN(400)
		jobs := make([]sizedJob, n)
		span := int64(1 + r.IntN(50)) // few instants: many ties
		for i := range jobs {
			at := r.Int64N(span)
			jobs[i] = sizedJob{at: at, end: at + r.Int64N(span/2+1)}
			if r.IntN(8) > 0 {
				jobs[i].use = [3]int64{r.Int64N(8000), r.Int64N(96000), r.Int64N(1 << 20)}
			}
		}
		want := peakByEdges(jobs)
		slices.SortFunc(jobs, func(x, y sizedJob) int { return cmp.Compare(x.at, y.at) })
		if got := peakUse(jobs); got != want {
			t.Fatalf("trial %d: peaks %v, want %v (by edges)", trial, got, want)
		}
	}
}

func TestDeriveClusterAnyOrder(t *testing.T) {
	// 40,000 Philly rows (three chunks of sizedJobs), sorted, and a copy
	// with every 1000th row swapped with the row 10,000 later: the same
	// jobs, so the same cluster, whether sized as read or replayed sorted.
	dir := t.TempDir()
	sorted, late := filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "late.csv")
	writePhilly(t, sorted, 40000, false)
	writePhilly(t, late, 40000, true)
	derive := func(path string, open func(string, string, TraceOptions) (TraceSource, error)) ([]cluster.PoolSpec, []string) {
		src, err := open(path, FormatPhilly, TraceOptions{})
		require.NoError(t, err)
		defer src.Close()
		pools, notes, err := DeriveCluster(src)
		require.NoError(t, err)
		return pools, notes
	}
	wantPools, wantNotes := derive(sorted, OpenTraceSizing)
	require.Len(t, wantPools, 1)
	require.Contains(t, wantNotes[0], "40000 jobs")
	for _, c := range []struct {
		path string
		open func(string, string, TraceOptions) (TraceSource, error)
	}{{sorted, OpenTrace}, {late, OpenTraceSizing}, {late, OpenTrace}} {
		pools, notes := derive(c.path, c.open)
		require.Equal(t, wantPools, pools, c.path)
		require.Equal(t, wantNotes, notes, c.path)
	}
}
