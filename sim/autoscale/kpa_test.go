package autoscale

import "testing"

// A burst: 5 replicas carry 50 concurrent requests (target 10 each) for a
// minute, then 200 arrive. Ticks are 2 s, the stable window 30 ticks, the
// panic window 3 ticks (10%). Worked by hand, with the replicas held at 5
// (still starting) so the ready count does not move:
//
//	tick 1 of the burst: panic avg (200+50+50)/3 = 100 -> 10 pods = 2x the
//	  5 ready: panic; the stable avg (29x50+200)/30 = 55 would say 6.
//	tick 2: (200+200+50)/3 = 150 -> 15.   tick 3: 200 -> 20.
func TestKPAPanicOnBurst(t *testing.T) {
	k, err := NewKPA(NewKPASpec(10))
	if err != nil {
		t.Fatal(err)
	}
	now := int64(0)
	for i := 0; i < 30; i++ {
		if got := k.Tick(now, 50, 5); got != 5 {
			t.Fatalf("steady at %d ms: %d, want 5", now, got)
		}
		now += 2000
	}
	for i, want := range []int{10, 15, 20, 20} {
		got := k.Tick(now, 200, 5)
		if got != want || !k.InPanic() {
			t.Errorf("burst tick %d: %d (panic %v), want %d in panic", i+1, got, k.InPanic(), want)
		}
		now += 2000
	}
}

// In panic the revision never scales down; it leaves panic a stable window
// after the last tick over the threshold, and then scales down at most by
// half per tick (max-scale-down-rate 2).
func TestKPALeavesPanicAndScalesDownAtMostHalf(t *testing.T) {
	k, _ := NewKPA(NewKPASpec(10))
	now := int64(0)
	ready := 1
	// 200 concurrent from the start: panic, and ready follows the desire.
	for i := 0; i < 5; i++ {
		ready = k.Tick(now, 200, ready)
		now += 2000
	}
	if ready != 20 || !k.InPanic() {
		t.Fatalf("after the burst: %d replicas, panic %v; want 20 in panic", ready, k.InPanic())
	}
	// The last tick over the threshold was the first: 1 ready pod facing
	// 20 pods' worth. From then on 20 are ready and the ratio is 1.
	// Traffic drops to 20 (2 pods' worth): no scale-down while in panic.
	lastOver := int64(0)
	for now-lastOver < 60_000 {
		if got := k.Tick(now, 20, ready); got < ready {
			t.Fatalf("scaled down to %d in panic at %d ms", got, now)
		}
		now += 2000
	}
	got := k.Tick(now, 20, ready)
	if k.InPanic() {
		t.Fatalf("still in panic a stable window after the last cause")
	}
	// The stable window (ticks at 2..60 s) holds 4 ticks of 200 and 26 of
	// 20: 44 concurrent, 5 pods; the step is limited to 20/2 = 10.
	if got != 10 {
		t.Errorf("first step down: %d, want 10 (half of 20)", got)
	}
}

// Scale to zero: after the traffic stops the last replica stays for a
// whole stable window with no traffic (60 s) plus the grace period (30 s).
func TestKPAScaleToZero(t *testing.T) {
	k, _ := NewKPA(NewKPASpec(10))
	now := int64(0)
	for i := 0; i < 30; i++ {
		k.Tick(now, 5, 1)
		now += 2000
	}
	stop := now
	zeroAt := int64(-1)
	ready := 1
	for now < stop+200_000 {
		ready = k.Tick(now, 0, ready)
		if ready == 0 && zeroAt < 0 {
			zeroAt = now
		}
		now += 2000
	}
	// The first tick whose stable window holds only zeros is 30 ticks after
	// the stop (stop + 58 s); 30 s of grace after that.
	if want := stop + 58_000 + 30_000; zeroAt != want {
		t.Errorf("scaled to zero at +%d ms, want +%d ms", zeroAt-stop, want-stop)
	}
}
