package engine

// Dispatcher is what the loop runs a simulation's events against: the
// subsystems of a run behind one seam. The loop calls it for each instant
// (every event at one virtual time) in order: Begin, then Dispatch for
// each event at that time (events pushed at the same time during the
// instant join it), then Settle.
type Dispatcher[E any] interface {
	// Begin is called before the events at t; false ends the run there.
	Begin(t Time) (bool, error)
	// Dispatch handles one event popped at t.
	Dispatch(t Time, ev E) error
	// Settle is called after the last event at t: the work that waits
	// for an instant to end (a scheduling pass, say).
	Settle(t Time) error
}

// Run pops q's events in (time, sequence) order and dispatches them to d,
// instant by instant, until q is empty, the next event is past horizon
// (0: none), d's Begin says stop, or d returns an error (returned as is).
// The events are values and d a type parameter: the loop itself allocates
// nothing and makes no closure per event.
func Run[E any, D Dispatcher[E]](q *Queue[E], horizon Time, d D) error {
	for {
		t, ok := q.PeekTime()
		if !ok || (horizon > 0 && t > horizon) {
			return nil
		}
		if more, err := d.Begin(t); err != nil || !more {
			return err
		}
		for {
			if t2, ok := q.PeekTime(); !ok || t2 != t {
				break
			}
			_, ev, _ := q.Pop()
			if err := d.Dispatch(t, ev); err != nil {
				return err
			}
		}
		if err := d.Settle(t); err != nil {
			return err
		}
	}
}
