package scenarios

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/traces"
)

//go:embed catalog/*.csv
var catalogFS embed.FS

// DefaultCatalogFiles are the embedded price files, in the order they are
// read (catalog/PROVENANCE.md says where each comes from).
func DefaultCatalogFiles() []string {
	return []string{
		"catalog/aws_instance_specs.csv",
		"catalog/aws_gpu_subset.csv",
		"catalog/aws_ondemand_karpenter_us-east-1_gpu.csv",
		"catalog/aws_ondemand_karpenter_us-east-1_gpu_2026-07.csv",
		"catalog/azure_gpu_vms.csv",
		"catalog/gcp_gpu_host_vms.csv",
		"catalog/gcp_gpu_accelerators.csv",
	}
}

// DefaultCatalogSnapshot says which snapshot the embedded catalog is (its
// one newer row, p6-b300 from Karpenter's list of 2026-07-20, says so in
// its quote's basis).
const DefaultCatalogSnapshot = "embedded catalog: AWS SkyPilot v7 (pre-June-2025) with Karpenter us-east-1 on-demand list of 2026-01-19; Azure and GCP SkyPilot-format of 2026-05-20"

// DefaultCatalog reads the embedded price catalog.
func DefaultCatalog() (*models.PriceCatalog, error) { return LoadCatalog() }

// LoadCatalog reads the embedded catalog, then the given price files over
// it (a later row for the same instance type and zone wins). With no
// files, it returns the embedded catalog read once (on first use) and
// shared: a catalog is not changed once read, and reading it costs ~9 ms
// and 4 MB, a sweep's whole run several times over.
func LoadCatalog(paths ...string) (*models.PriceCatalog, error) {
	if len(paths) == 0 {
		return embeddedCatalog()
	}
	return loadCatalog(paths...)
}

var embeddedCatalog = sync.OnceValues(func() (*models.PriceCatalog, error) { return loadCatalog() })

func loadCatalog(paths ...string) (*models.PriceCatalog, error) {
	b := newCatalogBuilder()
	for _, f := range DefaultCatalogFiles() {
		data, err := catalogFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := b.read("(embedded) "+f, bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	for _, p := range paths {
		r, closer, err := traces.OpenMaybeGzip(p)
		if err != nil {
			return nil, err
		}
		err = b.read(p, r)
		closer()
		if err != nil {
			return nil, err
		}
		b.sources = append(b.sources, p)
	}
	b.sources = append([]string{DefaultCatalogSnapshot}, b.sources...)
	return b.finish()
}

// ReadPriceFile reads one price file on its own (for tests and tools).
func ReadPriceFile(name string, r io.Reader) (*models.PriceCatalog, error) {
	b := newCatalogBuilder()
	if err := b.read(name, r); err != nil {
		return nil, err
	}
	return b.finish()
}

// ReadPriceFilePath reads one price file from disk.
func ReadPriceFilePath(path string) (*models.PriceCatalog, error) {
	r, closer, err := traces.OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closer()
	return ReadPriceFile(path, r)
}

// gcpHost is a GCP VM row without its GPUs.
type gcpHost struct {
	name, region, zone string
	vcpus, mem         float64
	price, spot        float64
	file               string
	line               int
}

type gcpGPU struct {
	count      int32
	mem        int64
	price      float64
	spot       float64
	hasP, hasS bool
}

// catalogBuilder gathers rows of SkyPilot-format files (AWS, Azure and GCP
// layouts, read by column name), Karpenter on-demand lists and spec tables.
type catalogBuilder struct {
	cat     *models.PriceCatalog
	offers  map[[3]string]models.Offering
	order   [][3]string
	hosts   []gcpHost
	gpus    map[string]gcpGPU // accel|count|region|zone
	sources []string
	notes   map[string]int
}

func newCatalogBuilder() *catalogBuilder {
	return &catalogBuilder{cat: models.NewPriceCatalog(), offers: map[[3]string]models.Offering{}, gpus: map[string]gcpGPU{}, notes: map[string]int{}}
}

// gpuInfoMiB reads the GPU memory out of a SkyPilot GpuInfo cell such as
// {'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]} (0 when absent).
func gpuInfoMiB(info string) int64 {
	i := strings.Index(info, "SizeInMiB")
	if i < 0 {
		return 0
	}
	rest := strings.TrimLeft(info[i+len("SizeInMiB"):], "'\": ")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(rest[:j], 10, 64)
	if err != nil || v > 1<<22 {
		return 0
	}
	return v
}

// cloudOf tells the cloud from the instance name.
func cloudOf(name string) string {
	switch {
	case strings.HasPrefix(name, "Standard_"):
		return models.Azure
	case gcpFamily(name) != "":
		return models.GCP
	}
	return models.AWS
}

// gcpFamily is the accelerator a GCP GPU host family carries ("" if none).
func gcpFamily(name string) string {
	for _, f := range []struct{ prefix, accel string }{
		{"a2-highgpu-", "A100"}, {"a2-megagpu-", "A100"}, {"a2-ultragpu-", "A100-80GB"},
		{"a3-highgpu-", "H100"}, {"a3-edgegpu-", "H100"}, {"a3-megagpu-", "H100-MEGA"},
		{"a3-ultragpu-", "H200"}, {"a4-highgpu-", "B200"}, {"g2-standard-", "L4"},
	} {
		if strings.HasPrefix(name, f.prefix) {
			return f.accel
		}
	}
	return ""
}

// gcpGPUCount is the GPUs of a GCP GPU host: the -Ng suffix, or for g2 the
// machine size (g2-standard-4 to -32: 1, -24: 2, -48: 4, -96: 8).
func gcpGPUCount(name string) int32 {
	if strings.HasPrefix(name, "g2-standard-") {
		switch strings.TrimPrefix(name, "g2-standard-") {
		case "24":
			return 2
		case "48":
			return 4
		case "96":
			return 8
		}
		return 1
	}
	parts := strings.Split(name, "-")
	if len(parts) >= 3 {
		s := parts[2]
		if n, err := strconv.Atoi(strings.TrimSuffix(s, "g")); err == nil && strings.HasSuffix(s, "g") {
			return int32(n)
		}
	}
	return 0
}

func (b *catalogBuilder) note(format string, args ...any) { b.notes[fmt.Sprintf(format, args...)]++ }

func (b *catalogBuilder) read(file string, r io.Reader) error {
	t, header, err := traces.OpenTable(file, r, '#', "the price file is empty; it needs a header row")
	if err != nil {
		return err
	}
	t.AnyFieldCount() // Azure's Generation column may hold an unquoted comma
	cols := len(header)
	has := t.Has
	switch {
	case has("OnDemandUSDPerHour"):
		if err := t.Require("required column is missing (a Karpenter price list has InstanceType,OnDemandUSDPerHour,Region)", "InstanceType", "OnDemandUSDPerHour", "Region"); err != nil {
			return err
		}
		return b.readKarpenter(t, cols)
	case has("Price"):
		if err := t.Require("required column is missing (a SkyPilot catalog has InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region)",
			"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice", "Region"); err != nil {
			return err
		}
		return b.readSkyPilot(t, cols)
	default:
		if err := t.Require("required column is missing (a spec table has InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB; a price file also Price,SpotPrice,Region)",
			"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB"); err != nil {
			return err
		}
		return b.readSkyPilot(t, cols)
	}
}

// rows calls row for every record, checking it has at least the header's
// fields (more only where the last column spilled).
func (b *catalogBuilder) rows(t *traces.Table, cols int, row func(rec []string) error) error {
	return t.Each(func(rec []string) error {
		if len(rec) < cols {
			return &InputError{File: t.File(), Line: t.Line(), Msg: fmt.Sprintf("%d fields, the header has %d", len(rec), cols)}
		}
		return row(rec)
	})
}

func (b *catalogBuilder) price(t *traces.Table, rec []string, col string) (float64, bool, error) {
	v := t.Get(rec, col)
	if v == "" {
		return 0, false, nil
	}
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1e5 {
		return 0, false, t.Bad(col, "price %s is not a number of dollars per hour in 0..100000", Quote(v))
	}
	return p, true, nil
}

func (b *catalogBuilder) number(t *traces.Table, rec []string, col string, max float64) (float64, error) {
	v := t.Get(rec, col)
	if v == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > max {
		return 0, t.Bad(col, "%s is not a number in 0..%g", Quote(v), max)
	}
	return x, nil
}

func (b *catalogBuilder) readKarpenter(t *traces.Table, cols int) error {
	generated := ""
	return b.rows(t, cols, func(rec []string) error {
		name, region := t.Get(rec, "InstanceType"), t.Get(rec, "Region")
		if name == "" {
			return t.Bad("InstanceType", "is empty")
		}
		if region == "" {
			return t.Bad("Region", "is empty")
		}
		p, okp, err := b.price(t, rec, "OnDemandUSDPerHour")
		if err != nil {
			return err
		}
		if !okp {
			return t.Bad("OnDemandUSDPerHour", "is empty")
		}
		if s := t.Get(rec, "Source"); strings.Contains(s, "(generated ") {
			generated = " (" + strings.TrimSuffix(s[strings.Index(s, "(generated ")+1:], ")") + ")"
		}
		b.cat.SetOnDemand(name, region, p, "Karpenter on-demand list"+generated+" "+region)
		return nil
	})
}

func (b *catalogBuilder) readSkyPilot(t *traces.Table, cols int) error {
	return b.rows(t, cols, func(rec []string) error {
		name := t.Get(rec, "InstanceType")
		accel := t.Get(rec, "AcceleratorName")
		countText := t.Get(rec, "AcceleratorCount")
		count := 0.0
		var err error
		if countText != "" {
			if count, err = strconv.ParseFloat(countText, 64); err != nil || count < 0 || count > 64 || math.IsNaN(count) {
				return t.Bad("AcceleratorCount", "%s is not a GPU count in 0..64", Quote(countText))
			}
		}
		vcpus, err := b.number(t, rec, "vCPUs", 1e4)
		if err != nil {
			return err
		}
		mem, err := b.number(t, rec, "MemoryGiB", 1e6)
		if err != nil {
			return err
		}
		var gpuMem int64
		if v := t.Get(rec, "GpuMemMiBPerGpu"); v != "" {
			x, err := b.number(t, rec, "GpuMemMiBPerGpu", 1<<22)
			if err != nil {
				return err
			}
			gpuMem = int64(x)
		} else {
			gpuMem = gpuInfoMiB(t.Get(rec, "GpuInfo"))
		}
		region, zone := t.Get(rec, "Region"), t.Get(rec, "AvailabilityZone")
		var od, spot float64
		var hasOD, hasSpot bool
		if t.Has("Price") {
			if region == "" {
				return t.Bad("Region", "is empty")
			}
			if od, hasOD, err = b.price(t, rec, "Price"); err != nil {
				return err
			}
			if spot, hasSpot, err = b.price(t, rec, "SpotPrice"); err != nil {
				return err
			}
			if !hasOD {
				b.note("rows with no on-demand price (capacity blocks only)")
			}
			if !hasSpot {
				b.note("rows with no spot offer")
			}
			if hasOD && hasSpot && spot >= od {
				b.note("rows with spot at or above on-demand")
			}
		}
		line := t.Line()
		switch {
		case name == "" && accel != "":
			// A GCP GPU attachment: the price of count GPUs.
			if count != math.Trunc(count) || count < 1 {
				return t.Bad("AcceleratorCount", "a GPU attachment row needs a whole count, not %s", Quote(countText))
			}
			key := fmt.Sprintf("%s|%d|%s|%s", accel, int32(count), region, zone)
			b.gpus[key] = gcpGPU{count: int32(count), mem: gpuMem, price: od, spot: spot, hasP: hasOD, hasS: hasSpot}
			return nil
		case name == "":
			return t.Bad("InstanceType", "is empty (and the row is not a GPU attachment: AcceleratorName is empty too)")
		case accel == "" && gcpFamily(name) != "":
			b.hosts = append(b.hosts, gcpHost{name: name, region: region, zone: zone, vcpus: vcpus, mem: mem, price: od, spot: spot, file: t.File(), line: line})
			return nil
		}
		if count != math.Trunc(count) {
			b.note("rows of VMs with a fractional GPU, left out")
			return nil
		}
		if _, known := b.cat.Instance(name); !known || accel != "" {
			model := models.CatalogGPUModel(accel, gpuMem)
			if gpuMem == 0 {
				gpuMem = models.GPUMemoryMiB(model)
			}
			b.cat.AddInstance(models.InstanceType{Name: name, Cloud: cloudOf(name), GPUModel: model,
				GPUs: int32(count), VCPUs: vcpus, MemoryGiB: mem, GPUMemoryMiB: gpuMem})
		}
		if t.Has("Price") {
			b.offer(models.Offering{InstanceType: name, Region: region, Zone: zone, OnDemand: od, Spot: spot})
		}
		return nil
	})
}

func (b *catalogBuilder) offer(o models.Offering) {
	key := [3]string{o.InstanceType, o.Region, o.Zone}
	if _, dup := b.offers[key]; dup {
		b.note("duplicate rows (same type and zone): the later one kept")
	} else {
		b.order = append(b.order, key)
	}
	b.offers[key] = o
}

// finish prices the GCP hosts with their GPUs and builds the catalog.
func (b *catalogBuilder) finish() (*models.PriceCatalog, error) {
	for _, h := range b.hosts {
		accel, n := gcpFamily(h.name), gcpGPUCount(h.name)
		if n == 0 {
			return nil, &InputError{File: h.file, Line: h.line, Field: "InstanceType", Msg: fmt.Sprintf("cannot tell how many GPUs %s has", Quote(h.name))}
		}
		g, ok := b.gpus[fmt.Sprintf("%s|%d|%s|%s", accel, n, h.region, h.zone)]
		if !ok {
			b.note("GCP host rows with no GPU row in their zone, left out")
			continue
		}
		od, spot := 0.0, 0.0
		if h.price > 0 && g.hasP {
			od = h.price + g.price
		}
		if h.spot > 0 && g.hasS {
			spot = h.spot + g.spot
		}
		b.cat.AddInstance(models.InstanceType{Name: h.name, Cloud: models.GCP, GPUModel: models.CatalogGPUModel(accel, g.mem),
			GPUs: n, VCPUs: h.vcpus, MemoryGiB: h.mem, GPUMemoryMiB: g.mem})
		b.offer(models.Offering{InstanceType: h.name, Region: h.region, Zone: h.zone, OnDemand: od, Spot: spot})
	}
	for _, k := range b.order {
		b.cat.AddOffering(b.offers[k])
	}
	keys := make([]string, 0, len(b.notes))
	for k := range b.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.cat.Notes = append(b.cat.Notes, fmt.Sprintf("%d %s", b.notes[k], k))
	}
	b.cat.Sources = append(b.cat.Sources, b.sources...)
	return b.cat, nil
}

// SpotEstimateNote is how the run's assumptions qualify a spot price
// taken from the Spot Advisor.
const SpotEstimateNote = "the Spot Advisor's average savings, an estimate, not a market price"

// spotEstimate records how a spot node the catalog has no spot price for
// was priced, for the run's assumptions: from the Spot Advisor's savings,
// or (upperBound) at on-demand. The zero value is a price with nothing to
// note.
type spotEstimate struct {
	instanceType, region string
	upperBound           bool
	savings              int
	onDemand, perHour    float64
	source               string
}

// spotFromAdvisor prices a spot node whose type has no spot price in the
// catalog for its region (or zone): its on-demand price (onDemand, from
// odBasis) less the Spot Advisor's savings for the type in the region,
// on-demand x (1 - savings%). ok is false when the Spot Advisor gives no
// savings for the type there.
func spotFromAdvisor(instanceType, region string, onDemand float64, odBasis string) (perHour float64, basis string, est spotEstimate, ok bool, err error) {
	adv, err := DefaultSpotAdvisor()
	if err != nil {
		return 0, "", est, false, err
	}
	a, found := adv.Lookup(region, instanceType)
	if !found || !a.SavingsKnown {
		return 0, "", est, false, nil
	}
	// To the micro-dollar, as the catalogs give prices: 71% off $16.288
	// is $4.72352, not 4.723520000000001.
	perHour = math.Round(onDemand*float64(100-a.Savings)*1e4) / 1e6
	basis = fmt.Sprintf("Spot Advisor estimate: on-demand $%.6g/h (%s) less %d%%, the Spot Advisor's average savings for %s in %s (%s); an estimate, not a market price",
		onDemand, odBasis, a.Savings, instanceType, region, adv.Source)
	est = spotEstimate{instanceType: instanceType, region: region, savings: a.Savings, onDemand: onDemand, perHour: perHour, source: adv.Source}
	return perHour, basis, est, true, nil
}

// maxNotedTypes bounds the types one assumption names (a Karpenter
// NodePool may offer hundreds).
const maxNotedTypes = 12

// PriceNotes are the assumptions the pools' prices rest on: per region,
// the spot prices estimated from the Spot Advisor (type, percentage,
// on-demand and the estimate) and the spot types billed at on-demand.
// Each type is named once, in pool order.
func (m *ClusterModel) PriceNotes() []string {
	type group struct {
		upperBound bool
		region     string
		source     string
		items      []string
	}
	var groups []*group
	seen := map[[2]string]bool{}
	for _, p := range m.Prices {
		e := p.estimate
		if e.instanceType == "" || seen[[2]string{e.instanceType, e.region}] {
			continue
		}
		seen[[2]string{e.instanceType, e.region}] = true
		var g *group
		for _, x := range groups {
			if x.upperBound == e.upperBound && x.region == e.region {
				g = x
			}
		}
		if g == nil {
			g = &group{upperBound: e.upperBound, region: e.region, source: e.source}
			groups = append(groups, g)
		}
		item := e.instanceType
		if !e.upperBound {
			item = fmt.Sprintf("%s %d%% off $%.6g/h = $%.6g/h", e.instanceType, e.savings, e.onDemand, e.perHour)
		}
		g.items = append(g.items, item)
	}
	var out []string
	for _, g := range groups {
		list := g.items
		more := ""
		if len(list) > maxNotedTypes {
			list, more = list[:maxNotedTypes], fmt.Sprintf(" and %d more", len(g.items)-maxNotedTypes)
		}
		if g.upperBound {
			out = append(out, fmt.Sprintf("spot billed at on-demand (an upper bound) in %s: neither the price catalog nor the Spot Advisor has a spot price or savings for %s%s",
				g.region, strings.Join(list, ", "), more))
			continue
		}
		out = append(out, fmt.Sprintf("spot priced from %s (%s), on-demand x (1 - savings%%), where the price catalog has no spot price in %s: %s%s",
			SpotEstimateNote, g.source, g.region, strings.Join(list, ", "), more))
	}
	return append(out, m.notes...)
}
