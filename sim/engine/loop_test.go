package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// script is a Dispatcher that logs what the loop calls, and at an event
// of value v pushes the events then[v] (at their times).
type script struct {
	q       *Queue[int]
	log     []string
	then    map[int][]push
	stopAt  Time // Begin at this time says stop (0: never)
	failOn  int  // Dispatch of this event fails (0: never)
	settled int
}

type push struct {
	at Time
	ev int
}

func (s *script) Begin(t Time) (bool, error) {
	s.log = append(s.log, fmt.Sprintf("begin %d", t))
	return s.stopAt == 0 || t < s.stopAt, nil
}

func (s *script) Dispatch(t Time, ev int) error {
	s.log = append(s.log, fmt.Sprintf("%d@%d", ev, t))
	if ev == s.failOn {
		return errors.New("boom")
	}
	for _, p := range s.then[ev] {
		s.q.Push(p.at, p.ev)
	}
	return nil
}

func (s *script) Settle(t Time) error {
	s.settled++
	s.log = append(s.log, fmt.Sprintf("settle %d", t))
	return nil
}

func newScript(evs ...push) *script {
	s := &script{q: New[int](0), then: map[int][]push{}}
	for _, p := range evs {
		s.q.Push(p.at, p.ev)
	}
	return s
}

func TestRunDispatchesInstantByInstant(t *testing.T) {
	s := newScript(push{10, 1}, push{5, 2}, push{10, 3})
	// Event 2 at 5 pushes 4 at 5 (the same instant, after 2) and 5 at 10
	// (after 1 and 3, pushed before it); event 1 pushes 6 at 20.
	s.then[2] = []push{{5, 4}, {10, 5}}
	s.then[1] = []push{{20, 6}}
	require.NoError(t, Run[int](s.q, 0, s))
	require.Equal(t, []string{
		"begin 5", "2@5", "4@5", "settle 5",
		"begin 10", "1@10", "3@10", "5@10", "settle 10",
		"begin 20", "6@20", "settle 20",
	}, s.log)
	require.Equal(t, Time(20), s.q.Now())
}

func TestRunStopsAtTheHorizon(t *testing.T) {
	s := newScript(push{0, 1}, push{100, 2}, push{101, 3})
	// Events at the horizon run; the one after it stays queued.
	require.NoError(t, Run[int](s.q, 100, s))
	require.Equal(t, []string{"begin 0", "1@0", "settle 0", "begin 100", "2@100", "settle 100"}, s.log)
	require.Equal(t, 1, s.q.Len())
}

func TestRunStopsWhenBeginSaysSo(t *testing.T) {
	s := newScript(push{1, 1}, push{2, 2}, push{3, 3})
	s.stopAt = 2
	require.NoError(t, Run[int](s.q, 0, s))
	require.Equal(t, []string{"begin 1", "1@1", "settle 1", "begin 2"}, s.log)
	require.Equal(t, 2, s.q.Len(), "2 and 3 were not popped")
}

func TestRunReturnsTheFirstError(t *testing.T) {
	s := newScript(push{1, 1}, push{1, 2}, push{1, 3})
	s.failOn = 2
	err := Run[int](s.q, 0, s)
	require.EqualError(t, err, "boom")
	require.Equal(t, []string{"begin 1", "1@1", "2@1"}, s.log)
	require.Zero(t, s.settled, "an instant cut short is not settled")
}

func TestRunAllocatesNothingPerEvent(t *testing.T) {
	q := New[int](64)
	d := &counter{q: q}
	// Warm the queue's slices, then run 1,000 events that each push the
	// next: nothing is allocated.
	q.Push(0, 0)
	require.NoError(t, Run[int](q, 0, d))
	d.n = 0
	allocs := testing.AllocsPerRun(10, func() {
		d.n = 0
		q.Push(q.Now(), 0)
		if err := Run[int](q, 0, d); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 1000, d.n)
	require.Zero(t, allocs)
}

// counter pushes the next event 1 ms later until it has seen 1,000.
type counter struct {
	q *Queue[int]
	n int
}

func (c *counter) Begin(Time) (bool, error) { return true, nil }
func (c *counter) Settle(Time) error        { return nil }
func (c *counter) Dispatch(t Time, ev int) error {
	if c.n++; c.n < 1000 {
		c.q.Push(t+1, ev+1)
	}
	return nil
}
