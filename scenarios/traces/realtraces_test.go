package traces

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// TestPolluxPhillyReplaysInItsOwnOrder: the first 10,000 rows of the
// processed Philly trace the Pollux artifact replays (testdata/philly,
// rows in no time order) replay as they are, sorted first. The figures
// were worked out from the CSV with a short script, not with gpuplan.
func TestPolluxPhillyReplaysInItsOwnOrder(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "philly", "philly_pollux_10k.csv.gz")
	jobs, src := readAll(t, path, FormatPhilly, TraceOptions{})
	require.Contains(t, src.Notes(), sortedNote(10000))
	require.Len(t, jobs, 10000)
	require.True(t, slices.IsSortedFunc(jobs, func(a, b cluster.JobSpec) int { return int(a.Submit - b.Submit) }))
	// The earliest submission (2017-09-07 09:57:50) is row 1,985:
	// 2,643,038 s on 1 GPU in virtual cluster 6214e9.
	require.Equal(t, cluster.JobSpec{Name: "philly-1985", Queue: "6214e9", Submit: 0, Duration: 2_643_038_000, Replicas: 1, Pod: cluster.PodSpec{GPUs: 1}}, jobs[0])
	// The latest is 2017-10-29 07:02:13: 4,482,263 s after it.
	require.Equal(t, int64(4_482_263_000), jobs[len(jobs)-1].Submit)
	var gpuMs, pods int64
	queues := map[string]int{}
	for _, j := range jobs {
		gpuMs += int64(j.Replicas) * int64(j.Pod.GPUs) * j.Duration
		pods += int64(j.Replicas)
		queues[j.Queue]++
	}
	// duration x num_gpus summed over the rows: 322,096,662 GPU-seconds;
	// 19 jobs over 8 GPUs split into pods of at most 8 give 10,037 pods.
	require.Equal(t, int64(322_096_662_000), gpuMs)
	require.Equal(t, int64(10_037), pods)
	require.Len(t, queues, 11)
	require.Equal(t, 7633, queues["6214e9"])

	// Sizing a cluster reads the rows once, in the file's order, and gives
	// the cluster the sorted replay gives.
	sized, err := OpenTraceSizing(path, FormatPhilly, TraceOptions{})
	require.NoError(t, err)
	defer sized.Close()
	pools, notes, err := DeriveCluster(sized)
	require.NoError(t, err)
	replay, err := OpenTrace(path, FormatPhilly, TraceOptions{})
	require.NoError(t, err)
	defer replay.Close()
	wantPools, wantNotes, err := DeriveCluster(replay)
	require.NoError(t, err)
	require.Equal(t, wantPools, pools)
	require.Equal(t, wantNotes, notes)
}

// TestShuffledOpenbReplaysAsSorted: the openb pod list with its rows
// shuffled replays as the list itself does (jobs submitted together may
// swap places, nothing else), the never-ran flag included, and sizes the
// same cluster.
func TestShuffledOpenbReplaysAsSorted(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "openb", "openb_pod_list_default.csv")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	shuffled := filepath.Join(t.TempDir(), "shuffled_openb.csv")
	require.NoError(t, os.WriteFile(shuffled, shuffleRows(string(data)), 0o644))
	want, wsrc := readAll(t, path, FormatOpenb, TraceOptions{})
	got, gsrc := readAll(t, shuffled, FormatOpenb, TraceOptions{})
	require.NotContains(t, wsrc.Notes(), sortedNote(len(want)))
	require.Contains(t, gsrc.Notes(), sortedNote(len(want)))
	// 8,152 pods, 897 of them never ran (PROVENANCE.md).
	require.Len(t, got, 8152)
	never := 0
	for _, j := range got {
		if j.Flags&cluster.FlagNoRecordedRun != 0 {
			never++
		}
	}
	require.Equal(t, 897, never)
	byTimeThenName(want)
	byTimeThenName(got)
	require.Equal(t, want, got)

	derive := func(p string) ([]cluster.PoolSpec, []string) {
		src, err := OpenTraceSizing(p, FormatOpenb, TraceOptions{})
		require.NoError(t, err)
		defer src.Close()
		pools, notes, err := DeriveCluster(src)
		require.NoError(t, err)
		return pools, notes
	}
	wp, wn := derive(path)
	gp, gn := derive(shuffled)
	require.Equal(t, wp, gp)
	require.Equal(t, wn, gn)
}
