package sim

import (
	"fmt"
	"math"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
)

type evKind uint8

const (
	evArrival evKind = iota
	evFinish
	evDeadline
	evTick
	evRelayout
	evCapacity     // sub: a capacity.EventKind; job: its index
	evRequeue      // a disrupted job goes back to the queue after its backoff
	evExit         // a job that checkpointed on notice stops (stamp: attempt)
	evPodsReady    // waitForPodsReady's timeout for an admission (stamp: admission)
	evAdmitRequeue // a workload evicted by waitForPodsReady is pending again
	evAdmitCycle   // blockAdmission lifted during a pass: run admission again
	evScale        // a service's scaler period (job: the service; sub: scalePeriod, scaleStart or scaleDecided)
	evReady        // a replica's cold start is over (stamp: its attempt)
	evBackoff      // a job's backoff in the scheduling queue ends: a pass retries it
)

type event struct {
	kind  evKind
	sub   uint8
	job   int32
	stamp uint32
}

type jobState struct {
	info   scheduler.JobInfo
	spec   cluster.JobSpec
	placed []cluster.Placement
	start  Time
	end    Time
	// att is the current attempt, dl the job's deadline.
	att  attempt
	dl   jobDeadline
	diag string

	allocMilli int64
	// useHeld is the resource time (milli-GPU, milli-CPU, MiB x ms) the
	// job's pods held in its first pool, usePool (-1 before any).
	useHeld        [3]int64
	usePool        int32
	pool           int32 // pool of the first bound pod, -1 before
	attempts       uint32
	outcome        Outcome
	finished       bool
	running        bool // the current attempt runs
	sliced         bool // on time-sliced GPUs
	slowed         bool
	failOnDeadline bool
	// svc marks a replica pod of service svc-1 (0: a workload job).
	svc int16
	// recorded: its record is built (records.go).
	recorded bool
	// awaiting: the job waits for (re-)admission; admitAt is its first
	// admission (-1 before). Every job of an admission run needs them, so
	// they are here rather than in jobExtra.
	awaiting bool
	admitAt  Time
	// x holds what few jobs need (disruptions, time-slicing, a second
	// pool): nil for the rest, which keeps a million jobs small.
	x *jobExtra
}

// attempt is a job's current attempt: it started at start and finishes
// at plannedEnd, by the finish event (when not time-sliced).
type attempt struct {
	start, plannedEnd Time
	finish            engine.Handle
}

// jobDeadline is a job's effective deadline at (trace deletion or
// activeDeadline, whichever comes first; failOnDeadline for the latter)
// and its pending deadline event h.
type jobDeadline struct {
	h  engine.Handle
	at Time
}

// jobExtra is the part of a job's state most jobs never use.
type jobExtra struct {
	// Disruption: restore is what the current attempt pays first, saved
	// the work checkpoints committed; exit is a stop on notice under way.
	exit                  jobExit
	restore, saved        Time
	failures, disruptions int32
	lostMs, ckptMs        Time
	// lost0 and ckpt0 are the lost and checkpoint resource time of the
	// first pool; more is the usage of any other pools.
	lost0, ckpt0 [3]int64
	more         []PoolUsage
	// slice is its progress on time-sliced GPUs.
	slice sliceRate
	// step is a training job's step time on its first placement.
	step *StepRecord
	// Admission: preempted counts the times admission evicted it.
	preempted int32
	// preempting counts the jobs the scheduler evicted for this one.
	preempting int32
	// waitForPodsReady: notReady while admitted and not yet running;
	// readyStamp numbers its timeouts; requeues counts its evictions.
	notReady   bool
	readyStamp uint32
	requeues   int32
	evictedAt  Time
	// backoffUntil: a disrupted job waits for its pods to be recreated
	// until then (evRequeue), neither running nor queued.
	backoffUntil Time
}

// jobExit is a job checkpointing on notice: it is exiting (on) for cause
// and commits work (with writes spent and lost lost) when it stops; evict:
// the stop was admission's eviction, and the job goes back to admission
// when it has stopped.
type jobExit struct {
	on                 bool
	cause              capacity.Cause
	evict              bool
	work, writes, lost Time
}

// sliceRate is a job's progress on time-sliced GPUs: it progresses at
// rate (1 / most sharers of any of its GPUs) since rated, and work is the
// full-speed time it still needed then.
type sliceRate struct {
	work, rate float64
	rated      Time
}

// ext is the job's extra state, made on first use.
func (j *jobState) ext() *jobExtra {
	if j.x == nil {
		j.x = &jobExtra{}
	}
	return j.x
}

func (j *jobState) savedWork() Time {
	if j.x == nil {
		return 0
	}
	return j.x.saved
}

func (j *jobState) restoreTime() Time {
	if j.x == nil {
		return 0
	}
	return j.x.restore
}

func (j *jobState) isExiting() bool { return j.x != nil && j.x.exit.on }

// runner is one run: the engine's queue and the cluster, the scheduler,
// and the subsystems that own the rest of its state (each in its own
// file): the job table and records, the workload feed, the timeline and
// job counts, GPU sharing, services, disruption, the scheduler's side
// (pod mix, backoff, preemption) and admission.
type runner struct {
	cfg   Config
	q     *engine.Queue[event]
	c     *cluster.Cluster
	sched *scheduler.Scheduler
	fw    *scheduler.Framework

	jobs  jobTable     // jobs.go
	feed  workloadFeed // jobs.go
	tline timeline     // timeline.go
	share gpuSharing   // timeslice.go, relayout.go
	svc   serviceSet   // servicerun.go
	disr  disruption   // disrupt.go
	sc    schedSide    // preempt.go
	adm   *admState    // admit.go; nil without an admission policy
	st    loopState
}

// loopState is the event loop's own state.
type loopState struct {
	live     int // pending non-tick events
	finished int
	// freed: a pass may place pods it could not before (resources were
	// freed); dirty: a pass is due at the end of this instant.
	freed     bool
	dirty     bool
	now       Time
	stats     Stats
	lastEvent Time
	// For Config.StallLimit: the jobs arrived plus finished when that
	// count last changed (at progressAt).
	progressMark int
	progressAt   Time
}

// Run simulates cfg and returns its result.
func Run(cfg Config) (*Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run()
}

// newRunner checks cfg and sets up its run.
func newRunner(cfg Config) (*runner, error) {
	if cfg.Workload == nil {
		return nil, fmt.Errorf("simulation has no workload")
	}
	if cfg.Horizon < 0 {
		return nil, fmt.Errorf("horizon is negative")
	}
	if cfg.TimelineInterval <= 0 {
		cfg.TimelineInterval = Hour
	}
	if cfg.Horizon > 0 {
		if err := timelineFits(cfg.Horizon, cfg.TimelineInterval, len(cfg.Pools)); err != nil {
			return nil, err
		}
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 1 << 16
	}
	c, err := cluster.New(cfg.Pools)
	if err != nil {
		return nil, err
	}
	if len(cfg.HyperNodes) > 0 {
		if err := c.SetHyperNodes(cfg.HyperNodes); err != nil {
			return nil, fmt.Errorf("HyperNodes: %w", err)
		}
	} else if err := c.SetTASLevels(TASLevels(cfg.TASLevels, cfg.Pools)); err != nil {
		return nil, fmt.Errorf("topology levels: %w", err)
	}
	handle := &scheduler.Handle{Rand: models.NewStream(cfg.Seed, streamScheduler)}
	fw, err := newFramework(c, cfg.Plugins, handle, cfg.Seed, cfg.TieBreak, TieBreakLowestIndex)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:   cfg,
		q:     engine.New[event](1024),
		c:     c,
		fw:    fw,
		sched: scheduler.New(fw, cfg.Queue),
		sc:    schedSide{plug: handle, shapes: map[models.PodShape]int{}, backoffAt: -1},
	}
	r.share = gpuSharing{c: c, jobs: &r.jobs, onGPU: make([][]int32, c.GPUs().PhysGPUs())}
	r.sc.fabrics = cfg.Fabrics
	if r.sc.fabrics == nil {
		r.sc.fabrics = models.DefaultFabrics()
	}
	r.tline.tl.Interval = cfg.TimelineInterval
	r.tline.tl.Allocated = make([][]int64, len(c.Pools))
	if cfg.Fragmentation {
		handle.NeedsMix = true
	}
	for i := range c.Pools {
		if c.MIG().CanRelayout(i) {
			r.share.canRelayout = true
			r.share.inFlight = map[string]bool{}
		}
	}
	if handle.NeedsMix {
		r.tline.frag = &fragTracker{}
		r.tline.tl.FragMilli = make([][]int64, len(c.Pools))
	}
	for _, p := range cfg.Pools {
		if !p.Topology.Zero() {
			r.tline.tl.Levels = &LevelSlots{}
			break
		}
	}
	r.tline.tlAlloc = make([]int64, len(c.Pools))
	r.tline.tlSup = make([]int64, len(c.Pools))
	r.tline.tl.Supplied = make([][]int64, len(c.Pools))
	if cfg.Capacity != nil {
		k, err := capacity.New(*cfg.Capacity, c, capacityHost{r}, cfg.Seed+cfg.SupplyReplicate)
		if err != nil {
			return nil, err
		}
		r.disr.capacity = k
		r.disr.onNode = make([][]int32, len(c.Nodes))
		k.Start()
	}
	if cfg.Preemption {
		r.sc.preemptOn = true
		if r.disr.onNode == nil {
			r.disr.onNode = make([][]int32, len(c.Nodes))
		}
	}
	if cfg.Admission != nil {
		if r.adm, err = newAdmState(cfg.Admission); err != nil {
			return nil, err
		}
	}
	if err := r.svc.init(&r.cfg, r, r.q, &r.jobs, r.fw, r.adm); err != nil {
		return nil, err
	}
	// A plain run looks up no finished job by index again, so that its
	// record is built at once and its state dropped.
	r.jobs.plain = r.disr.capacity == nil && !r.sc.preemptOn && r.disr.onNode == nil
	r.jobs.recs.keep, r.jobs.recs.dir = cfg.RecordsInMemory, cfg.TempDir
	if r.jobs.recs.keep == 0 {
		r.jobs.recs.keep = DefaultRecordsInMemory
	}
	r.jobs.recs.reserve(cfg.JobsHint)
	return r, nil
}

// run simulates the run set up and returns its result.
func (r *runner) run() (*Result, error) {
	if err := r.feed.readNext(r.cfg.Workload, r.cfg.Horizon, int(r.jobs.njobs), r); err != nil {
		return nil, err
	}
	r.push(0, event{kind: evTick})
	// The events up to the horizon: engine.Run calls Begin, Dispatch and
	// Settle below.
	if err := engine.Run[event](r.q, r.cfg.Horizon, r); err != nil {
		return nil, err
	}
	res, err := r.finish()
	if err != nil {
		return nil, err
	}
	res.Profile = r.fw.Profile().Names()
	return res, nil
}

// cancel cancels the event h names, if it is still to come.
func (r *runner) cancel(h engine.Handle) bool {
	if r.q.Cancel(h) {
		r.st.live--
		return true
	}
	return false
}

func (r *runner) push(at Time, ev event) engine.Handle {
	if ev.live() {
		r.st.live++
	}
	return r.q.Push(at, ev)
}

// live reports whether the event is progress the run waits for: not a
// timeline tick, nor a capacity event (an interruption, a scale-down) that
// would come whether or not any job is left.
func (ev event) live() bool {
	switch ev.kind {
	case evTick, evScale, evReady:
		return false
	case evCapacity:
		return capacity.EventKind(ev.sub).Live()
	}
	return true
}

// Begin implements engine.Dispatcher: whether the run goes on to the
// events at t.
func (r *runner) Begin(t Time) (bool, error) {
	h := r.cfg.Horizon
	// With no job left, a run with a horizon still goes on to it when
	// nodes come and go: the nodes a burst launched are scaled down,
	// consolidated or expired, and billed until then, not to the
	// horizon. Services run to the horizon too.
	if r.st.live == 0 && !r.feed.hasNext && len(r.svc.svcs) == 0 && (h == 0 || r.disr.capacity == nil) {
		return false, nil // only ticks left
	}
	if h == 0 && r.drained() {
		// Every job has finished and none is to come: the run ends
		// with its last job, whatever nodes are still on their way or
		// going (they were for jobs that no longer need them).
		return false, nil
	}
	if h == 0 && r.cfg.StallLimit > 0 {
		if err := r.checkStall(t); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Dispatch implements engine.Dispatcher: one event at t.
func (r *runner) Dispatch(t Time, ev event) error {
	if len(r.svc.deferred) > 0 {
		r.svc.catchUp(t, r.q.Popped())
		if ev.kind == evScale && ev.sub == scaleWake {
			r.svc.materialise(int(ev.job))
			return nil
		}
	}
	r.st.stats.Events++
	if ev.live() {
		r.st.live--
	}
	// The run has reached t, whatever the event: one that is not
	// live (an interruption, a failure) may still stop, fail or
	// requeue a job and moves the supply ledger to t, so a run
	// without a horizon ends no earlier.
	r.st.lastEvent = t
	r.st.now = t
	if err := r.handle(t, ev); err != nil {
		return err
	}
	if r.cfg.Progress != nil && r.st.stats.Events%r.cfg.ProgressEvery == 0 {
		r.cfg.Progress(Progress{Now: t, Submitted: int(r.jobs.njobs) - r.svc.nrep, Finished: r.st.finished, Events: r.st.stats.Events})
	}
	if r.svc.chain > 0 {
		r.svc.syncChain()
	}
	return nil
}

// Settle implements engine.Dispatcher: once the events at t are done,
// the event budget is checked and admission and a scheduling pass (with
// preemption, MIG relayouts and the capacity controller after it) run if
// anything changed.
func (r *runner) Settle(t Time) error {
	if len(r.svc.deferred) > 0 {
		r.svc.catchUp(t, math.MaxUint64)
	}
	if m := r.cfg.MaxEvents; m > 0 && r.st.stats.Events > m+EventsPerJob*uint64(r.jobs.njobs) {
		return &BudgetError{Max: m, Events: r.st.stats.Events, Jobs: int64(r.jobs.njobs), Reached: t}
	}
	if r.adm != nil && r.adm.dirty {
		if err := r.admitCycle(t); err != nil {
			return err
		}
	}
	if r.st.dirty {
		if err := r.pass(t); err != nil {
			return err
		}
	}
	if len(r.svc.deferred) > 0 && r.passDue() {
		// A pass is due at the next event, which may be a period.
		r.svc.materialiseAll()
	}
	return nil
}

// passDue implements serviceHost: a scheduling pass or an admission
// cycle is due at the end of this instant.
func (r *runner) passDue() bool { return r.st.dirty || (r.adm != nil && r.adm.dirty) }

// pass runs a scheduling pass at t and what follows one: scheduler
// preemption, MIG relayouts, the capacity controller.
func (r *runner) pass(t Time) error {
	r.st.stats.Passes++
	if err := r.sched.Pass(t, r.st.freed, r); err != nil {
		return invariant(err)
	}
	r.st.dirty, r.st.freed = false, false
	r.sc.armBackoff(r.sched, r)
	if r.sc.preemptOn {
		if err := r.preemptPass(t); err != nil {
			return err
		}
	}
	if r.share.canRelayout {
		n, err := r.share.relayout(t, r.sched.WantedMIG(), r)
		r.st.stats.Relayouts += uint64(n)
		if err != nil {
			return err
		}
	}
	if r.disr.capacity != nil {
		r.disr.capacity.AfterPass(t)
	}
	return nil
}

// drained reports whether every job of the workload has arrived and
// finished (a run with services never drains: it runs to its horizon).
func (r *runner) drained() bool {
	return !r.feed.hasNext && len(r.svc.svcs) == 0 && int(r.jobs.njobs)-r.svc.nrep == r.st.finished
}

// checkStall stops a run without a horizon in which no job has arrived
// or finished for its stall limit (Config.StallLimit) by t.
func (r *runner) checkStall(t Time) error {
	if m := int(r.jobs.njobs) + r.st.finished; m != r.st.progressMark {
		r.st.progressMark, r.st.progressAt = m, r.st.now
	}
	limit := max(r.cfg.StallLimit, 10*r.feed.longest)
	if t-r.st.progressAt <= limit {
		return nil
	}
	jobs := int(r.jobs.njobs) - r.svc.nrep
	return &StallError{At: t, Limit: limit, Unfinished: jobs - r.st.finished, Jobs: jobs}
}

func (r *runner) handle(t Time, ev event) error {
	switch ev.kind {
	case evFinish, evDeadline, evRequeue, evExit, evPodsReady, evAdmitRequeue:
		if r.jobs.gone(ev.job) {
			// Its job finished and is recorded, its state dropped
			// (records.go): a deadline, restart, exit, waitForPodsReady
			// timeout or admission requeue does nothing to a finished
			// job; a finish would be a second one.
			if ev.kind == evFinish {
				return invariant(fmt.Errorf("job %d finishes again after it was recorded", ev.job))
			}
			r.jobs.stale++
			return nil
		}
	}
	switch ev.kind {
	case evArrival:
		return r.arrive(t)
	case evFinish:
		return r.complete(t, r.jobs.at(ev.job))
	case evDeadline:
		return r.expire(t, r.jobs.at(ev.job))
	case evTick:
		return r.tick(t)
	case evRelayout:
		if err := r.share.endRelayout(t, ev.job); err != nil {
			return err
		}
		r.st.dirty, r.st.freed = true, true
	case evCapacity:
		return invariant(r.disr.capacity.Handle(t, capacity.Event{Kind: capacity.EventKind(ev.sub), Index: ev.job, Stamp: ev.stamp}))
	case evRequeue:
		j := r.jobs.at(ev.job)
		j.x.backoffUntil = 0
		return r.requeue(t, j)
	case evPodsReady:
		return r.podsReadyTimeout(t, r.jobs.at(ev.job), ev.stamp)
	case evAdmitRequeue:
		r.adm.requeue(t, r.jobs.at(ev.job))
	case evAdmitCycle:
		r.adm.dirty = true
	case evBackoff:
		if t == r.sc.backoffAt {
			r.sc.backoffAt = -1
		}
		r.st.dirty = true
	case evScale:
		return r.svc.scale(t, int(ev.job), ev.sub == scaleStart, ev.sub == scaleDecided, int(ev.stamp))
	case evReady:
		j := r.jobs.at(ev.job)
		if !j.finished && j.running && j.attempts == ev.stamp {
			r.svc.replicaReady(t, j)
		}
	case evExit:
		j := r.jobs.at(ev.job)
		if j.running && j.isExiting() && j.attempts == ev.stamp {
			return r.disrupt(t, j, j.x.exit.cause, true)
		}
	}
	return nil
}

// neverRuns begins the diagnosis of a job that no node could ever hold,
// queued under an admission policy all the same (a pending job's record
// has no diagnosis of its own before the end of the run).
const neverRuns = "never schedulable, queued all the same as Kueue counts quota, not nodes: "

// MaxJobs bounds the jobs of one run: each keeps a record of about 220
// bytes (208 of record, its name; past Config.RecordsInMemory, 40 to 60
// bytes in a temporary file instead) and, while it is in flight (in any
// run with a capacity controller or preemption: to the end),
// 352 of state, so 20 million is some 1 (a plain run) to 12 GB.
const MaxJobs = 20_000_000

func (r *runner) arrive(t Time) error {
	if r.jobs.njobs >= MaxJobs {
		return &WorkloadError{Job: int(r.jobs.njobs), Name: r.feed.next.Name, Err: fmt.Errorf("the workload has more than %d jobs, the most one run holds; cut it with a horizon or split the trace", MaxJobs)}
	}
	j := r.jobs.add(r.sched)
	j.spec = r.feed.next
	r.jobs.recs.n++
	r.feed.longest = max(r.feed.longest, j.spec.Duration)
	if r.sc.plug.NeedsMix {
		if err := r.sc.countShape(&j.spec, r.jobs.njobs); err != nil {
			return err
		}
	}

	j.info.FirstReason, j.info.LastReason = -1, -1
	ok, why := r.fw.FitsEmpty(&j.info)
	if !ok {
		d, err := r.fw.Diagnose(t, &j.info, true)
		if err != nil {
			return invariant(err)
		}
		rejected := 0
		for _, n := range d.Reasons {
			rejected += n
		}
		switch {
		case rejected >= d.Nodes:
			why = d.Message()
		case rejected > 0:
			why += "; " + d.Message()
		}
	}
	switch {
	case !ok && r.adm == nil:
		j.outcome = Unschedulable
		j.finished = true
		j.info.Done = true
		j.diag = why
		r.st.finished++
		r.jobs.retire(j, r.adm != nil)
	default:
		if !ok {
			// Under an admission policy a job no pool could hold is queued
			// all the same, as Kueue queues its Workload (it counts quota,
			// not nodes): it waits in its ClusterQueue (a StrictFIFO one
			// waits behind it) or, admitted, holds its quota while its
			// pods stay pending. Its record says it can never run.
			j.diag = neverRuns + why
		}
		r.tline.addPending(t, j, 1)
		if r.adm != nil {
			if err := r.adm.submit(t, j); err != nil {
				return err
			}
		} else {
			r.sched.Enqueue(&j.info)
			r.st.dirty = true
		}
		j.dl.at = j.spec.Deadline
		if rec := j.spec.Recovery; rec != nil && rec.ActiveDeadline > 0 {
			if ad := j.spec.Submit + rec.ActiveDeadline; j.dl.at == 0 || ad < j.dl.at {
				j.dl.at, j.failOnDeadline = ad, true
			}
		}
		if j.dl.at > 0 {
			j.dl.h = r.push(j.dl.at, event{kind: evDeadline, job: j.info.ID})
		}
	}
	return r.feed.readNext(r.cfg.Workload, r.cfg.Horizon, int(r.jobs.njobs), r)
}

// countShape adds a job to the pod mix seen so far and refreshes the mix
// plugins read at 1, 2, 4, ... jobs, then every mixRefresh jobs.
// n is the jobs (and replica pods) of the run so far.
func (s *schedSide) countShape(j *cluster.JobSpec, n int32) error {
	if len(j.Groups) == 0 {
		s.shapes[ShapeOf(j)] += int(j.Replicas)
	} else {
		for g := 0; g <= len(j.Groups); g++ {
			part := j.Part(g)
			s.shapes[ShapeOf(&part)] += int(part.Replicas)
		}
	}
	if n&(n-1) == 0 || n%mixRefresh == 0 {
		mix, err := models.NewPodMix(s.shapes, MixCoverage)
		if err != nil {
			return invariant(err)
		}
		s.plug.Mix = mix
		s.plug.MixVersion++
	}
	return nil
}

// Bind implements scheduler.Binder: the framework committed placements.
func (r *runner) Bind(info *scheduler.JobInfo, pls []cluster.Placement) error {
	j := r.jobs.at(info.ID)
	if j.placed == nil {
		j.placed = r.jobs.placements(j.spec.Replicas)
	}
	if j.pool < 0 && len(pls) > 0 {
		j.pool = r.c.Nodes[pls[0].Node].Pool
	}
	j.placed = append(j.placed, pls...)
	if int32(len(j.placed)) != info.Bound || info.Bound > j.spec.Replicas {
		return &InvariantError{Err: fmt.Errorf("job %d has %d placements for %d bound pods of %d", info.ID, len(j.placed), info.Bound, j.spec.Replicas)}
	}
	if r.disr.onNode != nil {
		r.disr.placedOn(r.st.now, j, pls)
	}
	if info.Bound < j.spec.Replicas {
		return nil
	}
	// Every pod is bound: the job starts (again, after a disruption).
	t := r.st.now
	if j.x != nil && j.x.notReady {
		r.adm.podsReady(j, r.st.now, r)
	}
	if j.svc != 0 {
		return r.svc.replicaBound(t, j)
	}
	r.tline.started(t)
	if j.attempts == 0 {
		j.start = t
		if j.spec.Training != nil {
			if err := startTraining(r.c, r.sc.fabrics, j); err != nil {
				return err
			}
		}
	}
	j.attempts++
	j.running = true
	j.att.start = t
	if x := j.x; x != nil {
		x.exit.on, x.restore = false, 0
	}
	rec := j.spec.Recovery
	if j.savedWork() > 0 && rec != nil {
		j.ext().restore = rec.RestoreCost
	}
	j.att.plannedEnd = t + j.restoreTime() + wallTime(j.spec.Duration-j.savedWork(), rec)
	end := j.att.plannedEnd
	if d := j.dl.at; d > 0 && d < end {
		end = d
	}
	if j.dl.h.Valid() {
		r.q.Cancel(j.dl.h)
		r.st.live--
		j.dl.h = engine.Handle{}
	}
	if info.FirstReason < 0 && t > j.spec.Submit {
		info.FirstReason = r.sched.BlockedReason()
	}
	j.allocMilli = 0
	for _, pl := range j.placed {
		j.allocMilli += int64(pl.Milli)
		if r.c.GPUs().TimeSliced(pl.Node) {
			j.sliced = true
		}
	}
	if j.sliced {
		return r.startSliced(t, j)
	}
	j.att.finish = r.push(end, event{kind: evFinish, job: info.ID})
	return nil
}

// releaseAll frees every pod of job j. Of the time since the current
// attempt started, lost was lost to a disruption and ckpt spent writing
// checkpoints: the job's usage records them per pool.
func (r *runner) releaseAll(t Time, j *jobState, lost, ckpt Time) error {
	pod := &j.spec.Pod
	for k, pl := range j.placed {
		if len(j.spec.Groups) > 0 {
			pod, _ = j.spec.PodAt(int32(k))
		}
		if err := r.c.Release(t, pl, pod); err != nil {
			return invariant(err)
		}
		j.book(r.c.Nodes[pl.Node].Pool, [3]int64{int64(pl.Milli), pod.MilliCPU, pod.MemoryMiB}, t-pl.At, lost, ckpt)
	}
	if pb := r.cfg.Planted; pb != nil && pb.DoubleReleaseOnLoss && lost > 0 && len(j.placed) > 0 {
		if err := r.c.Release(t, j.placed[0], &j.spec.Pod); err != nil {
			return invariant(err)
		}
	}
	if r.disr.onNode != nil {
		r.disr.releasedFrom(r.st.now, j)
	}
	r.jobs.unplace(j)
	r.st.freed, r.st.dirty = true, true
	return nil
}

// book adds to job j's usage in pool p: resources res held for dt, of
// which lost and ckpt (capped at dt) were lost to a disruption and spent
// writing checkpoints.
func (j *jobState) book(p int32, res [3]int64, dt, lost, ckpt Time) {
	lost, ckpt = min(lost, dt), min(ckpt, dt)
	if j.usePool < 0 {
		j.usePool = p
	}
	if p == j.usePool {
		for k, v := range res {
			j.useHeld[k] += v * dt
		}
		if lost > 0 || ckpt > 0 {
			x := j.ext()
			for k, v := range res {
				x.lost0[k] += v * lost
				x.ckpt0[k] += v * ckpt
			}
		}
		return
	}
	x := j.ext()
	var u *PoolUsage
	for i := range x.more {
		if x.more[i].Pool == p {
			u = &x.more[i]
		}
	}
	if u == nil {
		x.more = append(x.more, PoolUsage{Pool: p})
		u = &x.more[len(x.more)-1]
	}
	for k, v := range res {
		u.Held[k] += v * dt
		u.Lost[k] += v * lost
		u.Checkpoint[k] += v * ckpt
	}
}

// endAttempt stops job j's running attempt at t: its pods are released,
// lost and writes (of the attempt's time) booked, its GPUs' other sharers
// re-timed.
func (r *runner) endAttempt(t Time, j *jobState, gpus []int32, lost, writes Time) error {
	if lost > 0 || writes > 0 {
		x := j.ext()
		x.lostMs += lost
		x.ckptMs += writes
	}
	if j.svc != 0 {
		r.svc.replicaStopping(t, j)
	}
	if err := r.releaseAll(t, j, lost, writes); err != nil {
		return err
	}
	if j.sliced {
		r.share.stop(t, j, gpus, r)
	}
	r.tline.addRunning(t, j, -1)
	j.running = false
	return nil
}

func (r *runner) complete(t Time, j *jobState) error {
	gpus := slicedGPUs(r.c, j)
	left := j.att.plannedEnd - t // work left when not time-sliced
	if j.sliced {
		left = Time(math.Round(j.x.slice.work - float64(t-j.x.slice.rated)*j.x.slice.rate))
	}
	// A whole attempt spends its restore and its checkpoint writes; one cut
	// short by the deadline wrote the checkpoints it had reached.
	var writes Time
	if rec := j.spec.Recovery; rec != nil && !j.sliced {
		if left <= 0 {
			writes = checkpoints(j.spec.Duration-j.savedWork(), rec.CheckpointInterval) * rec.CheckpointCost
		} else {
			_, writes, _ = progress(j, t)
		}
	}
	if err := r.endAttempt(t, j, gpus, min(j.restoreTime(), t-j.att.start), writes); err != nil {
		return err
	}
	j.end = t
	j.finished = true
	j.outcome = Completed
	if j.dl.at > 0 && t == j.dl.at && left > 0 {
		j.outcome = Deleted
		if j.failOnDeadline {
			j.outcome = Failed
			j.diag = "DeadlineExceeded: the job was active longer than its activeDeadlineSeconds"
		}
	}
	r.st.finished++
	r.adm.finish(t, j, r)
	r.jobs.retire(j, r.adm != nil)
	return nil
}

func (r *runner) expire(t Time, j *jobState) error {
	j.dl.h = engine.Handle{}
	if j.finished || j.running {
		return nil
	}
	if len(j.placed) > 0 {
		if err := r.releaseAll(t, j, 0, 0); err != nil {
			return err
		}
	}
	r.tline.addPending(t, j, -1)
	r.sched.Remove(&j.info)
	j.finished = true
	j.outcome = Abandoned
	if j.failOnDeadline {
		j.outcome = Failed
		j.diag = "DeadlineExceeded: the job was active longer than its activeDeadlineSeconds"
	}
	j.end = t
	r.st.finished++
	r.adm.finish(t, j, r)
	r.jobs.retire(j, r.adm != nil)
	r.st.dirty = true // a strict FIFO head may have gone
	return nil
}

// EventsPerJob is the allowance of events each submitted job adds to
// Config.MaxEvents: far more than a job makes on average (about 2), so
// that a large trace is never stopped for its jobs.
const EventsPerJob = 8

// BudgetError is a run that made more events than its budget allows. It
// is bad input: a setting (an MTBF, a period, a workload that never
// drains) costs more than the budget, which --max-events raises.
type BudgetError struct {
	Max, Events uint64
	Jobs        int64
	Reached     Time
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the run made %d events by %s of simulated time, more than its budget of %d (--max-events) and %d for each of its %d jobs: a setting makes far more events than the estimate before the run found (node failures or interruptions, a scaler's period, a run without a horizon); give a horizon, lower that setting or raise --max-events",
		e.Events, durationText(e.Reached), e.Max, EventsPerJob, e.Jobs)
}

// ExitCode is 2: bad input.
func (e *BudgetError) ExitCode() int { return 2 }

// MaxTimelineCells bounds the timeline's memory: buckets x (two series a
// pool, two for the jobs), 8 bytes each (64 MiB).
const MaxTimelineCells = 8 << 20

// TimelineError is a timeline interval too fine for the run: more buckets
// than MaxTimelineCells allows. It is bad input.
type TimelineError struct {
	Interval, Reached Time
	Buckets           int64
}

func (e *TimelineError) Error() string {
	return fmt.Sprintf("output.timelineInterval %s makes more than %d timeline buckets by %s of simulated time; use an interval of at least %s",
		durationText(e.Interval), e.Buckets, durationText(e.Reached), durationText(e.Reached/e.Buckets+1))
}

// ExitCode is 2: bad input.
func (e *TimelineError) ExitCode() int { return 2 }

func maxBuckets(pools int) int64 { return MaxTimelineCells / int64(2*pools+2) }

// timelineFits refuses a horizon and interval whose timeline would not
// fit, before anything is allocated.
func timelineFits(horizon, interval Time, pools int) error {
	if n := maxBuckets(pools); horizon/interval > n {
		return &TimelineError{Interval: interval, Reached: horizon, Buckets: n}
	}
	return nil
}

func (r *runner) tick(t Time) error {
	if n := maxBuckets(len(r.c.Pools)); int64(len(r.tline.tl.PendingJobMs)) >= n {
		// A run without a horizon went on longer than its timeline holds.
		return &TimelineError{Interval: r.tline.tl.Interval, Reached: t, Buckets: n}
	}
	r.c.Advance(t)
	r.tline.integrate(t)
	if t > 0 {
		r.tline.closeBucket(r.c, r.sc.plug)
		r.svc.close(t)
	}
	r.tline.lastTick = t
	next := t + r.tline.tl.Interval
	if r.cfg.Horizon > 0 && next > r.cfg.Horizon {
		return nil
	}
	r.push(next, event{kind: evTick})
	return nil
}

// Random streams of a run, from its seed.
const (
	streamScheduler = 1
	streamInflation = 2
	streamShuffle   = 3
	streamNodeOrder = 4
)

// MixCoverage is the share of pods the typical pod mix covers (as in FGD).
const MixCoverage = 0.95

const mixRefresh = 1024

// Tie breaks between nodes of equal score.
const (
	TieBreakLowestIndex = "lowestIndex"
	TieBreakRandom      = "random"
	// TieBreakNodeOrder prefers nodes in a fixed random order drawn from the seed.
	TieBreakNodeOrder = "nodeOrder"
)

// ShapeOf is the fragmentation shape of a job's pods.
func ShapeOf(j *cluster.JobSpec) models.PodShape {
	s := models.PodShape{MilliCPU: j.Pod.MilliCPU}
	switch {
	case j.Pod.GPUMilli > 0:
		s.GPUs, s.GPUMilli = 1, j.Pod.GPUMilli
	case j.Pod.GPUs > 0:
		s.GPUs, s.GPUMilli = j.Pod.GPUs, models.MilliGPU
	}
	if c := j.Constraints; c != nil {
		for _, term := range c.Affinity {
			for _, r := range term {
				if r.Key == cluster.LabelGPUModel && r.Op == cluster.OpIn && len(c.Affinity) == 1 {
					s.Models = strings.Join(r.Values, "|")
				}
			}
		}
	}
	return s
}

// newFramework builds the scheduling framework of a run from its plugin
// configuration (the default profile when empty) and its tie-break rule;
// an empty tieBreak means def.
func newFramework(c *cluster.Cluster, pcfg []scheduler.PluginConfig, handle *scheduler.Handle, seed uint64, tieBreak, def string) (*scheduler.Framework, error) {
	if len(pcfg) == 0 {
		pcfg = plugins.Default()
	}
	prof, err := plugins.NewProfile(pcfg, handle)
	if err != nil {
		return nil, err
	}
	fw, err := scheduler.NewFramework(prof, c)
	if err != nil {
		return nil, err
	}
	if tieBreak == "" {
		tieBreak = def
	}
	switch tieBreak {
	case TieBreakLowestIndex:
	case TieBreakRandom:
		fw.SetRandomTieBreak(handle.Rand)
	case TieBreakNodeOrder:
		fw.SetTieOrder(models.NewStream(seed, streamNodeOrder))
	default:
		return nil, fmt.Errorf("unknown tie break %q (want %s, %s or %s)", tieBreak, TieBreakLowestIndex, TieBreakRandom, TieBreakNodeOrder)
	}
	return fw, nil
}

// armBackoff makes sure a pass runs when the earliest backoff in the
// scheduling queue ends.
func (s *schedSide) armBackoff(sched *scheduler.Scheduler, ev eventSink) {
	if at, ok := sched.NextBackoff(); ok && (s.backoffAt < 0 || at < s.backoffAt) {
		ev.push(at, event{kind: evBackoff})
		s.backoffAt = at
	}
}
