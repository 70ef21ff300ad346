// Package engine is the discrete-event core of the simulator: a virtual clock
// in integer milliseconds, a typed priority queue of value events and the
// event loop that dispatches them.
//
// Events are ordered by (time, sequence number): two events at the same
// instant pop in the order they were pushed, so a run is deterministic.
// Every push returns a Handle that can cancel the event before it fires.
// The queue stores events by value in a slice-backed 4-ary heap with a
// recycled slot table, so once the slices have grown a push, pop or cancel
// allocates nothing. Run is the event loop: it pops the queue instant by
// instant (every event at one time) and dispatches each event to a
// Dispatcher, the run's subsystems behind one seam, which settles each
// instant once its events are done (a scheduling pass). There are no
// goroutines and no wall-clock reads.
package engine
