package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Defaults of the capacity model.
const (
	DefaultRegion       = "us-east-1"
	DefaultProvisioning = 5 * 60 * 1000 // ms: launch to Ready, image pull included
	LabelCapacityType   = "gpuplan.dev/capacity-type"
	LabelKarpenterCT    = "karpenter.sh/capacity-type"
	LabelNodePool       = "karpenter.sh/nodepool"
	LabelRegion         = cluster.LabelRegion
	LabelZone           = "topology.kubernetes.io/zone"
	spotAdvisorFile     = "catalog/aws_spot_advisor_gpu_linux.csv"
	spotAdvisorSnapshot = "AWS Spot Instance Advisor, snapshot 2025-06-28"
)

// DefaultSpotAdvisor reads the embedded Spot Advisor bands.
func DefaultSpotAdvisor() (*models.SpotAdvisor, error) {
	data, err := catalogFS.ReadFile(spotAdvisorFile)
	if err != nil {
		return nil, err
	}
	return ReadSpotAdvisor("(embedded) "+spotAdvisorFile, bytes.NewReader(data))
}

// ReadSpotAdvisor reads Spot Advisor rows
// (Region,InstanceType,SavingsPctVsOnDemand,InterruptionBandIndex,InterruptionBand).
func ReadSpotAdvisor(file string, r io.Reader) (*models.SpotAdvisor, error) {
	t, _, err := traces.OpenTable(file, r, '#', "the Spot Advisor file is empty")
	if err != nil {
		return nil, err
	}
	if err := t.Require("required column is missing (Region,InstanceType,SavingsPctVsOnDemand,InterruptionBand)", "Region", "InstanceType", "InterruptionBand"); err != nil {
		return nil, err
	}
	adv := models.NewSpotAdvisor(spotAdvisorSnapshot)
	labels := models.SpotBandLabels()
	err = t.Each(func(rec []string) error {
		region, it, band := t.Get(rec, "Region"), t.Get(rec, "InstanceType"), t.Get(rec, "InterruptionBand")
		if region == "" || it == "" {
			return t.Bad("Region", "region and instance type are required")
		}
		known := false
		for _, l := range labels {
			known = known || l == band
		}
		if !known {
			return t.Bad("InterruptionBand", "%q is not one of %s", band, strings.Join(labels, ", "))
		}
		a := models.SpotAdvice{Band: band}
		if v := t.Get(rec, "SavingsPctVsOnDemand"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < -1000 || n > 100 {
				return t.Bad("SavingsPctVsOnDemand", "%q is not a percentage (at most 100; negative when spot costs more)", v)
			}
			a.Savings, a.SavingsKnown = n, true
		}
		adv.Add(region, it, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return adv, nil
}

// ReadInterruptionTimes reads a trace of interruptions: a CSV file with a
// time column, seconds from the start of the run (decimals allowed), in
// order.
func ReadInterruptionTimes(file string, r io.Reader) ([]cluster.Time, error) {
	t, _, err := traces.OpenTable(file, r, '#', "the interruption trace is empty; it needs a header row with a time column")
	if err != nil {
		return nil, err
	}
	if err := t.Require("required column is missing", "time"); err != nil {
		return nil, err
	}
	var out []cluster.Time
	err = t.Each(func(rec []string) error {
		ms, err := traces.Seconds(t.Get(rec, "time"), true)
		if err != nil {
			return t.Bad("time", "%v", err)
		}
		if len(out) > 0 && ms < out[len(out)-1] {
			return t.Bad("time", "is before the previous row's: the trace must be in time order")
		}
		out = append(out, ms)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PoolPrice is what one cluster pool's nodes cost and how it was found.
type PoolPrice struct {
	Pool         string
	CapacityType string
	// PerHour is a node's price (0 when unknown).
	PerHour float64
	Basis   string
	// Group is the autoscaler or NodePool the pool belongs to ("" none).
	Group string
	// Interruptions and Failures say which model was used ("" none).
	Interruptions, Failures string
	// Block is a capacity block's window (End 0: none): paid for the
	// whole of it.
	Block capacity.Window
	// Held is a NodePool's capacity reservation: that many nodes paid for
	// the whole run, launched or not (0: none).
	Held int
	// DiskPerHour is what a Deallocate pool's evicted node's OS disk bills
	// an hour while it is stopped-deallocated (0: the pool deletes).
	DiskPerHour float64
	// estimate is a spot price the catalog did not give (see PriceNotes).
	estimate spotEstimate
	// traceCatalog is the price a pool priced by its SkyPilot trace's
	// prices had otherwise (retracePrices names it again).
	traceCatalog float64
}

// capacityNeeded reports whether any pool needs the capacity controller.
func (s builder) capacityNeeded() bool {
	sp := &s.Spec.Cluster
	if len(sp.NodePools) > 0 {
		return true
	}
	for i := range sp.Pools {
		p := &sp.Pools[i]
		if p.CapacityType == models.Spot || p.Interruptions != nil || p.Failures != nil || p.Autoscaling != nil || p.Window != nil {
			return true
		}
	}
	return false
}

// resources is where a catalog fills in a pool's size.
type resources struct {
	it models.InstanceType
	ok bool
}

func (s builder) instance(name string) (resources, error) {
	if name == "" {
		return resources{}, nil
	}
	cat, err := s.catalog()
	if err != nil {
		return resources{}, err
	}
	it, ok := cat.Instance(name)
	return resources{it: it, ok: ok}, nil
}

// catalog is the scenario's price catalog, read when the scenario loaded
// (readInputs). A scenario made some other way reads it here without
// keeping it: nothing a run reads fills in on first use.
func (s builder) catalog() (*models.PriceCatalog, error) {
	if s.cat != nil {
		return s.cat, nil
	}
	return LoadCatalog(s.catalogPaths()...)
}

// catalogPaths are the files of spec.pricing.catalogs, resolved.
func (s *Scenario) catalogPaths() []string {
	var paths []string
	for _, p := range s.Spec.Pricing.Catalogs {
		paths = append(paths, s.path(p))
	}
	return paths
}

// loadPriceCatalog reads the price catalog (the embedded one and
// spec.pricing.catalogs) as the scenario loads, before anything that
// sizes or prices a pool reads it.
func (s *Scenario) loadPriceCatalog() error {
	cat, err := LoadCatalog(s.catalogPaths()...)
	if err != nil {
		return err
	}
	s.cat = cat
	return nil
}

// loadKarpenterCatalog reads Karpenter's AWS catalog as the scenario
// loads when it has NodePools (their instance types are sized and priced
// from it when the price catalog does not know them); the NodePools read
// from spec.policy's manifests may have brought it already.
func (s *Scenario) loadKarpenterCatalog() error {
	if s.karp != nil || len(s.Spec.Cluster.NodePools) == 0 {
		return nil
	}
	c, err := karpenter.AWS()
	if err != nil {
		return err
	}
	s.karp = c
	return nil
}

func (s *Scenario) region(r string) string {
	switch {
	case r != "":
		return r
	case s.Spec.Pricing.Region != "":
		return s.Spec.Pricing.Region
	}
	return DefaultRegion
}

// BaseRates are the scenario's ratios for splitting a node's price.
func (s pricer) BaseRates() models.BaseRates {
	if b := s.Spec.Pricing.BaseRates; b != nil {
		return models.BaseRates{GPU: b.GPU, VCPU: b.CPU, GiB: b.Memory}
	}
	return models.DefaultBaseRates()
}

// quote prices a pool's node: an override, else the catalog (a pool with
// no instance type, or one the catalog does not know, has no price). A
// spot node the catalog has no spot price for in its region (or zone) is
// priced from the Spot Advisor's savings on its on-demand price when the
// advisor has the type there (est says so).
func (s builder) quote(at, instanceType string, cs *CapacitySpec, ct string, override *float64) (perHour float64, basis string, est spotEstimate, err error) {
	if override != nil {
		return *override, "scenario price", est, nil
	}
	if instanceType == "" {
		return 0, "no price (no instance type)", est, nil
	}
	cat, err := s.catalog()
	if err != nil {
		return 0, "", est, err
	}
	region := s.region(cs.Region)
	if ct == models.Reserved {
		return s.quoteReserved(at, cat, instanceType, region, cs)
	}
	q, err := cat.Quote(instanceType, region, cs.Zone, ct)
	if err != nil {
		if _, known := cat.Instance(instanceType); !known {
			return 0, fmt.Sprintf("no price (%s is not in the catalog)", instanceType), est, nil
		}
		if ct == models.Spot {
			if od, odErr := cat.Quote(instanceType, region, cs.Zone, models.OnDemand); odErr == nil {
				p, basis, est, ok, advErr := spotFromAdvisor(instanceType, region, od.PerHour, od.Basis)
				if advErr != nil || ok {
					return p, basis, est, advErr
				}
				err = fmt.Errorf("%v, nor has the Spot Advisor its savings there", err)
			}
		}
		return 0, "", est, s.errAt(at, "%v; give pricePerHour or another region or zone", err)
	}
	return q.PerHour, q.Basis, est, nil
}

func noticeFor(it models.InstanceType, known bool) (cluster.Time, string) {
	switch {
	case known && it.Cloud == models.Azure:
		// AKS spot node pools are scale sets of Spot VMs; Azure evicts
		// with the Scheduled Events Preempt notice, at least 30 s ahead.
		return 30 * 1000, "30 s (Azure Spot VM eviction through Scheduled Events; " + azureDeleteText + ")"
	case known && it.Cloud == models.GCP:
		return 30 * 1000, "30 s (GCP Spot VM preemption notice)"
	}
	return 2 * 60 * 1000, "2 min (AWS)"
}

// interruptions builds a spot pool's reclaim process.
func (s interrupter) interruptions(at, instanceType, region string, spec *InterruptionSpec, res resources) (capacity.Process, error) {
	var p capacity.Process
	notice, noticeText := noticeFor(res.it, res.ok)
	if spec != nil && spec.Notice != nil {
		notice, noticeText = spec.Notice.Millis(), spec.Notice.Duration.String()
	}
	p.Notice = notice
	set := 0
	if spec != nil {
		for _, b := range []bool{spec.RatePerHour != nil, spec.MTBF != nil, spec.Band != "" || spec.EvictionRates != "", len(spec.Times) > 0 || spec.Path != "", spec.SkyPilot != "", spec.Lifetime != nil} {
			if b {
				set++
			}
		}
	}
	if set > 1 {
		return p, s.errAt(at, "give one of ratePerHour, mtbf, band, lifetime or a trace (times, path; or a SkyPilot trace, skypilot); evictionRates is where an Azure band is looked up")
	}
	azure := res.ok && res.it.Cloud == models.Azure
	if spec != nil && spec.EvictionRates != "" {
		switch {
		case !azure:
			return p, s.errAt(at+".evictionRates", "is Azure's (eviction-rate bands per VM size from Azure Resource Graph); %s is not an Azure VM size", Quote(instanceType))
		case spec.Band != "" && spec.Band != "auto":
			return p, s.errAt(at+".band", "is %s beside evictionRates: give the band or the file to look it up in", Quote(spec.Band))
		}
	}
	if spec != nil && (spec.Outage != nil || spec.Wave != nil) && (len(spec.Times) > 0 || spec.Path != "" || spec.SkyPilot != "") {
		return p, s.errAt(at, "a trace of interruptions brings its own times: outage and wave follow drawn lifetimes (lifetime, ratePerHour, mtbf, band)")
	}
	band := "auto"
	switch {
	case set == 0 || spec.Lifetime != nil:
		// The measured preset, or the lifetime given (spotmodel.go).
		if _, err := interrupter(s).spotModel(at, spec, res, false, &p); err != nil {
			return p, err
		}
	case spec != nil && spec.RatePerHour != nil:
		if *spec.RatePerHour < 0 || math.IsNaN(*spec.RatePerHour) {
			return p, s.errAt(at+".ratePerHour", "must not be negative")
		}
		if *spec.RatePerHour > maxRatePerHour {
			return p, s.errAt(at+".ratePerHour", "%g per node-hour is more than one a millisecond", *spec.RatePerHour)
		}
		p.RatePerHour = *spec.RatePerHour
		p.Assumption = fmt.Sprintf("exponential, %g per node-hour (MTBF %.3g h)", p.RatePerHour, 1/p.RatePerHour)
	case spec != nil && spec.MTBF != nil:
		if spec.MTBF.Duration <= 0 {
			return p, s.errAt(at+".mtbf", "must be positive")
		}
		if spec.MTBF.Duration < time.Millisecond {
			return p, s.errAt(at+".mtbf", "%s is below 1 ms, the shortest duration gpuplan represents", spec.MTBF.Duration)
		}
		p.RatePerHour = 3.6e6 / float64(spec.MTBF.Millis())
		p.Assumption = fmt.Sprintf("exponential, MTBF %s per node", spec.MTBF.Duration)
	case spec != nil && (len(spec.Times) > 0 || spec.Path != ""):
		for _, d := range spec.Times {
			p.Times = append(p.Times, d.Millis())
		}
		if spec.Path != "" {
			r, closer, err := traces.OpenMaybeGzip(s.path(spec.Path))
			if err != nil {
				return p, err
			}
			ts, err := ReadInterruptionTimes(s.path(spec.Path), r)
			closer()
			if err != nil {
				return p, err
			}
			p.Times = append(p.Times, ts...)
		}
		sort.Slice(p.Times, func(i, j int) bool { return p.Times[i] < p.Times[j] })
		p.Assumption = fmt.Sprintf("a trace of %d interruptions", len(p.Times))
	case spec != nil && spec.SkyPilot != "":
		if err := interrupter(s).skyPilot(spec.SkyPilot, &p); err != nil {
			return p, err
		}
	case azure && spec != nil && spec.Band != models.PublishedGPUPreset && (spec.Band != "" || spec.EvictionRates != ""):
		if err := s.azureBand(at, instanceType, region, spec, &p); err != nil {
			return p, err
		}
	case spec != nil && spec.Band != "":
		band = spec.Band
		fallthrough
	default:
		label := band
		if band == "auto" {
			adv, err := DefaultSpotAdvisor()
			if err != nil {
				return p, err
			}
			a, ok := adv.Lookup(region, instanceType)
			if !ok {
				return p, s.errAt(at, "the Spot Advisor data has no band for %q in %s: give interruptions (ratePerHour, mtbf, band or times)", instanceType, region)
			}
			label = a.Band
		}
		rate, why, err := models.SpotBandRate(label)
		if err != nil {
			return p, s.errAt(at+".band", "%v", err)
		}
		p.RatePerHour = rate
		p.Assumption = why
		if band == "auto" {
			p.Assumption = fmt.Sprintf("%s in %s: %s", instanceType, region, why)
		}
	}
	if set > 0 && spec.Lifetime == nil {
		// An outage and a wave after a rate, an MTBF or a band.
		if _, err := interrupter(s).spotModel(at, spec, res, true, &p); err != nil {
			return p, err
		}
	}
	p.Assumption += ", notice " + noticeText
	return p, nil
}

// failures builds a pool's node-failure MTBF.
func (s builder) failures(at string, f *FailureSpec) (cluster.Time, string, error) {
	if f == nil {
		return 0, "", nil
	}
	if f.MTBF.Duration <= 0 {
		return 0, "", s.errAt(at+".mtbf", "must be positive")
	}
	if f.MTBF.Duration < time.Millisecond {
		return 0, "", s.errAt(at+".mtbf", "%s is below 1 ms, the shortest duration gpuplan represents", f.MTBF.Duration)
	}
	return f.MTBF.Millis(), fmt.Sprintf("exponential node failures, MTBF %s, no notice", f.MTBF.Duration), nil
}

func capacityType(ct string) string {
	if ct == "" {
		return models.OnDemand
	}
	return ct
}

func validCapacityType(ct string) bool {
	return ct == "" || ct == models.OnDemand || ct == models.Spot || ct == models.Reserved
}

// fillFromCatalog completes a pool's size from its instance type.
func fillFromCatalog(ps *cluster.PoolSpec, res resources, gpuModelSet, gpusSet, cpuSet, memSet bool) {
	if !res.ok {
		return
	}
	it := res.it
	if !gpuModelSet {
		ps.GPUModel = it.GPUModel
	}
	if !gpusSet {
		ps.GPUsPerNode = it.GPUs
	}
	if !cpuSet {
		ps.MilliCPU = int64(it.VCPUs * 1000)
	}
	if !memSet {
		ps.MemoryMiB = int64(it.MemoryGiB * 1024)
	}
	if ps.GPUMemoryMiB == 0 {
		ps.GPUMemoryMiB = it.GPUMemoryMiB
	}
}

// poolCapacity is one inline pool's capacity behaviour.
func (s builder) poolCapacity(i int, ps *cluster.PoolSpec, res resources, groups *[]capacity.Group) (capacity.Pool, PoolPrice, error) {
	p := &s.Spec.Cluster.Pools[i]
	at := fmt.Sprintf("spec.cluster.pools[%d]", i)
	ct := capacityType(p.CapacityType)
	window, err := s.reservedPool(at, p)
	if err != nil {
		return capacity.Pool{}, PoolPrice{}, err
	}
	cp := capacity.Pool{CapacityType: ct, Provisioning: DefaultProvisioning, Replace: true, Group: -1, Window: window}
	price := PoolPrice{Pool: p.Name, CapacityType: ct, Block: window}
	if cp.PricePerHour, price.Basis, price.estimate, err = s.quote(at+".instanceType", p.InstanceType, &p.CapacitySpec, ct, p.PricePerHour); err != nil {
		return cp, price, err
	}
	price.PerHour = cp.PricePerHour
	if p.Provisioning != nil {
		cp.Provisioning = p.Provisioning.Millis()
	}
	if p.ImagePull != nil {
		cp.Provisioning += p.ImagePull.Millis()
	}
	if p.Replace != nil {
		cp.Replace = *p.Replace
	}
	if ct == models.Spot {
		if cp.Interruptions, err = interrupter(s).interruptions(at+".interruptions", p.InstanceType, s.region(p.Region), p.Interruptions, res); err != nil {
			return cp, price, err
		}
		if err := interrupter(s).scaleAvailability(at+".interruptions.skypilot", &cp, p); err != nil {
			return cp, price, err
		}
		price.Interruptions = cp.Interruptions.Assumption
		if v, basis, ok, err := interrupter(s).tracePrice(p, cp.PricePerHour, s.specHorizon()); err != nil {
			return cp, price, err
		} else if ok {
			price.traceCatalog = cp.PricePerHour
			cp.PricePerHour, price.PerHour, price.Basis, price.estimate = v, v, basis, spotEstimate{}
		}
	}
	if err := s.evictionPolicy(at, p, res, &cp, &price); err != nil {
		return cp, price, err
	}
	if err := s.maxPrice(at, p, &cp, &price); err != nil {
		return cp, price, err
	}
	if cp.FailureMTBF, price.Failures, err = s.failures(at+".failures", p.Failures); err != nil {
		return cp, price, err
	}
	if a := p.Autoscaling; a != nil {
		g := capacity.Group{Name: p.Name, Kind: capacity.Autoscaler, Pools: []int32{int32(i)}, MinNodes: a.MinNodes, MaxNodes: a.MaxNodes,
			Expander: a.Expander, ScaleDownUnneeded: 10 * 60 * 1000, ScaleDownDelayAfterAdd: 10 * 60 * 1000, ScanInterval: 10 * 1000}
		if a.ScaleDownUnneededTime != nil {
			g.ScaleDownUnneeded = a.ScaleDownUnneededTime.Millis()
		}
		if a.ScaleDownDelayAfterAdd != nil {
			g.ScaleDownDelayAfterAdd = a.ScaleDownDelayAfterAdd.Millis()
		}
		if a.ScanInterval != nil {
			g.ScanInterval = a.ScanInterval.Millis()
		}
		cp.Group = int32(len(*groups))
		*groups = append(*groups, g)
		price.Group = p.Name
	}
	return cp, price, nil
}

// nodePools expands the NodePools into cluster pools, one per instance
// type and capacity type, and their group.
// ovs is what the NodeOverlays do to them (overlays).
func (s builder) nodePools(first int, ovs *overlayStore) ([]cluster.PoolSpec, []capacity.Pool, []PoolPrice, []capacity.Group, error) {
	var pools []cluster.PoolSpec
	var caps []capacity.Pool
	var prices []PoolPrice
	var groups []capacity.Group
	for ni := range s.Spec.Cluster.NodePools {
		np := &s.Spec.Cluster.NodePools[ni]
		at := fmt.Sprintf("spec.cluster.nodePools[%d]", ni)
		cts := np.CapacityTypes
		if len(cts) == 0 {
			cts = []string{models.OnDemand}
		}
		g := capacity.Group{Name: np.Name, Kind: capacity.NodePool, MaxGPUs: np.Limits.GPUs, MaxNodes: np.Limits.Nodes,
			SpotLaunchFailure: np.SpotLaunchFailure, ScanInterval: 10 * 1000}
		if q := np.Limits.CPU; q != nil {
			g.MaxMilliCPU = q.MilliValue()
		}
		if ea := np.ExpireAfter; ea != nil {
			g.ExpireAfter = ea.Millis()
		}
		if q := np.Limits.Memory; q != nil {
			g.MaxMemoryMiB = q.Value() >> 20
		}
		if c := np.Consolidation; c != nil {
			g.Consolidation, g.ConsolidateAfter = c.Policy, c.ConsolidateAfter.Millis()
		}
		gi := int32(len(groups))
		region := s.region(np.Region)
		for ti, it := range np.InstanceTypes {
			res, err := s.instance(it)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			kres, ko, err := s.karpenterType(it)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			karpenterOnly := !res.ok && ko.ok
			if karpenterOnly {
				res = kres
			}
			if !res.ok {
				return nil, nil, nil, nil, s.errAt(fmt.Sprintf("%s.instanceTypes[%d]", at, ti), "instance type %q is not in the price catalog nor Karpenter's AWS catalog (add it with spec.pricing.catalogs)", it)
			}
			for _, ct := range cts {
				rsv := -1
				if ct == models.Reserved {
					if rsv = slices.IndexFunc(np.Reservations, func(r NodePoolReservation) bool { return r.InstanceType == it }); rsv < 0 {
						continue // no reservation of this type
					}
				}
				ps := cluster.PoolSpec{Name: fmt.Sprintf("%s/%s/%s", np.Name, it, ct), InstanceType: it}
				fillFromCatalog(&ps, res, false, false, false, false)
				if err := ovs.capacityOn(&ps, np.Name, it, ko); err != nil {
					return nil, nil, nil, nil, s.errAt(fmt.Sprintf("%s.instanceTypes[%d]", at, ti), "%v", err)
				}
				switch {
				case np.Limits.GPUs > 0 && ps.GPUsPerNode > 0:
					ps.MaxNodes = int((np.Limits.GPUs + int64(ps.GPUsPerNode) - 1) / int64(ps.GPUsPerNode))
				case np.Limits.Nodes > 0:
					ps.MaxNodes = np.Limits.Nodes
				}
				if np.Limits.Nodes > 0 {
					ps.MaxNodes = min(ps.MaxNodes, np.Limits.Nodes)
				}
				if rsv >= 0 {
					// No more than the reservation holds.
					ps.MaxNodes = np.Reservations[rsv].Count
					if np.Limits.Nodes > 0 {
						ps.MaxNodes = min(ps.MaxNodes, np.Limits.Nodes)
					}
				}
				ps.MaxNodes = limitByResources(ps.MaxNodes, &g, &ps)
				ps.Labels = nodePoolLabels(np, ko, ct, region)
				ps.Taints = taintsFrom(np.Taints)
				if err := ps.Validate(); err != nil {
					return nil, nil, nil, nil, s.errAt(at, "instance type %s: %v", it, err)
				}
				cs := CapacitySpec{Region: np.Region, Zone: np.Zone}
				var override *float64
				if m, ok := np.PricePerHour[it]; ok {
					if v, ok := m[ct]; ok {
						override = &v
					}
				}
				cp := capacity.Pool{CapacityType: ct, Provisioning: DefaultProvisioning, Group: gi}
				price := PoolPrice{Pool: ps.Name, CapacityType: ct, Group: np.Name}
				if rsv >= 0 {
					if v := np.Reservations[rsv].PricePerHour; v != nil {
						override = v
					}
					// Paid for whether launched or not.
					price.Held = np.Reservations[rsv].Count
				}
				// The price catalog's price, else (a type it does not
				// know or does not price there) Karpenter's.
				byKarpenter := karpenterOnly && override == nil
				if !byKarpenter {
					cp.PricePerHour, price.Basis, price.estimate, err = s.quote(fmt.Sprintf("%s.instanceTypes[%d]", at, ti), it, &cs, ct, override)
					byKarpenter = err != nil && ko.ok && override == nil && region == karpenter.Region
					if err != nil && !byKarpenter {
						return nil, nil, nil, nil, err
					}
				}
				if byKarpenter {
					kct := ct
					if ct == models.Reserved {
						kct = models.OnDemand // an on-demand capacity reservation bills at it
					}
					if cp.PricePerHour, price.Basis, price.estimate, err = ko.price(region, kct); err != nil {
						return nil, nil, nil, nil, s.errAt(fmt.Sprintf("%s.instanceTypes[%d]", at, ti), "%v", err)
					}
				}
				if v, basis, ok := ovs.priceOf(np.Name, it, ct, cp.PricePerHour); ok {
					cp.PricePerHour, price.Basis = v, price.Basis+"; "+basis
				}
				price.PerHour = cp.PricePerHour
				if np.Provisioning != nil {
					cp.Provisioning = np.Provisioning.Millis()
				}
				if np.ImagePull != nil {
					cp.Provisioning += np.ImagePull.Millis()
				}
				if ct == models.Spot {
					if in := np.Interruptions; in != nil && in.SkyPilot != "" {
						return nil, nil, nil, nil, s.errAt(at+".interruptions.skypilot", "a SkyPilot trace bounds a fixed spot pool's nodes; a NodePool's spot capacity is spotLaunchFailure and interruptions")
					}
					if cp.Interruptions, err = interrupter(s).spotInterruptions(at+".interruptions", it, region, np.Interruptions, res, byKarpenter); err != nil {
						return nil, nil, nil, nil, err
					}
					price.Interruptions = cp.Interruptions.Assumption
				}
				if cp.FailureMTBF, price.Failures, err = s.failures(at+".failures", np.Failures); err != nil {
					return nil, nil, nil, nil, err
				}
				g.Pools = append(g.Pools, int32(first+len(pools)))
				pools = append(pools, ps)
				caps = append(caps, cp)
				prices = append(prices, price)
			}
		}
		groups = append(groups, g)
	}
	orderByWeight(s.Spec.Cluster.NodePools, caps, groups)
	return pools, caps, prices, groups, nil
}

func (s validator) validateCapacity(at string, cs *CapacitySpec) error {
	if !validCapacityType(cs.CapacityType) {
		return s.errAt(at+".capacityType", "is %q; want %s, %s or %s", cs.CapacityType, models.OnDemand, models.Spot, models.Reserved)
	}
	if err := s.validateReserved(at, cs); err != nil {
		return err
	}
	if cs.PricePerHour != nil && (*cs.PricePerHour < 0 || math.IsNaN(*cs.PricePerHour) || math.IsInf(*cs.PricePerHour, 0)) {
		return s.errAt(at+".pricePerHour", "must be a price, not negative")
	}
	if v := cs.OnDemandPricePerHour; v != nil && (cs.CapacityType != models.Spot || *v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
		return s.errAt(at+".onDemandPricePerHour", "is for spot pools: a price, not negative")
	}
	if cs.Provisioning != nil && cs.Provisioning.Duration < 0 {
		return s.errAt(at+".provisioning", "must not be negative")
	}
	if cs.ImagePull != nil && cs.ImagePull.Duration < 0 {
		return s.errAt(at+".imagePull", "must not be negative")
	}
	if cs.Interruptions != nil && cs.CapacityType != models.Spot {
		return s.errAt(at+".interruptions", "only spot nodes are interrupted; set capacityType: spot")
	}
	return validateInterruptions(s.Scenario, at+".interruptions", cs.Interruptions)
}

func validateInterruptions(s *Scenario, at string, in *InterruptionSpec) error {
	if in == nil {
		return nil
	}
	if in.Notice != nil && in.Notice.Duration < 0 {
		return s.errAt(at+".notice", "must not be negative")
	}
	for k, t := range in.Times {
		if t.Duration < 0 {
			return s.errAt(fmt.Sprintf("%s.times[%d]", at, k), "must not be negative")
		}
	}
	return nil
}

func (s validator) validateNodePool(i int, seen map[string]bool) error {
	np := &s.Spec.Cluster.NodePools[i]
	at := fmt.Sprintf("spec.cluster.nodePools[%d]", i)
	if !nameRE.MatchString(np.Name) {
		return s.errAt(at+".name", "%q is not a valid name (lower-case letters, digits, '-' and '.')", np.Name)
	}
	if seen[np.Name] {
		return s.errAt(at+".name", "%q is the name of another pool or NodePool", np.Name)
	}
	seen[np.Name] = true
	if len(np.InstanceTypes) == 0 {
		return s.errAt(at+".instanceTypes", "give at least one instance type")
	}
	for k, ct := range np.CapacityTypes {
		if ct != models.OnDemand && ct != models.Spot && ct != models.Reserved {
			return s.errAt(fmt.Sprintf("%s.capacityTypes[%d]", at, k), "is %q; want %s, %s or %s", ct, models.OnDemand, models.Spot, models.Reserved)
		}
		if ct == models.Reserved && len(np.Reservations) == 0 {
			return s.errAt(fmt.Sprintf("%s.capacityTypes[%d]", at, k), "reserved launches into capacity reservations: give them in reservations (instanceType, count)")
		}
	}
	for k, r := range np.Reservations {
		rat := fmt.Sprintf("%s.reservations[%d]", at, k)
		switch {
		case !slices.Contains(np.CapacityTypes, models.Reserved):
			return s.errAt(rat, "the NodePool's capacityTypes do not allow reserved")
		case !slices.Contains(np.InstanceTypes, r.InstanceType):
			return s.errAt(rat+".instanceType", "%q is not one of the NodePool's instanceTypes", r.InstanceType)
		case r.Count < 1 || r.Count > 100000:
			return s.errAt(rat+".count", "is %d; a reservation holds 1 to 100,000 instances", r.Count)
		case r.PricePerHour != nil && (*r.PricePerHour < 0 || math.IsNaN(*r.PricePerHour) || math.IsInf(*r.PricePerHour, 0)):
			return s.errAt(rat+".pricePerHour", "must be a price, not negative")
		}
		for _, o := range np.Reservations[:k] {
			if o.InstanceType == r.InstanceType {
				return s.errAt(rat+".instanceType", "%q has a reservation already", r.InstanceType)
			}
		}
	}
	if np.Limits.GPUs <= 0 && np.Limits.Nodes <= 0 && np.Limits.CPU == nil && np.Limits.Memory == nil {
		return s.errAt(at+".limits", "a NodePool needs limits (nvidia.com/gpu, nodes, cpu or memory) so the simulation can bound it")
	}
	if np.Limits.GPUs < 0 || np.Limits.Nodes < 0 || (np.Limits.CPU != nil && np.Limits.CPU.Sign() <= 0) || (np.Limits.Memory != nil && np.Limits.Memory.Sign() <= 0) {
		return s.errAt(at+".limits", "must not be negative (cpu and memory: positive)")
	}
	if np.SpotLaunchFailure < 0 || np.SpotLaunchFailure > 1 || math.IsNaN(np.SpotLaunchFailure) {
		return s.errAt(at+".spotLaunchFailure", "is a probability, 0 to 1")
	}
	if c := np.Consolidation; c != nil {
		if c.Policy != capacity.WhenEmpty && c.Policy != capacity.WhenEmptyOrUnderutilized {
			return s.errAt(at+".consolidation.policy", "is %q; want %s or %s", c.Policy, capacity.WhenEmpty, capacity.WhenEmptyOrUnderutilized)
		}
		if c.ConsolidateAfter.Duration < 0 {
			return s.errAt(at+".consolidation.consolidateAfter", "must not be negative")
		}
	}
	if np.Provisioning != nil && np.Provisioning.Duration < 0 {
		return s.errAt(at+".provisioning", "must not be negative")
	}
	if ea := np.ExpireAfter; ea != nil && (ea.Duration < time.Millisecond || ea.Millis() > maxDurationMs) {
		return s.errAt(at+".expireAfter", "%s is not from 1 ms to 100 years", ea.Duration)
	}
	if np.ImagePull != nil && np.ImagePull.Duration < 0 {
		return s.errAt(at+".imagePull", "must not be negative")
	}
	spot := false
	for _, ct := range np.CapacityTypes {
		spot = spot || ct == models.Spot
	}
	if np.Interruptions != nil && !spot {
		return s.errAt(at+".interruptions", "only spot nodes are interrupted; allow spot in capacityTypes")
	}
	for j, t := range np.Taints {
		if t.Key == "" {
			return s.errAt(fmt.Sprintf("%s.taints[%d].key", at, j), "is required")
		}
	}
	return validateInterruptions(s.Scenario, at+".interruptions", np.Interruptions)
}

// recovery turns a RecoverySpec into the simulator's.
func (s builder) recovery(at string, r *RecoverySpec) (*cluster.Recovery, error) {
	if r == nil {
		return nil, nil
	}
	out := &cluster.Recovery{BackoffLimit: cluster.DefaultBackoffLimit, IgnoreDisruptions: r.IgnoreDisruptions, DoNotDisrupt: r.DoNotDisrupt}
	if r.BackoffLimit != nil {
		out.BackoffLimit = *r.BackoffLimit
	}
	if c := r.Checkpoint; c != nil {
		if c.Interval.Duration <= 0 {
			return nil, s.errAt(at+".checkpoint.interval", "must be positive")
		}
		if c.Interval.Duration < time.Millisecond {
			return nil, s.errAt(at+".checkpoint.interval", "%s is below 1 ms, the shortest duration gpuplan represents", c.Interval.Duration)
		}
		out.CheckpointInterval = c.Interval.Millis()
		if c.Cost == nil && s.UsesSpot() {
			// A free write is saved in any spot notice (2 min on AWS): no
			// interruption would lose work, whatever the interval.
			return nil, s.errAt(at+".checkpoint.cost", "a job that checkpoints where spot nodes run needs cost, the time a write takes "+
				"(the checkpoint's size over the storage's write bandwidth: 300 GB at 1 GB/s is 5m); without it a write is free, a job under a spot notice "+
				"saves all its work before its node goes and no interruption loses any, whatever the interval (cost: 0s to mean that)")
		}
		if c.Cost != nil {
			out.CheckpointCost = c.Cost.Millis()
		}
		switch {
		case c.Restore != nil:
			out.RestoreCost = c.Restore.Millis()
		case c.Cost != nil:
			// Reading back the checkpoint written, over the same storage:
			// the same bytes, and checkpoint stores (object storage,
			// parallel file systems) read at least as fast as they write,
			// so the write's time errs high, not free.
			out.RestoreCost = c.Cost.Millis()
		}
	}
	if r.ActiveDeadline != nil {
		if r.ActiveDeadline.Duration <= 0 {
			return nil, s.errAt(at+".activeDeadline", "must be positive")
		}
		if r.ActiveDeadline.Duration < time.Millisecond {
			return nil, s.errAt(at+".activeDeadline", "%s is below 1 ms, the shortest duration gpuplan represents", r.ActiveDeadline.Duration)
		}
		out.ActiveDeadline = r.ActiveDeadline.Millis()
	}
	if g := r.TerminationGracePeriod; g != nil {
		if g.Duration < 0 {
			return nil, s.errAt(at+".terminationGracePeriod", "must not be negative")
		}
		// 0 s still lets a write of no time through.
		out.TerminationGrace = max(g.Millis(), 1)
	}
	if err := out.Validate(); err != nil {
		return nil, s.errAt(at, "%v", err)
	}
	return out, nil
}

// volcano applies a Volcano Job spec to a job's recovery settings (a copy;
// nil v: rec as it is) and gives its minAvailable (0: the whole job).
func (s builder) volcano(at string, v *VolcanoJobSpec, spec *RecoverySpec, rec *cluster.Recovery) (*cluster.Recovery, int32, error) {
	if v == nil {
		return rec, 0, nil
	}
	if spec != nil && (spec.BackoffLimit != nil || spec.IgnoreDisruptions) {
		return nil, 0, s.errAt(at, "recovery.backoffLimit and recovery.ignoreDisruptions are a Kubernetes Job's; a Volcano Job restarts by its policies and maxRetry")
	}
	out := &cluster.Recovery{}
	if rec != nil {
		*out = *rec
	}
	vp := &cluster.VolcanoPolicies{MaxRetry: cluster.DefaultMaxRetry}
	if v.MaxRetry != nil {
		if *v.MaxRetry < 1 {
			return nil, 0, s.errAt(at+".maxRetry", "must be at least 1")
		}
		vp.MaxRetry = *v.MaxRetry
	}
	seen := map[string]bool{}
	for i, p := range v.Policies {
		pat := fmt.Sprintf("%s.policies[%d]", at, i)
		if p.ExitCode != nil {
			return nil, 0, s.errAt(pat+".exitCode", "exit-code policies are not modelled: gpuplan's pods do not exit with codes")
		}
		if p.Timeout != nil {
			return nil, 0, s.errAt(pat+".timeout", "policy timeouts are not modelled: the action is taken at once")
		}
		a, err := cluster.ParseVolcanoAction(p.Action)
		if err != nil {
			return nil, 0, s.errAt(pat+".action", "%v", err)
		}
		events := p.Events
		if p.Event != "" {
			events = append([]string{p.Event}, events...)
		}
		if len(events) == 0 {
			return nil, 0, s.errAt(pat, "a policy needs an event or events")
		}
		for _, e := range events {
			switch e {
			case "PodEvicted", "PodFailed", "*":
			default:
				return nil, 0, s.errAt(pat+".event", "event %q is not one gpuplan produces: PodEvicted (a node lost or reclaimed, a pod preempted), PodFailed (an OOM kill on a shared GPU) or * (any)", e)
			}
			for _, k := range []string{"PodEvicted", "PodFailed"} {
				if e != k && e != "*" {
					continue
				}
				if seen[k] {
					return nil, 0, s.errAt(pat, "a second policy for %s", k)
				}
				seen[k] = true
				if k == "PodEvicted" {
					vp.OnEvicted = a
				} else {
					vp.OnFailed = a
				}
			}
		}
	}
	out.Volcano = vp
	var minAvail int32
	if v.MinAvailable != nil {
		if *v.MinAvailable < 1 {
			return nil, 0, s.errAt(at+".minAvailable", "must be at least 1")
		}
		minAvail = *v.MinAvailable
	}
	return out, minAvail, nil
}

// UsesSpot reports whether any pool or NodePool can buy spot nodes.
func (s *Scenario) UsesSpot() bool {
	for _, p := range s.Spec.Cluster.Pools {
		if p.CapacityType == models.Spot && (p.Count > 0 || p.Autoscaling != nil) {
			return true
		}
	}
	for _, np := range s.Spec.Cluster.NodePools {
		for _, ct := range np.CapacityTypes {
			if ct == models.Spot {
				return true
			}
		}
	}
	return false
}

// OnDemandOnly is the same scenario with every spot node bought
// on-demand: spot pools become on-demand (priced at their
// onDemandPricePerHour or the catalog's on-demand price) and lose their
// interruptions; NodePools allow on-demand only (and their capacity
// reservations, bought either way). Node failures stay.
func (s *Scenario) OnDemandOnly() (*Scenario, error) {
	c, err := s.derive()
	if err != nil {
		return nil, err
	}
	for i := range c.Spec.Cluster.Pools {
		p := &c.Spec.Cluster.Pools[i]
		if p.CapacityType != models.Spot {
			continue
		}
		p.CapacityType, p.Interruptions = models.OnDemand, nil
		p.EvictionPolicy, p.OSDiskPricePerMonth, p.MaxPrice = "", nil, nil // no eviction
		p.PricePerHour = p.OnDemandPricePerHour
	}
	for i := range c.Spec.Cluster.NodePools {
		np := &c.Spec.Cluster.NodePools[i]
		cts := []string{models.OnDemand}
		if slices.Contains(np.CapacityTypes, models.Reserved) {
			cts = append(cts, models.Reserved) // its reservations stay bought
		}
		np.CapacityTypes, np.Interruptions, np.SpotLaunchFailure = cts, nil, 0
		for it, m := range np.PricePerHour {
			delete(m, models.Spot)
			if len(m) == 0 {
				delete(np.PricePerHour, it)
			}
		}
	}
	return c, nil
}
