package topology

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
)

// Level is how wide a placement is, from the narrowest (one host) up.
// Levels are ordered: a wider level is never faster.
type Level uint8

const (
	// Host: every rank on one node, over the node's own fabric.
	Host Level = iota
	// Domain: several nodes of one multi-node NVLink domain (a GB200/GB300
	// NVL72 rack's 18 trays), over NVLink.
	Domain
	// Rack: several nodes of one rack (or of one leaf/rail group), over
	// the network rails.
	Rack
	// Block: several racks behind one spine.
	Block
	// Zone: several blocks, through the datacentre core.
	Zone
)

var levelNames = [...]string{"host", "nvlink-domain", "rack", "block", "zone"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", l)
}

// Spec is a pool's topology: how its node slots group into NVLink
// domains, racks and blocks. Slots fill in order: slot k is in domain
// k/NodesPerDomain, rack k/NodesPerRack and block rack/RacksPerBlock. The
// zero Spec is one flat network: every node its own NVLink domain, all in
// one rack.
type Spec struct {
	// DomainGPUs is the GPUs of one NVLink domain (72 on a GB200 NVL72);
	// 0, or the GPUs of one node: each node is its own domain.
	DomainGPUs int32
	// NodesPerRack is the nodes of one rack; 0: one rack for the pool (a
	// rack is at least one NVLink domain when that is wider than a node).
	NodesPerRack int32
	// RacksPerBlock is the racks behind one spine; 0: one block.
	RacksPerBlock int32
	// SpineOversubscription and CoreOversubscription divide the rails'
	// bandwidth across racks of a block and across blocks; 0: defaults.
	SpineOversubscription, CoreOversubscription float64
	// DomainFabric names the multi-node NVLink fabric of domains wider
	// than a node; "": the GPU model's (DomainFabricFor).
	DomainFabric string
}

// Zero reports whether s is the flat default.
func (s Spec) Zero() bool { return s == Spec{} }

// Validate checks s against the pool's GPUs per node.
func (s Spec) Validate(gpusPerNode int32) error {
	switch {
	case s.DomainGPUs < 0 || s.NodesPerRack < 0 || s.RacksPerBlock < 0:
		return fmt.Errorf("sizes must not be negative")
	case s.SpineOversubscription != 0 && !(s.SpineOversubscription >= 1 && s.SpineOversubscription <= 1000):
		return fmt.Errorf("spine oversubscription %g is outside [1, 1000]", s.SpineOversubscription)
	case s.CoreOversubscription != 0 && !(s.CoreOversubscription >= 1 && s.CoreOversubscription <= 1000):
		return fmt.Errorf("core oversubscription %g is outside [1, 1000]", s.CoreOversubscription)
	}
	if s.DomainGPUs > 0 {
		if gpusPerNode <= 0 || s.DomainGPUs%gpusPerNode != 0 {
			return fmt.Errorf("an NVLink domain of %d GPUs is not a whole number of %d-GPU nodes", s.DomainGPUs, gpusPerNode)
		}
		if n := s.DomainGPUs / gpusPerNode; s.NodesPerRack > 0 && s.NodesPerRack%n != 0 {
			return fmt.Errorf("a rack of %d nodes is not a whole number of %d-node NVLink domains", s.NodesPerRack, n)
		}
	}
	if s.RacksPerBlock > 0 && s.NodesPerRack == 0 && s.nodesPerDomain(gpusPerNode) == 1 {
		return fmt.Errorf("racks per block needs nodes per rack (or an NVLink domain wider than a node)")
	}
	return nil
}

// NodesPerDomain is the nodes of one NVLink domain (1: each node its own).
func (s Spec) NodesPerDomain(gpusPerNode int32) int32 { return s.nodesPerDomain(gpusPerNode) }

func (s Spec) nodesPerDomain(gpusPerNode int32) int32 {
	if s.DomainGPUs <= 0 || gpusPerNode <= 0 {
		return 1
	}
	return max(s.DomainGPUs/gpusPerNode, 1)
}

// Place is where one node is: its host (slot), NVLink domain, rack and
// block indices within its pool. Indices are nested: nodes of one domain
// share a rack, racks of one block a spine.
type Place struct {
	Host, Domain, Rack, Block int32
}

// PlaceOf is the place of the pool's node slot (0-based) under s.
func (s Spec) PlaceOf(slot, gpusPerNode int32) Place {
	nd := s.nodesPerDomain(gpusPerNode)
	p := Place{Host: slot, Domain: slot / nd}
	perRack := s.NodesPerRack
	if perRack <= 0 && nd > 1 {
		perRack = nd
	}
	if perRack > 0 {
		p.Rack = slot / perRack
	}
	if s.RacksPerBlock > 0 {
		p.Block = p.Rack / s.RacksPerBlock
	}
	return p
}

// Span is the narrowest level holding every place (Host for none or one).
func Span(places []Place) Level {
	l := Host
	for _, p := range places[min(1, len(places)):] {
		q := places[0]
		switch {
		case p.Block != q.Block:
			return Zone
		case p.Rack != q.Rack:
			l = max(l, Block)
		case p.Domain != q.Domain:
			l = max(l, Rack)
		case p.Host != q.Host:
			l = max(l, Domain)
		}
	}
	return l
}

// Ratio is a bandwidth divisor with where it comes from.
type Ratio struct {
	Value  float64
	Source string
}

// DefaultSpine is the leaf-to-spine oversubscription across racks of a
// block when a pool states none.
func DefaultSpine() Ratio {
	return Ratio{Value: 2, Source: "assumed 2:1 leaf-to-spine oversubscription (a common taper of cloud Ethernet/RoCE fabrics; NVIDIA's DGX SuperPOD reference InfiniBand fabric is non-blocking, 1:1: say so in the pool's topology)"}
}

// DefaultCore is the oversubscription across blocks (relative to the
// rails, not on top of the spine's) when a pool states none.
func DefaultCore() Ratio {
	return Ratio{Value: 4, Source: "assumed 4:1 between blocks through the datacentre core, relative to the rails (no published figure; state the fabric's own)"}
}

// Oversubscriptions are s's spine and core ratios, defaults filled in.
func (s Spec) Oversubscriptions() (spine, core float64) {
	spine, core = s.SpineOversubscription, s.CoreOversubscription
	if spine == 0 {
		spine = DefaultSpine().Value
	}
	if core == 0 {
		core = DefaultCore().Value
	}
	return spine, max(core, spine)
}

// NVL72 is the multi-node NVLink fabric of a GB200 NVL72 rack.
const NVL72 = "gb200-nvl72"

// DefaultFabrics are the fabrics of the levels above a host that
// models.DefaultFabrics lacks: the NVL72 domain. (The rails are
// models.DefaultNetwork.)
func DefaultFabrics() map[string]models.Fabric {
	return map[string]models.Fabric{
		NVL72: {Name: NVL72, Kind: models.FabricNVLink, Collective: models.AllReduce, Ranks: 72, Nodes: 18, AlphaUS: 39.67, BusBWGBps: 835,
			PeakBusBWGBps: 846.82, Source: "nccl-tests all_reduce_perf over one full GB200 NVL72 rack, 72 GPUs on 18 trays: busbw 835-839 GB/s at 4-8 GiB (coreweave/nccl-tests pull 43); " +
				"NVLink 5 is 1.8 TB/s bidirectional, 900 GB/s each way, per GPU, 72 GPUs a domain (NVIDIA GB200 NVL72); latency from the A100 run"},
	}
}

// DomainFabricFor names the multi-node NVLink fabric of a GPU model's
// NVLink domains wider than a node; "" where there is none by default.
func DomainFabricFor(model string) string {
	switch model {
	case "GB200", "GB300":
		return NVL72
	}
	return ""
}

// Tiers are the fabrics a gang's all-reduce runs over at each level.
type Tiers struct {
	// Host is the node's own fabric (NVSwitch, PCIe; on a node inside a
	// multi-node NVLink domain, the domain's fabric).
	Host models.Fabric
	// Domain is the multi-node NVLink fabric; unused unless the pool has
	// NVLink domains wider than a node.
	Domain models.Fabric
	// Rails is the network between nodes; Spine and Core divide its
	// bandwidth across racks and across blocks.
	Rails       models.Fabric
	Spine, Core float64
}

// AllReduce is the seconds an all-reduce of bytes over ranks takes on a
// placement spanning level, and the fabric that limits it: the one of
// least bandwidth among the host's fabric and the level's (a ring runs at
// its slowest link; on a tie the host's). railScale (at most 1) is the
// share of a node's rails the gang uses; it scales the network levels.
func (t *Tiers) AllReduce(level Level, bytes int64, ranks int, railScale float64) (float64, string) {
	f, scale := t.Host, 1.0
	var g models.Fabric
	gs := 1.0
	switch level {
	case Host:
		return f.Time(models.AllReduce, bytes, ranks, scale), f.Name
	case Domain:
		g = t.Domain
	case Rack:
		g, gs = t.Rails, railScale
	case Block:
		g, gs = t.Rails, railScale/math.Max(t.Spine, 1)
	default:
		g, gs = t.Rails, railScale/math.Max(math.Max(t.Core, t.Spine), 1)
	}
	if g.BusBWGBps*gs < f.BusBWGBps*scale {
		f, scale = g, gs
	}
	return f.Time(models.AllReduce, bytes, ranks, scale), f.Name
}
