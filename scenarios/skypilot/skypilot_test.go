package skypilot

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/validate/strict"
)

// A hand-written 4-node preemption-style trace (testdata/PROVENANCE.md):
// 24 ticks 300 s apart (2 h), peaking at 4 instances:
//
//	tick  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
//	data  0  0  4  4  4  4  3  3  4  4  4  2  2  4  4  4  1  0  0  4  4  4  4  0
//
// Its drops, by hand: 1 at tick 6 (4->3), 2 at 11 (4->2), 3 at 16 (4->1),
// 1 at 17 (1->0), 4 at 23 (4->0): 11 instances lost. Scaled to 2 nodes
// each count is halved, rounded down (4->2, 3->1, 2->1, 1->0): drops of 1
// at tick 6, 1 at 11, 2 at 16 (2->0; tick 17 stays 0) and 2 at 23: 6.
func TestPreemptionStyleTrace(t *testing.T) {
	tr, err := Read("testdata/preemption_4node.json")
	require.NoError(t, err)
	require.Equal(t, 300*time.Second, tr.Gap)
	require.Len(t, tr.Counts, 24)
	require.Equal(t, int32(4), tr.Peak)
	require.Equal(t, []int32{4, 3, 3, 4, 4, 4, 2, 2, 4}, tr.Counts[5:14])
	require.Equal(t, int64(11), tr.Drops(4))
	require.Equal(t, []int32{0, 0, 2, 2, 2, 2, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 0, 0, 0, 2, 2, 2, 2, 0}, tr.Nodes(2))
	require.Equal(t, int64(6), tr.Drops(2))
}

// A hand-written 1-instance availability-style trace: 18 ticks 600 s
// apart (3 h), 1 when the launch tried at that tick got the instance:
//
//	tick  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17
//	data  1  1  0  0  1  1  1  0  1  1  0  0  0  1  1  1  1  0
//
// A pool of any size holds all its nodes or none. The instance went from
// available to not 4 times (ticks 2, 7, 10, 17), so a 3-node pool loses
// 4 x 3 = 12 nodes.
func TestAvailabilityStyleTrace(t *testing.T) {
	tr, err := Read("testdata/availability_1node.json")
	require.NoError(t, err)
	require.Equal(t, 600*time.Second, tr.Gap)
	require.Len(t, tr.Counts, 18)
	require.Equal(t, int32(1), tr.Peak)
	require.Equal(t, []int32{3, 3, 0, 0, 3}, tr.Nodes(3)[:5])
	require.Equal(t, int64(4), tr.Drops(1))
	require.Equal(t, int64(12), tr.Drops(3))
}

// The repository's April 2023 preemption traces carry the spot price at
// each tick ("prices"); they were refused as an unknown field. The shape,
// copied by hand: 8 ticks 32 s apart, the instance lost at tick 3 and back
// at tick 5 (one drop), and the price at each tick kept.
func TestTraceWithPrices(t *testing.T) {
	tr, err := Read("testdata/preemption_1node_prices.json")
	require.NoError(t, err)
	require.Equal(t, 32*time.Second, tr.Gap)
	require.Equal(t, []int32{1, 1, 1, 0, 0, 1, 1, 1}, tr.Counts)
	require.Equal(t, int64(1), tr.Drops(1))
	require.Equal(t, []float64{0.918, 0.918, 0.918, 0.918, 0.9311, 0.9311, 0.9311, 0.9311}, tr.Prices)
	tr, err = Read("testdata/preemption_4node.json")
	require.NoError(t, err)
	require.Nil(t, tr.Prices, "a trace without prices")
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
		{`{"metadata": {"gap_seconds": 30}, "data": [1, 0], "prices": [0.9]}`, `t.json:1:61: prices: has 1 prices for 2 data points`},
		{`{"metadata": {"gap_seconds": 30}, "data": [1, 0], "prices": [0.9, -1]}`, `t.json:1:67: prices[1]: is -1; a spot price is from 0 to 10000 $/h`},
		{`{"metadata": {"gap_seconds": 30}, "data": [1, 0], "prices": [0.9, "x"]}`, `prices[1]`},
	} {
		_, err := Parse("t.json", []byte(c.in))
		require.Error(t, err, c.in)
		var ie *strict.InputError
		require.ErrorAs(t, err, &ie, c.in)
		require.Contains(t, err.Error(), c.want, c.in)
	}
}

func FuzzSkyPilot(f *testing.F) {
	// Seeds: the two hand-written traces in testdata, and short ones.
	for _, name := range []string{"testdata/preemption_4node.json", "testdata/availability_1node.json", "testdata/preemption_1node_prices.json"} {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"metadata": {"gap_seconds": 60}, "data": [2, 1, 2, 0]}`))
	f.Add([]byte("metadata: {gap_seconds: 600}\ndata: [1, 0, 1]\n"))
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
