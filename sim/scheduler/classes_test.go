package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/fgd"
)

type bound struct {
	job int32
	pls []cluster.Placement
}

type recorder struct{ log []bound }

func (r *recorder) Bind(j *scheduler.JobInfo, pls []cluster.Placement) error {
	r.log = append(r.log, bound{j.ID, append([]cluster.Placement(nil), pls...)})
	return nil
}

// side is one framework over its own cluster.
type side struct {
	c   *cluster.Cluster
	fw  *scheduler.Framework
	rec recorder
}

func newSide(t *testing.T, policy, tie string, seed uint64, mix *models.PodMix, perNode bool) *side {
	t.Helper()
	c, err := cluster.New([]cluster.PoolSpec{
		{Name: "big", Nodes: 48, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 1 << 20, GPUModel: "A100"},
		{Name: "small", Nodes: 24, GPUsPerNode: 4, MilliCPU: 32000, MemoryMiB: 256 << 10, GPUModel: "T4"},
		{Name: "sliced", Nodes: 6, GPUsPerNode: 2, MilliCPU: 32000, MemoryMiB: 256 << 10, GPUModel: "T4",
			GPUMemoryMiB: 16 << 10, Sharing: cluster.Sharing{TimeSlicing: 2}},
		{Name: "cpu", Nodes: 8, MilliCPU: 64000, MemoryMiB: 256 << 10},
	})
	require.NoError(t, err)
	cfg := plugins.Default()
	if policy != "" {
		if cfg, err = plugins.PolicyProfile(policy); err != nil {
			t.Fatal(err)
		}
	}
	h := &scheduler.Handle{Rand: models.NewStream(seed, 1), Mix: mix, MixVersion: 1}
	prof, err := plugins.NewProfile(cfg, h)
	require.NoError(t, err)
	fw, err := scheduler.NewFramework(prof, c)
	require.NoError(t, err)
	if tie == "nodeOrder" {
		fw.SetTieOrder(models.NewStream(seed, 2))
	}
	require.True(t, scheduler.ByClass(fw))
	if perNode {
		scheduler.ScoreEveryNode(fw)
	}
	return &side{c: c, fw: fw}
}

func randomJob(r *rand.Rand, id int) *cluster.JobSpec {
	j := &cluster.JobSpec{Name: fmt.Sprint("j", id), Duration: 1, Replicas: 1 + int32(r.IntN(3))}
	p := &j.Pod
	p.MilliCPU = 1000 * int64(1+r.IntN(24))
	p.MemoryMiB = 1024 * int64(1+r.IntN(64))
	switch k := r.IntN(10); {
	case k < 3:
		p.GPUMilli = int32(100 * (1 + r.IntN(9)))
	case k < 9:
		p.GPUs = []int32{1, 1, 2, 4, 8}[r.IntN(5)]
	}
	return j
}

// Scoring one node per state class places every pod on the node that
// scoring every node places it on, for every policy whose scores depend on
// the node's state alone and for both fixed tie orders: the same jobs, the
// same random releases, and the same nodes, GPUs, shares and failure
// reasons out.
func TestClassesPlaceAsEveryNode(t *testing.T) {
	policies := []string{""}
	for _, p := range plugins.PolicyNames() {
		if p != "random" {
			policies = append(policies, p)
		}
	}
	for _, policy := range policies {
		for _, tie := range []string{"lowestIndex", "nodeOrder"} {
			t.Run(policy+"/"+tie, func(t *testing.T) {
				r := rand.New(rand.NewPCG(11, 17))
				jobs := make([]*cluster.JobSpec, 400)
				counts := map[models.PodShape]int{}
				for i := range jobs {
					jobs[i] = randomJob(r, i)
					counts[fgd.Shape(&jobs[i].Pod)]++
				}
				mix, err := models.NewPodMix(counts, 0.95)
				require.NoError(t, err)
				a := newSide(t, policy, tie, 5, mix, false)
				b := newSide(t, policy, tie, 5, mix, true)
				live := []int{}
				for i, spec := range jobs {
					// Release a random earlier job now and then.
					if len(live) > 0 && r.IntN(3) == 0 {
						k := r.IntN(len(live))
						for _, s := range []*side{a, b} {
							for _, e := range s.rec.log {
								if int(e.job) == live[k] {
									for _, pl := range e.pls {
										require.NoError(t, s.c.Release(int64(i), pl, &jobs[live[k]].Pod))
									}
								}
							}
						}
						live = append(live[:k], live[k+1:]...)
					}
					var got [2]string
					for x, s := range []*side{a, b} {
						j := &scheduler.JobInfo{ID: int32(i), Spec: spec}
						placed, st, err := s.fw.Attempt(int64(i), j, &s.rec)
						require.NoError(t, err)
						got[x] = fmt.Sprint(placed, st.Message())
					}
					require.Equal(t, got[1], got[0], "job %d", i)
					la, lb := a.rec.log, b.rec.log
					require.Equal(t, len(lb), len(la))
					if len(la) > 0 && int(la[len(la)-1].job) == i {
						require.Equal(t, lb[len(lb)-1], la[len(la)-1], "job %d", i)
						live = append(live, i)
					}
				}
				require.Greater(t, len(a.rec.log), 100, "most jobs placed")
			})
		}
	}
}
