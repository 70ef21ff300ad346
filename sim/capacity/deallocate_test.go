package capacity

import (
	"testing"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Azure's eviction policy Deallocate: a reclaimed node keeps its slot and
// the same node restarts, Ready after Restart (5 min) rather than
// Provisioning (15 min, a fresh VM's boot and image pull); a pool that
// does not relaunch keeps it deallocated to the end.
//
// By hand: pool 0 (relaunching) and pool 1 (not) lose one node each at
// 1 h, without notice. Pool 0 restarts the same slot at once: Ready at
// 1h05m, deallocated 0 ms. Pool 1's node stays deallocated from 1 h to
// the end at 3 h: 2 h.
func TestDeallocatedNodeRestartsInItsSlot(t *testing.T) {
	pools := []cluster.PoolSpec{poolSpec("a", 2, 0, 1, 4, 16), poolSpec("b", 2, 0, 1, 4, 16)}
	spot := func(replace bool) Pool {
		return Pool{CapacityType: models.Spot, Provisioning: 15 * minute, Restart: 5 * minute, Replace: replace, Group: -1,
			Deallocate: true, Interruptions: Process{Times: []Time{hour}}}
	}
	h := setup(t, pools, Spec{Pools: []Pool{spot(true), spot(false)}})
	h.run(t, hour)
	var gone [2]int32
	for p := range 2 {
		gone[p] = -1
		pl := &h.c.Pools[p]
		for n := pl.First; n < pl.First+pl.Count; n++ {
			if h.k.deallocSince[n] >= 0 || h.c.Nodes[n].State == cluster.NodeBooting {
				gone[p] = n
			}
		}
	}
	if h.c.Nodes[gone[0]].State != cluster.NodeBooting {
		t.Fatalf("pool a: slot %d is %v, want the same node restarting", gone[0], h.c.Nodes[gone[0]].State)
	}
	if at := h.next(EvReady); at != hour+5*minute {
		t.Fatalf("restarted node Ready at %v, want 1h05m (Restart, not Provisioning)", at)
	}
	if h.c.Nodes[gone[1]].State != cluster.NodeAbsent || h.k.deallocSince[gone[1]] != hour {
		t.Fatalf("pool b: slot %d is %v, deallocated since %v; want absent since 1h", gone[1], h.c.Nodes[gone[1]].State, h.k.deallocSince[gone[1]])
	}
	h.run(t, 3*hour)
	a, b := h.k.StatsAt(0, 3*hour), h.k.StatsAt(1, 3*hour)
	if a.Deallocated != 1 || a.Restarted != 1 || a.DeallocatedMs != 0 || a.Launched != 1 {
		t.Fatalf("pool a: %+v", a)
	}
	if b.Deallocated != 1 || b.Restarted != 0 || b.DeallocatedMs != 2*hour {
		t.Fatalf("pool b: %+v", b)
	}
}

func TestDeallocateIsForAFixedSpotPool(t *testing.T) {
	pools := []cluster.PoolSpec{poolSpec("a", 1, 0, 1, 4, 16)}
	for _, p := range []Pool{{CapacityType: models.OnDemand, Group: -1, Deallocate: true}} {
		if err := (&Spec{Pools: []Pool{p}}).Validate(pools); err == nil {
			t.Fatalf("%+v: want refused", p)
		}
	}
}
