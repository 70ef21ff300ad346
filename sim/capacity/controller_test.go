package capacity

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

var (
	ready    = cluster.NodeReady
	booting  = cluster.NodeBooting
	cordoned = cluster.NodeCordoned
)

// A static spot pool of 3 nodes that keeps its size, provisioning 2 min:
// the trace reclaims a node at 10 min. Without notice the node goes at
// once and its replacement boots until 12 min; with 2 min of notice the
// node is cordoned at 10 min, goes at 12 min, and its replacement boots
// until 14 min. A pool that does not replace its nodes stays at 2.
func TestStaticSpotPool(t *testing.T) {
	spec := func(notice Time, replace bool) Spec {
		return Spec{Pools: []Pool{{CapacityType: models.Spot, Provisioning: 2 * minute, Replace: replace, Group: -1,
			Interruptions: Process{Times: []Time{10 * minute}, Notice: notice}}}}
	}
	pools := []cluster.PoolSpec{poolSpec("spot", 3, 0, 8, 96, 1024)}
	type at struct {
		t      Time
		states map[cluster.NodeState]int
	}
	for _, tc := range []struct {
		name    string
		notice  Time
		replace bool
		steps   []at
		log     []string // prefixes, the node left out
		stats   PoolStats
	}{
		{"reclaimed at once", 0, true, []at{
			{10*minute - 1, map[cluster.NodeState]int{ready: 3}},
			{10 * minute, map[cluster.NodeState]int{ready: 2, booting: 1}},
			{12 * minute, map[cluster.NodeState]int{ready: 3}},
		}, []string{"600000: evict node"}, PoolStats{Launched: 1, Interrupted: 1, MaxPresent: 3}},
		{"two minutes' notice", 2 * minute, true, []at{
			{10 * minute, map[cluster.NodeState]int{ready: 2, cordoned: 1}},
			{12*minute - 1, map[cluster.NodeState]int{ready: 2, cordoned: 1}},
			{12 * minute, map[cluster.NodeState]int{ready: 2, booting: 1}},
			{14 * minute, map[cluster.NodeState]int{ready: 3}},
		}, []string{"600000: notice node", "720000: evict node"}, PoolStats{Launched: 1, Interrupted: 1, MaxPresent: 3}},
		{"not replaced", 0, false, []at{
			{20 * minute, map[cluster.NodeState]int{ready: 2}},
		}, []string{"600000: evict node"}, PoolStats{Interrupted: 1, MaxPresent: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := setup(t, pools, spec(tc.notice, tc.replace))
			for _, s := range tc.steps {
				h.run(t, s.t)
				if d := cmp.Diff(s.states, states(h.c, 0)); d != "" {
					t.Errorf("at %v (-want +got):\n%s", s.t, d)
				}
			}
			if len(h.log) != len(tc.log) {
				t.Fatalf("host saw %q, want %d calls", h.log, len(tc.log))
			}
			for i, p := range tc.log {
				if !strings.HasPrefix(h.log[i], p) || !strings.HasSuffix(h.log[i], "(spot interruption)") {
					t.Errorf("host call %d: %q, want %q... (spot interruption)", i, h.log[i], p)
				}
			}
			if d := cmp.Diff(tc.stats, h.k.Stats[0]); d != "" {
				t.Errorf("stats (-want +got):\n%s", d)
			}
		})
	}
}

// Lifetimes are exponential: over 4,000 nodes, the mean time to the first
// failure (MTBF 100 h) and to the first spot notice (0.5 an hour: a mean
// of 2 h) are within 5% of the means (the standard error is 1.6%), and
// the same seed draws the same times.
func TestLifetimesAreExponential(t *testing.T) {
	const nodes = 4000
	pools := []cluster.PoolSpec{poolSpec("p", nodes, 0, 1, 4, 16)}
	spec := Spec{Pools: []Pool{{CapacityType: models.Spot, Group: -1, FailureMTBF: 100 * hour,
		Interruptions: Process{RatePerHour: 0.5, Notice: 2 * minute}}}}
	means := func() (fail, notice float64, times []Time) {
		h := setup(t, pools, spec)
		for _, d := range h.queue {
			switch d.ev.Kind {
			case EvFail:
				fail += float64(d.at) / nodes
			case EvNotice:
				notice += float64(d.at) / nodes
			}
			times = append(times, d.at)
		}
		return
	}
	fail, notice, times := means()
	if math.Abs(fail/float64(100*hour)-1) > 0.05 {
		t.Errorf("mean time to failure %.2f h, want 100 h within 5%%", fail/float64(hour))
	}
	if math.Abs(notice/float64(2*hour)-1) > 0.05 {
		t.Errorf("mean time to a spot notice %.3f h, want 2 h within 5%%", notice/float64(hour))
	}
	if _, _, again := means(); !cmp.Equal(times, again) {
		t.Error("the same seed drew other lifetimes")
	}
}

// A failure takes its node without notice; a pool that keeps its size
// launches the replacement at once (Ready after provisioning, 3 min).
func TestFailureReplaced(t *testing.T) {
	h := setup(t, []cluster.PoolSpec{poolSpec("p", 1, 0, 8, 96, 1024)},
		Spec{Pools: []Pool{{Group: -1, Replace: true, FailureMTBF: 10 * hour, Provisioning: 3 * minute}}})
	at := h.next(EvFail)
	if at <= 0 {
		t.Fatal("no failure scheduled")
	}
	h.run(t, at)
	if d := cmp.Diff([]string{strconv.FormatInt(at, 10) + ": evict node 0 (node failure)"}, h.log); d != "" {
		t.Errorf("host calls (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[cluster.NodeState]int{booting: 1}, states(h.c, 0)); d != "" {
		t.Errorf("after the failure (-want +got):\n%s", d)
	}
	if got := h.next(EvReady); got != at+3*minute {
		t.Errorf("replacement Ready at %v, want %v", got, at+3*minute)
	}
	if d := cmp.Diff(PoolStats{Launched: 1, Failed: 1, MaxPresent: 1}, h.k.Stats[0]); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}
}

// A cluster-autoscaler group (8-GPU nodes, provisioning 90 s, scale-down
// after 10 min unneeded, none within 15 min of a scale-up): a job of
// three 4-GPU pods waits at 0. The scale-up at 0 launches two nodes (two
// pods a node); the next decision is a scan interval (10 s) after, and
// launches none, the pods fitting the booting nodes. Both nodes are Ready
// at 90 s. A pod binds to the first at 2 min; the second, empty since
// 90 s, is unneeded at 11.5 min but goes only at 15 min.
func TestAutoscalerTiming(t *testing.T) {
	h := setup(t, []cluster.PoolSpec{poolSpec("a", 0, 4, 8, 96, 1024)}, Spec{
		Pools:  []Pool{{Group: 0, Provisioning: 90 * sec}},
		Groups: []Group{{Name: "ca", Kind: Autoscaler, Pools: []int32{0}, MaxNodes: 4, ScaleDownUnneeded: 10 * minute, ScaleDownDelayAfterAdd: 15 * minute}},
	})
	h.waiting = append(h.waiting, job(1, 3, 4, 8, 64))
	h.k.AfterPass(0)
	h.run(t, 0)
	if d := cmp.Diff(map[cluster.NodeState]int{booting: 2}, states(h.c, 0)); d != "" {
		t.Errorf("after the scale-up at 0 (-want +got):\n%s", d)
	}
	h.k.AfterPass(5 * sec)
	if got := h.next(EvScaleUp); got != 10*sec {
		t.Errorf("next scale-up at %v, want 10 s (one scan interval after the last)", got)
	}
	h.run(t, 10*sec)
	h.waiting = nil
	h.run(t, 90*sec)
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 2}, states(h.c, 0)); d != "" {
		t.Errorf("at 90 s (-want +got):\n%s", d)
	}
	h.bind(t, 2*minute, 0, job(1, 1, 4, 8, 64).Spec.Pod)
	h.run(t, 15*minute-1)
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 2}, states(h.c, 0)); d != "" {
		t.Errorf("just before 15 min (-want +got):\n%s", d)
	}
	h.run(t, 15*minute)
	if d := cmp.Diff(map[cluster.NodeState]int{ready: 1}, states(h.c, 0)); d != "" {
		t.Errorf("at 15 min (-want +got):\n%s", d)
	}
	if h.c.Nodes[0].State != ready {
		t.Error("the node holding a pod went")
	}
	if d := cmp.Diff(PoolStats{Launched: 2, ScaledDown: 1, MaxPresent: 2}, h.k.Stats[0]); d != "" {
		t.Errorf("stats (-want +got):\n%s", d)
	}
}
