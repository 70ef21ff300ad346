package scenarios

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/scenarios/skypilot"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// skyPilot reads a SkyPilot spot trace into p: the counts as the trace
// gives them (scaleAvailability fits them to the pool).
func (s interrupter) skyPilot(path string, p *capacity.Process) error {
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
func (s interrupter) scaleAvailability(at string, cp *capacity.Pool, p *PoolSpec) error {
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

// tracePrice is a fixed spot pool's price from the prices of the SkyPilot
// trace it replays (interruptions.skypilot), when the file gives them and
// the pool no pricePerHour: the time-weighted mean of the trace's prices
// over the run, [0, spec.horizon) (past the trace's end its last price
// holds, as its counts do; with no horizon, the whole trace), each tick's
// price lasting its gap whether the pool holds a node then or not. The
// bill is the pool's node-hours at that mean: billing each interval at
// its own price differs by how the nodes held move with the price. ok is
// false when the trace gives no prices. catalog is the price the pool had
// otherwise, named in the basis for comparison (the trace's prices are of
// the instance type it was collected on).
func (s interrupter) tracePrice(p *PoolSpec, catalog float64) (perHour float64, basis string, ok bool, err error) {
	in := p.Interruptions
	if in == nil || in.SkyPilot == "" || p.PricePerHour != nil {
		return 0, "", false, nil
	}
	tr, err := skypilot.Read(s.path(in.SkyPilot))
	if err != nil {
		return 0, "", false, err
	}
	if tr.Prices == nil {
		return 0, "", false, nil
	}
	span := tr.Gap * time.Duration(len(tr.Prices))
	over := fmt.Sprintf("the whole trace (%s; no horizon)", span)
	if s.Spec.Horizon != nil && s.Spec.Horizon.Duration > 0 {
		span = s.Spec.Horizon.Duration
		over = fmt.Sprintf("the run's %s", span)
	}
	var sum float64
	for i, pr := range tr.Prices {
		from := tr.Gap * time.Duration(i)
		if from >= span {
			break
		}
		last := tr.Gap
		if i == len(tr.Prices)-1 {
			last = span - from // the last price holds to the end
		}
		sum += pr * min(last, span-from).Hours()
	}
	perHour = sum / span.Hours()
	basis = fmt.Sprintf("SkyPilot trace %s prices: their time-weighted mean over %s, $%.4f an hour", in.SkyPilot, over, perHour)
	if catalog > 0 {
		basis += fmt.Sprintf(" (the catalog's spot price $%.4f not used; the trace's prices are of the instance type it was collected on)", catalog)
	}
	return perHour, basis, true, nil
}
