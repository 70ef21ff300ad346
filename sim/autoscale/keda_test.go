package autoscale

import (
	"reflect"
	"testing"
)

// A queue-length trigger with threshold 10 and the defaults: idle at 0
// replicas; 35 requests waiting activate it at the next poll (1 replica),
// then the HPA asks for ceil(35/10) = 4 within the scale-up limits
// (1 -> max(1+4, 2) = 4 capped by the desire); traffic stops at 120 s and
// the last replica goes 300 s after the last active poll.
func TestKEDAActivationAndCooldown(t *testing.T) {
	spec := NewScaledObjectSpec(10)
	spec.ScaleDown.StabilizationMs = 0 // so the 1 <-> N part follows the metric at once
	k, err := NewKEDA(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := 0
	at := map[int64]int{}
	for now := int64(0); now <= 600_000; now += 15_000 {
		queue := 0.0
		if now >= 30_000 && now < 120_000 {
			queue = 35
		}
		r = k.Sync(now, Observation{Replicas: r, Ready: r}, queue)
		at[now] = r
	}
	checks := []struct {
		now  int64
		want int
	}{
		{0, 0}, {15_000, 0}, // idle; 15 s is between polls
		{30_000, 1},  // activated at the poll
		{45_000, 4},  // HPA: ceil(35 / 10)
		{105_000, 4}, // still 35 waiting
		{120_000, 1}, // no traffic: the HPA goes to its minimum, 1
		{360_000, 1}, // 270 s after the last active poll (90 s)
		{390_000, 0}, // the poll at 390 s: 300 s without activity
		{405_000, 0},
	}
	for _, c := range checks {
		if at[c.now] != c.want {
			t.Errorf("at %d s: %d replicas, want %d", c.now/1000, at[c.now], c.want)
		}
	}
}

func TestKEDAValidate(t *testing.T) {
	if _, err := NewKEDA(NewScaledObjectSpec(0)); err == nil {
		t.Error("threshold 0 accepted")
	}
	s := NewScaledObjectSpec(5)
	s.ActivationThreshold = -1
	if _, err := NewKEDA(s); err == nil {
		t.Error("negative activation threshold accepted")
	}
}

// A settled ScaledObject's syncs can be skipped: two controllers with
// the same history (20 waiting a replica on 4 replicas: ceil(4 x 20 /
// 10) = 8 on the first sync; then 10 a replica on the 8, the target,
// until every window has passed), one synced at each 15 s period of the
// next hour with the queue holding at 10.4 a replica (within the 10%
// tolerance: kept), the other told Keeps and SkipSteady over the same
// periods, are the same controller after it, and decide the same at each
// later sync when the queue grows to 30 a replica (ceil(8 x 30 / 10) = 24,
// the scale-up policy's limit: max(8 + 4, 2 x 8) = 16) and falls back.
// Outside the band Keeps says no: 12 a replica is 20% above the target,
// and an inactive trigger (0 waiting with min 0) may scale to zero.
func TestKEDASkipSteadyIsSync(t *testing.T) {
	// KEDA's default polling (30 s, every second sync), one shorter than
	// the HPA's period (a poll each sync) and ones that are not a multiple
	// of it (40 s: every third sync, 45 s later; 100 s: every seventh).
	for _, poll := range []int64{30_000, 10_000, 40_000, 45_000, 100_000} {
		mk := func() *KEDA {
			spec := NewScaledObjectSpec(10)
			spec.MinReplicaCount, spec.MaxReplicaCount = 0, 40
			spec.PollingMs = poll
			k, err := NewKEDA(spec)
			if err != nil {
				t.Fatal(err)
			}
			r := 4
			for now := int64(0); now <= 20*60_000; now += 15_000 {
				per := 10.0
				if now == 0 {
					per = 20
				}
				r = k.Sync(now, Observation{Replicas: r, Ready: r}, per*float64(r))
			}
			if r != 8 {
				t.Fatalf("polling %d ms: settled at %d replicas, want 8", poll, r)
			}
			return k
		}
		a, b := mk(), mk()
		const first, last = 20*60_000 + 15_000, 80 * 60_000
		o := Observation{Replicas: 8, Ready: 8}
		for now := int64(first); now <= last; now += 15_000 {
			if r := a.Sync(now, o, 10.4*8); r != 8 {
				t.Fatalf("polling %d ms: at %d: %d replicas", poll, now, r)
			}
		}
		if !b.Keeps(o, 10.4*8) {
			t.Fatal("a queue of 10.4 a replica on 8 is within the tolerance: kept")
		}
		if b.Keeps(o, 12*8) || b.Keeps(o, 0) {
			t.Fatal("12 a replica (20% over) or an idle trigger must not be kept")
		}
		b.SkipSteady(first, last, 15_000, 8, nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("polling %d ms: skipped:\n%+v\n%+v\nsynced:\n%+v\n%+v", poll, *b, *b.hpa, *a, *a.hpa)
		}
		ra, rb := 8, 8
		for now := int64(last + 15_000); now <= last+20*60_000; now += 15_000 {
			per := 30.0
			if now > last+5*60_000 {
				per = 2
			}
			ra = a.Sync(now, Observation{Replicas: ra, Ready: ra}, per*float64(ra))
			rb = b.Sync(now, Observation{Replicas: rb, Ready: rb}, per*float64(rb))
			if ra != rb {
				t.Fatalf("polling %d ms: at %d: %d replicas synced, %d skipped", poll, now, ra, rb)
			}
			if now == last+15_000 && ra != 16 {
				t.Fatalf("polling %d ms: the first sync at 30 a replica: %d, want 16", poll, ra)
			}
		}
	}
}
