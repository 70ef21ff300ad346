//go:build cgo

package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpuplan.dev/gpuplan/models"
)

// ErrNoNVML is returned when the NVML library cannot be loaded: not a GPU
// node, or no NVIDIA driver.
var errNoNVML = errors.New("NVML library not found (libnvidia-ml.so.1): this is not a GPU node with the NVIDIA driver installed; use 'gpuplan calibrate parse' on saved nccl-tests output instead")

// NoNVML reports whether err says the NVML library is missing.
func NoNVML(err error) bool { return errors.Is(err, errNoNVML) }

// OpenNVML returns the node's NVML library (not yet initialised).
func OpenNVML() nvml.Interface { return nvml.New() }

func nvmlErr(what string, ret nvml.Return) error {
	return fmt.Errorf("NVML %s: %s", what, ret.String())
}

func busID(b [32]int8) string { return strings.ToLower(cString(b[:])) }

// cString is a NUL-terminated C string of an NVML structure.
func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

var topoNames = map[nvml.GpuTopologyLevel]string{
	nvml.TOPOLOGY_INTERNAL: "BOARD", nvml.TOPOLOGY_SINGLE: "PIX", nvml.TOPOLOGY_MULTIPLE: "PXB",
	nvml.TOPOLOGY_HOSTBRIDGE: "PHB", nvml.TOPOLOGY_NODE: "NODE", nvml.TOPOLOGY_SYSTEM: "SYS",
}

// ProfileNamer gives NVML's own name of a device's GPU instance profile id,
// or false when NVML has none for it.
type ProfileNamer func(d nvml.Device, id int) (string, bool)

// NVMLProfileName reads the name field of NVML's version-2 profile
// structure ("MIG 1g.18gb"), the name nvidia-smi prints and the device
// plugin advertises. A profile cannot always be named from its memory: a
// real H200 reports its 1g.18gb profile with 16,384 MiB
// (testdata/h200-device).
func NVMLProfileName(d nvml.Device, id int) (string, bool) {
	info, ret := d.GetGpuInstanceProfileInfoV(id).V2()
	if ret != nvml.SUCCESS {
		return "", false
	}
	return profileNameV2(info)
}

func profileNameV2(info nvml.GpuInstanceProfileInfo_v2) (string, bool) {
	name := strings.TrimPrefix(cString(info.Name[:]), "MIG ")
	return name, name != ""
}

// migProfileName names a GPU instance profile when NVML gives no name:
// <slices>g.<memory GiB, rounded up>gb, +me for the media-extension
// profile. It matches NVIDIA's names on the A100 and H100, not the H200's.
func migProfileName(id int, info nvml.GpuInstanceProfileInfo) string {
	name := fmt.Sprintf("%dg.%dgb", info.SliceCount, int(math.Ceil(float64(info.MemorySizeMB)/1024)))
	if id == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 {
		name += "+me"
	}
	return name
}

// Discover enumerates the GPUs NVML sees and their topology; node facts
// (host, CPUs, memory) come from the caller. It initialises and shuts
// down lib. MIG profiles take their names from named when it is given and
// knows the profile (the real library: NVMLProfileName; go-nvml's mock
// servers cannot answer it), else from their slices and memory.
func Discover(lib nvml.Interface, node models.NodeFacts, named ProfileNamer) (*models.NodeFacts, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, errNoNVML
		}
		return nil, nvmlErr("init", ret)
	}
	defer lib.Shutdown()
	f := node
	f.GPUs = nil
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		f.DriverVersion = v
	}
	if v, ret := lib.SystemGetNVMLVersion(); ret == nvml.SUCCESS {
		f.NVMLVersion = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		f.CUDADriverVersion = v
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nvmlErr("device count", ret)
	}
	devs := make([]nvml.Device, n)
	byBus := map[string]int{}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, nvmlErr(fmt.Sprintf("device %d", i), ret)
		}
		devs[i] = d
		g := models.GPUFacts{Index: i}
		note := func(what string, ret nvml.Return) { g.Notes = append(g.Notes, what+": "+ret.String()) }
		if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
			note("name", ret)
		}
		if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
			note("uuid", ret)
		}
		if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryMiB = int64(mem.Total >> 20)
		} else {
			note("memory", ret)
		}
		if pci, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.PCIBusID = busID(pci.BusId)
			if g.PCIBusID != "" {
				byBus[g.PCIBusID] = i
			}
		} else {
			note("pci", ret)
		}
		if maj, mnr, ret := d.GetCudaComputeCapability(); ret == nvml.SUCCESS {
			g.ComputeCapability = fmt.Sprintf("%d.%d", maj, mnr)
		} else {
			note("compute capability", ret)
		}
		if cur, pend, ret := d.GetMigMode(); ret == nvml.SUCCESS {
			g.MIGEnabled, g.MIGPending = cur == nvml.DEVICE_MIG_ENABLE, pend == nvml.DEVICE_MIG_ENABLE
			seen := map[string]bool{}
			for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
				info, ret := d.GetGpuInstanceProfileInfo(id)
				if ret != nvml.SUCCESS {
					continue
				}
				name := migProfileName(id, info)
				if named != nil {
					if n, ok := named(d, id); ok {
						name = n
					}
				}
				if !seen[name] {
					seen[name] = true
					g.MIGProfiles = append(g.MIGProfiles, name)
				}
			}
		} else if ret != nvml.ERROR_NOT_SUPPORTED {
			note("MIG mode", ret)
		}
		if mw, ret := d.GetPowerManagementLimit(); ret == nvml.SUCCESS {
			g.PowerLimitW = float64(mw) / 1000
		} else {
			note("power limit", ret)
		}
		if c, ret := d.GetMaxClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			g.MaxSMClockMHz = c
		} else {
			note("SM clock", ret)
		}
		if c, ret := d.GetMaxClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
			g.MaxMemClockMHz = c
		} else {
			note("memory clock", ret)
		}
		f.GPUs = append(f.GPUs, g)
	}
	// NVLinks: each active link goes to another GPU (by its PCI bus id) or
	// to an NVSwitch.
	direct := make([][]int, n)
	for i, d := range devs {
		direct[i] = make([]int, n)
		for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
			st, ret := d.GetNvLinkState(l)
			if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
				break
			}
			if ret != nvml.SUCCESS || st != nvml.FEATURE_ENABLED {
				continue
			}
			f.GPUs[i].NVLinks++
			remote, ret := d.GetNvLinkRemotePciInfo(l)
			if ret != nvml.SUCCESS {
				continue
			}
			if j, ok := byBus[busID(remote.BusId)]; ok && j != i {
				direct[i][j]++
			} else {
				f.GPUs[i].SwitchLinks++
			}
		}
	}
	f.Interconnect = "nvlink"
	for _, g := range f.GPUs {
		if g.NVLinks == 0 {
			f.Interconnect = "pcie"
		}
	}
	if n == 0 {
		f.Interconnect = ""
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			p := models.GPUPair{A: i, B: j, GPUs: [2]int{i, j}, NVLinks: direct[i][j],
				ViaNVSwitch: f.GPUs[i].SwitchLinks > 0 && f.GPUs[j].SwitchLinks > 0}
			if lvl, ret := devs[i].GetTopologyCommonAncestor(devs[j]); ret == nvml.SUCCESS {
				p.CommonAncestor = topoNames[lvl]
			}
			f.Pairs = append(f.Pairs, p)
		}
	}
	return &f, nil
}
