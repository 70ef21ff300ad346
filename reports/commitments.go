package reports

import (
	"fmt"
	"io"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim"
)

// PricedCommitment is a commitment and the pools of the run it may cover
// (indexes into the result's pools: nodes bought on demand, of its
// instance type for an instance commitment).
type PricedCommitment struct {
	models.Commitment
	Pools []int
}

// CommitmentSummary is what the run's commitments did, in USD over the
// run, amortised (each commitment's cost is its hourly cost, upfront part
// included, times the run's hours, used or not).
type CommitmentSummary struct {
	Lines []CommitmentLine `json:"lines"`
	// EligibleOnDemand is the on-demand price of the usage the
	// commitments could cover; Coverage the share of it they covered.
	EligibleOnDemand float64 `json:"eligibleOnDemand"`
	Coverage         float64 `json:"coverage"`
	// Committed, Used and Unused add up the lines; Utilisation is Used
	// over Committed.
	Committed   float64 `json:"committed"`
	Used        float64 `json:"used"`
	Unused      float64 `json:"unused"`
	Utilisation float64 `json:"utilisation"`
	// ListBill is the run's bill at list prices (the cost summary's
	// total), Bill after the commitments: ListBill less the on-demand
	// price of the usage they covered plus what they cost. Saving is
	// ListBill - Bill (negative: they cost more than they saved).
	ListBill float64 `json:"listBill"`
	Bill     float64 `json:"bill"`
	Saving   float64 `json:"saving"`
	// Buckets is the stretch commitments are applied over: the timeline's
	// interval (an hour by default, as the clouds bill them).
	Buckets string `json:"buckets"`
}

// CommitmentLine is one commitment's part.
type CommitmentLine struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Committed is its cost over the run; Used the part applied to usage;
	// Unused the rest; CoveredOnDemand the on-demand price of the usage it
	// covered; Utilisation Used over Committed.
	Committed       float64 `json:"committed"`
	Used            float64 `json:"used"`
	Unused          float64 `json:"unused"`
	CoveredOnDemand float64 `json:"coveredOnDemand"`
	Utilisation     float64 `json:"utilisation"`
	// UpfrontPayment is what it cost at purchase (for the whole term).
	UpfrontPayment float64 `json:"upfrontPayment,omitempty"`
}

// commitmentsOf applies the commitments of pr to the run's on-demand
// usage bucket by bucket of the timeline (each pool's node-hours from its
// GPUs supplied; pools without GPUs are not covered), total being the
// bill at list prices.
func commitmentsOf(res *sim.Result, pr *Pricing, total float64) *CommitmentSummary {
	if len(pr.Commitments) == 0 {
		return nil
	}
	cs := make([]models.Commitment, len(pr.Commitments))
	elig := make([][]bool, len(pr.Commitments))
	for c, pc := range pr.Commitments {
		cs[c] = pc.Commitment
		elig[c] = make([]bool, len(res.Pools))
		for _, p := range pc.Pools {
			if p >= 0 && p < len(res.Pools) && res.Pools[p].Spec.GPUsPerNode > 0 {
				elig[c][p] = true
			}
		}
	}
	od := make([]float64, len(res.Pools))
	for p := range res.Pools {
		if p < len(pr.Pools) {
			od[p] = pr.Pools[p].PerHour
		}
	}
	out := &CommitmentSummary{ListBill: total, Lines: make([]CommitmentLine, len(cs))}
	tl := &res.Timeline
	out.Buckets = Human(float64(tl.Interval) / 1000)
	usage := make([]float64, len(res.Pools))
	nb := 0
	for p := range tl.Supplied {
		nb = max(nb, len(tl.Supplied[p]))
	}
	for i := 0; i < nb; i++ {
		hours := float64(tl.Width(i, res.End)) / float64(sim.Hour)
		if hours <= 0 {
			continue
		}
		for p := range usage {
			usage[p] = 0
			if g := res.Pools[p].Spec.GPUsPerNode; g > 0 && i < len(tl.Supplied[p]) {
				usage[p] = float64(tl.Supplied[p][i]) / 1000 / float64(g) / float64(sim.Hour)
			}
			for c := range elig {
				if elig[c][p] {
					out.EligibleOnDemand += usage[p] * od[p]
					break
				}
			}
		}
		uses, _ := models.ApplyCommitments(cs, elig, usage, od, hours)
		for c, u := range uses {
			l := &out.Lines[c]
			l.Committed += u.Cost
			l.Used += u.Used
			l.Unused += u.Unused
			l.CoveredOnDemand += u.CoveredOnDemand
		}
	}
	covered := 0.0
	for c := range out.Lines {
		l := &out.Lines[c]
		l.Name, l.Kind, l.UpfrontPayment = cs[c].Name, cs[c].Kind, round(cs[c].UpfrontPayment(), 2)
		if l.Committed > 0 {
			l.Utilisation = round(l.Used/l.Committed, 4)
		}
		out.Committed += l.Committed
		out.Used += l.Used
		out.Unused += l.Unused
		covered += l.CoveredOnDemand
		l.Committed, l.Used, l.Unused, l.CoveredOnDemand = round(l.Committed, 4), round(l.Used, 4), round(l.Unused, 4), round(l.CoveredOnDemand, 4)
	}
	if out.EligibleOnDemand > 0 {
		out.Coverage = round(covered/out.EligibleOnDemand, 4)
	}
	if out.Committed > 0 {
		out.Utilisation = round(out.Used/out.Committed, 4)
	}
	out.Bill = total - covered + out.Committed
	out.Saving = total - out.Bill
	out.EligibleOnDemand, out.Committed, out.Used, out.Unused = round(out.EligibleOnDemand, 4), round(out.Committed, 4), round(out.Used, 4), round(out.Unused, 4)
	out.Bill, out.Saving = round(out.Bill, 4), round(out.Saving, 4)
	return out
}

// writeCommitments prints the commitments' part of the bill.
func writeCommitments(w io.Writer, c *CommitmentSummary) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "Commitments (amortised, applied per %s): bill %s after them against %s at list prices (saving %s); coverage %.1f%% of the %s of eligible on-demand usage; utilisation %.1f%%, %s of %s committed unused.\n",
		c.Buckets, money(c.Bill), money(c.ListBill), money(c.Saving), 100*c.Coverage, money(c.EligibleOnDemand), 100*c.Utilisation, money(c.Unused), money(c.Committed))
	for _, l := range c.Lines {
		fmt.Fprintf(w, "  - %s (%s): %s committed, %s used (%.1f%%), %s unused, covering %s of on-demand usage", l.Name, l.Kind, money(l.Committed), money(l.Used), 100*l.Utilisation, money(l.Unused), money(l.CoveredOnDemand))
		if l.UpfrontPayment > 0 {
			fmt.Fprintf(w, "; %s paid upfront for the term", money(l.UpfrontPayment))
		}
		fmt.Fprintln(w)
	}
}
