package capacity

import (
	"fmt"
	"slices"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Time is virtual time in milliseconds.
type Time = cluster.Time

// Spec is the capacity behaviour of a cluster: one Pool per cluster pool
// (same index) and the autoscaling groups that launch into them.
type Spec struct {
	Pools  []Pool
	Groups []Group
}

// Pool is how one cluster pool's nodes come and go.
type Pool struct {
	// CapacityType is models.OnDemand (default) or models.Spot.
	CapacityType string
	// PricePerHour is the node's price; Karpenter picks the cheapest fit.
	PricePerHour float64
	// Provisioning is the time from a launch to the node being Ready
	// (instance start, boot, kubelet registration, image pull).
	Provisioning Time
	// Replace relaunches a lost node of a pool outside any group at once
	// (a managed node group keeping its desired size).
	Replace bool
	// Interruptions is the spot reclaim process (spot pools only).
	Interruptions Process
	// FailureMTBF, when positive, fails nodes (any capacity type) after
	// exponential lifetimes of this mean, without notice.
	FailureMTBF Time
	// Group is the index of the autoscaling group the pool belongs to (-1:
	// none, its node count is fixed).
	Group int32
	// Window, when its End is positive, makes a reserved pool a capacity
	// block: its nodes are launched at Start and go at End (see Window).
	Window Window
	// Deallocate is Azure's Spot eviction policy Deallocate (a fixed spot
	// pool only): a reclaimed node is stopped-deallocated, not deleted. It
	// keeps its slot (the scale set still counts it), no new VM is made in
	// its place, and the pool restarts that same node when capacity is
	// back (at once, or when the outage or the availability trace allows,
	// as a lost node is relaunched), taking Restart to be Ready. Its
	// deallocated time is counted (PoolStats.DeallocatedMs): its OS disk
	// is billed meanwhile. Without it, a reclaimed node is deleted (Delete,
	// the AKS default; AWS and GCP spot).
	Deallocate bool
	// OverMaxPrice marks an autoscaled spot pool whose max price is below
	// its spot price: its autoscaler never launches into it (Azure
	// allocates no Spot VM whose max price is under the current price, nor
	// EC2 a spot instance), as it does an offering out of capacity.
	OverMaxPrice bool
	// Restart is a deallocated node's start to Ready (with Deallocate):
	// the VM's start and the kubelet's registration, without the image
	// pull a fresh node needs (the OS disk kept its images).
	Restart Time
}

// A capacity block's end, as EC2 runs it (Capacity Blocks for ML, "Monitor
// Capacity Blocks using EventBridge"): 40 minutes before the block ends a
// warning says its instances begin to terminate in 10 minutes; they are
// terminated from 30 minutes before the end.
const (
	BlockWarning   = 40 * 60 * 1000
	BlockTerminate = 30 * 60 * 1000
)

// Window is a capacity block's reserved time, from the run's start: the
// pool has no node before Start; at Start its nodes are launched
// (Provisioning applies); at End - BlockWarning each node is cordoned and
// told it goes at End - BlockTerminate (a job whose checkpoint write fits
// in the 10 minutes writes it and stops), and none is launched again.
type Window struct{ Start, End Time }

// Active reports whether the pool is a capacity block.
func (w Window) Active() bool { return w.End > 0 }

// Process is a spot interruption process.
type Process struct {
	// RatePerHour, when positive, interrupts each node after an
	// exponential lifetime of mean 1/rate hours.
	RatePerHour float64
	// Lifetime, when set (and RatePerHour is not), draws each node's time
	// to its interruption, in hours, from a distribution: heavy-tailed
	// lifetimes (Weibull, hyperexponential) as spot preemption traces
	// show, drawn anew for each node launched.
	Lifetime models.LifetimeDist
	// Outage, when set, is how long, in hours, the capacity stays gone
	// after an interruption: a fixed pool relaunches the nodes it lost only
	// when the outage ends (interruptions during one wait for its end; the
	// next interruption after it draws a new one), and a NodePool's
	// launches into the pool are refused until then (Karpenter falls back
	// to the next offering it allows).
	Outage models.LifetimeDist
	// Wave is the chance that each other node of the pool (one zone) up
	// and not under notice is reclaimed with a node whose drawn lifetime
	// (RatePerHour or Lifetime) ended: a reclaim wave, as multi-node spot
	// traces show. 0: nodes go one at a time. Each node's drawn lifetime
	// is stretched by 1 + Wave x (n-1), n the nodes the pool holds when it
	// is drawn, so that a node's mean time to interruption stays the
	// distribution's: waves make the interruptions come together, not
	// more often.
	Wave float64
	// Times, when set, is a trace: at each time one node of the pool,
	// drawn uniformly from those present, is interrupted.
	Times []Time
	// Available, when set, is an availability trace: from i x AvailableGap
	// on, the cloud lets the pool hold at most Available[i] nodes (the last
	// value holds to the end). A drop below the nodes the pool has
	// interrupts the excess, drawn uniformly; a lost node is relaunched
	// only while the trace has room for it, and nodes come back as it
	// rises (fixed pools that replace their nodes).
	Available    []int32
	AvailableGap Time
	// Notice is the warning before the reclaim (AWS 2 min, GCP and Azure
	// 30 s): the node is cordoned and jobs may checkpoint.
	Notice Time
	// Assumption says in words which model and figures this is.
	Assumption string
}

// Active reports whether the process interrupts anything.
func (p *Process) Active() bool {
	return p.RatePerHour > 0 || p.Lifetime != nil || len(p.Times) > 0 || len(p.Available) > 0
}

// GroupKind is the kind of autoscaler.
type GroupKind uint8

const (
	// Autoscaler is a cluster-autoscaler node group.
	Autoscaler GroupKind = iota
	// NodePool is a Karpenter NodePool.
	NodePool
)

// Expanders of a cluster-autoscaler group choose which pool grows.
const (
	ExpanderRandom     = "random"
	ExpanderLeastWaste = "least-waste"
	ExpanderPrice      = "price"
)

// Karpenter consolidation policies.
const (
	WhenEmpty                = "WhenEmpty"
	WhenEmptyOrUnderutilized = "WhenEmptyOrUnderutilized"
)

// Group is an autoscaler over one or more pools.
type Group struct {
	Name  string
	Kind  GroupKind
	Pools []int32
	// MinNodes and MaxNodes bound an Autoscaler group's nodes.
	MinNodes, MaxNodes int
	// MaxGPUs, MaxMilliCPU and MaxMemoryMiB, when positive, cap the GPUs,
	// CPU and memory of a NodePool's nodes together (limits): a node that
	// would take it past one is not launched.
	MaxGPUs                   int64
	MaxMilliCPU, MaxMemoryMiB int64
	// Expander picks the pool an Autoscaler grows: random (the
	// cluster-autoscaler default), least-waste or price.
	Expander string
	// ScaleDownUnneeded is how long an Autoscaler node stays empty before
	// it is removed (--scale-down-unneeded-time, 10 min); none within
	// ScaleDownDelayAfterAdd of a scale-up (10 min). Zero: no scale-down.
	ScaleDownUnneeded, ScaleDownDelayAfterAdd Time
	// Consolidation is a NodePool's policy: WhenEmpty or
	// WhenEmptyOrUnderutilized; ConsolidateAfter how long a node must be
	// empty (or unchanged and underused) first.
	Consolidation    string
	ConsolidateAfter Time
	// ExpireAfter, when positive, is a NodePool node's lifetime: it is then
	// drained and goes (Karpenter's expireAfter).
	ExpireAfter Time
	// SpotLaunchFailure is the chance a spot launch of a NodePool fails
	// for want of capacity; Karpenter then falls back to the next offering
	// (on-demand) and avoids that one for three minutes.
	SpotLaunchFailure float64
	// ScanInterval is the shortest time between two scale-up decisions
	// (the autoscaler's scan interval, 10 s).
	ScanInterval Time
}

// Validate checks the spec against the cluster's pools.
func (s *Spec) Validate(pools []cluster.PoolSpec) error {
	if len(s.Pools) != len(pools) {
		return fmt.Errorf("capacity spec has %d pools, the cluster %d", len(s.Pools), len(pools))
	}
	for i := range s.Pools {
		p := &s.Pools[i]
		name := pools[i].Name
		switch p.CapacityType {
		case "", models.OnDemand, models.Spot, models.Reserved:
		default:
			return fmt.Errorf("pool %s: capacity type %q is not %s, %s or %s", name, p.CapacityType, models.OnDemand, models.Spot, models.Reserved)
		}
		if p.Interruptions.Active() && p.CapacityType != models.Spot {
			return fmt.Errorf("pool %s: spot interruptions on a %s pool", name, p.CapacityType)
		}
		if p.PricePerHour < 0 || p.Provisioning < 0 || p.FailureMTBF < 0 || p.Interruptions.RatePerHour < 0 || p.Interruptions.Notice < 0 {
			return fmt.Errorf("pool %s: price, provisioning time, MTBF, rate and notice must not be negative", name)
		}
		if p.Interruptions.Lifetime != nil && p.Interruptions.RatePerHour > 0 {
			return fmt.Errorf("pool %s: a rate and a lifetime distribution both draw the interruptions; give one", name)
		}
		if w := p.Interruptions.Wave; !(w >= 0 && w <= 1) || (w > 0 && p.Interruptions.RatePerHour <= 0 && p.Interruptions.Lifetime == nil) {
			return fmt.Errorf("pool %s: a reclaim wave is a chance from 0 to 1 and follows drawn lifetimes (a rate or a lifetime distribution)", name)
		}
		if p.Interruptions.Outage != nil && !p.Interruptions.Active() {
			return fmt.Errorf("pool %s: an outage follows an interruption, and the pool has none", name)
		}
		for _, d := range []models.LifetimeDist{p.Interruptions.Lifetime, p.Interruptions.Outage} {
			if d != nil && !(d.Mean() > 0) {
				return fmt.Errorf("pool %s: %s has no positive mean", name, d)
			}
		}
		if len(p.Interruptions.Available) > 0 && p.Interruptions.AvailableGap <= 0 {
			return fmt.Errorf("pool %s: an availability trace needs a positive gap between its ticks", name)
		}
		for _, a := range p.Interruptions.Available {
			if a < 0 {
				return fmt.Errorf("pool %s: an availability trace counts nodes: none negative", name)
			}
		}
		for k, t := range p.Interruptions.Times {
			if t < 0 || (k > 0 && t < p.Interruptions.Times[k-1]) {
				return fmt.Errorf("pool %s: interruption times must be non-negative and in order", name)
			}
		}
		if p.Deallocate && (p.CapacityType != models.Spot || p.Group >= 0) {
			return fmt.Errorf("pool %s: the Deallocate eviction policy is for a fixed spot pool", name)
		}
		if p.OverMaxPrice && (p.CapacityType != models.Spot || p.Group < 0 || pools[i].Nodes > 0) {
			return fmt.Errorf("pool %s: a spot pool over its max price is an autoscaled one with no initial node", name)
		}
		if p.Restart < 0 {
			return fmt.Errorf("pool %s: a restart time must not be negative", name)
		}
		if w := p.Window; w.Active() || w.Start != 0 {
			switch {
			case p.CapacityType != models.Reserved || p.Group >= 0:
				return fmt.Errorf("pool %s: a capacity block's window is for a fixed reserved pool", name)
			case w.Start < 0 || w.End-w.Start < 60*60*1000:
				return fmt.Errorf("pool %s: a capacity block's window starts at 0 or later and lasts at least an hour", name)
			}
		}
		if p.Group < -1 || int(p.Group) >= len(s.Groups) {
			return fmt.Errorf("pool %s: group %d does not exist", name, p.Group)
		}
		// A group counts and scales down only the pools it lists.
		if p.Group >= 0 && !slices.Contains(s.Groups[p.Group].Pools, int32(i)) {
			return fmt.Errorf("pool %s: group %s does not list it among its pools", name, s.Groups[p.Group].Name)
		}
	}
	for gi := range s.Groups {
		g := &s.Groups[gi]
		for _, p := range g.Pools {
			if p < 0 || int(p) >= len(pools) || s.Pools[p].Group != int32(gi) {
				return fmt.Errorf("group %s: pool %d is not one of its pools", g.Name, p)
			}
		}
		switch g.Expander {
		case "", ExpanderRandom, ExpanderLeastWaste, ExpanderPrice:
		default:
			return fmt.Errorf("group %s: expander %q is not random, least-waste or price", g.Name, g.Expander)
		}
		switch g.Consolidation {
		case "", WhenEmpty, WhenEmptyOrUnderutilized:
		default:
			return fmt.Errorf("group %s: consolidation policy %q is not WhenEmpty or WhenEmptyOrUnderutilized", g.Name, g.Consolidation)
		}
		if g.MinNodes < 0 || (g.MaxNodes > 0 && g.MaxNodes < g.MinNodes) || g.MaxGPUs < 0 || g.MaxMilliCPU < 0 || g.MaxMemoryMiB < 0 || g.ExpireAfter < 0 {
			return fmt.Errorf("group %s: min %d and max %d nodes are inconsistent", g.Name, g.MinNodes, g.MaxNodes)
		}
		if g.SpotLaunchFailure < 0 || g.SpotLaunchFailure > 1 {
			return fmt.Errorf("group %s: spot launch failure %g is outside 0..1", g.Name, g.SpotLaunchFailure)
		}
	}
	return nil
}
