package reports

import (
	"io"
	"math"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports/focus"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// FileFOCUS is the run's bill in the FinOps Open Cost and Usage
// Specification's format (FOCUS 1.3 by default, or 1.2: see
// Summary.SetFOCUSVersion), for tools that read real bills.
const FileFOCUS = "focus.csv"

// FOCUSCharges is a run's bill as FOCUS charges: one row per job and pool
// it held (what its pods paid, tagged with its team, queue and job), one
// per inference service and pool its replicas held (job service/NAME), and
// one idle row per pool (the rest of the pool's cost), and one disk row
// per Azure spot pool whose stopped-deallocated nodes' OS disks billed
// (eviction policy Deallocate: disk-hours). They add up to the
// report's total. Quantities are node-hours (what the job paid over the
// node's price); list prices are on-demand prices. A job's or service's
// row lists the GPU, vCPU and memory time its pods held and what each
// cost (FOCUS 1.3's AllocatedMethodDetails).
func FOCUSCharges(res *sim.Result, s *Summary) []focus.Charge {
	pr := s.pricing
	if pr == nil || s.Cost == nil {
		return nil
	}
	rates := allRates(res, pr)
	at := func(t sim.Time) time.Time { return s.start.Add(time.Duration(t) * time.Millisecond) }
	end := at(res.End)
	base := make([]focus.Charge, len(res.Pools))
	for i := range res.Pools {
		p := &res.Pools[i]
		var pp PoolPricing
		if i < len(pr.Pools) {
			pp = pr.Pools[i]
		}
		ct := pp.CapacityType
		if ct == "" {
			ct = models.OnDemand
		}
		list := pp.PerHour
		if ct == models.Spot && pp.OnDemandPerHour > 0 {
			list = pp.OnDemandPerHour
		}
		it := p.Spec.InstanceType
		if it == "" {
			it = "gpuplan-pool/" + p.Spec.Name
		}
		base[i] = focus.Charge{Provider: providerOf(p.Spec.InstanceType), Pool: p.Spec.Name, InstanceType: it,
			CapacityType: ct, GPUModel: p.Spec.GPUModel, UnitPrice: pp.PerHour, ListUnitPrice: list}
		// FOCUS 1.2 wants RegionId and RegionName on a regional resource's
		// rows: a pool of a cloud's instances has its region (the
		// topology.kubernetes.io/region label the scenario gave it), and
		// its zone when it has one (nodes spread over several zones leave
		// AvailabilityZone empty).
		if base[i].Provider != focus.UnknownProvider {
			base[i].Region = p.Spec.Labels[cluster.LabelRegion]
			if len(p.Spec.Zones) <= 1 {
				base[i].Zone = p.Spec.Labels[cluster.LabelZone]
			}
		}
	}
	charge := func(pool int, cost float64, from, to time.Time) focus.Charge {
		c := base[pool]
		c.Start, c.End, c.Cost = from, to, cost
		if c.UnitPrice > 0 {
			c.Quantity = cost / c.UnitPrice
		}
		c.ListCost = c.Quantity * c.ListUnitPrice
		return c
	}
	var out []focus.Charge
	alloc := make([]float64, len(res.Pools))
	for _, j := range res.Records() {
		if j.Start < 0 {
			continue
		}
		to := end
		if j.End >= 0 {
			to = at(j.End)
		}
		for u := range j.Usage() {
			cost := rates[u.Pool].price(u.Held)
			if cost <= 0 || base[u.Pool].UnitPrice <= 0 {
				continue
			}
			alloc[u.Pool] += cost
			c := charge(int(u.Pool), cost, at(j.Start), to)
			c.Team, c.Job = j.Queue, j.Name
			c.Usage = heldUsage(rates[u.Pool], u.Held)
			out = append(out, c)
		}
	}
	// A service's replicas, from the start: one row per pool they held.
	for i := range res.Services {
		sv := &res.Services[i]
		for _, u := range sv.Usage {
			cost := rates[u.Pool].price(u.Held)
			if cost <= 0 || base[u.Pool].UnitPrice <= 0 {
				continue
			}
			alloc[u.Pool] += cost
			c := charge(int(u.Pool), cost, s.start, end)
			c.Team, c.Job = sv.Queue, "service/"+sv.Name
			c.Usage = heldUsage(rates[u.Pool], u.Held)
			out = append(out, c)
		}
	}
	for i, l := range s.Cost.ByPool {
		if i >= len(base) || base[i].UnitPrice <= 0 {
			continue
		}
		cost := l.NodeHours*l.PricePerHour - alloc[i]
		if i < len(pr.Pools) && (pr.Pools[i].BlockEnd > 0 || pr.Pools[i].Held > 0) {
			cost = l.Cost - alloc[i] // a capacity block's window, a reservation's run
		}
		if cost <= 0 {
			continue
		}
		c := charge(i, cost, s.start, end)
		c.Idle = true
		out = append(out, c)
	}
	// The OS disks of an Azure spot pool's stopped-deallocated nodes.
	for i, l := range s.Cost.ByPool {
		if i >= len(pr.Pools) || l.DiskCost <= 0 || pr.Pools[i].DeallocatedDiskPerHour <= 0 {
			continue
		}
		c := base[i]
		c.Start, c.End, c.Idle, c.Disk = s.start, end, true, true
		c.UnitPrice, c.ListUnitPrice = pr.Pools[i].DeallocatedDiskPerHour, pr.Pools[i].DeallocatedDiskPerHour
		c.Quantity = float64(res.Pools[i].Capacity.DeallocatedMs) / float64(sim.Hour)
		c.Cost = c.Quantity * c.UnitPrice
		c.ListCost = c.Cost
		out = append(out, c)
	}
	markReservations(res, s, out)
	return commitmentCharges(res, s, base, out, at)
}

// markReservations gives the rows of a reserved pool (a capacity
// reservation or capacity block, paid whether used or not) its
// CapacityReservationId: status Used on the rows of what pods held,
// Unused on the idle row (the rest of what the pool paid for).
func markReservations(res *sim.Result, s *Summary, rows []focus.Charge) {
	pr := s.pricing
	ids := map[string]string{}
	for i := range res.Pools {
		if i >= len(pr.Pools) || pr.Pools[i].CapacityType != models.Reserved {
			continue
		}
		kind := "capacity-reservation"
		if pr.Pools[i].BlockEnd > 0 {
			kind = "capacity-block"
		}
		ids[res.Pools[i].Spec.Name] = "gpuplan/" + s.Scenario.Name + "/" + res.Pools[i].Spec.Name + "/" + kind
	}
	for k := range rows {
		r := &rows[k]
		if id, ok := ids[r.Pool]; ok && !r.Disk {
			r.Reservation, r.ReservationStatus = id, "Used"
			if r.Idle {
				r.ReservationStatus = "Unused"
			}
		}
	}
}

// commitmentCharges applies the run's commitments to its FOCUS rows, as
// commitmentsOf applies them to the bill (bucket by bucket of the
// timeline, on each pool's node-hours supplied), and returns the rows
// with:
//   - each row of a pool a commitment covered split in proportion: the
//     part each commitment covered (its CommitmentDiscount* columns,
//     status Used, PricingCategory Committed, EffectiveCost the
//     amortised commitment applied to it, BilledCost 0) and the part
//     left at on-demand;
//   - for each commitment and bucket whose commitment usage did not
//     use up, a row of the unused part (status Unused);
//   - each commitment's purchase for the run: its recurring fee
//     (Recurring) and its upfront payment's share for the run's hours
//     (One-Time), BilledCost the amount and EffectiveCost 0.
//
// So SUM(EffectiveCost) and SUM(BilledCost) are both the amortised bill
// of commitmentsOf (the list bill, less the on-demand price of what the
// commitments covered, plus what they cost over the run), and for each
// commitment its usage rows' EffectiveCost add up to its purchase rows'
// BilledCost, as FOCUS requires. A pool's share covered is the same on
// each of its rows (its jobs' and its idle row): gpuplan applies
// commitments to a pool's node-hours, not a job's.
func commitmentCharges(res *sim.Result, s *Summary, base []focus.Charge, rows []focus.Charge, at func(sim.Time) time.Time) []focus.Charge {
	pr := s.pricing
	if len(pr.Commitments) == 0 {
		return rows
	}
	np := len(res.Pools)
	cs := make([]models.Commitment, len(pr.Commitments))
	elig := make([][]bool, len(cs))
	eligible := make([]bool, np)
	provider := make([]string, len(cs))
	for c, pc := range pr.Commitments {
		cs[c] = pc.Commitment
		elig[c] = make([]bool, np)
		for _, p := range pc.Pools {
			if p >= 0 && p < np && res.Pools[p].Spec.GPUsPerNode > 0 {
				elig[c][p], eligible[p] = true, true
				if provider[c] == "" {
					provider[c] = base[p].Provider
				}
			}
		}
	}
	od := make([]float64, np)
	for p := range od {
		if p < len(pr.Pools) {
			od[p] = pr.Pools[p].PerHour
		}
	}
	cds := make([]focus.CommitmentDiscount, len(cs))
	for c, cm := range cs {
		cds[c] = commitmentDiscount(s.Scenario.Name, cm, provider[c])
	}
	// cov[c][p] and used[c][p]: the on-demand price of pool p's usage
	// commitment c covered, and the commitment's cost applied to it. A
	// pool's part is read from ApplyCommitments on the usage of the pools
	// up to it (commitments take the pools in order, so the pools after
	// it change nothing before it).
	cov, used := make([][]float64, len(cs)), make([][]float64, len(cs))
	for c := range cs {
		cov[c], used[c] = make([]float64, np), make([]float64, np)
	}
	committed := make([]float64, len(cs))
	var unused []focus.Charge
	tl := &res.Timeline
	nb := 0
	for p := range tl.Supplied {
		nb = max(nb, len(tl.Supplied[p]))
	}
	usage, prefix := make([]float64, np), make([]float64, np)
	for i := 0; i < nb; i++ {
		width := tl.Width(i, res.End)
		hours := float64(width) / float64(sim.Hour)
		if hours <= 0 {
			continue
		}
		for p := range usage {
			usage[p], prefix[p] = 0, 0
			if g := res.Pools[p].Spec.GPUsPerNode; g > 0 && i < len(tl.Supplied[p]) {
				usage[p] = float64(tl.Supplied[p][i]) / 1000 / float64(g) / float64(sim.Hour)
			}
		}
		full, _ := models.ApplyCommitments(cs, elig, usage, od, hours)
		prev := make([]models.CommitmentUse, len(cs))
		for p := range usage {
			if usage[p] <= 0 || !eligible[p] {
				continue
			}
			prefix[p] = usage[p]
			u, _ := models.ApplyCommitments(cs, elig, prefix, od, hours)
			for c := range cs {
				cov[c][p] += u[c].CoveredOnDemand - prev[c].CoveredOnDemand
				used[c][p] += u[c].Used - prev[c].Used
			}
			prev = u
		}
		from := at(sim.Time(i) * tl.Interval)
		for c, cm := range cs {
			committed[c] += full[c].Cost
			if full[c].Unused <= 1e-9 {
				continue
			}
			q, price := full[c].Unused, 1.0 // a spend commitment's dollars
			if cm.Kind == models.CommitInstances {
				if cm.PerHour <= 0 {
					continue
				}
				q, price = full[c].Unused/cm.PerHour, cm.PerHour // instance-hours
			}
			unused = append(unused, focus.Charge{Start: from, End: from.Add(time.Duration(width) * time.Millisecond),
				Provider: provider[c], InstanceType: cds[c].Type, Commitment: &cds[c], CommitmentStatus: "Unused",
				CommitmentQuantity: q, Quantity: q, UnitPrice: price, ListUnitPrice: price, Cost: full[c].Unused, ListCost: full[c].Unused})
		}
	}
	poolCost := map[string]float64{}
	poolIdx := map[string]int{}
	for p := range res.Pools {
		poolIdx[res.Pools[p].Spec.Name] = p
	}
	for _, r := range rows {
		if !r.Disk {
			poolCost[r.Pool] += r.Cost
		}
	}
	out := make([]focus.Charge, 0, len(rows)+len(unused)+2*len(cs))
	for _, r := range rows {
		p, ok := poolIdx[r.Pool]
		if !ok || r.Disk || !eligible[p] || poolCost[r.Pool] <= 0 {
			out = append(out, r)
			continue
		}
		left := 1.0
		for c := range cs {
			if cov[c][p] <= 0 {
				continue
			}
			share := math.Min(cov[c][p]/poolCost[r.Pool], left)
			part := scaleCharge(r, share, used[c][p]/cov[c][p])
			part.Commitment, part.CommitmentStatus = &cds[c], "Used"
			part.CommitmentQuantity = part.Cost // dollars of a spend commitment
			if cs[c].Kind == models.CommitInstances {
				part.CommitmentQuantity = part.Quantity // instance-hours
			}
			out = append(out, part)
			left -= share
		}
		if left > 1e-12 {
			out = append(out, scaleCharge(r, left, 1))
		}
	}
	out = append(out, unused...)
	start, end := at(0), at(res.End)
	runHours := float64(res.End) / float64(sim.Hour)
	for c, cm := range cs {
		perHour := cm.Hourly // a spend commitment's dollars an hour
		if cm.Kind == models.CommitInstances {
			perHour = cm.Count // instances
		}
		q := perHour * runHours
		if q <= 0 {
			continue
		}
		purchase := func(freq string, cost, commitQ float64) {
			if cost <= 0 {
				return
			}
			out = append(out, focus.Charge{Start: start, End: end, Provider: provider[c], InstanceType: cds[c].Type,
				Commitment: &cds[c], Purchase: freq, CommitmentQuantity: commitQ,
				Quantity: q, UnitPrice: cost / q, ListUnitPrice: cost / q, Cost: cost, ListCost: cost})
		}
		purchase("Recurring", (1-cm.Upfront)*committed[c], q)
		purchase("One-Time", cm.Upfront*committed[c], perHour*cm.TermHours)
	}
	return out
}

// scaleCharge is the part share of a row, its cost (and its resources'
// costs) also times rate.
func scaleCharge(r focus.Charge, share, rate float64) focus.Charge {
	r.Quantity *= share
	r.ListCost *= share
	r.Cost *= share * rate
	if len(r.Usage) > 0 {
		us := make([]focus.ResourceUsage, len(r.Usage))
		for i, u := range r.Usage {
			us[i] = focus.ResourceUsage{Unit: u.Unit, Quantity: u.Quantity * share, Cost: u.Cost * share * rate}
		}
		r.Usage = us
	}
	return r
}

// commitmentDiscount names a commitment for FOCUS: its ID under the
// scenario, its type as its provider calls it, Spend or Usage.
func commitmentDiscount(scenario string, cm models.Commitment, provider string) focus.CommitmentDiscount {
	cd := focus.CommitmentDiscount{ID: "gpuplan/" + scenario + "/commitments/" + cm.Name, Name: cm.Name,
		Category: "Spend", Unit: "USD", Type: "Spend Commitment"}
	if cm.Kind == models.CommitInstances {
		cd.Category, cd.Unit, cd.Type = "Usage", "Hours", "Instance Commitment"
	}
	types := map[string][2]string{ // spend, instances
		"AWS":             {"Savings Plan", "Reserved Instance"},
		"Google Cloud":    {"Committed Use Discount", "Committed Use Discount"},
		"Microsoft Azure": {"Savings Plan", "Reservation"},
	}
	if t, ok := types[provider]; ok {
		cd.Type = t[0]
		if cm.Kind == models.CommitInstances {
			cd.Type = t[1]
		}
	}
	return cd
}

// heldUsage is what a workload's pods held of a pool, resource by
// resource, and what each cost at the pool's rates: GPU-hours, vCPU-hours
// and GiB-hours (held is milli-GPU, milli-CPU and MiB times
// milliseconds). Resources it held none of are left out.
func heldUsage(r poolRates, held [3]int64) []focus.ResourceUsage {
	units := [3]struct {
		name string
		per  float64 // held units per resource-hour
	}{{"GPU-Hours", 1000 * float64(sim.Hour)}, {"vCPU-Hours", 1000 * float64(sim.Hour)}, {"GiB-Hours", 1024 * float64(sim.Hour)}}
	var out []focus.ResourceUsage
	for k, u := range units {
		if held[k] <= 0 {
			continue
		}
		out = append(out, focus.ResourceUsage{Unit: u.name, Quantity: float64(held[k]) / u.per, Cost: r[k] * float64(held[k])})
	}
	return out
}

// providerOf names the cloud an instance type belongs to, by the shape of
// its name ("" when it is none of the three).
func providerOf(it string) string {
	switch {
	case strings.HasPrefix(it, "Standard_"):
		return "Microsoft Azure"
	case strings.Contains(it, "."):
		return "AWS"
	case strings.Count(it, "-") >= 2:
		return "Google Cloud"
	}
	return ""
}

// SetFOCUSVersion sets the FOCUS version of the run's focus.csv (""
// or unset: focus.DefaultVersion).
func (s *Summary) SetFOCUSVersion(v focus.Version) { s.focusVersion = v }

// WriteFOCUS writes the run's bill as a FOCUS CSV of the summary's FOCUS
// version (1.3 unless SetFOCUSVersion said otherwise).
func WriteFOCUS(w io.Writer, res *sim.Result, s *Summary) error {
	end := s.start.Add(time.Duration(res.End) * time.Millisecond)
	if end.Truncate(time.Second) != end {
		end = end.Truncate(time.Second).Add(time.Second)
	}
	return focus.Write(w, focus.Options{BillingAccountID: "gpuplan-simulation", BillingAccountName: "gpuplan simulation",
		Scenario: s.Scenario.Name, BillingStart: s.start, BillingEnd: end, Version: s.focusVersion}, FOCUSCharges(res, s))
}
