package autoscale

import (
	"github.com/stretchr/testify/require"
	"math/rand/v2"
	"slices"
	"testing"
)

// run syncs every 15 s from t=0 to end with a metric that depends on the
// replicas, and returns the replicas after each sync.
func run(t *testing.T, h *HPA, start int, end int64, metric func(now int64, replicas int) float64) []int {
	t.Helper()
	var out []int
	r := start
	for now := int64(0); now <= end; now += h.spec.SyncMs {
		r = h.Sync(now, Observation{Replicas: r, Ready: r, Metric: metric(now, r)})
		out = append(out, r)
	}
	return out
}

// The documentation's first example: a metric at 200m against a target of
// 100m doubles the replicas; at 50m it halves them (once the scale-down
// stabilization window, 300 s by default, has passed).
func TestHPADocRatioExamples(t *testing.T) {
	h, _ := NewHPA(NewHPASpec(100, 0.100))
	if got := h.Sync(0, Observation{Replicas: 3, Ready: 3, Metric: 0.200}); got != 6 {
		t.Errorf("200m vs 100m on 3 replicas: %d, want 6", got)
	}
	h, _ = NewHPA(NewHPASpec(100, 0.100))
	// 8 replicas at 100m for 5 minutes (the window fills with 8s), then 50m.
	got := run(t, h, 8, 600_000, func(now int64, _ int) float64 {
		if now < 300_000 {
			return 0.100
		}
		return 0.050
	})
	// At 300 s the window still holds the 8s recommended from 15 s on; the
	// last of them (at 285 s) leaves the window at 585 s.
	for i, r := range got {
		now := int64(i) * 15_000
		want := 8
		if now >= 585_000 {
			want = 4
		}
		if r != want {
			t.Fatalf("at %d s: %d replicas, want %d (all: %v)", now/1000, r, want, got)
		}
	}
}

// Within the tolerance (0.1) nothing moves: 1.05x the target on 10
// replicas would ask for ceil(10.5) = 11 without it.
func TestHPATolerance(t *testing.T) {
	h, _ := NewHPA(NewHPASpec(100, 100))
	if got := h.Sync(0, Observation{Replicas: 10, Ready: 10, Metric: 105}); got != 10 {
		t.Errorf("ratio 1.05: %d replicas, want 10", got)
	}
	if got := h.Sync(15_000, Observation{Replicas: 10, Ready: 10, Metric: 112}); got != 12 {
		t.Errorf("ratio 1.12: %d replicas, want ceil(11.2) = 12", got)
	}
}

// The documentation's scale-down policy example: Pods 4 and Percent 10 per
// 60 s, the larger change selected, from 80 replicas to 10. Each minute:
// 80 -> 72 (10% of 80); 72 -> 64 (7.2 rounded up to 8); then 10% until
// 4 pods is the larger change, below 40.
func TestHPADocScaleDownPolicies(t *testing.T) {
	spec := NewHPASpec(100, 1)
	spec.ScaleDown = Rules{Policies: []Policy{{Pods, 4, 60_000}, {Percent, 10, 60_000}}}
	h, _ := NewHPA(spec)
	// The load is 10 pods' worth at the target, spread over the replicas.
	got := run(t, h, 80, 14*60_000, func(_ int64, r int) float64 { return 10.0 / float64(r) })
	var perMinute []int
	for i := 0; i < len(got); i += 4 {
		perMinute = append(perMinute, got[i])
	}
	// By hand: 80*0.9=72; 72*0.9=64.8->64; 64*.9=57.6->57; 51.3->51;
	// 45.9->45; 40.5->40; 40: 36 both; 36: 32 (32.4 and 32); 32: 28
	// (28.8, 28); 28: pods 24 beats 25.2->25; 20; 16; 12; then 8 is below
	// the desired 10.
	want := []int{72, 64, 57, 51, 45, 40, 36, 32, 28, 24, 20, 16, 12, 10, 10}
	if !slices.Equal(perMinute, want) {
		t.Errorf("replicas each minute: %v\nwant                %v", perMinute, want)
	}
	// Between the minutes nothing moves: the period's budget is spent.
	if got[1] != 72 || got[3] != 72 {
		t.Errorf("within the first minute: %v", got[:4])
	}
}

// Default scale-up: 4 pods or 100% per 15 s, the larger. The walkthrough's
// load (305% CPU against a 50% target on one replica) asks for
// ceil(6.1) = 7; the first sync may add at most max(1+4, 2) = 5.
func TestHPADefaultScaleUpRate(t *testing.T) {
	h, _ := NewHPA(NewHPASpec(10, 50))
	load := 305.0 // total CPU percent of one pod's request, spread evenly
	got := run(t, h, 1, 30_000, func(_ int64, r int) float64 { return load / float64(r) })
	if want := []int{5, 7, 7}; !slices.Equal(got, want) {
		t.Errorf("replicas at 0, 15, 30 s: %v, want %v", got, want)
	}
}

// Not-yet-ready pods count as using nothing on a scale-up: 4 ready pods at
// 150 against 100 would ask for 6; with 2 more starting, the ratio is
// 4*150/(100*6) = 1.0, no scale-up.
func TestHPANotReadyDampensScaleUp(t *testing.T) {
	h, _ := NewHPA(NewHPASpec(100, 100))
	if got := h.Sync(0, Observation{Replicas: 6, Ready: 4, NotReady: 2, Metric: 150}); got != 6 {
		t.Errorf("got %d, want 6", got)
	}
	// 4 ready at 300: 4*300/600 = 2.0, ceil(2*6) = 12.
	if got := h.Sync(15_000, Observation{Replicas: 6, Ready: 4, NotReady: 2, Metric: 300}); got != 12 {
		t.Errorf("got %d, want 12", got)
	}
}

func TestHPAValidate(t *testing.T) {
	bad := []HPASpec{
		func() HPASpec { s := NewHPASpec(10, 0); return s }(),
		func() HPASpec { s := NewHPASpec(10, 5); s.MinReplicas = 11; return s }(),
		func() HPASpec { s := NewHPASpec(10, 5); s.ScaleDown.Policies[0].PeriodMs = 3_600_000; return s }(),
	}
	for i, s := range bad {
		if _, err := NewHPA(s); err == nil {
			t.Errorf("spec %d accepted", i)
		}
	}
}

// The documentation's "limit scale down rate" example: Percent 10 and
// Pods 5 per 60 s with selectPolicy Min, the smaller change wins: from
// 100 replicas 5 go (10% would be 10); from 40, 4 go (10%, under 5).
func TestHPASelectMin(t *testing.T) {
	spec := NewHPASpec(200, 1)
	spec.ScaleDown = Rules{Policies: []Policy{{Percent, 10, 60_000}, {Pods, 5, 60_000}}, Select: SelectMin}
	for _, c := range []struct{ from, want int }{{100, 95}, {40, 36}} {
		h, _ := NewHPA(spec)
		if got := h.Sync(0, Observation{Replicas: c.from, Ready: c.from, Metric: 10.0 / float64(c.from)}); got != c.want {
			t.Errorf("from %d: %d, want %d", c.from, got, c.want)
		}
	}
	// Disabled: no scale-down at all.
	spec.ScaleDown.Select = SelectDisabled
	h, _ := NewHPA(spec)
	if got := h.Sync(0, Observation{Replicas: 100, Ready: 100, Metric: 0.1}); got != 100 {
		t.Errorf("disabled scale-down moved to %d", got)
	}
}

// syncWalking is Sync without the steady shortcut: every sync walks the
// windows (normalize), as the HPA did before it.
func (h *HPA) syncWalking(now int64, o Observation) int {
	cur := o.Replicas
	h.start(now, cur)
	if cur == 0 && h.spec.MinReplicas > 0 {
		return 0
	}
	if cur > h.spec.MaxReplicas || cur < h.spec.MinReplicas {
		desired := min(max(cur, h.spec.MinReplicas), h.spec.MaxReplicas)
		if !h.spec.NoBehavior {
			h.store(now, desired-cur)
		}
		return desired
	}
	desired := h.normalize(now, cur, h.proposal(o))
	if !h.spec.NoBehavior {
		h.store(now, desired-cur)
	}
	return desired
}

// A steady sync (the proposal is the replicas, every recommendation in the
// windows is too, no change remembered) skips the window walk: the same
// answers and the same remembered recommendations and changes as walking,
// sync by sync, over a metric that holds for long stretches (so that the
// shortcut is taken) and jumps between them (so that windows hold
// different values), with and without a scale-up window, a Value metric
// and replicas the target's owner changes by hand.
func TestSteadySyncIsTheWalk(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*HPASpec)
	}{
		{"defaults", func(*HPASpec) {}},
		{"scale-up window", func(s *HPASpec) { s.ScaleUp.StabilizationMs = 60_000 }},
		{"no scale-down window", func(s *HPASpec) { s.ScaleDown.StabilizationMs = 0 }},
		{"value", func(s *HPASpec) { s.Type = Value; s.MinReplicas = 2 }},
		{"no behavior", func(s *HPASpec) { s.NoBehavior = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := NewHPASpec(12, 100)
			c.edit(&spec)
			fast, err := NewHPA(spec)
			require.NoError(t, err)
			walk, err := NewHPA(spec)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, 2))
			cur, load, steady := 3, 300.0, 0
			for now := int64(0); now < 6*3_600_000; now += spec.SyncMs {
				if rng.IntN(40) == 0 {
					load = float64(rng.IntN(1200))
				}
				if rng.IntN(300) == 0 {
					cur = 1 + rng.IntN(10) // by hand
				}
				// The load spread over the replicas (for a Value
				// metric too: any value that falls as they grow).
				o := Observation{Replicas: cur, Ready: cur, Metric: load / float64(max(cur, 1))}
				wasFlat := fast.quiet(now) && (len(fast.recs) == 0 || fast.flat == cur)
				got, want := fast.Sync(now, o), walk.syncWalking(now, o)
				require.Equal(t, want, got, "at %d ms", now)
				require.Equal(t, walk.recs, fast.recs, "at %d ms", now)
				require.Equal(t, walk.ups, fast.ups, "at %d ms", now)
				require.Equal(t, walk.downs, fast.downs, "at %d ms", now)
				if wasFlat && got == cur {
					steady++
				}
				cur = got
			}
			require.Greater(t, steady, 300, "the steady shortcut was taken")
		})
	}
}

// SkipSteady stands for a stretch of steady syncs: after it, the HPA holds
// the recommendations (and answers the next syncs as) one synced at every
// period does, whatever the stretch's length against the windows, and
// whether or not they still hold the recommendations from before the
// scale-up.
func TestSkipSteadyIsTheSyncs(t *testing.T) {
	for _, stab := range []int64{0, 60_000, 300_000} {
		spec := NewHPASpec(10, 100)
		spec.ScaleDown.StabilizationMs = stab
		for _, n := range []int64{1, 2, 3, 19, 20, 21, 400} {
			each, err := NewHPA(spec)
			require.NoError(t, err)
			skip, err := NewHPA(spec)
			require.NoError(t, err)
			// A scale-up to 3, then steady at 3 (300 on 3 replicas).
			o := Observation{Replicas: 2, Ready: 2, Metric: 150}
			now := int64(0)
			for _, h := range []*HPA{each, skip} {
				require.Equal(t, 3, h.Sync(now, o))
			}
			o = Observation{Replicas: 3, Ready: 3, Metric: 100}
			for now = 15_000; !each.Keeps(o); now += 15_000 {
				require.Equal(t, 3, each.Sync(now, o))
				require.Equal(t, 3, skip.Sync(now, o))
			}
			require.True(t, skip.Keeps(o))
			// Kept from the first sync after the scale-up's policy period
			// (15 s), while a down window still holds the 2 recorded before
			// it: a proposal of 3 on 3 is 3 whatever the windows hold.
			require.Equal(t, int64(30_000), now)
			if stab > 0 {
				require.Equal(t, -1, skip.flat, "the window holds 2 and 3")
			}
			first, last := now, now+(n-1)*15_000
			for ; now <= last; now += 15_000 {
				require.Equal(t, 3, each.Sync(now, o))
			}
			skip.SkipSteady(first, last, 15_000, 3, nil)
			require.Equal(t, each.recs, skip.recs, "window %d ms, %d syncs skipped", stab, n)
			require.Equal(t, each.flat, skip.flat)
			require.Equal(t, each.ups, skip.ups)
			require.Equal(t, each.downs, skip.downs)
			// Then the load falls: both scale down at the same sync.
			o.Metric = 40
			for end := now + 900_000; now < end; now += 15_000 {
				require.Equal(t, each.Sync(now, o), skip.Sync(now, o), "at %d ms", now)
			}
		}
	}
}

// At a bound, a proposal beyond it holds the replicas there: an HPA at
// its maximum of 4 whose calculator asks for 6 to 12 (150 to 300 a
// replica, target 100) answers 4 at every sync, and records each
// proposal. SkipSteady over such a stretch, told the proposals, leaves
// the HPA as syncing at every period does (with and without behavior,
// and at the minimum of 3 with proposals of 1 and 2), and both answer
// the same when the load turns: at the maximum the 300 s down window
// holds the high proposals, so 4 stays until they leave it. Inside the
// bounds a proposal other than the replicas never holds.
func TestHoldsAtTheBoundsIsTheSyncs(t *testing.T) {
	for _, c := range []struct {
		name       string
		min, max   int
		cur        int
		per, after func(k int64) float64 // a replica's metric at the k-th sync
		noBehavior bool
	}{
		{name: "at max", min: 1, max: 4, cur: 4, per: func(k int64) float64 { return 150 + float64(k%7)*25 }, after: func(int64) float64 { return 20 }},
		{name: "at max, no behavior", min: 1, max: 4, cur: 4, per: func(k int64) float64 { return 150 + float64(k%7)*25 }, after: func(int64) float64 { return 20 }, noBehavior: true},
		{name: "at min", min: 3, max: 10, cur: 3, per: func(k int64) float64 { return 20 + float64(k%3)*20 }, after: func(int64) float64 { return 250 }},
	} {
		for _, n := range []int64{1, 5, 21, 400} {
			spec := NewHPASpec(c.max, 100)
			spec.MinReplicas = c.min
			spec.NoBehavior = c.noBehavior
			each, err := NewHPA(spec)
			require.NoError(t, err)
			skip, err := NewHPA(spec)
			require.NoError(t, err)
			obs := func(r int, per float64) Observation {
				return Observation{Replicas: r, Ready: r, Metric: per}
			}
			// At the bound and steady there, the windows full of it.
			now := int64(0)
			for ; now <= 600_000; now += 15_000 {
				require.Equal(t, c.cur, each.Sync(now, obs(c.cur, 100)))
				require.Equal(t, c.cur, skip.Sync(now, obs(c.cur, 100)))
			}
			k0 := now / 15_000
			o := obs(c.cur, c.per(k0))
			require.True(t, skip.Holds(o), "%s: held at the bound", c.name)
			require.False(t, skip.Keeps(o), "%s: not the steady path", c.name)
			inside := obs(c.cur, c.per(k0))
			inside.Replicas, inside.Ready = c.cur-1, c.cur-1
			if c.cur-1 >= c.min {
				require.False(t, skip.Holds(inside), "%s: inside the bounds", c.name)
			}
			first, last := now, now+(n-1)*15_000
			for ; now <= last; now += 15_000 {
				o := obs(c.cur, c.per(now/15_000))
				if !c.noBehavior {
					// Without behavior the held proposals in the window
					// make Settled false (it asks every recommendation to
					// be cur) though the bound still holds: asked at the
					// stretch's start only.
					require.True(t, each.Holds(o), "%s at %d", c.name, now)
				}
				require.Equal(t, c.cur, each.Sync(now, o))
			}
			skip.SkipSteady(first, last, 15_000, c.cur, func(t int64) int { return skip.Proposal(obs(c.cur, c.per(t/15_000))) })
			require.Equal(t, each.recs, skip.recs, "%s, %d syncs skipped", c.name, n)
			require.Equal(t, each.flat, skip.flat)
			require.Equal(t, each.ups, skip.ups)
			require.Equal(t, each.downs, skip.downs)
			require.Equal(t, each.last, skip.last)
			ra, rb := c.cur, c.cur
			changed := int64(-1)
			for end := now + 900_000; now < end; now += 15_000 {
				ra = each.Sync(now, obs(ra, c.after(now)))
				rb = skip.Sync(now, obs(rb, c.after(now)))
				require.Equal(t, ra, rb, "%s at %d ms", c.name, now)
				if ra != c.cur && changed < 0 {
					changed = now
				}
			}
			require.Positive(t, changed, "%s: the turn of the load moves the replicas", c.name)
			if c.name == "at max" && n >= 21 {
				// The last held proposal (at last) is in the 300 s window
				// while younger than it: the sync at last + 300 s, where
				// every proposal in the window is 1, scales down.
				require.Equal(t, last+300_000, changed, "%s: the down window holds the high proposals", c.name)
			}
		}
	}
}

// Hover says how long a scaled-up HPA keeps its replicas while its
// proposals fall below them: at 0 s 150 a replica on 2 proposes 3 (the
// default behavior: a 300 s scale-down window); from 15 s on 80 a
// replica on 3 proposes ceil(3 x 0.8) = 3 until 60 s, then 60 proposes
// ceil(1.8) = 2. The window holds the 3s recorded at 0 to 60 s: the last
// at 60 s lets go at 360 s, Hover's held, and the sync there scales down.
// A proposal of 3 at 120 s would hold it to 420 s.
func TestHoverIsTheWindow(t *testing.T) {
	for _, c := range []struct {
		name      string
		again     int64 // a sync proposing 3 again (0: none)
		wantHeld  int64
		wantFalls int64
	}{
		{"falls", 0, 360_000, 360_000},
		{"proposes 3 again at 120 s", 120_000, 360_000, 420_000},
	} {
		h, err := NewHPA(NewHPASpec(10, 100))
		require.NoError(t, err)
		require.Equal(t, 3, h.Sync(0, Observation{Replicas: 2, Ready: 2, Metric: 150}))
		r := 3
		for now := int64(15_000); now <= 60_000; now += 15_000 {
			r = h.Sync(now, Observation{Replicas: r, Ready: r, Metric: 80})
		}
		require.Equal(t, 3, r)
		held, window, ok := h.Hover(3)
		require.True(t, ok)
		require.Equal(t, int64(300_000), window)
		require.Equal(t, c.wantHeld, held, c.name)
		falls := int64(-1)
		for now := int64(75_000); now <= 600_000 && falls < 0; now += 15_000 {
			per := 60.0 // ceil(3 x 0.6) = 2
			if now == c.again {
				per = 100
			}
			if r = h.Sync(now, Observation{Replicas: 3, Ready: 3, Metric: per}); r != 3 {
				falls = now
			}
		}
		require.Equal(t, c.wantFalls, falls, c.name)
	}
	spec := NewHPASpec(10, 100)
	spec.NoBehavior = true
	h, err := NewHPA(spec)
	require.NoError(t, err)
	_, _, ok := h.Hover(3)
	require.False(t, ok, "without behavior the window's highest wins even over a proposal of cur")
}

// Scale-down and scale-up policies inside one period: the limit of each
// direction counts from the replicas at the period's start, current -
// added + removed within it (the controller's
// calculateScaleUpLimitWithScalingRules and
// calculateScaleDownLimitWithBehaviors). Pods 2 up and Pods 1 down per
// 60 s, no windows, 10 replicas at target 50:
//   - t=0: 300 requests ask for 6, down by 1: 9 (removed 1 at t=0).
//   - t=15 s: 1000 ask for 20; the period started at 9 + 1 = 10, so up to
//     12 (counting from 9 it would be 11).
//   - t=30 s: 200 ask for 4; the period (t > -30 s) started at
//     12 - 3 + 1 = 10, so down to 9.
//   - t=45 s: 1000 again; the period holds -1 (0 s), +3 (15 s), -3 (30 s):
//     start 9 - 3 + 4 = 10, up to 12.
//   - t=60 s: the t=0 change has left the period (0 + 60 s is not after
//     60 s): start 12 - 6 + 3 = 9, so up to 11 < 12: 12 stays.
//   - t=75 s: the 15 s change has left too: start 12 - 3 + 3 = 12, up to 14.
func TestHPAPeriodCountsBothDirections(t *testing.T) {
	spec := NewHPASpec(20, 50)
	spec.ScaleUp = Rules{Policies: []Policy{{Pods, 2, 60_000}}}
	spec.ScaleDown = Rules{Policies: []Policy{{Pods, 1, 60_000}}}
	h, err := NewHPA(spec)
	require.NoError(t, err)
	load := []float64{300, 1000, 200, 1000, 1000, 1000}
	want := []int{9, 12, 9, 12, 12, 14}
	r := 10
	var got []int
	for i, l := range load {
		r = h.Sync(int64(i)*15_000, Observation{Replicas: r, Ready: r, Metric: l / float64(r)})
		got = append(got, r)
	}
	require.Equal(t, want, got)
}

// The controller's first sync records the replicas it finds as a
// recommendation (recordInitialRecommendation): a stabilization window
// holds a change back until that recommendation has left it. Worked by
// hand: 10 replicas at half the target under the default 300 s down
// window recommend 5 from t=0 on; the 10 recorded at t=0 is in the window
// while its age is under 300 s, so the scale-down comes at t=300 s.
// Under a 60 s up window, 2 replicas at twice the target stay 2 until
// t=60 s.
func TestHPAInitialRecommendation(t *testing.T) {
	h, err := NewHPA(NewHPASpec(20, 100))
	require.NoError(t, err)
	got := run(t, h, 10, 315_000, func(int64, int) float64 { return 50 })
	want := slices.Repeat([]int{10}, 20) // t=0 .. 285 s
	want = append(want, 5, 5)            // t=300, 315 s
	require.Equal(t, want, got)

	spec := NewHPASpec(20, 100)
	spec.ScaleUp.StabilizationMs = 60_000
	h, err = NewHPA(spec)
	require.NoError(t, err)
	got = run(t, h, 2, 75_000, func(_ int64, r int) float64 { return 400 / float64(r) })
	require.Equal(t, []int{2, 2, 2, 2, 4, 4}, got)
}

// Replicas outside [min, max] (edited by hand) are brought to the bound
// at once, whatever the metric says and whatever the policies allow, as
// the controller does before it reads any metric.
func TestHPAOutOfBounds(t *testing.T) {
	spec := NewHPASpec(8, 100)
	spec.MinReplicas = 3
	h, err := NewHPA(spec)
	require.NoError(t, err)
	// 12 replicas at a fifth of the target would ask for 3.
	require.Equal(t, 8, h.Sync(0, Observation{Replicas: 12, Ready: 12, Metric: 20}))
	h, err = NewHPA(spec)
	require.NoError(t, err)
	// 1 replica under its target would ask for 1.
	require.Equal(t, 3, h.Sync(0, Observation{Replicas: 1, Ready: 1, Metric: 50}))
}

// The controller keeps each direction's scale events apart and, at a new
// event, lets it take the place of one older than that direction's
// longest policy period: a scale-down so replaced no longer gives a
// longer scale-up period its room back. By hand, with up Pods 2 per
// 300 s and down Pods 10 per 15 s (no windows), from 10 replicas, target
// 100: t=0 metric 40 -> 4 (6 removed); t=15 s at the target, 4; t=30 s
// metric 75 -> 3 (1 removed; the 6 removed at t=0 are older than 15 s and
// make way); t=45 s metric 600 asks 18: the up period starts at 3 - 0 + 1
// = 4 replicas, so 4 + 2 = 6 (counting the forgotten 6 would give 12).
func TestHPAForgetsOutdatedScaleEvents(t *testing.T) {
	spec := NewHPASpec(30, 100)
	spec.ScaleUp = Rules{Policies: []Policy{{Pods, 2, 300_000}}}
	spec.ScaleDown = Rules{Policies: []Policy{{Pods, 10, 15_000}}}
	h, err := NewHPA(spec)
	require.NoError(t, err)
	cur := 10
	for i, step := range []struct {
		metric float64
		want   int
	}{{40, 4}, {100, 4}, {75, 3}, {600, 6}} {
		cur = h.Sync(int64(i)*15_000, Observation{Replicas: cur, Ready: cur, Metric: step.metric})
		require.Equal(t, step.want, cur, "at %d s", i*15)
	}
}

// The tolerance's bounds belong to it: a metric at exactly 110% (or 90%)
// of its target is within the default 0.1, as the controller's test
// 1 - 0.1 <= ratio <= 1 + 0.1 on milli-units has it, even where the float
// ratio lands an ulp outside (110/100, 0.09/0.1).
func TestHPAToleranceBounds(t *testing.T) {
	for _, c := range []struct{ target, metric float64 }{{100, 110}, {100, 90}, {0.1, 0.09}, {0.1, 0.11}} {
		h, err := NewHPA(NewHPASpec(20, c.target))
		require.NoError(t, err)
		require.Equal(t, 10, h.Sync(0, Observation{Replicas: 10, Ready: 10, Metric: c.metric}), "metric %g, target %g", c.metric, c.target)
	}
}

// Without a behavior the controller takes its older path. By hand, from 1
// replica, target 100, a load of 3,000 (30 replicas' worth) spread over
// the replicas: each sync at most max(2 x current, 4): 1 -> 4 -> 8 -> 16
// -> 30 (the documented default behavior, 4 pods or 100% per 15 s, gives
// 1 -> 5 -> 10 -> 20 -> 30). Then at 1,000 (10 replicas' worth) from
// t=75 s: the recommendations of 30 made at 60 s and before hold the
// scale-down until the one made at 60 s is more than 300 s old: 30 up to
// and including t=360 s, 10 at t=375 s.
func TestHPANoBehavior(t *testing.T) {
	spec := NewHPASpec(50, 100)
	spec.NoBehavior = true
	h, err := NewHPA(spec)
	require.NoError(t, err)
	got := run(t, h, 1, 390_000, func(now int64, r int) float64 {
		if now < 75_000 {
			return 3000 / float64(r)
		}
		return 1000 / float64(r)
	})
	want := []int{4, 8, 16, 30, 30}                      // t=0..60 s
	want = append(want, slices.Repeat([]int{30}, 20)...) // t=75..360 s
	want = append(want, 10, 10)                          // t=375, 390 s
	require.Equal(t, want, got)
}
