package sim

import (
	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/engine"
)

// MIG re-layout: in a pool that allows it, when a pass leaves jobs waiting
// for a MIG profile no GPU offers free, an idle GPU is taken out of
// service and comes back after the drain and reconfigure delays as
// all-<profile>. One re-layout per profile is in flight at a time.

// gpuSharing is the state of shared GPUs: the running jobs on each
// time-sliced physical GPU (timeslice.go), and MIG relayouts: whether any
// pool can relayout, the relayouts started, and the profiles with one in
// flight. It reads the cluster c and the jobs on the GPUs from jobs, and
// schedules its events through an eventSink.
type gpuSharing struct {
	c           *cluster.Cluster
	jobs        *jobTable
	onGPU       [][]int32
	canRelayout bool
	relayouts   []relayoutOp
	inFlight    map[string]bool
}

type relayoutOp struct {
	node    int32
	gpu     int
	layout  []string
	profile string
}

// eventSink schedules and cancels a run's events (the runner: it counts
// the live ones).
type eventSink interface {
	push(at Time, ev event) engine.Handle
	cancel(h engine.Handle) bool
}

// relayout starts a re-layout for each MIG profile in wanted (those pods
// wait for) that has none in flight, on the first idle MIG GPU of a pool
// that can offer it; it returns how many it started.
func (g *gpuSharing) relayout(t Time, wanted []string, ev eventSink) (int, error) {
	c, started := g.c, 0
	for _, prof := range wanted {
		if g.inFlight[prof] {
			continue
		}
	pools:
		for i := range c.Pools {
			pl := &c.Pools[i]
			if !c.CanRelayout(i) {
				continue
			}
			layout, err := models.MIGLayout(pl.Spec.GPUModel, "all-"+prof)
			if err != nil {
				continue // the model has no such profile
			}
			for n := pl.First; n < pl.First+pl.Count; n++ {
				gpu := c.IdleMIGGPU(n)
				if gpu < 0 {
					continue
				}
				if err := c.BeginRelayout(t, n, gpu); err != nil {
					return started, invariant(err)
				}
				g.relayouts = append(g.relayouts, relayoutOp{node: n, gpu: gpu, layout: layout, profile: prof})
				g.inFlight[prof] = true
				started++
				sh := pl.Spec.Sharing
				ev.push(t+sh.MIGDrain+sh.MIGReconfigure, event{kind: evRelayout, job: int32(len(g.relayouts) - 1)})
				break pools
			}
		}
	}
	return started, nil
}

// endRelayout ends re-layout i at t: its GPU is back, with its new layout.
func (g *gpuSharing) endRelayout(t Time, i int32) error {
	op := g.relayouts[i]
	if err := g.c.EndRelayout(t, op.node, op.gpu, op.layout); err != nil {
		return invariant(err)
	}
	delete(g.inFlight, op.profile)
	return nil
}
