package models

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Collective communication: the alpha-beta model of an NCCL collective on
// a fabric. A collective of S bytes over n ranks takes
//
//	t = alpha + S x f(n) / busbw
//
// where busbw is the fabric's bus bandwidth (nccl-tests' busbw, the same
// whatever n) and f(n) the collective's bus factor: 2(n-1)/n for
// all-reduce (a ring sends each byte out and back), (n-1)/n for all-gather
// and reduce-scatter.

// Fabric kinds.
const (
	FabricNVLink  = "nvlink"  // GPUs of one node over NVLink/NVSwitch
	FabricPCIe    = "pcie"    // GPUs of one node over PCIe
	FabricNetwork = "network" // GPUs of several nodes over the network
)

// Collectives nccl-tests measures.
const (
	AllReduce     = "all_reduce"
	AllGather     = "all_gather"
	ReduceScatter = "reduce_scatter"
)

// BusFactor is busbw / algbw of a collective over n ranks.
func BusFactor(collective string, n int) float64 {
	if n <= 1 {
		return 0
	}
	if collective == AllGather || collective == ReduceScatter {
		return float64(n-1) / float64(n)
	}
	return 2 * float64(n-1) / float64(n)
}

// CommPoint is one message size of an nccl-tests run: out-of-place and
// in-place time (us) and bandwidths (GB/s, 10^9 B/s).
type CommPoint struct {
	Bytes      int64   `json:"bytes"`
	TimeUS     float64 `json:"time_us"`
	AlgBWGBps  float64 `json:"algbw_gbps"`
	BusBWGBps  float64 `json:"busbw_gbps"`
	InTimeUS   float64 `json:"in_place_time_us"`
	InBusBWGBp float64 `json:"in_place_busbw_gbps"`
}

// Fabric is a fitted fabric: latency alpha (us) from small messages, bus
// bandwidth from large ones, and the points it was fitted on.
type Fabric struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Collective string `json:"collective"`
	Ranks      int    `json:"ranks"`
	// Nodes is how many nodes the ranks were on; RanksPerNode how many per node.
	Nodes         int     `json:"nodes"`
	AlphaUS       float64 `json:"alpha_us"`
	BusBWGBps     float64 `json:"busbw_gbps"`
	PeakBusBWGBps float64 `json:"peak_busbw_gbps"`
	// Source says where the figures come from.
	Source string      `json:"source,omitempty"`
	Notes  []string    `json:"notes,omitempty"`
	Points []CommPoint `json:"points,omitempty"`
}

// RanksPerNode is the ranks of one node in the fabric's measurement.
func (f *Fabric) RanksPerNode() int {
	if f.Nodes <= 0 {
		return f.Ranks
	}
	return max(f.Ranks/f.Nodes, 1)
}

// Time is the seconds a collective of bytes over n ranks takes on the
// fabric, with busbw (GB/s) scaled by bwScale (a job using fewer network
// rails than the measurement did gets less).
func (f *Fabric) Time(collective string, bytes int64, n int, bwScale float64) float64 {
	if n <= 1 || bytes <= 0 {
		return 0
	}
	bw := f.BusBWGBps * bwScale
	if bw <= 0 {
		return math.Inf(1)
	}
	return f.AlphaUS*1e-6 + float64(bytes)*BusFactor(collective, n)/(bw*1e9)
}

// Fit thresholds: latency from messages up to SmallBytes, bandwidth from
// messages of LargeBytes and more (the largest third of the sizes, at
// least three, when none are that large).
const (
	SmallBytes = 1 << 20
	LargeBytes = 64 << 20
)

// FitFabric fits alpha and busbw to a run's points (sorted by size here).
// One straight line over all sizes underestimates the peak: the small
// messages pull the slope up. So alpha is the intercept of a line through
// the small messages, and busbw comes from the slope through the large
// ones: t = a + S/algbw, busbw = algbw x f(n).
func FitFabric(f *Fabric) error {
	pts := f.Points
	if len(pts) < 3 {
		return fmt.Errorf("fabric %s: %d sizes are too few to fit (need 3)", f.Name, len(pts))
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Bytes < pts[j].Bytes })
	factor := BusFactor(f.Collective, f.Ranks)
	if factor == 0 {
		return fmt.Errorf("fabric %s: %d ranks: no communication to fit", f.Name, f.Ranks)
	}
	t := func(p CommPoint) float64 {
		if p.InTimeUS > 0 {
			return (p.TimeUS + p.InTimeUS) / 2
		}
		return p.TimeUS
	}
	var xs, ys []float64
	for _, p := range pts {
		if p.Bytes >= LargeBytes {
			xs, ys = append(xs, float64(p.Bytes)), append(ys, t(p))
		}
	}
	if len(xs) < 3 {
		xs, ys = nil, nil
		for _, p := range pts[len(pts)-max(3, len(pts)/3):] {
			xs, ys = append(xs, float64(p.Bytes)), append(ys, t(p))
		}
		f.Notes = append(f.Notes, fmt.Sprintf("fewer than 3 sizes of %d MiB or more: bandwidth fitted on the largest %d", LargeBytes>>20, len(xs)))
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	if !(b > 0) {
		return fmt.Errorf("fabric %s: the large messages' time does not grow with size", f.Name)
	}
	algbw := 1 / (b * 1e3) // bytes per us -> GB/s
	f.BusBWGBps = round(algbw*factor, 2)
	var sx, sy []float64
	for _, p := range pts {
		if p.Bytes <= SmallBytes {
			sx, sy = append(sx, float64(p.Bytes)), append(sy, t(p))
		}
	}
	if len(sx) >= 2 {
		a0, _ := stat.LinearRegression(sx, sy, nil, false)
		f.AlphaUS = round(math.Max(a0, 0), 2)
	} else {
		f.AlphaUS = round(math.Max(a, 0), 2)
		f.Notes = append(f.Notes, fmt.Sprintf("no message of %d MiB or less: latency is the large messages' intercept", SmallBytes>>20))
	}
	f.PeakBusBWGBps = 0
	for _, p := range pts {
		f.PeakBusBWGBps = math.Max(f.PeakBusBWGBps, math.Max(p.BusBWGBps, p.InBusBWGBp))
	}
	return nil
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// DefaultFabrics are used when no calibration profile is given: fits of
// published nccl-tests all_reduce_perf outputs (the project's testdata/nccl,
// which a test refits), and for H200, B200 and PCIe, figures stated as such.
func DefaultFabrics() map[string]Fabric {
	return map[string]Fabric{
		"a100-nvswitch": {Name: "a100-nvswitch", Kind: FabricNVLink, Collective: AllReduce, Ranks: 8, Nodes: 1, AlphaUS: 39.67, BusBWGBps: 234.29,
			PeakBusBWGBps: 232.44, Source: "fit of nccl-tests all_reduce_perf -b 8 -e 4G -g 8, 8x A100-SXM4-80GB, NVSwitch (testdata/nccl)"},
		"h100-nvls": {Name: "h100-nvls", Kind: FabricNVLink, Collective: AllReduce, Ranks: 8, Nodes: 1, AlphaUS: 39.67, BusBWGBps: 479.70,
			PeakBusBWGBps: 476.53, Source: "fit of nccl-tests all_reduce_perf, 8x H100 80GB, NVSwitch with NVLS (NVIDIA/nccl-tests issue 290); latency from the A100 run (no small messages measured)"},
		"h200-nvswitch": {Name: "h200-nvswitch", Kind: FabricNVLink, Collective: AllReduce, Ranks: 8, Nodes: 1, AlphaUS: 39.67, BusBWGBps: 475,
			PeakBusBWGBps: 475, Source: "nccl-tests maintainers' figure for 8x H200 (about 475 GB/s); latency from the A100 run"},
		"b200-nvswitch": {Name: "b200-nvswitch", Kind: FabricNVLink, Collective: AllReduce, Ranks: 8, Nodes: 1, AlphaUS: 39.67, BusBWGBps: 830,
			PeakBusBWGBps: 830, Source: "a user's nccl-tests all_reduce_perf on 8x B200, NVLink 5 through NVSwitch: 830+ GB/s busbw (NVIDIA/nccl issue 1807, NCCL 2.27); latency from the A100 run"},
		"pcie": {Name: "pcie", Kind: FabricPCIe, Collective: AllReduce, Ranks: 8, Nodes: 1, AlphaUS: 30, BusBWGBps: 12,
			PeakBusBWGBps: 12, Source: "assumed: PCIe Gen4 GPUs through host bridges, no published figure shipped"},
		"ib-ndr-400": {Name: "ib-ndr-400", Kind: FabricNetwork, Collective: AllReduce, Ranks: 16, Nodes: 2, AlphaUS: 50, BusBWGBps: 155.66,
			PeakBusBWGBps: 167.87, Source: "fit of nccl-tests all_reduce_perf, 2 nodes x 8 H100, NDR 400G InfiniBand (NVIDIA/nccl-tests issue 290); latency assumed 50 us (no small messages measured)"},
	}
}

// DefaultFabricFor names the intra-node fabric of a GPU model.
func DefaultFabricFor(model string) string {
	switch model {
	case "A100-40GB", "A100-80GB":
		return "a100-nvswitch"
	case "H100-80GB":
		return "h100-nvls"
	case "H200-141GB":
		return "h200-nvswitch"
	case "B200", "GB200", "B300", "GB300":
		// GB200's four GPUs of a tray over the same NVLink 5; across the
		// NVL72 rack's NVLink domain it is the topology model's to price.
		// B300 and GB300 (Blackwell Ultra) keep NVLink 5 and its 1.8 TB/s
		// a GPU (NVIDIA HGX B300 and GB300 NVL72 datasheets): B200's
		// measured all-reduce until one of them is measured.
		return "b200-nvswitch"
	}
	return "pcie"
}

// DefaultNetwork is the inter-node fabric when a pool names none.
const DefaultNetwork = "ib-ndr-400"
