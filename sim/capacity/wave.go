package capacity

import (
	"math/rand/v2"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// waves is the state of reclaim waves: a random stream per pool (made on
// first use) and the victims' buffer.
type waves struct {
	r       []*rand.Rand
	victims []int32
}

// drawnReclaim carries out the end of node n's drawn spot lifetime: its
// notice (or, with no notice, its reclaim), and the wave it starts, in
// which each other node of its pool up and not under notice goes with it
// at the pool's Wave chance. The victims are drawn before n goes, in slot
// order, so a node the pool relaunches meanwhile is not among them.
func (k *Controller) drawnReclaim(now Time, n int32, notice bool) error {
	p := k.c.Nodes[n].Pool
	w := &k.waves
	w.victims = w.victims[:0]
	if q := k.spec.Pools[p].Interruptions.Wave; q > 0 {
		if w.r == nil {
			w.r = make([]*rand.Rand, len(k.c.Pools))
		}
		if w.r[p] == nil {
			w.r[p] = models.NewStream(k.seed, streamWave+uint64(p))
		}
		pl := &k.c.Pools[p]
		for m := pl.First; m < pl.First+pl.Count; m++ {
			if m == n || k.c.Nodes[m].State == cluster.NodeAbsent || k.noticed[m] {
				continue
			}
			if w.r[p].Float64() < q {
				w.victims = append(w.victims, m)
			}
		}
		k.Stats[p].WaveVictims += int64(len(w.victims))
	}
	// The victims' slots are kept: remove or notice below may relaunch
	// into freed slots, and the buffer is not reused until the next wave.
	victims := w.victims
	for i := -1; i < len(victims); i++ {
		m := n
		if i >= 0 {
			m = victims[i]
			if k.c.Nodes[m].State == cluster.NodeAbsent || k.noticed[m] {
				continue
			}
		}
		var err error
		if notice {
			err = k.notice(now, m)
		} else {
			k.Stats[p].Interrupted++
			err = k.remove(now, m, CauseSpot)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waveStretch is what pool p's drawn lifetimes are multiplied by so that
// waves keep a node's mean time to interruption: with n nodes held, a
// node goes in its own reclaim and in each of the n-1 others' at chance
// Wave, so its own clock runs 1 + Wave x (n-1) times slower.
func (k *Controller) waveStretch(p int32) float64 {
	q := k.spec.Pools[p].Interruptions.Wave
	if q <= 0 {
		return 1
	}
	return 1 + q*float64(max(k.c.Pools[p].Present-1, 0))
}
