// Package sim runs one simulation: it replays a workload against a
// cluster, turning arrivals, completions and deletions into engine events
// and running a scheduling pass after each instant at which something
// changed. The input is a Config (pools, a streaming JobSource, the
// scheduler profile and queue policy); the output is a Result (one record
// per job, GPU-hour ledgers per pool, a timeline) that reports and validate
// read without reaching back into the engine. A large run's records go to
// a temporary file as their jobs finish (spill.go: memory holds the jobs
// in flight, not every job); readers take them through Result.Records. Inference services
// (Config.Services, servicerun.go) run beside the jobs: their replica
// pods go through the same admission, scheduler and preemption, and a
// scaler event per service period decides how many there are.
//
// The event loop is engine.Run; the runner (run.go) is its Dispatcher.
// The runner's state is grouped by the subsystem that owns it: the job
// table, the workload feed and the records (jobs.go, records.go); the
// timeline and job counts (timeline.go); services (servicerun.go); GPU
// sharing, time-slicing and MIG relayouts (timeslice.go, relayout.go);
// disruption (disrupt.go); the scheduler's side and its preemption
// (preempt.go); the admission adapter over sim/admission (admit.go). The
// job table, feed, timeline, service set, GPU sharing (time-slicing's
// re-timing, MIG relayouts) and the admission adapter's submissions and
// releases work through their own methods, scheduling events through the
// small eventSink interface; job lifecycle (disruption, checkpoint,
// deadline), scheduler preemption, admission's cycle and evictions and
// the replicas' lifecycle are still methods of the runner, in those
// files, as each acts across several of the others. The capacity
// controller sees the run through capacityHost (supply.go), its
// capacity.Host: events on the run's clock, the waiting jobs, and what a
// node's notice or loss means for the jobs on it.
//
// Run checks the cluster's books as it goes (every allocation against free
// capacity, every gang bound whole) and once more at the end (free capacity
// plus live placements equals capacity on every node); a failure is an
// InvariantError, a bug rather than bad input.
package sim
