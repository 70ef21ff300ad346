package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

func runQueueing(t *testing.T, text string) *sim.Result {
	t.Helper()
	sc, err := Parse("testdata/no-kueue-strict-fifo/no-kueue.yaml", "testdata/no-kueue-strict-fifo", []byte(text))
	require.NoError(t, err)
	b, err := sc.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

// Issue 26: without Kueue the default queueing was strict FIFO, and one
// notebook that could not fit on the two time-sliced nodes held every
// job behind it, the p4d pool's included, for all 5 days. Under the
// default (kube-scheduler's scheduling queue) the notebook is set aside
// and the pods behind it are tried. The p4d nodes are tainted for the
// llm-pretrain class alone and one of its jobs (4 pods of 8 GPUs) takes
// the whole pool, so the first one starts the moment it arrives, while
// notebooks submitted before it still wait.
func TestDefaultQueueingDoesNotBlockOtherPools(t *testing.T) {
	text, err := os.ReadFile("testdata/no-kueue-strict-fifo/no-kueue.yaml")
	require.NoError(t, err)
	res := runQueueing(t, string(text))

	p4d := -1
	for i, p := range res.Pools {
		if p.Spec.Name == "p4d" {
			p4d = i
		}
	}
	require.GreaterOrEqual(t, p4d, 0)
	require.Positive(t, res.Pools[p4d].AllocatedMilliMs, "the p4d pool was never used")

	var first *sim.JobRecord
	for i := range res.Jobs {
		j := &res.Jobs[i]
		if strings.HasPrefix(j.Name, "llm-pretrain") && (first == nil || j.Submit < first.Submit) {
			first = j
		}
	}
	require.NotNil(t, first)
	require.Equal(t, first.Submit, first.Start, "the first pretraining job waited for an empty pool")
	waiting := 0
	for i := range res.Jobs {
		j := &res.Jobs[i]
		if strings.HasPrefix(j.Name, "notebook") && j.Submit < first.Submit && (j.Start < 0 || j.Start > first.Start) {
			waiting++
		}
	}
	require.Positive(t, waiting, "no notebook was waiting when the pretraining job started")
}

// Strict FIFO stays available by name and still blocks: the same
// scenario with policy StrictFIFO never uses the p4d pool (the issue's
// figure: 0% over 5 days, 716 jobs pending).
func TestStrictFIFOStillBlocks(t *testing.T) {
	text, err := os.ReadFile("testdata/no-kueue-strict-fifo/no-kueue.yaml")
	require.NoError(t, err)
	s := strings.Replace(string(text), "  horizon: 5d\n", "  horizon: 5d\n  queueing:\n    policy: StrictFIFO\n", 1)
	res := runQueueing(t, s)
	for _, p := range res.Pools {
		if p.Spec.Name == "p4d" {
			require.Zero(t, p.AllocatedMilliMs)
		}
	}
	pending := 0
	for i := range res.Jobs {
		if res.Jobs[i].Outcome == sim.Pending {
			pending++
		}
	}
	require.Equal(t, 716, pending)
}

// The queueing names: empty is the scheduling queue, or Backfill with
// backfill: true (as scenarios written before the scheduling queue mean);
// FIFO is StrictFIFO or Backfill by its flag; backfill does not go with
// StrictFIFO or SchedulingQueue, nor backfillDepth without Backfill.
func TestQueueingPolicyNames(t *testing.T) {
	for _, c := range []struct {
		q    QueueingSpec
		want string
	}{
		{QueueingSpec{}, QueueSchedulingQueue},
		{QueueingSpec{Backfill: true}, QueueBackfill},
		{QueueingSpec{Policy: QueueFIFO}, QueueStrictFIFO},
		{QueueingSpec{Policy: QueueFIFO, Backfill: true}, QueueBackfill},
		{QueueingSpec{Policy: QueueStrictFIFO}, QueueStrictFIFO},
		{QueueingSpec{Policy: QueueBackfill}, QueueBackfill},
		{QueueingSpec{Policy: QueueSchedulingQueue}, QueueSchedulingQueue},
	} {
		require.Equal(t, c.want, c.q.Effective(), "%+v", c.q)
	}
	text, err := os.ReadFile("testdata/no-kueue-strict-fifo/no-kueue.yaml")
	require.NoError(t, err)
	for _, c := range []struct{ queueing, field string }{
		{"policy: StrictFIFO\n    backfill: true", "spec.queueing.backfill"},
		{"policy: SchedulingQueue\n    backfill: true", "spec.queueing.backfill"},
		{"backfillDepth: 3", "spec.queueing.backfillDepth"},
		{"policy: LIFO", "spec.queueing.policy"},
	} {
		s := strings.Replace(string(text), "  horizon: 5d\n", "  horizon: 5d\n  queueing:\n    "+c.queueing+"\n", 1)
		_, err := Parse("q.yaml", "", []byte(s))
		require.ErrorContains(t, err, c.field, c.queueing)
		require.ErrorContains(t, err, "q.yaml:", c.queueing)
	}
}

// kube-scheduler's default scoring can be written in a scenario's
// profile: LeastAllocated on cpu and memory and
// NodeResourcesBalancedAllocation, weight 1 each.
func TestRealDefaultProfileInAScenario(t *testing.T) {
	text, err := os.ReadFile("testdata/no-kueue-strict-fifo/no-kueue.yaml")
	require.NoError(t, err)
	s := strings.Replace(string(text), "  horizon: 5d\n", `  horizon: 5d
  scheduler:
    plugins:
    - {name: PrioritySort}
    - {name: NodeAffinity}
    - {name: TaintToleration}
    - {name: NodeResourcesFit}
    - {name: LeastAllocated, weight: 1, resources: {cpu: 1, memory: 1}}
    - {name: NodeResourcesBalancedAllocation, weight: 1}
    - {name: Gang}
`, 1)
	res := runQueueing(t, s)
	require.Equal(t, []string{"LeastAllocated(weight 1)", "NodeResourcesBalancedAllocation(weight 1)"}, res.Profile["score"])
	require.GreaterOrEqual(t, res.Jobs[0].Start, sim.Time(0), "the first job ran")
}
