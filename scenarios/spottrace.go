package scenarios

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/scenarios/skypilot"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// skyPilot reads a SkyPilot spot trace into p: the counts as the trace
// gives them (scaleAvailability fits them to the pool).
func (s builder) skyPilot(path string, p *capacity.Process) error {
	tr, err := skypilot.Read(s.path(path))
	if err != nil {
		return err
	}
	p.Available = tr.Counts
	p.AvailableGap = tr.Gap.Milliseconds()
	p.Assumption = fmt.Sprintf("SkyPilot spot trace %s: %d ticks %s apart (%s), at most %d instances held", path, len(tr.Counts), tr.Gap, tr.Gap*time.Duration(len(tr.Counts)), tr.Peak)
	return nil
}

// scaleAvailability fits an availability trace read for a fixed pool to
// its count: at each tick the trace's share of its peak, of the pool's
// nodes, rounded down.
func (s builder) scaleAvailability(at string, cp *capacity.Pool, p *PoolSpec) error {
	av := cp.Interruptions.Available
	if len(av) == 0 {
		return nil
	}
	if p.Autoscaling != nil {
		return s.errAt(at, "a SkyPilot trace bounds a fixed pool's nodes; give the pool no autoscaling")
	}
	tr := &skypilot.Trace{Counts: av}
	for _, c := range av {
		tr.Peak = max(tr.Peak, c)
	}
	cp.Interruptions.Available = tr.Nodes(p.Count)
	cp.Interruptions.Assumption += fmt.Sprintf(", scaled to the pool's %d nodes; %d reclaimed over the trace if every lost node is relaunched when it has room", p.Count, tr.Drops(p.Count))
	return nil
}
