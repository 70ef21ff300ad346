package sim

import "gpuplan.dev/gpuplan/models"

// MIG re-layout: in a pool that allows it, when a pass leaves jobs waiting
// for a MIG profile no GPU offers free, an idle GPU is taken out of
// service and comes back after the drain and reconfigure delays as
// all-<profile>. One re-layout per profile is in flight at a time.

// gpuSharing is the state of shared GPUs: the running jobs on each
// time-sliced physical GPU (timeslice.go), and MIG relayouts: whether any
// pool can relayout, the relayouts started, and the profiles with one in
// flight.
type gpuSharing struct {
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

func (r *runner) relayout(t Time) error {
	for _, prof := range r.sched.WantedMIG() {
		if r.share.inFlight[prof] {
			continue
		}
	pools:
		for i := range r.c.Pools {
			pl := &r.c.Pools[i]
			if !r.c.CanRelayout(i) {
				continue
			}
			layout, err := models.MIGLayout(pl.Spec.GPUModel, "all-"+prof)
			if err != nil {
				continue // the model has no such profile
			}
			for n := pl.First; n < pl.First+pl.Count; n++ {
				g := r.c.IdleMIGGPU(n)
				if g < 0 {
					continue
				}
				if err := r.c.BeginRelayout(t, n, g); err != nil {
					return invariant(err)
				}
				r.share.relayouts = append(r.share.relayouts, relayoutOp{node: n, gpu: g, layout: layout, profile: prof})
				r.share.inFlight[prof] = true
				r.st.stats.Relayouts++
				sh := pl.Spec.Sharing
				r.push(t+sh.MIGDrain+sh.MIGReconfigure, event{kind: evRelayout, job: int32(len(r.share.relayouts) - 1)})
				break pools
			}
		}
	}
	return nil
}
