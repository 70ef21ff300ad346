package topology_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/topology"
)

// gb200 is GB200 NVL72 racks (4 GPUs a tray, 72 GPUs a domain, one
// domain a rack) in blocks of 2 racks, with the default oversubscriptions.
var gb200 = topology.Spec{DomainGPUs: 72, RacksPerBlock: 2}

func tiers(t *testing.T, s topology.Spec) topology.Tiers {
	t.Helper()
	fab := models.DefaultFabrics()
	spine, core := s.Oversubscriptions()
	// A GB200 tray's 4 GPUs talk through the rack's NVLink switch trays:
	// the host's fabric is the domain's.
	nvl := topology.DefaultFabrics()[topology.NVL72]
	return topology.Tiers{Host: nvl, Domain: nvl,
		Rails: fab[models.DefaultNetwork], Spine: spine, Core: core}
}

func places(s topology.Spec, slots ...int32) []topology.Place {
	var ps []topology.Place
	for _, k := range slots {
		ps = append(ps, s.PlaceOf(k, 4))
	}
	return ps
}

func seq(from, n int32) []int32 {
	var s []int32
	for k := from; k < from+n; k++ {
		s = append(s, k)
	}
	return s
}

// The same 64-GPU gang (16 trays of 4 GB200s) all-reducing 2 GB of
// gradients, placed three ways. An all-reduce of S bytes over n ranks takes
// alpha + S x 2(n-1)/n / busbw; S x 2 x 63/64 = 3.9375e9 bytes.
//
//	one NVLink domain (trays 0-15 of rack 0): NVL72 at 835 GB/s busbw,
//	  39.67 us + 3.9375e9 / 835e9 = 4.7552 ms;
//	two racks of one block (trays 10-17 of rack 0, 18-25 of rack 1): the
//	  NDR rails' 155.66 GB/s through a 2:1 spine = 77.83 GB/s,
//	  50 us + 3.9375e9 / 77.83e9 = 50.641 ms;
//	two blocks (racks 1 and 2): the rails through a 4:1 core = 38.915 GB/s,
//	  50 us + 3.9375e9 / 38.915e9 = 101.232 ms.
//
// (Rail scale 1: a GB200 tray has one 400G NIC per GPU.)
func TestAllReduceByLevel(t *testing.T) {
	tr := tiers(t, gb200)
	// One tray: the same NVLink, 4 ranks: 39.67 us + 2e9 x 1.5 / 835e9 = 3.6325 ms.
	sec, fab := tr.AllReduce(topology.Host, 2_000_000_000, 4, 1)
	require.Equal(t, topology.NVL72, fab)
	require.InDelta(t, 3.6325, sec*1000, 0.001)
	cases := []struct {
		name   string
		slots  []int32
		level  topology.Level
		fabric string
		ms     float64
	}{
		{"one domain", seq(0, 16), topology.Domain, topology.NVL72, 4.7552},
		{"two racks", append(seq(10, 8), seq(18, 8)...), topology.Block, models.DefaultNetwork, 50.641},
		{"two blocks", append(seq(28, 8), seq(36, 8)...), topology.Zone, models.DefaultNetwork, 101.232},
	}
	for _, c := range cases {
		ps := places(gb200, c.slots...)
		require.Equal(t, c.level, topology.Span(ps), c.name)
		sec, fab := tr.AllReduce(c.level, 2_000_000_000, 64, 1)
		require.Equal(t, c.fabric, fab, c.name)
		require.InDelta(t, c.ms, sec*1000, 0.001, c.name)
	}
}

// Where slots land: 18 trays a domain and a rack, 2 racks a block.
func TestPlaceOf(t *testing.T) {
	require.Equal(t, topology.Place{Host: 17, Domain: 0, Rack: 0, Block: 0}, gb200.PlaceOf(17, 4))
	require.Equal(t, topology.Place{Host: 18, Domain: 1, Rack: 1, Block: 0}, gb200.PlaceOf(18, 4))
	require.Equal(t, topology.Place{Host: 36, Domain: 2, Rack: 2, Block: 1}, gb200.PlaceOf(36, 4))
	// HGX nodes: each node its own domain; 4 nodes a rack.
	h := topology.Spec{NodesPerRack: 4}
	require.Equal(t, topology.Place{Host: 5, Domain: 5, Rack: 1}, h.PlaceOf(5, 8))
	require.Equal(t, topology.Rack, topology.Span([]topology.Place{h.PlaceOf(0, 8), h.PlaceOf(3, 8)}))
	require.Equal(t, topology.Block, topology.Span([]topology.Place{h.PlaceOf(3, 8), h.PlaceOf(4, 8)}))
	// The zero spec is today's flat network: any two nodes span a rack.
	var flat topology.Spec
	require.Equal(t, topology.Rack, topology.Span([]topology.Place{flat.PlaceOf(0, 8), flat.PlaceOf(999, 8)}))
	require.Equal(t, topology.Host, topology.Span([]topology.Place{flat.PlaceOf(7, 8), flat.PlaceOf(7, 8)}))
	require.Equal(t, topology.Host, topology.Span(nil))
}

// A user relies on a wider placement never being faster: for every gang
// size and message, and any oversubscriptions a pool may state, the time
// grows (weakly) with the level spanned.
func TestWiderIsNeverFaster(t *testing.T) {
	for _, s := range []topology.Spec{gb200, {NodesPerRack: 2, RacksPerBlock: 2, SpineOversubscription: 1, CoreOversubscription: 1},
		{NodesPerRack: 2, RacksPerBlock: 2, SpineOversubscription: 3, CoreOversubscription: 2}} {
		tr := tiers(t, s)
		for _, n := range []int{2, 8, 16, 64, 256} {
			for _, bytes := range []int64{1, 1 << 20, 1 << 30, 14e9} {
				prev := 0.0
				for l := topology.Domain; l <= topology.Zone; l++ {
					sec, _ := tr.AllReduce(l, bytes, n, 1)
					require.GreaterOrEqual(t, sec, prev, "%v n=%d bytes=%d", l, n, bytes)
					prev = sec
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	require.NoError(t, gb200.Validate(4))
	require.ErrorContains(t, topology.Spec{DomainGPUs: 72}.Validate(5), "not a whole number of 5-GPU nodes")
	require.ErrorContains(t, topology.Spec{DomainGPUs: 72, NodesPerRack: 10}.Validate(4), "not a whole number of 18-node")
	require.ErrorContains(t, topology.Spec{RacksPerBlock: 2}.Validate(8), "needs nodes per rack")
	require.ErrorContains(t, topology.Spec{SpineOversubscription: 0.5}.Validate(8), "outside [1, 1000]")
	require.ErrorContains(t, topology.Spec{NodesPerRack: -1}.Validate(8), "negative")
}

// A ring runs at its slowest link: PCIe GPUs (12 GB/s) spread over two
// racks are limited by PCIe, not by the spine's 155.66 / 2 = 77.83 GB/s.
// 16 ranks, 1 GB: 30 us + 1e9 x 1.875 / 12e9 = 156.28 ms.
func TestSlowestLink(t *testing.T) {
	fab := models.DefaultFabrics()
	tr := topology.Tiers{Host: fab["pcie"], Rails: fab[models.DefaultNetwork], Spine: 2, Core: 4}
	sec, name := tr.AllReduce(topology.Block, 1_000_000_000, 16, 1)
	require.Equal(t, "pcie", name)
	require.InDelta(t, 156.28, sec*1000, 0.01)
	// Half the rails at the core's 4:1: 155.66 / 8 = 19.46 GB/s, still
	// faster than PCIe; an 8:1 core (9.73 GB/s) is slower.
	tr.Core = 8
	_, name = tr.AllReduce(topology.Zone, 1_000_000_000, 16, 0.5)
	require.Equal(t, models.DefaultNetwork, name)
}
