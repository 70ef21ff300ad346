package reports

import (
	"io"
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
	return out
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
