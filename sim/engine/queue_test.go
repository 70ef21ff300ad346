package engine

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPopsInTimeThenPushOrder(t *testing.T) {
	q := New[int](0)
	q.Push(10, 1)
	q.Push(5, 2)
	q.Push(10, 3)
	q.Push(5, 4)
	q.Push(0, 5)
	var got []int
	for q.Len() > 0 {
		_, ev, _ := q.Pop()
		got = append(got, ev)
	}
	require.Equal(t, []int{5, 2, 4, 1, 3}, got)
	require.Equal(t, Time(10), q.Now())
}

func TestCancel(t *testing.T) {
	q := New[int](0)
	a := q.Push(1, 1)
	b := q.Push(2, 2)
	c := q.Push(3, 3)
	require.True(t, q.Cancel(b))
	require.False(t, q.Cancel(b), "second cancel of the same event")
	require.False(t, q.Cancel(Handle{}), "zero handle")
	_, ev, _ := q.Pop()
	require.Equal(t, 1, ev)
	require.False(t, q.Cancel(a), "cancel after the event fired")
	// The slot of a is recycled; the stale handle must not cancel the new event.
	d := q.Push(4, 4)
	require.False(t, q.Cancel(a))
	require.True(t, q.Cancel(c))
	_, ev, _ = q.Pop()
	require.Equal(t, 4, ev)
	require.False(t, q.Cancel(d))
	require.Equal(t, 0, q.Len())
}

func TestPushInThePastPanics(t *testing.T) {
	q := New[int](0)
	q.Push(10, 1)
	q.Pop()
	require.Panics(t, func() { q.Push(9, 2) })
}

// Against a sorted reference: random pushes and cancels pop in (time, seq) order.
func TestRandomAgainstSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := New[int](0)
	type ref struct {
		at  Time
		seq int
	}
	live := map[int]ref{}
	handles := map[int]Handle{}
	for i := 0; i < 5000; i++ {
		at := Time(r.IntN(1000))
		handles[i] = q.Push(at, i)
		live[i] = ref{at, i}
		if r.IntN(3) == 0 {
			k := r.IntN(i + 1)
			if _, ok := live[k]; ok {
				require.True(t, q.Cancel(handles[k]))
				delete(live, k)
			}
		}
	}
	want := make([]ref, 0, len(live))
	for _, v := range live {
		want = append(want, v)
	}
	sort.Slice(want, func(i, j int) bool {
		if want[i].at != want[j].at {
			return want[i].at < want[j].at
		}
		return want[i].seq < want[j].seq
	})
	for _, w := range want {
		at, ev, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, w.at, at)
		require.Equal(t, w.seq, ev)
	}
	_, _, ok := q.Pop()
	require.False(t, ok)
}

func TestNoAllocationPerEvent(t *testing.T) {
	q := New[[2]int64](1024)
	for i := 0; i < 512; i++ {
		q.Push(Time(i), [2]int64{int64(i), 0})
	}
	allocs := testing.AllocsPerRun(1000, func() {
		at, ev, _ := q.Pop()
		h := q.Push(at+600, ev)
		q.Cancel(h)
		q.Push(at+512, ev)
	})
	require.Zero(t, allocs)
}

func BenchmarkPushPop(b *testing.B) {
	q := New[[2]int64](1 << 16)
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 1<<15; i++ {
		q.Push(Time(r.IntN(1<<20)), [2]int64{})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at, ev, _ := q.Pop()
		q.Push(at+Time(r.IntN(1<<20)), ev)
	}
}

// A reserved sequence number orders an event pushed later as if it had
// been pushed at the reservation; sequence 0 comes first at its time.
func TestReservedSequence(t *testing.T) {
	q := New[int](0)
	q.Push(10, 1)
	r := q.Reserve()
	q.Push(10, 3)
	q.PushSeq(10, 0, 0)
	q.Push(5, 4)
	q.PushSeq(10, r, 2)
	var got []int
	var seqs []uint64
	for q.Len() > 0 {
		_, ev, _ := q.Pop()
		got = append(got, ev)
		seqs = append(seqs, q.Popped())
	}
	require.Equal(t, []int{4, 0, 1, 2, 3}, got)
	require.Equal(t, []uint64{4, 0, 1, 2, 3}, seqs)
}
