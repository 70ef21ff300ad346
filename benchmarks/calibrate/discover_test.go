//go:build cgo

package calibrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// wire sets what go-nvml's mock DGX servers leave nil: PCI bus ids,
// NVLinks (links each GPU has, all to NVSwitches), the PCIe topology (two
// sockets of four GPUs), power limits and clocks.
func wire(s *server.Server, links int, powerMW, smMHz, memMHz uint32) {
	for i, dv := range s.Devices {
		d := dv.(*server.Device)
		bus := fmt.Sprintf("00000000:%02x:00.0", 0x10+i)
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for k := 0; k < len(bus); k++ {
				p.BusId[k] = int8(bus[k])
			}
			return p, nvml.SUCCESS
		}
		d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if l >= links {
				return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			sw := fmt.Sprintf("00000000:%02x:00.0", 0xc0+l%4) // an NVSwitch
			for k := 0; k < len(sw); k++ {
				p.BusId[k] = int8(sw[k])
			}
			return p, nvml.SUCCESS
		}
		idx := i
		d.GetTopologyCommonAncestorFunc = func(o nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			j := o.(*server.Device).Index
			if idx/4 == j/4 {
				return nvml.TOPOLOGY_NODE, nvml.SUCCESS
			}
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
		d.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return powerMW, nvml.SUCCESS }
		d.GetMaxClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return smMHz, nvml.SUCCESS
			}
			return memMHz, nvml.SUCCESS
		}
	}
}

func TestDiscoverOnMockDGXs(t *testing.T) {
	for _, c := range []struct {
		name        string
		srv         *server.Server
		model       string
		links       int
		power       uint32
		gpuName, cc string
		memMiB      int64
	}{
		{"dgxa100", dgxa100.New(), "A100-40GB", 12, 400000, "A100-SXM4-40GB", "8.0", 40960},
		{"dgxh100", dgxh100.New(), "H100-80GB", 18, 700000, "H100 80GB HBM3", "9.0", 81920},
		{"dgxh200", dgxh200.New(), "H200-141GB", 18, 700000, "H200", "9.0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			wire(c.srv, c.links, c.power, 1980, 2619)
			f, err := Discover(c.srv, models.NodeFacts{Hostname: "mock", CPUs: 224, MemoryMiB: 2 << 20}, nil)
			require.NoError(t, err)
			require.Equal(t, "mock", f.Hostname)
			require.NotEmpty(t, f.DriverVersion)
			require.Len(t, f.GPUs, 8)
			require.Equal(t, "nvlink", f.Interconnect)
			require.Len(t, f.Pairs, 28, "every pair of 8 GPUs")
			g := f.GPUs[3]
			require.Equal(t, 3, g.Index)
			require.Contains(t, g.Name, c.gpuName)
			require.True(t, strings.HasPrefix(g.UUID, "GPU-"))
			require.Equal(t, "00000000:13:00.0", g.PCIBusID)
			require.Equal(t, c.cc, g.ComputeCapability)
			if c.memMiB > 0 {
				require.Equal(t, c.memMiB, g.MemoryMiB)
			}
			require.Equal(t, float64(c.power)/1000, g.PowerLimitW)
			require.Equal(t, [2]uint32{1980, 2619}, [2]uint32{g.MaxSMClockMHz, g.MaxMemClockMHz})
			require.Equal(t, [2]int{c.links, c.links}, [2]int{g.NVLinks, g.SwitchLinks}, "all links go to NVSwitches")
			require.Empty(t, g.Notes)
			// NVML's MIG profiles are the ones gpuplan's tables have.
			known := map[string]bool{}
			for _, p := range models.MIGProfiles(c.model) {
				known[p.Name] = true
			}
			require.NotEmpty(t, g.MIGProfiles)
			for _, p := range g.MIGProfiles {
				require.True(t, known[strings.TrimSuffix(p, "+me")], "%s profile %s is not in gpuplan's table", c.model, p)
			}
			p := f.Pairs[0] // GPUs 0 and 1, same socket
			require.Equal(t, [2]int{0, 1}, p.GPUs)
			require.Equal(t, "NODE", p.CommonAncestor)
			require.True(t, p.ViaNVSwitch)
			require.Zero(t, p.NVLinks)
			require.Equal(t, "SYS", f.Pairs[3].CommonAncestor, "GPU 0 and GPU 4: other socket")
		})
	}
}

// Direct NVLinks between GPUs (no switch) are counted per pair; a GPU
// without NVLink makes the node PCIe.
func TestDiscoverDirectLinksAndPCIe(t *testing.T) {
	s := dgxa100.New()
	wire(s, 4, 300000, 1410, 1593)
	for i, dv := range s.Devices {
		d := dv.(*server.Device)
		peer := fmt.Sprintf("00000000:%02x:00.0", 0x10+(i^1)) // pairs 0-1, 2-3, ...
		d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			for k := 0; k < len(peer); k++ {
				p.BusId[k] = int8(peer[k])
			}
			return p, nvml.SUCCESS
		}
		if i == 7 {
			d.GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		}
	}
	f, err := Discover(s, models.NodeFacts{}, nil)
	require.NoError(t, err)
	require.Equal(t, 4, f.Pairs[0].NVLinks, "GPUs 0 and 1: 4 direct links")
	require.False(t, f.Pairs[0].ViaNVSwitch)
	require.Equal(t, 0, f.Pairs[1].NVLinks, "GPUs 0 and 2: none")
	require.Equal(t, "pcie", f.Interconnect, "GPU 7 has no NVLink")
}

// Without a GPU the real library is not there: a clear error, no panic.
func TestDiscoverWithoutNVML(t *testing.T) {
	lib := OpenNVML()
	if ret := lib.Init(); ret == nvml.SUCCESS {
		lib.Shutdown()
		t.Skip("this machine has NVML")
	}
	_, err := Discover(lib, models.NodeFacts{}, nil)
	require.Error(t, err)
	require.True(t, NoNVML(err), err.Error())
	require.Contains(t, err.Error(), "NVML library not found")
}
