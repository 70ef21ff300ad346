package capacity

import (
	"fmt"
	"math/rand/v2"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// EventKind is the kind of a capacity event.
type EventKind uint8

const (
	// EvReady: node Index has finished provisioning.
	EvReady EventKind = iota
	// EvNotice: node Index gets its spot interruption notice.
	EvNotice
	// EvReclaim: node Index is reclaimed (spot) without notice.
	EvReclaim
	// EvFail: node Index fails.
	EvFail
	// EvTrace: the Stamp-th time of pool Index's interruption trace.
	EvTrace
	// EvScaleUp: time for a scale-up decision.
	EvScaleUp
	// EvIdle: node Index may have been unneeded long enough.
	EvIdle
	// EvConsolidate: group Index looks for an underused node to remove.
	EvConsolidate
	// EvAvail: tick Stamp of pool Index's availability trace.
	EvAvail
	// EvRestock: pool Index's availability trace has room again for nodes
	// it lost (scheduled only while some are missing).
	EvRestock
	// EvExpire: node Index has lived its NodePool's expireAfter.
	EvExpire
	// EvLeave: node Index, under notice (a spot reclaim's, or the grace of
	// a consolidation, an expiry or a capacity block's end), goes now.
	EvLeave
	// EvBlockStart: capacity block (pool Index) begins: its nodes launch.
	EvBlockStart
	// EvBlockEnd: capacity block (pool Index) warns of its end: its nodes
	// are cordoned and go BlockWarning - BlockTerminate later.
	EvBlockEnd
)

// Live reports whether the event can let waiting jobs progress: a run does
// not end while one is due. Interruptions and scale-downs far in the
// future do not keep a finished run going; a noticed node's going, due
// within its notice, does: it frees its slot for the replacement that the
// jobs it cordoned away from wait for.
func (k EventKind) Live() bool {
	return k == EvReady || k == EvScaleUp || k == EvRestock || k == EvLeave || k == EvBlockStart
}

// Event is a capacity event, scheduled by the host and handed back to
// Handle when due. Stamp tells stale node events (from a node since
// removed) from current ones.
type Event struct {
	Kind  EventKind
	Index int32
	Stamp uint32
}

// Cause is why a node goes away.
type Cause uint8

const (
	CauseSpot Cause = iota
	CauseFailure
	CauseConsolidation
	// CausePreemption: the scheduler evicted the job's pods for a pending
	// job of higher priority (set by the simulation, not by capacity).
	CausePreemption
	// CauseExpiry: the node reached its NodePool's expireAfter.
	CauseExpiry
	// CauseBlockEnd: the node's capacity block ended.
	CauseBlockEnd
	// NumCauses counts the causes.
	NumCauses
)

func (c Cause) String() string {
	return [...]string{"spot interruption", "node failure", "consolidation", "preemption", "expiry", "capacity block end"}[c]
}

// ConsolidationGrace is how long a consolidated node's pods get to stop
// (Kubernetes' default terminationGracePeriodSeconds).
const ConsolidationGrace = 30 * 1000

// iceTTL is how long Karpenter avoids an offering that failed to launch
// for want of capacity.
const iceTTL = 3 * 60 * 1000

// Host is the simulation the controller acts on.
type Host interface {
	// Schedule queues ev for time at.
	Schedule(at Time, ev Event)
	// Notice warns that node n goes away at reclaim, for cause: its jobs
	// may write a checkpoint and stop before then.
	Notice(now Time, n int32, reclaim Time, cause Cause) error
	// Evict ends, now, every job with a pod on node n, which then goes.
	Evict(now Time, n int32, cause Cause) error
	// CapacityChanged says a node became Ready.
	CapacityChanged()
	// Waiting calls fn for each queued job still pending (tried and not
	// fitting, or not tried yet: the pods a provisioner sees unschedulable),
	// in queue order, until fn returns false.
	Waiting(fn func(job *scheduler.JobInfo) bool)
	// EligiblePools appends the pools an empty node of which could hold
	// one of the job's pods.
	EligiblePools(job *scheduler.JobInfo, dst []int32) []int32
	// Movable reports whether every job on node n may be disrupted and
	// would fit on the other Ready nodes now.
	Movable(now Time, n int32) bool
}

// PoolStats counts what happened to one pool's nodes.
type PoolStats struct {
	Launched      int64
	Interrupted   int64 // spot interruptions (notices, or reclaims without one)
	Failed        int64
	ScaledDown    int64 // removed by an Autoscaler as unneeded
	Consolidated  int64 // removed by a NodePool's consolidation
	SpotFallbacks int64 // spot launches refused for want of capacity
	WaveVictims   int64 // spot interruptions that came with another node's (Process.Wave)
	Expired       int64 // drained at their NodePool's expireAfter
	BlockEnded    int64 // gone at their capacity block's end
	// Deallocated counts spot evictions that stopped-deallocated the node
	// (Pool.Deallocate), Restarted the deallocated nodes started again,
	// and DeallocatedMs the node-ms spent deallocated, up to the run's end
	// (StatsAt): the time their OS disks were billed with no VM running.
	Deallocated   int64
	Restarted     int64
	DeallocatedMs int64
	MaxPresent    int32
	// PlannedPods counts the pods a NodePool's scale-ups planned on the
	// nodes launched into the pool (each NodeClaim's pods), whichever node
	// the scheduler binds them to later: the provisioning decision alone,
	// as Karpenter's Solve returns it.
	PlannedPods int64
}

// Random streams, offset by the node slot or pool index.
const (
	streamLife = 1 << 40
	streamFail = 2 << 40
	streamPool = 3 << 40
	streamGone = 4 << 40 // per pool: outage lengths
	streamWave = 5 << 40 // per pool: who a reclaim wave takes
)

// Controller decides when nodes come and go. Its state is in four parts:
// the fleet (per node slot), the interruption process (spot lifetimes,
// failures, traces and outages, per pool), the provisioner (scale-up and
// its dry run) and the ledger of what happened to each pool.
type Controller struct {
	spec Spec
	c    *cluster.Cluster
	host Host
	seed uint64
	// pick is a stream per pool: trace and availability victims, the
	// random expander, spot launch failures.
	pick  []*rand.Rand
	waves waves // reclaim waves (wave.go)

	fleet fleet
	spot  interruptions
	prov  provisioner
	// blockOver marks the capacity blocks (pools) past their end warning.
	blockOver []bool
	// deallocSince is, per node slot, when its node was stopped-deallocated
	// (-1: it was not; Pool.Deallocate).
	deallocSince []Time

	// Stats are per pool.
	Stats Ledger
}

// New returns a controller for cluster c. Call Start before the run.
func New(spec Spec, c *cluster.Cluster, host Host, seed uint64) (*Controller, error) {
	pools := make([]cluster.PoolSpec, len(c.Pools))
	for i := range c.Pools {
		pools[i] = c.Pools[i].Spec
	}
	if err := spec.Validate(pools); err != nil {
		return nil, err
	}
	k := &Controller{
		spec: spec, c: c, host: host, seed: seed,
		pick:      make([]*rand.Rand, len(c.Pools)),
		fleet:     newFleet(len(c.Nodes)),
		spot:      newInterruptions(seed, len(c.Nodes), len(c.Pools)),
		Stats:     make(Ledger, len(c.Pools)),
		blockOver: make([]bool, len(c.Pools)),
	}
	k.deallocSince = make([]Time, len(c.Nodes))
	for i := range k.deallocSince {
		k.deallocSince[i] = -1
	}
	k.prov = newProvisioner(&k.spec, c)
	for i := range k.pick {
		k.pick[i] = models.NewStream(seed, streamPool+uint64(i))
	}
	return k, nil
}

// Start draws the lifetimes of the nodes present at time 0 and schedules
// the traces and consolidation sweeps.
func (k *Controller) Start() {
	for p := range k.c.Pools {
		pl := &k.c.Pools[p]
		for n := pl.First; n < pl.First+pl.Count; n++ {
			if k.c.Nodes[n].State != cluster.NodeAbsent {
				k.present(0, n)
				k.fleet.empty[n] = true
				k.scheduleIdle(0, n)
			}
		}
		if ts := k.spec.Pools[p].Interruptions.Times; len(ts) > 0 {
			k.host.Schedule(ts[0], Event{Kind: EvTrace, Index: int32(p), Stamp: 0})
		}
		if w := k.spec.Pools[p].Window; w.Active() {
			if w.Start > 0 {
				// A block not yet begun has no node.
				for n := pl.First; n < pl.First+pl.Count; n++ {
					if k.c.Nodes[n].State != cluster.NodeAbsent {
						_ = k.c.Remove(0, n)
					}
				}
				k.host.Schedule(w.Start, Event{Kind: EvBlockStart, Index: int32(p)})
			}
			k.host.Schedule(w.End-BlockWarning, Event{Kind: EvBlockEnd, Index: int32(p)})
		}
		if av := k.spec.Pools[p].Interruptions.Available; len(av) > 0 {
			// Nodes the trace has no room for at the start are not there.
			for n := pl.First + pl.Count - 1; n >= pl.First && k.holding(int32(p)) > av[0]; n-- {
				if k.c.Nodes[n].State != cluster.NodeAbsent {
					_ = k.c.Remove(0, n)
				}
			}
			if len(av) > 1 {
				gap := k.spec.Pools[p].Interruptions.AvailableGap
				k.host.Schedule(gap, Event{Kind: EvAvail, Index: int32(p), Stamp: 1})
			}
			k.scheduleRestock(0, int32(p))
		}
	}
	for g := range k.spec.Groups {
		if gr := &k.spec.Groups[g]; gr.Kind == NodePool && gr.Consolidation == WhenEmptyOrUnderutilized {
			k.host.Schedule(max(gr.ConsolidateAfter, 60*1000), Event{Kind: EvConsolidate, Index: int32(g)})
		}
	}
	k.observe()
}

func (k *Controller) observe() { k.Stats.observe(k.c) }

// StatsAt is pool p's stats at the run's end: the nodes still
// deallocated then count their time up to end.
func (k *Controller) StatsAt(p int32, end Time) PoolStats {
	st := k.Stats[p]
	pl := &k.c.Pools[p]
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if since := k.deallocSince[n]; since >= 0 && end > since {
			st.DeallocatedMs += end - since
		}
	}
	return st
}

func stream(s []*rand.Rand, i int32, seed, base uint64) *rand.Rand {
	if s[i] == nil {
		s[i] = models.NewStream(seed, base+uint64(i))
	}
	return s[i]
}

// expMs draws an exponential lifetime of the given mean, in ms (at least 1).
func expMs(r *rand.Rand, meanMs float64) Time {
	return Time(r.ExpFloat64()*meanMs) + 1
}

// hoursMs is a drawn time in hours, in ms (at least 1).
func hoursMs(h float64) Time {
	if !(h < 1e9) { // a century's horizon is far below; +Inf and NaN too
		h = 1e9
	}
	return max(Time(h*3.6e6), 1)
}

// present starts a node's interruption and failure clocks.
func (k *Controller) present(now Time, n int32) {
	stamp := k.fleet.up(n)
	ps := &k.spec.Pools[k.c.Nodes[n].Pool]
	if r, life := ps.Interruptions.RatePerHour, ps.Interruptions.Lifetime; r > 0 || life != nil {
		var at Time
		stretch := k.waveStretch(k.c.Nodes[n].Pool)
		if r > 0 {
			at = now + expMs(k.spot.lifeStream(n), 3.6e6/r*stretch)
		} else {
			at = now + hoursMs(life.Sample(k.spot.lifeStream(n))*stretch)
		}
		kind := EvNotice
		if ps.Interruptions.Notice == 0 {
			kind = EvReclaim
		}
		k.host.Schedule(at, Event{Kind: kind, Index: n, Stamp: stamp})
	}
	if ps.FailureMTBF > 0 {
		at := now + expMs(k.spot.failStream(n), float64(ps.FailureMTBF))
		k.host.Schedule(at, Event{Kind: EvFail, Index: n, Stamp: stamp})
	}
	if ps.Group >= 0 {
		if ea := k.spec.Groups[ps.Group].ExpireAfter; ea > 0 {
			k.host.Schedule(now+ea, Event{Kind: EvExpire, Index: n, Stamp: stamp})
		}
	}
}

// launch brings a node up in pool p; it is Ready after the pool's
// provisioning time.
func (k *Controller) launch(now Time, p int32) (int32, error) {
	n := k.deallocated(p)
	if n < 0 {
		n = k.c.FreeSlot(int(p))
	}
	if n < 0 {
		return -1, fmt.Errorf("invariant violated: launch into full pool %d", p)
	}
	if err := k.c.Launch(now, n); err != nil {
		return -1, err
	}
	k.present(now, n)
	k.fleet.launched(n)
	k.Stats[p].Launched++
	if g := k.spec.Pools[p].Group; g >= 0 {
		k.prov.lastAdd[g] = now
	}
	ready := now + k.spec.Pools[p].Provisioning
	if since := k.deallocSince[n]; since >= 0 {
		// The same node, started again from its kept OS disk.
		k.Stats[p].Restarted++
		k.Stats[p].DeallocatedMs += now - since
		k.deallocSince[n] = -1
		ready = now + k.spec.Pools[p].Restart
	}
	k.host.Schedule(ready, Event{Kind: EvReady, Index: n, Stamp: k.fleet.gen[n]})
	k.observe()
	return n, nil
}

// deallocated is pool p's first stopped-deallocated node slot, the one
// a launch restarts (-1: none).
func (k *Controller) deallocated(p int32) int32 {
	if !k.spec.Pools[p].Deallocate {
		return -1
	}
	pl := &k.c.Pools[p]
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if k.deallocSince[n] >= 0 {
			return n
		}
	}
	return -1
}

func (k *Controller) stale(ev Event) bool {
	return k.fleet.stale(k.c, ev)
}

// Handle carries out a due capacity event.
func (k *Controller) Handle(now Time, ev Event) error {
	switch ev.Kind {
	case EvReady:
		if k.stale(ev) || k.c.Nodes[ev.Index].State != cluster.NodeBooting {
			return nil
		}
		if err := k.c.SetReady(now, ev.Index); err != nil {
			return err
		}
		k.host.CapacityChanged()
		if k.c.Nodes[ev.Index].Pods == 0 {
			k.scheduleIdle(now, ev.Index)
		}
	case EvNotice:
		if k.stale(ev) || k.fleet.noticed[ev.Index] {
			return nil
		}
		return k.drawnReclaim(now, ev.Index, true)
	case EvReclaim, EvFail, EvLeave:
		if k.stale(ev) {
			return nil
		}
		n := ev.Index
		cause := CauseSpot
		switch {
		case ev.Kind == EvFail:
			cause = CauseFailure
			k.Stats[k.c.Nodes[n].Pool].Failed++
		case k.fleet.noticed[n]:
			cause = k.fleet.cause[n]
		default: // a drawn lifetime ended without notice
			return k.drawnReclaim(now, n, false)
		}
		return k.remove(now, n, cause)
	case EvTrace:
		p := ev.Index
		ts := k.spec.Pools[p].Interruptions.Times
		if next := int(ev.Stamp) + 1; next < len(ts) {
			k.host.Schedule(ts[next], Event{Kind: EvTrace, Index: p, Stamp: uint32(next)})
		}
		victims := k.fleet.standing(k.c, p, nil)
		if len(victims) == 0 {
			return nil
		}
		n := victims[k.pick[p].IntN(len(victims))]
		if k.spec.Pools[p].Interruptions.Notice == 0 {
			k.Stats[p].Interrupted++
			return k.remove(now, n, CauseSpot)
		}
		return k.notice(now, n)
	case EvAvail:
		return k.availTick(now, ev.Index, ev.Stamp)
	case EvRestock:
		k.spot.restocking[ev.Index] = false
		if err := k.restock(now, ev.Index); err != nil {
			return err
		}
		k.scheduleRestock(now, ev.Index)
	case EvScaleUp:
		k.prov.scaleUpAt = -1
		return k.scaleUp(now)
	case EvIdle:
		return k.idle(now, ev)
	case EvConsolidate:
		return k.consolidate(now, ev.Index)
	case EvExpire:
		if k.stale(ev) || k.fleet.noticed[ev.Index] {
			return nil
		}
		return k.expire(now, ev.Index)
	case EvBlockStart:
		p := ev.Index
		for h := k.holding(p); h < int32(k.c.Pools[p].Spec.Nodes) && k.c.FreeSlot(int(p)) >= 0; h++ {
			if _, err := k.launch(now, p); err != nil {
				return err
			}
		}
	case EvBlockEnd:
		return k.blockEnd(now, ev.Index)
	}
	return nil
}

// blockEnd is capacity block p's end warning: every node of the pool is
// cordoned and told it goes at the termination, and none is launched again.
func (k *Controller) blockEnd(now Time, p int32) error {
	k.blockOver[p] = true
	for _, n := range k.fleet.standing(k.c, p, nil) {
		nd := &k.c.Nodes[n]
		k.Stats[p].BlockEnded++
		if nd.State == cluster.NodeBooting {
			if err := k.remove(now, n, CauseBlockEnd); err != nil {
				return err
			}
			continue
		}
		if nd.State == cluster.NodeReady {
			if err := k.c.Cordon(now, n); err != nil {
				return err
			}
		}
		leave := now + BlockWarning - BlockTerminate
		if err := k.host.Notice(now, n, leave, CauseBlockEnd); err != nil {
			return err
		}
		k.fleet.leave(n, CauseBlockEnd)
		k.host.Schedule(leave, Event{Kind: EvLeave, Index: n, Stamp: k.fleet.gen[n]})
	}
	return nil
}

// notice cordons node n and schedules its reclaim after the notice.
func (k *Controller) notice(now Time, n int32) error {
	nd := &k.c.Nodes[n]
	p := nd.Pool
	k.Stats[p].Interrupted++
	notice := k.spec.Pools[p].Interruptions.Notice
	if nd.State == cluster.NodeBooting {
		return k.remove(now, n, CauseSpot) // nothing runs on it yet
	}
	k.fleet.leave(n, CauseSpot)
	if nd.State == cluster.NodeReady {
		if err := k.c.Cordon(now, n); err != nil {
			return err
		}
	}
	if err := k.host.Notice(now, n, now+notice, CauseSpot); err != nil {
		return err
	}
	k.host.Schedule(now+notice, Event{Kind: EvLeave, Index: n, Stamp: k.fleet.gen[n]})
	return nil
}

// remove evicts node n's jobs, removes it, and replaces it where the pool
// keeps its size.
func (k *Controller) remove(now Time, n int32, cause Cause) error {
	if err := k.host.Evict(now, n, cause); err != nil {
		return err
	}
	if err := k.c.Remove(now, n); err != nil {
		return err
	}
	k.fleet.noticed[n] = false
	p := k.c.Nodes[n].Pool
	ps := &k.spec.Pools[p]
	if cause == CauseSpot && ps.Deallocate {
		k.deallocSince[n] = now
		k.Stats[p].Deallocated++
	}
	if cause == CauseSpot && ps.Interruptions.Outage != nil {
		end := k.spot.interrupted(now, p, ps.Interruptions.Outage)
		k.prov.iceUntil[p] = max(k.prov.iceUntil[p], end) // NodePools fall back meanwhile
		if ps.Group < 0 && ps.Replace {
			k.scheduleRestock(now, p)
			return nil
		}
	}
	if (cause == CauseSpot || cause == CauseFailure) && ps.Group < 0 && ps.Replace && !k.blockOver[p] {
		if len(ps.Interruptions.Available) > 0 {
			if err := k.restock(now, p); err != nil {
				return err
			}
			k.scheduleRestock(now, p)
			return nil
		}
		if _, err := k.launch(now, p); err != nil {
			return err
		}
	}
	return nil
}

// holding counts pool p's nodes that are launched and not going away.
func (k *Controller) holding(p int32) int32 { return k.fleet.holding(k.c, p) }

// allowed is how many nodes pool p's availability trace lets it hold now.
func (k *Controller) allowed(p int32) int32 { return k.spot.allowed(&k.spec.Pools[p], p) }

// availTick applies tick i of pool p's availability trace: nodes over
// what it allows are interrupted, and lost ones come back if it has room.
func (k *Controller) availTick(now Time, p int32, i uint32) error {
	ps := &k.spec.Pools[p]
	k.spot.availAt[p] = int32(i)
	if next := int(i) + 1; next < len(ps.Interruptions.Available) {
		k.host.Schedule(Time(next)*ps.Interruptions.AvailableGap, Event{Kind: EvAvail, Index: p, Stamp: uint32(next)})
	}
	for k.holding(p) > k.allowed(p) {
		victims := k.fleet.standing(k.c, p, nil)
		n := victims[k.pick[p].IntN(len(victims))]
		if ps.Interruptions.Notice == 0 {
			k.Stats[p].Interrupted++
			if err := k.remove(now, n, CauseSpot); err != nil {
				return err
			}
			continue
		}
		if err := k.notice(now, n); err != nil {
			return err
		}
	}
	if err := k.restock(now, p); err != nil {
		return err
	}
	k.scheduleRestock(now, p)
	return nil
}

// restock relaunches the nodes a fixed pool lost, as far as its
// availability trace has room.
func (k *Controller) restock(now Time, p int32) error {
	ps := &k.spec.Pools[p]
	if ps.Group >= 0 || !ps.Replace {
		return nil
	}
	if now < k.spot.outage[p] {
		return nil // the capacity is not back yet
	}
	want := int32(k.c.Pools[p].Spec.Nodes)
	if len(ps.Interruptions.Available) > 0 {
		want = min(want, k.allowed(p))
	}
	for h := k.holding(p); h < want && k.c.FreeSlot(int(p)) >= 0; h++ {
		if _, err := k.launch(now, p); err != nil {
			return err
		}
	}
	return nil
}

// scheduleRestock schedules an EvRestock at the first later tick with room
// for a node pool p lacks; nothing when none lacks or none comes.
func (k *Controller) scheduleRestock(now Time, p int32) {
	ps := &k.spec.Pools[p]
	if k.spot.restocking[p] || ps.Group >= 0 || !ps.Replace {
		return
	}
	h := k.holding(p)
	if h >= int32(k.c.Pools[p].Spec.Nodes) {
		return
	}
	if now < k.spot.outage[p] {
		k.spot.restocking[p] = true
		k.host.Schedule(k.spot.outage[p], Event{Kind: EvRestock, Index: p})
		return
	}
	av := ps.Interruptions.Available
	for i := int(k.spot.availAt[p]) + 1; i < len(av); i++ {
		if av[i] > h {
			k.spot.restocking[p] = true
			k.host.Schedule(max(now, Time(i)*ps.Interruptions.AvailableGap), Event{Kind: EvRestock, Index: p})
			return
		}
	}
}

// PodsChanged is called after pods were bound to or released from node n.
func (k *Controller) PodsChanged(now Time, n int32) {
	if k.fleet.podsChanged(now, n, k.c.Nodes[n].Pods == 0) {
		k.scheduleIdle(now, n)
	}
}

// idleDelay is how long node n must stay empty before it goes (0: never).
func (k *Controller) idleDelay(n int32) Time {
	g := k.spec.Pools[k.c.Nodes[n].Pool].Group
	if g < 0 {
		return 0
	}
	gr := &k.spec.Groups[g]
	switch {
	case gr.Kind == Autoscaler:
		return gr.ScaleDownUnneeded
	case gr.Consolidation != "":
		return max(gr.ConsolidateAfter, 1)
	}
	return 0
}

func (k *Controller) scheduleIdle(now Time, n int32) {
	if d := k.idleDelay(n); d > 0 {
		k.host.Schedule(now+d, Event{Kind: EvIdle, Index: n, Stamp: k.fleet.emptyEpoch[n]})
	}
}

// idle removes an empty node whose group no longer needs it.
func (k *Controller) idle(now Time, ev Event) error {
	n := ev.Index
	nd := &k.c.Nodes[n]
	if k.fleet.emptyEpoch[n] != ev.Stamp || nd.State != cluster.NodeReady || nd.Pods != 0 {
		return nil
	}
	p := nd.Pool
	g := k.spec.Pools[p].Group
	gr := &k.spec.Groups[g]
	if gr.Kind == Autoscaler {
		if nodes, _ := k.prov.groupNodes(g); nodes <= gr.MinNodes {
			return nil
		}
		if wait := k.prov.lastAdd[g] + gr.ScaleDownDelayAfterAdd; now < wait {
			k.host.Schedule(wait, ev)
			return nil
		}
		k.Stats[p].ScaledDown++
	} else {
		k.Stats[p].Consolidated++
	}
	return k.c.Remove(now, n)
}

// expire drains node n, which reached its NodePool's expireAfter, as
// Karpenter v1 does whatever its pods say (do-not-disrupt included): its
// jobs get the 30 s grace, then it goes; the scale-up that follows
// launches for them again.
func (k *Controller) expire(now Time, n int32) error {
	nd := &k.c.Nodes[n]
	k.Stats[nd.Pool].Expired++
	if nd.State == cluster.NodeBooting {
		return k.remove(now, n, CauseExpiry) // nothing runs on it yet
	}
	if nd.State == cluster.NodeReady {
		if err := k.c.Cordon(now, n); err != nil {
			return err
		}
	}
	if err := k.host.Notice(now, n, now+ConsolidationGrace, CauseExpiry); err != nil {
		return err
	}
	k.fleet.leave(n, CauseExpiry)
	k.host.Schedule(now+ConsolidationGrace, Event{Kind: EvLeave, Index: n, Stamp: k.fleet.gen[n]})
	return nil
}

// consolidate removes one underused node of a NodePool whose jobs fit on
// the other nodes (WhenEmptyOrUnderutilized), then looks again later.
func (k *Controller) consolidate(now Time, g int32) error {
	gr := &k.spec.Groups[g]
	after := max(gr.ConsolidateAfter, 60*1000)
	defer k.host.Schedule(now+after, Event{Kind: EvConsolidate, Index: g})
	best, bestMilli := int32(-1), int64(0)
	for _, p := range gr.Pools {
		pl := &k.c.Pools[p]
		for n := pl.First; n < pl.First+pl.Count; n++ {
			nd := &k.c.Nodes[n]
			if nd.State != cluster.NodeReady || nd.Pods == 0 || now-k.fleet.lastChange[n] < gr.ConsolidateAfter {
				continue
			}
			used := nd.CapMilli - nd.FreeMilli
			if best >= 0 && used >= bestMilli {
				continue
			}
			if k.host.Movable(now, n) {
				best, bestMilli = n, used
			}
		}
	}
	if best < 0 {
		return nil
	}
	k.Stats[k.c.Nodes[best].Pool].Consolidated++
	if err := k.c.Cordon(now, best); err != nil {
		return err
	}
	if err := k.host.Notice(now, best, now+ConsolidationGrace, CauseConsolidation); err != nil {
		return err
	}
	k.fleet.leave(best, CauseConsolidation)
	k.host.Schedule(now+ConsolidationGrace, Event{Kind: EvLeave, Index: best, Stamp: k.fleet.gen[best]})
	return nil
}

// AfterPass is called after each scheduling pass: when jobs wait, a
// scale-up decision is due (at most one per scan interval).
func (k *Controller) AfterPass(now Time) {
	if len(k.spec.Groups) == 0 || k.prov.scaleUpAt >= 0 {
		return
	}
	waiting := false
	k.host.Waiting(func(*scheduler.JobInfo) bool { waiting = true; return false })
	if !waiting {
		return
	}
	scan := Time(10 * 1000)
	for g := range k.spec.Groups {
		if s := k.spec.Groups[g].ScanInterval; s > 0 {
			scan = min(scan, s)
		}
	}
	at := max(now, k.prov.lastScale+scan)
	k.prov.scaleUpAt = at
	k.host.Schedule(at, Event{Kind: EvScaleUp})
}

// maxScaleUpJobs bounds the waiting jobs one scale-up decision looks at.
const maxScaleUpJobs = 4096

// scaleUp plans nodes for the waiting jobs as a dry run; only the
// launches are real. The NodePools solve the whole batch as Karpenter
// does (solve, karpenter.go). The cluster-autoscaler groups then take the
// pods left, job by job in queue order: onto the nodes already there,
// then onto new nodes of the first group with room, its expander picking
// the pool.
func (k *Controller) scaleUp(now Time) error {
	k.prov.lastScale = now
	c := k.c
	k.prov.stmt.Begin(c)
	k.collect()
	if k.prov.nodePools {
		if err := k.solve(now); err != nil {
			return err
		}
	}
	if k.prov.autoscaler {
		for i := range k.prov.pend {
			pe := &k.prov.pend[i]
			if !k.prov.nodePools {
				if err := k.prov.placeExisting(now, pe); err != nil {
					return err
				}
			}
			pod := &pe.job.Spec.Pod
			k.prov.eligible = append(k.prov.eligible[:0], k.prov.eligibleOf(pe)...)
			for pe.need > 0 {
				p := k.prov.choose(now, pod, pe.need, k.pick)
				if p < 0 {
					break
				}
				n, err := k.launch(now, p)
				if err != nil {
					return err
				}
				placed := false
				for pe.need > 0 && c.Fits(n, pod) {
					if err := k.prov.stmt.Allocate(now, n, pod, -1); err != nil {
						return err
					}
					pe.need--
					placed = true
				}
				if !placed {
					return fmt.Errorf("invariant violated: a new node of pool %d does not hold the pod it was launched for", p)
				}
			}
		}
	}
	return k.prov.stmt.Discard(now)
}
