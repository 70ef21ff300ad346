package reports

import (
	"fmt"
	"io"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
)

// CommitmentAdvice is the recommended spend commitment for the run's
// demand (cost.commitmentAdvice in summary.json).
type CommitmentAdvice struct {
	models.CommitmentAdvice
	// Demand says what the demand is.
	Demand string `json:"demand"`
	// SpotBill is the GPU-hours the work held in spot pools at the spot
	// price of a GPU-hour (the node's spot price over its GPUs), the same
	// rule as the demand's; MixBill is Bill plus SpotBill: what the run's
	// mix of spot and on-demand with the commitment pays for its work
	// (`gpuplan recommend --minimize commitment.mixBill` compares it over
	// spot shares).
	SpotBill float64 `json:"spotBill"`
	MixBill  float64 `json:"mixBill"`
	// Rates and Hours are the demand the advice was worked on
	// (DemandRates; not in summary.json): what OneLevel chooses one level
	// across seeds from.
	Rates []float64 `json:"-"`
	Hours []float64 `json:"-"`
}

// DemandDescription says what the advice's demand is.
const DemandDescription = "the GPU-hours the work held in each timeline bucket of the on-demand pools, at the on-demand price of a GPU-hour (the node's price over its GPUs): what a fleet that followed the demand would pay on demand"

// DemandRates is the run's demand for the commitment advice: for each
// timeline bucket, the on-demand dollars an hour of the GPU-hours the
// work held in on-demand pools with GPUs (each at its node price over its
// GPUs), and the bucket's hours.
func DemandRates(res *sim.Result, pr *Pricing) (rates, hours []float64) {
	tl := &res.Timeline
	nb := 0
	for p := range tl.Allocated {
		nb = max(nb, len(tl.Allocated[p]))
	}
	for i := 0; i < nb; i++ {
		h := float64(tl.Width(i, res.End)) / float64(sim.Hour)
		if h <= 0 {
			continue
		}
		dollars := 0.0
		for p := range res.Pools {
			g := res.Pools[p].Spec.GPUsPerNode
			if g <= 0 || p >= len(pr.Pools) || i >= len(tl.Allocated[p]) {
				continue
			}
			if ct := pr.Pools[p].CapacityType; ct != models.OnDemand && ct != "" {
				continue
			}
			gpuHours := float64(tl.Allocated[p][i]) / 1000 / float64(sim.Hour)
			dollars += gpuHours * pr.Pools[p].PerHour / float64(g)
		}
		rates = append(rates, dollars/h)
		hours = append(hours, h)
	}
	return rates, hours
}

// SpotDemand is the dollars of the GPU-hours the work held in spot pools
// with GPUs, each at its node's spot price over its GPUs: the spot side
// of the demand, on DemandRates' rule.
func SpotDemand(res *sim.Result, pr *Pricing) float64 {
	dollars := 0.0
	for p := range res.Pools {
		g := res.Pools[p].Spec.GPUsPerNode
		if g <= 0 || p >= len(pr.Pools) || pr.Pools[p].CapacityType != models.Spot {
			continue
		}
		gpuHours := float64(res.Pools[p].AllocatedMilliMs) / 1000 / float64(sim.Hour)
		dollars += gpuHours * pr.Pools[p].PerHour / float64(g)
	}
	return dollars
}

// commitmentAdviceOf is the advice when the pricing asks for it.
func commitmentAdviceOf(res *sim.Result, pr *Pricing) *CommitmentAdvice {
	if pr.AdviseDiscount <= 0 {
		return nil
	}
	rates, hours := DemandRates(res, pr)
	a := adviceAt(rates, hours, pr.AdviseDiscount, models.CommonSpendLevel([]models.Demand{{Rates: rates, Hours: hours}}, pr.AdviseDiscount), SpotDemand(res, pr))
	return a
}

// adviceAt is the advice's figures, rounded as summary.json has them, for
// a commitment of level on a demand of rates and hours with spot dollars
// of spot GPU-hours beside it.
func adviceAt(rates, hours []float64, d, level, spot float64) *CommitmentAdvice {
	a := models.SpendCommitmentAt(rates, hours, d, level)
	r := func(x float64) float64 { return round(x, 4) }
	a.Level, a.Bill, a.BillNone, a.Saving, a.BreakEven = r(a.Level), r(a.Bill), r(a.BillNone), r(a.Saving), r(a.BreakEven)
	a.Utilisation, a.Coverage, a.BreakEvenFall = r(a.Utilisation), r(a.Coverage), r(a.BreakEvenFall)
	for i := range a.Risk {
		a.Risk[i].Bill, a.Risk[i].BillNone = r(a.Risk[i].Bill), r(a.Risk[i].BillNone)
	}
	spot = r(spot)
	return &CommitmentAdvice{CommitmentAdvice: a, Demand: DemandDescription, SpotBill: spot, MixBill: r(a.Bill + spot),
		Rates: rates, Hours: hours}
}

// OneLevel is the advice of several seeds' runs of the same scenario
// (each seed's advice, worked on its own demand) with one commitment for
// them all: the level that makes the mean of their bills least
// (models.CommonSpendLevel), not each seed's own level chosen with
// hindsight. Each seed's figures are then its bill, saving, utilisation,
// coverage and the fall in demand it survives at that level, beside its
// own break-even, so their mean and interval over the seeds are the
// answer's. The seeds' advice must share a discount; nil entries (a run
// with no advice) are kept nil.
func OneLevel(as []*CommitmentAdvice) ([]*CommitmentAdvice, error) {
	var ds []models.Demand
	d := -1.0
	for _, a := range as {
		if a == nil {
			continue
		}
		if d >= 0 && a.Discount != d {
			return nil, fmt.Errorf("the seeds' commitment advice differs in its discount (%g and %g): one level needs one discount", d, a.Discount)
		}
		d = a.Discount
		ds = append(ds, models.Demand{Rates: a.Rates, Hours: a.Hours})
	}
	out := make([]*CommitmentAdvice, len(as))
	if len(ds) == 0 {
		return out, nil
	}
	level := models.CommonSpendLevel(ds, d)
	for i, a := range as {
		if a != nil {
			out[i] = adviceAt(a.Rates, a.Hours, d, level, a.SpotBill)
		}
	}
	return out, nil
}

// writeCommitmentAdvice prints the advice.
func writeCommitmentAdvice(w io.Writer, a *CommitmentAdvice) {
	if a == nil {
		return
	}
	fmt.Fprintf(w, "Commitment advice (a spend commitment at %.0f%% off, on the run's demand: %s): commit %s an hour; the demand's bill %s against %s all on demand (saving %s), utilisation %.1f%%, coverage %.1f%%. Any commitment above %s an hour costs more than none; %s an hour stops paying if demand falls by more than %.1f%%",
		100*a.Discount, a.Demand, money(a.Level), money(a.Bill), money(a.BillNone), money(a.Saving), 100*a.Utilisation, 100*a.Coverage, money(a.BreakEven), money(a.Level), 100*a.BreakEvenFall)
	for _, f := range a.Risk {
		fmt.Fprintf(w, "; demand %.0f%% down: %s with it, %s without", 100*f.Fall, money(f.Bill), money(f.BillNone))
	}
	if a.SpotBill > 0 {
		fmt.Fprintf(w, "; with the spot pools' GPU-hours at their spot price (%s), the mix of spot, the commitment and on-demand bills %s", money(a.SpotBill), money(a.MixBill))
	}
	fmt.Fprintln(w, ".")
}
