package autoscale

import "testing"

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
