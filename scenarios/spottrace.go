package scenarios

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/models"
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
// over the run, [0, horizon) (past the trace's end its last price holds,
// as its counts do; with no horizon, 0, the whole trace), each tick's
// price lasting its gap whether the pool holds a node then or not. The
// bill is the pool's node-hours at that mean: billing each interval at
// its own price differs by how the nodes held move with the price. ok is
// false when the trace gives no prices. catalog is the price the pool had
// otherwise, named in the basis for comparison (the trace's prices are of
// the instance type it was collected on). The cluster is priced at
// spec.horizon; a run with another horizon (--horizon, or --trace's whole
// replay) is priced again at its own (retracePrices).
func (s interrupter) tracePrice(p *PoolSpec, catalog float64, horizon time.Duration) (perHour float64, basis string, ok bool, err error) {
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
	if horizon > 0 {
		span = horizon
		over = fmt.Sprintf("the run's %s", span)
		if end := tr.Gap * time.Duration(len(tr.Prices)); span > end {
			over += fmt.Sprintf(" (the trace's %s, then its last price, $%.4f, to the end)", end, tr.Prices[len(tr.Prices)-1])
		}
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

// specHorizon is spec.horizon (0: none).
func (s builder) specHorizon() time.Duration {
	if s.Spec.Horizon == nil {
		return 0
	}
	return s.Spec.Horizon.Duration
}

// retracePrices prices the fixed spot pools priced by their SkyPilot
// trace's prices again at the run's horizon when the command line made it
// other than spec.horizon (--horizon; --trace without it runs until the
// workload drains, so the whole trace), by tracePrice's rule, and checks
// a max price against the new price as maxPrice does.
func (s builder) retracePrices(b *Built, opts Options) error {
	spec := int64(0)
	if s.Spec.Horizon != nil {
		spec = s.Spec.Horizon.Millis()
	}
	if b.Config.Horizon == spec || opts.Pools != nil {
		return nil
	}
	h := time.Duration(b.Config.Horizon) * time.Millisecond
	flag := "--horizon"
	if opts.Horizon == nil {
		flag = "--trace"
	}
	for i := range s.Spec.Cluster.Pools {
		p := &s.Spec.Cluster.Pools[i]
		if capacityType(p.CapacityType) != models.Spot || i >= len(b.Prices) {
			continue
		}
		v, basis, ok, err := interrupter(s).tracePrice(p, b.Prices[i].traceCatalog, h)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if m := p.MaxPrice; m != nil && *m != -1 && v > *m {
			return &InputError{File: flag, Msg: fmt.Sprintf("spec.cluster.pools[%d] (%s) is priced by its SkyPilot trace's prices over the run, $%.4f an hour (%s), above its maxPrice $%g: no node would launch; give a horizon its max price covers, or raise it", i, p.Name, v, basis, *m)}
		}
		b.Prices[i].PerHour, b.Prices[i].Basis = v, basis
		if c := b.Config.Capacity; c != nil && i < len(c.Pools) {
			c.Pools[i].PricePerHour = v
		}
	}
	return nil
}
