package validate

import (
	"errors"
	"fmt"
	"strings"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// InvariantError lists broken invariants: a bug, not bad input.
type InvariantError struct{ Violations []string }

func (e *InvariantError) Error() string {
	const show = 10
	v := e.Violations
	more := ""
	if len(v) > show {
		more = fmt.Sprintf("\n  ... and %d more", len(v)-show)
		v = v[:show]
	}
	return fmt.Sprintf("invariant violated (a gpuplan bug), %d problem(s):\n  %s%s", len(e.Violations), strings.Join(v, "\n  "), more)
}

// ExitCode is 4: a broken invariant, a gpuplan bug.
func (e *InvariantError) ExitCode() int { return 4 }

// Invariants checks a result's books. It returns nil or an *InvariantError.
func Invariants(res *sim.Result) error {
	var v []string
	bad := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	gang := false
	for _, p := range res.Profile["permit"] {
		if p == "Gang" {
			gang = true
		}
	}
	var held int64
	for i, j := range res.Records() {
		if int(j.ID) != i {
			bad("job record %d has id %d: jobs must be recorded once each, in order", i, j.ID)
			continue
		}
		held += j.HeldMilliMs
		checkJob(res, j, gang, bad)
	}
	for i := range res.Services {
		for _, u := range res.Services[i].Usage {
			held += u.Held[sim.ResGPU] // replica pods hold GPUs too
		}
	}
	var alloc int64
	for pi := range res.Pools {
		p := &res.Pools[pi]
		alloc += p.AllocatedMilliMs
		gpus := int64(p.Spec.Slots()) * int64(p.Spec.GPUsPerNode) * cluster.MilliGPU
		if static := int64(p.Spec.Nodes) * int64(p.Spec.GPUsPerNode) * cluster.MilliGPU; !res.Dynamic && p.SuppliedMilliMs != static*res.End {
			bad("pool %s supplied %d milli-GPU ms, its %d GPUs over %d ms supply %d", p.Spec.Name, p.SuppliedMilliMs, static/cluster.MilliGPU, res.End, static*res.End)
		}
		if p.SuppliedMilliMs < 0 || p.SuppliedMilliMs > gpus*res.End {
			bad("pool %s supplied %d milli-GPU ms, more than its %d node slots could", p.Spec.Name, p.SuppliedMilliMs, p.Spec.Slots())
		}
		if p.AllocatedMilliMs < 0 || p.AllocatedMilliMs > p.SuppliedMilliMs {
			bad("pool %s allocated %d milli-GPU ms of %d supplied", p.Spec.Name, p.AllocatedMilliMs, p.SuppliedMilliMs)
		}
		if pi < len(res.Timeline.Allocated) && pi < len(res.Timeline.Supplied) {
			var sum, supSum int64
			sup := res.Timeline.Supplied[pi]
			for b, a := range res.Timeline.Allocated[pi] {
				sum += a
				if b >= len(sup) {
					bad("pool %s has %d allocation buckets but %d supply buckets", p.Spec.Name, len(res.Timeline.Allocated[pi]), len(sup))
					break
				}
				supSum += sup[b]
				if w := res.Timeline.Width(b, res.End); a > sup[b] || a < 0 || sup[b] > gpus*w {
					bad("pool %s allocated %d milli-GPU ms in timeline bucket %d of width %d ms with %d supplied: over its capacity", p.Spec.Name, a, b, w, sup[b])
				}
			}
			if sum != p.AllocatedMilliMs || supSum != p.SuppliedMilliMs {
				bad("pool %s: timeline buckets add to %d allocated and %d supplied milli-GPU ms, the ledger says %d and %d", p.Spec.Name, sum, supSum, p.AllocatedMilliMs, p.SuppliedMilliMs)
			}
		}
	}
	if held != alloc {
		bad("jobs and service replicas held %d milli-GPU ms of GPUs but pools allocated %d: GPU time is not conserved", held, alloc)
	}
	if len(v) > 0 {
		return &InvariantError{Violations: v}
	}
	return nil
}

// jobLabel names a job in a violation: "job ID (NAME)".
type jobLabel struct{ j *sim.JobRecord }

func (l jobLabel) String() string { return fmt.Sprintf("job %d (%s)", l.j.ID, l.j.Name) }

func checkJob(res *sim.Result, j *sim.JobRecord, gang bool, bad func(string, ...any)) {
	// Formatted only when a check fails: a million jobs' names cost 48 MB.
	name := jobLabel{j}
	// A gang smaller than the job (minAvailable) binds its other pods as
	// they fit.
	gang = gang && j.MinAvailable == 0
	m := j.AllocMilli
	started := j.Start >= 0
	if started && j.Start < j.Submit {
		bad("%s started at %d before it was submitted at %d", name, j.Start, j.Submit)
	}
	if started && j.PodsBound != j.Replicas && (j.Outcome == sim.Completed || j.Outcome == sim.Deleted || j.Outcome == sim.Running) {
		bad("%s started with %d of %d pods bound", name, j.PodsBound, j.Replicas)
	}
	if gang && !started && j.PodsBound != 0 {
		bad("%s has %d of %d pods bound but has not started: a gang was partly bound", name, j.PodsBound, j.Replicas)
	}
	if j.PodsBound < 0 || j.PodsBound > j.Replicas {
		bad("%s has %d pods bound of %d", name, j.PodsBound, j.Replicas)
	}
	if j.HeldMilliMs < 0 {
		bad("%s held negative GPU time", name)
	}
	switch j.Outcome {
	case sim.Completed:
		// Its attempts took the work, the checkpoint writes and the time
		// lost to disruptions; one attempt takes exactly that, unless the
		// job shared time-sliced GPUs and ran slower.
		run := j.Duration + j.CheckpointMs + j.LostMs
		if !started || j.End < j.Start+run || (!j.Slowed && j.Attempts == 1 && j.End != j.Start+run) {
			bad("%s completed but ran from %d to %d for %d of work, %d of checkpoints and %d lost", name, j.Start, j.End, j.Duration, j.CheckpointMs, j.LostMs)
		}
	case sim.Deleted:
		if !started || j.Deadline == 0 || j.End > j.Deadline || (!j.Slowed && j.Attempts == 1 && (j.End != j.Deadline || j.End >= j.Start+j.Duration+j.CheckpointMs)) {
			bad("%s deleted while running, but start %d end %d deadline %d duration %d do not agree", name, j.Start, j.End, j.Deadline, j.Duration)
		}
	case sim.Failed:
		if j.End < 0 || j.Diagnosis() == "" || (j.Disruptions == 0 && !strings.HasPrefix(j.Diagnosis(), "DeadlineExceeded") && !strings.HasPrefix(j.Diagnosis(), "Deactivated by Kueue")) || j.Failures > j.Disruptions {
			bad("%s failed but has no end, no diagnosis, or no disruption or deadline to fail on", name)
		}
	case sim.OOMKilled:
		if !started || j.End != j.Start || j.HeldMilliMs != 0 || j.Diagnosis() == "" {
			bad("%s was OOM-killed, so it ends as it starts and holds nothing, with a diagnosis", name)
		}
	case sim.Abandoned:
		if started || j.Deadline == 0 || j.End != j.Deadline {
			bad("%s abandoned, but start %d end %d deadline %d do not agree", name, j.Start, j.End, j.Deadline)
		}
	case sim.Unschedulable:
		if started || j.End >= 0 || j.HeldMilliMs != 0 || j.PodsBound != 0 || j.Diagnosis() == "" {
			bad("%s is unschedulable but started, ended, held GPUs or has no diagnosis", name)
		}
	case sim.Running:
		endAt := j.Start + j.Duration + j.CheckpointMs
		if j.Deadline > 0 && j.Deadline < endAt {
			endAt = j.Deadline
		}
		if j.Slowed || j.Attempts > 1 || j.Recovery() != nil {
			endAt = res.End + 1 // slowed, restarted or checkpointing: it may run past its duration
		}
		if !started || j.End >= 0 || endAt <= res.End {
			bad("%s is running at the end (%d ms) but started at %d ms for %d ms", name, res.End, j.Start, j.Duration)
		}
	case sim.Pending:
		if (started && j.Preemptions == 0 && j.Disruptions == 0) || j.End >= 0 {
			bad("%s is pending at the end but started (and was never preempted nor disrupted) or ended", name)
		}
		if j.Diagnosis() == "" {
			bad("%s is pending at the end without a diagnosis", name)
		}
	default:
		bad("%s has no known outcome", name)
	}
	if j.End >= 0 && started && j.Attempts == 1 && (j.Outcome == sim.Completed || j.Outcome == sim.Deleted) {
		// Pods hold GPUs at least while the job runs (longer if bound early without a gang).
		if min := m * (j.End - j.Start); j.HeldMilliMs < min || (gang && j.HeldMilliMs != min) {
			bad("%s held %d milli-GPU ms; running pods holding %d milli-GPU for %d ms holds %d", name, j.HeldMilliMs, m, j.End-j.Start, min)
		}
	}
	var held int64
	for u := range j.Usage() {
		held += u.Held[sim.ResGPU]
		for k := range u.Held {
			if u.Lost[k] < 0 || u.Checkpoint[k] < 0 || u.Lost[k]+u.Checkpoint[k] > u.Held[k] {
				bad("%s: in pool %d its lost (%d) and checkpoint (%d) resource time exceed what it held (%d)", name, u.Pool, u.Lost[k], u.Checkpoint[k], u.Held[k])
			}
		}
	}
	if held != j.HeldMilliMs {
		bad("%s held %d milli-GPU ms, its per-pool usage adds to %d", name, j.HeldMilliMs, held)
	}
	if j.LostMs < 0 || j.CheckpointMs < 0 || j.Failures > j.Disruptions || (j.Attempts > 1 && j.Disruptions+j.Preemptions == 0) || j.Attempts > 1+j.Disruptions+j.Preemptions {
		bad("%s: %d attempts, %d disruptions, %d preemptions, %d failures, %d ms lost and %d ms checkpointing do not agree", name, j.Attempts, j.Disruptions, j.Preemptions, j.Failures, j.LostMs, j.CheckpointMs)
	}
}

// IsInvariant reports whether err is a broken invariant (from here or the engine).
func IsInvariant(err error) bool {
	var a *InvariantError
	var b *sim.InvariantError
	return errors.As(err, &a) || errors.As(err, &b)
}
