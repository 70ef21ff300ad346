package capacity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Own tests of the controller's parts: the fleet, the interruption
// process, the provisioner's limits and the ledger, each on a cluster
// built by newCluster and without a controller around it.

// newCluster builds the cluster of the pools.
func newCluster(t *testing.T, pools ...cluster.PoolSpec) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(pools)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A node's events carry its slot's generation: once the node is removed
// they are stale, and stay stale after the slot is launched again, whose
// new events are not.
func TestFleetGenerationsMakeOldEventsStale(t *testing.T) {
	c := newCluster(t, poolSpec("a", 2, 2, 8, 96, 1024))
	f := newFleet(len(c.Nodes))
	old := Event{Kind: EvFail, Index: 1, Stamp: f.up(1)}
	if old.Stamp != 1 || f.stale(c, old) {
		t.Fatalf("first launch: stamp %d, stale %v; want 1, false", old.Stamp, f.stale(c, old))
	}
	if err := c.Remove(10, 1); err != nil {
		t.Fatal(err)
	}
	if !f.stale(c, old) {
		t.Fatal("an event of a removed node is not stale")
	}
	if err := c.Launch(20, 1); err != nil {
		t.Fatal(err)
	}
	cur := Event{Kind: EvFail, Index: 1, Stamp: f.up(1)}
	if cur.Stamp != 2 || !f.stale(c, old) || f.stale(c, cur) {
		t.Fatalf("relaunch: stamp %d, old stale %v, new stale %v; want 2, true, false", cur.Stamp, f.stale(c, old), f.stale(c, cur))
	}
}

// The empty epoch moves only when a node empties or fills, not on every
// change of its pods; the time of the last change always moves.
func TestFleetPodsChangedCountsEmptyingsOnly(t *testing.T) {
	f := newFleet(1)
	f.launched(0) // empty, epoch 1
	steps := []struct {
		at      Time
		empty   bool
		emptied bool
		epoch   uint32
	}{
		{10, false, false, 2}, // filled
		{20, false, false, 2}, // a second pod
		{30, true, true, 3},   // emptied
		{40, true, false, 3},  // still empty
		{50, false, false, 4}, // filled again
	}
	for _, s := range steps {
		if got := f.podsChanged(s.at, 0, s.empty); got != s.emptied || f.emptyEpoch[0] != s.epoch || f.lastChange[0] != s.at {
			t.Errorf("at %d: emptied %v epoch %d last change %d; want %v, %d, %d", s.at, got, f.emptyEpoch[0], f.lastChange[0], s.emptied, s.epoch, s.at)
		}
	}
}

// A pool holds its nodes launched and not under notice: of slots 0-4 with
// 4 nodes (slot 4 never launched) and node 1 noticed, 0, 2 and 3.
func TestFleetStandingLeavesOutNoticedAndAbsent(t *testing.T) {
	c := newCluster(t, poolSpec("a", 4, 5, 8, 96, 1024))
	f := newFleet(len(c.Nodes))
	f.leave(1, CauseConsolidation)
	if diff := cmp.Diff([]int32{0, 2, 3}, f.standing(c, 0, nil)); diff != "" {
		t.Errorf("standing (-want +got):\n%s", diff)
	}
	if h := f.holding(c, 0); h != 3 {
		t.Errorf("holding %d, want 3", h)
	}
	if f.cause[1] != CauseConsolidation {
		t.Errorf("cause %v, want consolidation", f.cause[1])
	}
	f.up(1) // relaunched: no longer under notice
	if h := f.holding(c, 0); h != 4 {
		t.Errorf("after up: holding %d, want 4", h)
	}
}

// An outage starts at an interruption outside one and lasts the drawn
// hours; interruptions during it leave its end alone; the next one after
// it starts a new one.
func TestInterruptionsOutageOnlyOutsideOne(t *testing.T) {
	s := newInterruptions(1, 2, 1)
	two := models.Constant{Value: 2} // hours
	if end := s.interrupted(hour, 0, two); end != 3*hour {
		t.Fatalf("first outage ends at %v, want %v", end, 3*hour)
	}
	if end := s.interrupted(2*hour, 0, two); end != 3*hour {
		t.Errorf("during the outage: ends at %v, want %v still", end, 3*hour)
	}
	if end := s.interrupted(3*hour, 0, two); end != 5*hour {
		t.Errorf("after it: ends at %v, want %v", end, 5*hour)
	}
}

// Each node slot draws from its own stream of the seed: the same seed and
// slot give the same lifetimes, whatever other slots drew meanwhile.
func TestInterruptionsStreamPerSlot(t *testing.T) {
	a, b := newInterruptions(7, 3, 1), newInterruptions(7, 3, 1)
	for range 5 {
		b.lifeStream(0).Float64() // slot 0 draws in b only
	}
	x, y := a.lifeStream(2).Float64(), b.lifeStream(2).Float64()
	if x != y {
		t.Errorf("slot 2's first draw: %v and %v", x, y)
	}
	if a.failStream(2).Float64() == x {
		t.Error("failures draw from the lifetimes' stream")
	}
}

// A NodePool limited to 20 GPUs and 3 nodes, with two 8-GPU nodes up,
// has 4 GPUs and 1 node left: a 4-GPU type fits, an 8-GPU type does not,
// and the 8-GPU pool has no room while the 4-GPU pool has.
func TestProvisionerLimitsLeft(t *testing.T) {
	c := newCluster(t, poolSpec("big", 2, 5, 8, 96, 1024), poolSpec("small", 0, 5, 4, 48, 512))
	spec := Spec{
		Pools:  []Pool{{Group: 0, PricePerHour: 10}, {Group: 0, PricePerHour: 5}},
		Groups: []Group{{Name: "gpu", Kind: NodePool, Pools: []int32{0, 1}, MaxGPUs: 20, MaxNodes: 3}},
	}
	pv := newProvisioner(&spec, c)
	l := pv.limitsLeft(0)
	if diff := cmp.Diff(limitsLeft{nodes: 1, gpus: 4, milliCPU: -1, memMiB: -1}, l, cmp.AllowUnexported(limitsLeft{})); diff != "" {
		t.Errorf("limits left (-want +got):\n%s", diff)
	}
	if pv.withinLimits(0, &l) || !pv.withinLimits(1, &l) {
		t.Errorf("within limits: 8-GPU %v, 4-GPU %v; want false, true", pv.withinLimits(0, &l), pv.withinLimits(1, &l))
	}
	if pv.room(0, 0) || !pv.room(0, 1) {
		t.Errorf("room: 8-GPU %v, 4-GPU %v; want false, true", pv.room(0, 0), pv.room(0, 1))
	}
	pv.iceUntil[1] = minute // refused lately
	if pv.room(0, 1) || !pv.room(minute, 1) {
		t.Error("an offering refused for want of capacity has room before its time is up, or none after")
	}
}

// The ledger keeps each pool's most nodes present, not the last count.
func TestLedgerKeepsMostPresent(t *testing.T) {
	c := newCluster(t, poolSpec("a", 3, 4, 8, 96, 1024), poolSpec("b", 1, 1, 0, 16, 64))
	l := make(Ledger, len(c.Pools))
	l.observe(c)
	if err := c.Remove(10, 0); err != nil {
		t.Fatal(err)
	}
	l.observe(c)
	if l[0].MaxPresent != 3 || l[1].MaxPresent != 1 {
		t.Errorf("most present %d, %d; want 3, 1", l[0].MaxPresent, l[1].MaxPresent)
	}
}
