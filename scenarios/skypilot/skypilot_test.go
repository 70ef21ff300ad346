package skypilot

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/strict"
)

// The first day of the real 4-node preemption trace: 288 ticks 300 s
// apart, peaking at the 4 instances it ran. Its drops, summed by hand from
// the data (4->1 at tick 20, 4->0 at 23, then 1+1+1+2+1+1, 2, 1+3, 1+2,
// 3+1, 3+1): 31 instances lost.
func TestPreemptionTraceExcerpt(t *testing.T) {
	tr, err := Read("testdata/us-east-1f_v100_4node_first24h.json")
	require.NoError(t, err)
	require.Equal(t, 300*time.Second, tr.Gap)
	require.Len(t, tr.Counts, 288)
	require.Equal(t, int32(4), tr.Peak)
	require.Equal(t, []int32{0, 4, 4, 1, 1, 4, 0}, tr.Counts[17:24])
	require.Equal(t, int64(31), tr.Drops(4))
	// Scaled to 2 nodes: each count halved, rounded down (4->2, 3->1, 1->0).
	require.Equal(t, []int32{0, 2, 2, 0, 0, 2, 0}, tr.Nodes(2)[17:24])
}

// The first day of a 1-instance availability trace (600 s ticks): a pool
// of any size holds all its nodes or none. 13 times the instance went
// from available to not (counted by hand from the data), so a 3-node pool
// loses 39 nodes.
func TestAvailabilityTraceExcerpt(t *testing.T) {
	tr, err := Read("testdata/us-west-2a_v100_1node_first24h.json")
	require.NoError(t, err)
	require.Equal(t, 600*time.Second, tr.Gap)
	require.Len(t, tr.Counts, 144)
	require.Equal(t, int32(1), tr.Peak)
	require.Equal(t, []int32{3, 0, 0, 3, 3}, tr.Nodes(3)[:5])
	require.Equal(t, int64(13), tr.Drops(1))
	require.Equal(t, int64(39), tr.Drops(3))
}

func TestBadTraces(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"metadata": {"gap_seconds": 0}, "data": [1]}`, `t.json:1:30: metadata.gap_seconds: is 0; the seconds between ticks are from 1 to 604800`},
		{`{"metadata": {"gap_seconds": 300}, "data": [1, -2]}`, `t.json:1:48: data[1]: is -2; a count of instances is from 0 to 1000000`},
		{`{"metadata": {"gap_seconds": 300}, "data": [1, 2.5]}`, `t.json:1:48: data[1]: expected a whole number, got "2.5"`},
		{`{"metadata": {"gap_seconds": 300}, "data": []}`, `t.json:1:44: data: the trace has no data points`},
		{`{"metadata": {"gap_seconds": 300}, "data": [0, 0]}`, `data: no tick holds an instance`},
		{`{"metadata": {"gap": 300}, "data": [1]}`, `t.json:1:15: metadata.gap: unknown field "gap"`},
		{`[1, 2, 3]`, `t.json:1:1: expected a mapping, got a list`},
	} {
		_, err := Parse("t.json", []byte(c.in))
		require.Error(t, err, c.in)
		var ie *strict.InputError
		require.ErrorAs(t, err, &ie, c.in)
		require.Contains(t, err.Error(), c.want, c.in)
	}
}

func FuzzSkyPilot(f *testing.F) {
	f.Add([]byte(`{"metadata": {"gap_seconds": 300}, "data": [0, 4, 4, 1, 1, 4, 0]}`))
	f.Add([]byte(`{"metadata": {"gap_seconds": 600}, "data": [1, 0, 0, 1]}`))
	f.Add([]byte(`{"metadata": {"gap_seconds": 1e9}, "data": [1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse("f.json", data)
		if err != nil {
			var ie *strict.InputError
			require.ErrorAs(t, err, &ie)
			require.Less(t, len(err.Error()), 2000)
			return
		}
		require.Positive(t, tr.Peak)
		require.Positive(t, tr.Gap)
		for _, c := range tr.Nodes(7) {
			require.GreaterOrEqual(t, c, int32(0))
			require.LessOrEqual(t, c, int32(7))
		}
	})
}
