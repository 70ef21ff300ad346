package sim

import (
	"fmt"
	"math"
	"slices"

	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/services"
)

// Inference services (Config.Services). A replica is a job of the
// runner's job table marked with its service (jobState.svc): one pod, or
// a LeaderWorkerSet's group of ServiceConfig.PodsPerReplica pods, bound
// and stopped together as any multi-pod job's (a pod lost takes the group
// down, as LWS's RecreateGroupOnPodRestart does). It is
// admitted, scheduled, preempted and disrupted like any pod, but it never
// finishes. It runs until its service deletes it or the run ends; when
// preemption, admission or a lost node stops it, its ReplicaSet makes a new
// pod at once (the same entry, queued again with a new creation time and
// a new cold start). A replica is ready (serves) ImagePull + ModelLoad
// after it is bound.
//
// Replicas are not workload jobs: they stay out of Result.Jobs, the job
// outcome counts, the pending and running job integrals and Progress, and
// their events do not keep a run going (a run with services runs to its
// horizon). Their pods' resource time is pool allocation like any pod's
// and goes to ServiceResult.Usage.
//
// Each service is accounted (services.Service.Advance) over every interval
// in which its replica and ready counts held: at each replica change
// (bound, ready, stopped, deleted), at each timeline bucket end and at the
// end, and at each of its scaler's periods unless the scaler reads only
// the request rate (lazy: nothing it reads depends on the accounting).
// Advance cuts a long interval where the model needs it. A stretch of
// periods the scaler is known to keep is done in one step (syncChain): it
// stays out of the event queue, its periods done as the run comes past
// them (deferPeriods), several services' in the order their events would
// have popped in (catchUp). An LLM service whose scaler
// reads its queue (KEDA on vllm:num_requests_waiting) is settled too while
// it carries no backlog and the rate stays in the band where its metric
// keeps the replicas (services.SettledBand): its periods there are kept
// the same way and it is accounted lazily over them.
// The cost is per replica change, timeline bucket, change of the rate and
// period not skipped, never per request, and a run without services pays
// nothing.
//
// Replicas on time-sliced GPUs take their turn (the jobs sharing the GPU
// slow down) but are not slowed themselves, and their GPU memory is not
// checked against the GPU's.

// An evScale event's sub: a scaler period, the run's start (the initial
// replicas are made), or a period whose decision syncChain already took
// (the event's stamp is the replicas it wants).
const (
	scalePeriod uint8 = iota
	scaleStart
	scaleDecided
	scaleWake // the end of a deferred stretch (deferredPeriods); not counted
)

// deferredPeriods is a stretch of a settled service's scaler periods kept
// out of the event queue (deferPeriods). The periods from next on are
// each the period event the run would hold: next's with sequence number
// seq, every later one's pushed as the one before it is done. They are
// done (catchUp) as the run comes past them in the queue's order, and all
// the periods before wake are kept; at wake, or when the service's
// replicas change first, the period at next is pushed as an event with
// seq (materialise) and the chain goes on as events again.
//
// The periods done are recorded in the scaler (SkipPeriods) only as the
// stretch ends, in one step from from: nothing reads the scaler before.
type deferredPeriods struct {
	on   bool
	next Time
	seq  uint64
	wake engine.Handle
	from Time
	pods int
}

// keptRun is one deferred service's periods from, from+p, ..., last that
// catchUp does at once; seq is the sequence number of the one at from.
type keptRun struct {
	k          int32
	from, last Time
	p          Time
	seq        uint64
}

// serviceSet is the run's inference services; nrep counts the entries of
// the job table that are their replica pods. chain is 1 + the service
// whose scaler period at chainAt was just done (0: none): syncChain
// schedules its next. deferred are the services whose periods are kept
// out of the queue (svcState.vp), in the order of their next periods'
// (time, sequence number); kept and keptAt are catchUp's scratch.
type serviceSet struct {
	svcs     []svcState
	chain    int
	chainAt  Time
	deferred []int32
	kept     []keptRun
	keptAt   func(i uint64) Time
	nrep     int
	// run is the run, for the replicas' pods and the events; q is its
	// event queue (deferred periods reserve places in it) and jobs its
	// job table, where the replicas' pods are.
	run  serviceHost
	q    *engine.Queue[event]
	jobs *jobTable
	// horizon, periodEvents and periodsSkipped are the Config's.
	horizon        Time
	periodEvents   bool
	periodsSkipped *int
}

// serviceHost is what the services ask of the run: its events, and the
// steps a replica's pod shares with every job's (the runner).
type serviceHost interface {
	eventSink
	// passDue says a scheduling pass or an admission cycle is due at
	// the end of this instant.
	passDue() bool
	// countPeriods counts the periods first, first+step, ..., last as
	// the run's events.
	countPeriods(first, last, step Time)
	// countEvents counts n events done outside the queue; at(i) is the
	// time of the i-th of them (from 1).
	countEvents(n uint64, at func(i uint64) Time)
	// newPod makes a replica pod of service k at t from spec: pending,
	// in admission or the scheduler's queue.
	newPod(t Time, k int, spec cluster.JobSpec) (*jobState, error)
	// startPod starts the attempt of a replica pod just bound.
	startPod(t Time, j *jobState)
	// deletePod deletes a replica pod: a bound one releases its node.
	deletePod(t Time, j *jobState) error
	// restartPod ends the attempt of a pod taken by preemption or a lost
	// node and queues it again.
	restartPod(t Time, j *jobState) error
}

// svcState is one service during the run.
type svcState struct {
	cfg      *ServiceConfig
	svc      *services.Service
	scaler   services.Scaler
	min, max int
	initial  int
	period   Time
	cold     Time
	// pods are the live replica pods in creation order; ready counts those
	// serving; boundMilli is the milli-GPU the bound ones hold.
	pods       []replica
	ready      int
	boundMilli int64
	// last is the time accounted up to; gpuMs integrates boundMilli.
	last  Time
	gpuMs float64
	// vp is the stretch of periods kept out of the queue, if on.
	vp deferredPeriods
	// mark is the service's totals at the start of the current timeline
	// bucket (at markAt).
	mark   svcMark
	markAt Time
	tl     []ServicePoint

	coldStarts int
	coldMs     Time
	disrupted  int
	decisions  int
}

type replica struct {
	id      int32
	created Time
	ready   bool
}

type svcMark struct {
	arrived, served, dropped, replicaMs, readyMs, gpuMs float64
}

// ServiceError is a service the run cannot simulate (bad input).
type ServiceError struct {
	Service int
	Name    string
	Err     error
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("service %d (%s): %v", e.Service+1, e.Name, e.Err)
}
func (e *ServiceError) Unwrap() error { return e.Err }

// ExitCode is 2: bad input.
func (e *ServiceError) ExitCode() int { return 2 }

// maxServices bounds the services of a run (jobState.svc is an int16).
const maxServices = math.MaxInt16

// init checks the run's services and sets them up; the first scaler
// event of each is at time 0, where it creates the initial replicas. fw
// checks that a replica pod fits some node, adm (nil: no admission) that
// its queue is a LocalQueue.
func (ss *serviceSet) init(cfg *Config, run serviceHost, q *engine.Queue[event], jobs *jobTable, fw *scheduler.Framework, adm *admState) error {
	ss.run, ss.q, ss.jobs = run, q, jobs
	ss.keptAt = ss.keptTime
	ss.horizon, ss.periodEvents, ss.periodsSkipped = cfg.Horizon, cfg.periodEvents, cfg.periodsSkipped
	if len(cfg.Services) == 0 {
		return nil
	}
	if len(cfg.Services) > maxServices {
		return fmt.Errorf("%d inference services: a run holds at most %d", len(cfg.Services), maxServices)
	}
	if cfg.Horizon <= 0 {
		return fmt.Errorf("a run with inference services needs a positive horizon: services never finish, so the run would not end")
	}
	ss.svcs = make([]svcState, len(cfg.Services))
	for k := range cfg.Services {
		c := &cfg.Services[k]
		bad := func(format string, args ...any) error {
			return &ServiceError{Service: k, Name: c.Spec.Name, Err: fmt.Errorf(format, args...)}
		}
		s := &ss.svcs[k]
		s.cfg = c
		s.min, s.max = c.MinReplicas, c.MaxReplicas
		if s.max == 0 {
			s.max = max(s.min, c.InitialReplicas)
		}
		switch {
		case s.min < 0 || c.InitialReplicas < 0:
			return bad("minReplicas %d and initial replicas %d must not be negative", s.min, c.InitialReplicas)
		case s.max < 1:
			return bad("maxReplicas must be at least 1 (minReplicas %d, maxReplicas %d)", s.min, c.MaxReplicas)
		case s.min > s.max:
			return bad("minReplicas %d is above maxReplicas %d", s.min, s.max)
		case c.ImagePull < 0 || c.ModelLoad < 0:
			return bad("image pull %d ms and model load %d ms must not be negative", c.ImagePull, c.ModelLoad)
		case c.PodsPerReplica < 0 || c.PodsPerReplica > maxPodsPerReplica:
			return bad("%d pods a replica: from 1 to %d", c.PodsPerReplica, maxPodsPerReplica)
		}
		s.initial = min(max(c.InitialReplicas, s.min), s.max)
		s.scaler = c.Scaler
		if s.scaler == nil {
			s.scaler = services.Fixed{Replicas: s.initial}
		}
		if f, ok := s.scaler.(services.Freshener); ok {
			// The run's own controller state: the Config's is never
			// touched, so it can be run again or by several runs at once.
			fresh, err := f.Fresh()
			if err != nil {
				return bad("scaler: %v", err)
			}
			s.scaler = fresh
		}
		s.period = s.scaler.PeriodMs()
		if s.period <= 0 {
			return bad("the scaler's period is %d ms: it must be positive", s.period)
		}
		svc, err := services.New(c.Spec, s.scaler)
		if err != nil {
			return bad("%v", err)
		}
		s.svc = svc
		s.cold = c.ImagePull + c.ModelLoad
		tmpl := replicaSpec(c, 0)
		if err := tmpl.Validate(); err != nil {
			return bad("replica pod: %v", err)
		}
		// Each pod must fit some node; a group larger than the pools hold
		// waits, as a job's gang does under admission.
		for g := 0; g <= len(tmpl.Groups); g++ {
			part := tmpl.Part(g)
			part.Replicas = 1
			info := scheduler.JobInfo{ID: -1, Spec: &part, FirstReason: -1, LastReason: -1}
			if ok, why := fw.FitsEmpty(&info); !ok {
				return bad("its replica pod fits no node of the cluster: %s", why)
			}
		}
		if adm != nil && adm.ctl.QueueIndex(c.Queue) < 0 {
			return bad("queue %q is not a LocalQueue of the admission policy", c.Queue)
		}
		run.push(0, event{kind: evScale, sub: scaleStart, job: int32(k)})
	}
	return nil
}

// replicaSpec is a replica of service c made at t: its pod, or its
// group's pods.
func replicaSpec(c *ServiceConfig, t Time) cluster.JobSpec {
	return cluster.JobSpec{Name: c.Spec.Name, Queue: c.Queue, Submit: t, Duration: 1, Replicas: int32(max(c.PodsPerReplica, 1)),
		Priority: c.Priority, Pod: c.Pod, Constraints: c.Constraints, Flags: c.Flags, Groups: c.Groups}
}

// maxPodsPerReplica bounds a replica's group (a LeaderWorkerSet's size).
const maxPodsPerReplica = 1024

// of is the service whose replica pod job j is.
func (ss *serviceSet) of(j *jobState) *svcState { return &ss.svcs[j.svc-1] }

func (s *svcState) find(id int32) int {
	for i := range s.pods {
		if s.pods[i].id == id {
			return i
		}
	}
	return -1
}

// account advances service s to t with the counts that held since it was
// last accounted.
func (s *svcState) account(t Time) {
	if t <= s.last {
		return
	}
	s.svc.Advance(s.last, t, len(s.pods), s.ready)
	s.gpuMs += float64(s.boundMilli) * float64(t-s.last)
	s.last = t
}

// scale is a service's scaler period at t (init: the run's start, where
// the initial replicas are made; decided: the decision was taken at t by
// the batch of periods in nextSync, want is it).
func (ss *serviceSet) scale(t Time, k int, init, decided bool, want int) error {
	s := &ss.svcs[k]
	if !s.lazy(ss.periodEvents) {
		s.account(t)
	}
	switch {
	case init:
		want = s.initial
	case !decided:
		want = s.decide(t)
	}
	if want != len(s.pods) {
		s.account(t)
	}
	for len(s.pods) < want {
		if err := ss.createReplica(t, k); err != nil {
			return err
		}
	}
	if n := len(s.pods) - want; n > 0 {
		if err := ss.scaleDown(t, s, n); err != nil {
			return err
		}
	}
	if len(s.pods) != want || want < s.min || want > s.max {
		return &InvariantError{Err: fmt.Errorf("service %s holds %d replica pods after deciding %d (bounds %d..%d)", s.cfg.Spec.Name, len(s.pods), want, s.min, s.max)}
	}
	ss.nextSync(t, k)
	return nil
}

// lazy reports whether service s is accounted only when its counts
// change, at timeline bucket ends and at the end, rather than at each of
// its scaler's periods too: its scaler reads only the request rate, which
// the accounting does not change (Config.periodEvents accounts every
// period, the reference the lazy accounting is tested against).
func (s *svcState) lazy(periodEvents bool) bool {
	return !periodEvents && s.svc.RateOnly()
}

// decide is service s's scaler's decision at t, within its bounds.
func (s *svcState) decide(t Time) int {
	n := len(s.pods)
	want := s.scaler.Decide(t, n, s.ready, n-s.ready, s.svc.Observe(t, s.ready))
	s.decisions++
	return min(max(want, s.min), s.max)
}

// nextSync schedules service k's scaler period after the one at t: the
// run's loop calls syncChain once the event at t is counted.
func (ss *serviceSet) nextSync(t Time, k int) {
	ss.chain, ss.chainAt = k+1, t
}

// syncChain schedules the scaler period that follows the one just done
// (nextSync's).
//
// A period costs an event only when something else may happen before it.
// When nothing else can (the queue's next event is later than the period,
// and no scheduling pass or admission cycle is due now), the period is the
// next thing the run does, so it is done here and now, exactly as the
// event would do it: the service accounted up to it (unless it is
// accounted lazily), its scaler asked, the event counted and reported to
// Progress. Periods go on being done here while the scaler keeps the
// replicas; a period whose decision changes them is pushed as an event
// carrying the decision, applied when it pops (its scheduling pass then
// runs at its time). The event that ends a chain is pushed, as the period
// before would have pushed it, before any event that could come at the
// same time. Whatever another event finds at any instant is unchanged, so
// the replicas, the jobs and the event count are the same; a service
// beside sparse job events costs its scaler's decision a period instead
// of a heap push and pop too.
//
// A stretch of periods that the scaler is known to keep is done in one
// step (skip): with every replica ready and the scaler settled, it keeps
// them while the request rate stays within its KeepBand (or a settled LLM
// service's SettledBand, until the load's next change), and
// Load.FirstOutside finds the first period where the rate leaves it. The
// periods before it (and before the next event and the horizon) are
// counted, reported to Progress and recorded in the scaler as each would
// have been, without being asked one by one. The stretch is deferred
// instead wherever it can be (deferPeriods): its periods are done as the
// run comes past them, job events and other services' periods or not,
// and it ends at the first period outside the band, at the horizon, or at
// a change of the service's replicas. Another service's deferred periods
// stand in the way of a period done here as the events would.
func (ss *serviceSet) syncChain() {
	k, t := ss.chain-1, ss.chainAt
	ss.chain = 0
	s := &ss.svcs[k]
	h := ss.horizon
	lazy := s.lazy(ss.periodEvents)
	for {
		next := t + s.period
		if next >= h {
			return
		}
		at, queued := ss.q.PeekTime()
		if len(ss.deferred) > 0 {
			// Another service's next deferred period is an event too.
			if d := ss.svcs[ss.deferred[0]].vp.next; !queued || d < at {
				at, queued = d, true
			}
		}
		pending := ss.run.passDue() || ss.periodEvents
		var hold services.Hold
		var until Time
		ok := false
		if !pending {
			// Asked once a period: the same answer serves both ways of
			// keeping the periods.
			hold, until, ok = s.band(lazy, next, h)
		}
		if ok {
			if p := hold.End(&s.cfg.Spec.Load, next, s.period, until); p > next && ss.deferPeriods(k, next, p) {
				return
			}
		}
		if pending || (queued && at <= next) {
			ss.run.push(next, event{kind: evScale, sub: scalePeriod, job: int32(k)})
			return
		}
		if ok {
			if queued {
				until = min(until, at)
			}
			if p := hold.End(&s.cfg.Spec.Load, next, s.period, until); p > next {
				ss.skipPeriods(s, next, p-s.period)
				t = p - s.period
				continue
			}
		}
		// The period at next is the run's next event.
		if !lazy {
			s.account(next)
		}
		if want := s.decide(next); want != len(s.pods) {
			ss.run.push(next, event{kind: evScale, sub: scaleDecided, job: int32(k), stamp: uint32(want)})
			return
		}
		ss.run.countPeriods(next, next, s.period)
		t = next
	}
}

// band is the Hold of request rates within which service s's scaler,
// all of its replicas ready, keeps them at every period from next until
// before until: a lazily accounted service's KeepBand (until the
// horizon h), or a settled LLM service's SettledBand (until the load's
// next change too, and none when the load changed since the service was
// last accounted: the band assumes no backlog, which a jump of the rate
// between two periods could build). Over the periods in it the service is
// accounted lazily either way: what a decision reads does not depend on
// the accounting there.
func (s *svcState) band(lazy bool, next, h Time) (hold services.Hold, until Time, ok bool) {
	if s.ready != len(s.pods) {
		return services.Hold{}, 0, false
	}
	if lazy {
		hold.Lo, hold.Hi, ok = s.svc.KeepBand(len(s.pods), s.min, s.max)
		return hold, h, ok
	}
	if s.cfg.Spec.Load.NextChange(s.last) < next {
		// The band reads the service as accounted at s.last: a change of
		// the load since (a spike shorter than a period) may have left a
		// backlog it does not see.
		return services.Hold{}, 0, false
	}
	hold, ok = s.svc.SettledBand(next, len(s.pods), s.min, s.max)
	return hold, min(h, s.cfg.Spec.Load.NextChange(next)), ok
}

// deferPeriods keeps service k's periods from next on out of the queue
// (the service is settled, and its scaler keeps the replicas at every
// period before exit): it pushes one uncounted wake event at exit, or at
// the last period before the horizon, ahead of the events at that time.
// It reports false when that is next itself.
//
// A kept period changes nothing another event can see but the event
// count and Progress, the scaler's memory and the service's decisions;
// catchUp does those as the run comes past each period in the order the
// period events would have popped in (their times, then their sequence
// numbers, reserved as each would have been pushed), so they are the
// same. Only a change of the service's replicas (replicaStopping) or a
// pass left due (the loop) can make a later period decide otherwise:
// materialise then puts the next period in the queue as the event it
// would be.
func (ss *serviceSet) deferPeriods(k int, next, exit Time) bool {
	s := &ss.svcs[k]
	wake := exit
	if h := ss.horizon; exit >= h {
		wake = next + (h-1-next)/s.period*s.period
	}
	if wake <= next {
		return false
	}
	v := &s.vp
	v.on, v.next, v.seq = true, next, ss.q.Reserve()
	v.from, v.pods = next, len(s.pods)
	v.wake = ss.q.PushSeq(wake, 0, event{kind: evScale, sub: scaleWake, job: int32(k)})
	// Its seq is the newest: it goes after every deferred period at next.
	i := len(ss.deferred)
	for i > 0 && ss.svcs[ss.deferred[i-1]].vp.next > next {
		i--
	}
	ss.deferred = slices.Insert(ss.deferred, i, int32(k))
	return true
}

// catchUp does the deferred periods that come before the event at t with
// sequence number seq (math.MaxUint64: every period at t or before, as
// the loop is done with the events at t).
//
// The services whose next period comes before are the first of
// ss.deferred (in (time, seq) order). Each does its periods up to the
// event: those before t, and the one at t only if it is its next (its
// seq reserved before this event was pushed: any later one's would be
// reserved as the one before it pops, after). Nothing else happened
// since the last event, so the periods done here popped one after
// another in their (time, seq) order; the next period of each service
// is pushed as its last one pops, so their seqs are reserved in the order
// the last ones popped in (popBefore), after every event pushed before.
func (ss *serviceSet) catchUp(t Time, seq uint64) {
	if len(ss.deferred) == 0 {
		return
	}
	if v := &ss.svcs[ss.deferred[0]].vp; v.next > t || (v.next == t && v.seq > seq) {
		return
	}
	kept := ss.kept[:0]
	var n uint64
	m := 0
	for _, k := range ss.deferred {
		s := &ss.svcs[k]
		v := &s.vp
		if v.next > t || (v.next == t && v.seq > seq) {
			break
		}
		p := s.period
		var last Time
		switch {
		case seq == math.MaxUint64:
			last = v.next + (t-v.next)/p*p
		case v.next < t:
			// A period at t after the first was pushed after the event at t.
			last = v.next + (t-1-v.next)/p*p
		default:
			last = v.next
		}
		c := int((last-v.next)/p) + 1
		s.decisions += c
		n += uint64(c)
		kept = append(kept, keptRun{k: k, from: v.next, last: last, p: p, seq: v.seq})
		m++
	}
	if ss.periodsSkipped != nil {
		*ss.periodsSkipped += int(n)
	}
	if m == 1 {
		ss.run.countPeriods(kept[0].from, kept[0].last, kept[0].p)
	} else {
		// The periods in (time, seq) order: the i-th's time is the first
		// time by which i of them have come.
		ss.kept = kept
		ss.run.countEvents(n, ss.keptAt)
	}
	// Reserve the next periods' seqs in the order their last ones popped.
	for i := 1; i < m; i++ {
		for j := i; j > 0 && popBefore(&kept[j], &kept[j-1]); j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	for i := range kept {
		v := &ss.svcs[kept[i].k].vp
		v.next, v.seq = kept[i].last+kept[i].p, ss.q.Reserve()
		ss.deferred[i] = kept[i].k
	}
	ss.kept = kept
	// The first m are in pop order of their last periods now, with new
	// next periods: put the list back in (time, seq) order (it is nearly
	// in order: services of the same period keep theirs).
	d := ss.deferred
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && ss.deferredBefore(d[j], d[j-1]); j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

// deferredBefore orders deferred services by their next periods' (time,
// seq).
func (ss *serviceSet) deferredBefore(a, b int32) bool {
	x, y := &ss.svcs[a].vp, &ss.svcs[b].vp
	if x.next != y.next {
		return x.next < y.next
	}
	return x.seq < y.seq
}

// popBefore reports whether run x's last period popped before run y's, in
// the catchUp that did both. Periods at different times pop in time
// order. At the same time, a run's first period (its seq reserved before
// the catchUp) pops before one pushed within it, the first two in their
// seqs' order; two pushed within it pop in the order of the periods
// before them, one period back (two services of the same period: back
// to the first of one of them at once).
func popBefore(x, y *keptRun) bool {
	tx, ty := x.last, y.last
	for {
		if tx != ty {
			return tx < ty
		}
		fx, fy := tx == x.from, ty == y.from
		switch {
		case fx && fy:
			return x.seq < y.seq
		case fx:
			return true
		case fy:
			return false
		}
		if x.p == y.p {
			back := min((tx-x.from)/x.p, (ty-y.from)/y.p)
			tx -= back * x.p
			ty -= back * y.p
		} else {
			tx -= x.p
			ty -= y.p
		}
	}
}

// keptTime is the time of the i-th (from 1) of the periods of ss.kept in
// the order they pop: the first time by which i of them have come.
func (ss *serviceSet) keptTime(i uint64) Time {
	lo, hi := ss.kept[0].from, ss.kept[0].last
	for _, r := range ss.kept[1:] {
		lo, hi = min(lo, r.from), max(hi, r.last)
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		var c uint64
		for _, r := range ss.kept {
			if mid >= r.from {
				c += uint64((min(mid, r.last)-r.from)/r.p) + 1
			}
		}
		if c >= i {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// materialise ends service k's deferred stretch: its next period becomes
// the event it would be, the wake event goes.
func (ss *serviceSet) materialise(k int) {
	s := &ss.svcs[k]
	v := &s.vp
	if !v.on {
		return
	}
	v.on = false
	if v.next > v.from {
		s.svc.SkipPeriods(v.from, v.next-s.period, s.period, v.pods)
	}
	ss.q.Cancel(v.wake)
	ss.q.PushSeq(v.next, v.seq, event{kind: evScale, sub: scalePeriod, job: int32(k)})
	ss.deferred = slices.DeleteFunc(ss.deferred, func(d int32) bool { return int(d) == k })
}

// materialiseAll ends every deferred stretch.
func (ss *serviceSet) materialiseAll() {
	for len(ss.deferred) > 0 {
		ss.materialise(int(ss.deferred[0]))
	}
}

// skipPeriods does service s's periods first, first+period, ..., last,
// each of which its scaler keeps the replicas at.
func (ss *serviceSet) skipPeriods(s *svcState, first, last Time) {
	s.svc.SkipPeriods(first, last, s.period, len(s.pods))
	ss.countKept(s, first, last)
}

// countKept counts service s's periods first, first+period, ..., last,
// which its scaler kept the replicas at, as decisions and events.
func (ss *serviceSet) countKept(s *svcState, first, last Time) {
	n := int((last-first)/s.period) + 1
	s.decisions += n
	if ss.periodsSkipped != nil {
		*ss.periodsSkipped += n
	}
	ss.run.countPeriods(first, last, s.period)
}

// countPeriods counts the periods first, first+step, ..., last as events,
// reporting to Progress at each multiple of ProgressEvery as the run's
// loop does.
func (r *runner) countPeriods(first, last, step Time) {
	n := uint64((last-first)/step) + 1
	e0 := r.st.stats.Events
	r.st.stats.Events += n
	if r.cfg.Progress == nil {
		return
	}
	every := r.cfg.ProgressEvery
	for e := (e0/every + 1) * every; e <= e0+n; e += every {
		t := first + Time(e-e0-1)*step
		r.cfg.Progress(Progress{Now: t, Submitted: int(r.jobs.njobs) - r.svc.nrep, Finished: r.st.finished, Events: e})
	}
}

// countEvents implements serviceHost, as countPeriods does.
func (r *runner) countEvents(n uint64, at func(i uint64) Time) {
	e0 := r.st.stats.Events
	r.st.stats.Events += n
	if r.cfg.Progress == nil {
		return
	}
	every := r.cfg.ProgressEvery
	for e := (e0/every + 1) * every; e <= e0+n; e += every {
		r.cfg.Progress(Progress{Now: at(e - e0), Submitted: int(r.jobs.njobs) - r.svc.nrep, Finished: r.st.finished, Events: e})
	}
}

// createReplica makes a replica pod of service k at t: pending, in
// admission or the scheduler's queue.
func (ss *serviceSet) createReplica(t Time, k int) error {
	s := &ss.svcs[k]
	if ss.jobs.njobs >= MaxJobs {
		return fmt.Errorf("service %s: the run already holds %d jobs and replica pods, the most one run holds", s.cfg.Spec.Name, MaxJobs)
	}
	j, err := ss.run.newPod(t, k, replicaSpec(s.cfg, t))
	ss.nrep++
	s.pods = append(s.pods, replica{id: j.info.ID, created: t})
	return err
}

// newPod implements serviceHost: the pod joins the job table, marked
// with its service, and goes to admission or the scheduler's queue.
func (r *runner) newPod(t Time, k int, spec cluster.JobSpec) (*jobState, error) {
	j := r.jobs.add(r.sched)
	r.jobs.reps = append(r.jobs.reps, j.info.ID)
	j.svc = int16(k + 1)
	j.spec = spec
	j.info.FirstReason, j.info.LastReason = -1, -1
	if r.sc.plug.NeedsMix {
		if err := r.sc.countShape(&j.spec, r.jobs.njobs); err != nil {
			return j, err
		}
	}
	if r.adm != nil {
		return j, r.adm.submit(t, j)
	}
	r.sched.Enqueue(&j.info)
	r.st.dirty = true
	return j, nil
}

// scaleDown deletes n of service s's replica pods, as a ReplicaSet ranks
// them: unscheduled before scheduled, not ready before ready, newest
// first.
func (ss *serviceSet) scaleDown(t Time, s *svcState, n int) error {
	order := slices.Clone(s.pods)
	rank := func(p replica) (bound, ready int) {
		if ss.jobs.at(p.id).running {
			bound = 1
		}
		if p.ready {
			ready = 1
		}
		return
	}
	slices.SortStableFunc(order, func(a, b replica) int {
		ab, ar := rank(a)
		bb, br := rank(b)
		switch {
		case ab != bb:
			return ab - bb
		case ar != br:
			return ar - br
		case a.created != b.created:
			if a.created > b.created {
				return -1
			}
			return 1
		}
		return int(b.id - a.id)
	})
	for _, p := range order[:n] {
		if err := ss.deleteReplica(t, s, p.id); err != nil {
			return err
		}
	}
	return nil
}

// deleteReplica deletes a replica pod: a bound one releases its node.
func (ss *serviceSet) deleteReplica(t Time, s *svcState, id int32) error {
	if err := ss.run.deletePod(t, ss.jobs.at(id)); err != nil {
		return err
	}
	if i := s.find(id); i >= 0 {
		s.pods = slices.Delete(s.pods, i, i+1)
	}
	return nil
}

// deletePod implements serviceHost.
func (r *runner) deletePod(t Time, j *jobState) error {
	switch {
	case j.running:
		if err := r.endAttempt(t, j, slicedGPUs(r.c, j), 0, 0); err != nil {
			return err
		}
		j.sliced = false
	case j.awaitingAdmission():
	default:
		if len(j.placed) > 0 {
			if err := r.releasePending(t, j); err != nil {
				return err
			}
		}
		r.sched.Remove(&j.info)
		r.st.dirty = true
	}
	j.finished = true
	j.outcome = Deleted
	j.end = t
	r.adm.finish(t, j, r)
	return nil
}

// replicaBound starts a replica whose pod was just bound: it serves after
// its cold start.
func (ss *serviceSet) replicaBound(t Time, j *jobState) error {
	s := ss.of(j)
	s.account(t)
	ss.run.startPod(t, j)
	s.boundMilli += j.allocMilli
	if s.cold == 0 {
		ss.replicaReady(t, j)
		return nil
	}
	ss.run.push(t+s.cold, event{kind: evReady, job: j.info.ID, stamp: j.attempts})
	return nil
}

// startPod implements serviceHost: the pod's attempt runs from t, with
// no planned end; on time-sliced GPUs, their other pods share with one
// more.
func (r *runner) startPod(t Time, j *jobState) {
	if j.attempts == 0 {
		j.start = t
	}
	j.attempts++
	j.running = true
	j.att.start = t
	j.att.plannedEnd = math.MaxInt64
	j.allocMilli = 0
	for _, pl := range j.placed {
		j.allocMilli += int64(pl.Milli)
		if r.c.GPUs().TimeSliced(pl.Node) {
			j.sliced = true
		}
	}
	if j.sliced {
		r.share.retime(t, slicedGPUs(r.c, j), r)
	}
}

// replicaReady marks a bound replica ready: it serves from t.
func (ss *serviceSet) replicaReady(t Time, j *jobState) {
	s := ss.of(j)
	i := s.find(j.info.ID)
	if i < 0 || s.pods[i].ready {
		return
	}
	s.account(t)
	s.pods[i].ready = true
	s.ready++
	s.coldStarts++
	s.coldMs += t - s.pods[i].created
}

// replicaStopping is called as a bound replica's pod is about to be
// released (deleted, preempted, lost with its node, evicted).
func (ss *serviceSet) replicaStopping(t Time, j *jobState) {
	s := ss.of(j)
	if s.vp.on {
		ss.materialise(int(j.svc - 1))
	}
	s.account(t)
	s.boundMilli -= j.allocMilli
	if i := s.find(j.info.ID); i >= 0 {
		if s.pods[i].ready {
			s.pods[i].ready = false
			s.ready--
		}
		// A new pod replaces it (unless the service deleted it).
		s.pods[i].created = t
	}
}

// replicaLost ends a replica's pod taken by preemption or a lost node: its
// ReplicaSet makes a new pod at once, which queues again.
func (ss *serviceSet) replicaLost(t Time, j *jobState, cause capacity.Cause) error {
	if cause != capacity.CausePreemption {
		ss.of(j).disrupted++
	}
	return ss.run.restartPod(t, j)
}

// restartPod implements serviceHost.
func (r *runner) restartPod(t Time, j *jobState) error {
	if err := r.endAttempt(t, j, slicedGPUs(r.c, j), 0, 0); err != nil {
		return err
	}
	j.sliced = false
	j.info.Bound = 0
	return r.requeue(t, j)
}

// closeServices adds each service's timeline point for the bucket ending
// at t.
func (ss *serviceSet) close(t Time) {
	for k := range ss.svcs {
		s := &ss.svcs[k]
		s.account(t)
		w := float64(t - s.markAt)
		v := s.svc
		now := svcMark{v.Arrived, v.Served, v.Dropped, v.ReplicaMs, v.ReadyMs, s.gpuMs}
		p := ServicePoint{Served: now.served - s.mark.served, Dropped: now.dropped - s.mark.dropped, P95Ms: v.BucketP95()}
		if w > 0 {
			p.Rate = (now.arrived - s.mark.arrived) / w * 1000
			p.Replicas = (now.replicaMs - s.mark.replicaMs) / w
			p.Ready = (now.readyMs - s.mark.readyMs) / w
			p.GPUs = (now.gpuMs - s.mark.gpuMs) / w / cluster.MilliGPU
		}
		s.tl = append(s.tl, p)
		s.mark, s.markAt = now, t
	}
}

// serviceResults closes the services' books at end: their reports, the
// usage of their replica pods, and the checks that requests were
// conserved and no replica was counted as a job.
func (ss *serviceSet) results(end Time, jobs int) ([]ServiceResult, error) {
	if len(ss.svcs) == 0 {
		return nil, nil
	}
	if jobs+ss.nrep != int(ss.jobs.njobs) || ss.nrep != len(ss.jobs.reps) {
		return nil, &InvariantError{Err: fmt.Errorf("%d job records and %d replica pods for %d entries: a replica was counted as a job", jobs, ss.nrep, ss.jobs.njobs)}
	}
	out := make([]ServiceResult, len(ss.svcs))
	for k := range ss.svcs {
		s := &ss.svcs[k]
		s.account(end)
		v := s.svc
		if err := v.Err(); err != nil {
			return nil, &InvariantError{Err: fmt.Errorf("service %s: its fast model failed during the run: %w", s.cfg.Spec.Name, err)}
		}
		if d := v.Arrived - v.Served - v.Dropped - v.Backlog(); math.Abs(d) > 1e-6*max(1, v.Arrived) {
			return nil, &InvariantError{Err: fmt.Errorf("service %s: %g requests arrived, %g served, %g dropped, %g waiting: %g unaccounted for", s.cfg.Spec.Name, v.Arrived, v.Served, v.Dropped, v.Backlog(), d)}
		}
		res := &out[k]
		res.Report = v.Report()
		res.Queue, res.Priority = s.cfg.Queue, s.cfg.Priority
		res.ColdStarts, res.Disrupted = s.coldStarts, s.disrupted
		if s.coldStarts > 0 {
			res.ColdStartMs = float64(s.coldMs) / float64(s.coldStarts)
		}
		res.Timeline = s.tl
		res.Decisions = s.decisions
	}
	for _, id := range ss.jobs.reps {
		j := ss.jobs.at(id)
		res := &out[j.svc-1]
		if x := j.x; x != nil {
			res.Preempted += int(x.preempted)
		}
		if j.usePool >= 0 {
			res.Usage = addUsage(res.Usage, PoolUsage{Pool: j.usePool, Held: j.useHeld})
			if x := j.x; x != nil {
				for _, u := range x.more {
					res.Usage = addUsage(res.Usage, u)
				}
			}
		}
	}
	for k := range out {
		slices.SortFunc(out[k].Usage, func(a, b PoolUsage) int { return int(a.Pool - b.Pool) })
	}
	return out, nil
}

// addUsage adds u to the entry of its pool in us.
func addUsage(us []PoolUsage, u PoolUsage) []PoolUsage {
	for i := range us {
		if us[i].Pool == u.Pool {
			for k := range u.Held {
				us[i].Held[k] += u.Held[k]
				us[i].Lost[k] += u.Lost[k]
				us[i].Checkpoint[k] += u.Checkpoint[k]
			}
			return us
		}
	}
	return append(us, u)
}
