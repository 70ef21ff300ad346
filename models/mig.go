package models

import (
	"fmt"
	"sort"
	"strings"
)

// MIG (Multi-Instance GPU). A MIG-capable GPU has 7 compute slices and 8
// memory slices; a GPU instance profile takes a number of each and may only
// start at certain memory slices. Instances may not overlap, which is what
// limits the combinations (NVIDIA MIG User Guide, "Supported MIG Profiles";
// NVML's GPU instance placements are in memory-slice units).

// MIGProfile is one GPU instance profile of a GPU model.
type MIGProfile struct {
	// Name as nvidia-smi and the device plugin spell it, e.g. "1g.10gb".
	Name string
	// Compute is the compute slices (of 7); MemorySlices the memory slices (of 8).
	Compute      int
	MemorySlices int
	MemoryMiB    int64
	// Starts are the memory slices an instance may start at.
	Starts []int
	// Max is how many instances of the profile alone fit on one GPU.
	Max int
}

// ComputeMilli is the profile's share of the GPU's compute in milli-GPU
// (1g = 1/7 of the GPU).
func (p MIGProfile) ComputeMilli() int32 { return int32(p.Compute * MilliGPU / 7) }

// Resource is the profile's Kubernetes extended resource under the mixed
// strategy, e.g. "nvidia.com/mig-1g.10gb".
func (p MIGProfile) Resource() string { return "nvidia.com/mig-" + p.Name }

func migTable(mem func(slices int) string, memMiB func(slices int) int64, oneSliceDouble string) []MIGProfile {
	p := func(c, m int, starts []int, max int, name string) MIGProfile {
		if name == "" {
			name = fmt.Sprintf("%dg.%s", c, mem(m))
		}
		return MIGProfile{Name: name, Compute: c, MemorySlices: m, MemoryMiB: memMiB(m), Starts: starts, Max: max}
	}
	return []MIGProfile{
		p(1, 1, []int{0, 1, 2, 3, 4, 5, 6}, 7, ""),
		p(1, 2, []int{0, 2, 4, 6}, 4, oneSliceDouble),
		p(2, 2, []int{0, 2, 4}, 3, ""),
		p(3, 4, []int{0, 4}, 2, ""),
		p(4, 4, []int{0}, 1, ""),
		p(7, 8, []int{0}, 1, ""),
	}
}

// MIGProfiles returns the GPU instance profiles of a MIG-capable GPU model
// (MIGModels), or nil.
func MIGProfiles(model string) []MIGProfile {
	switch model {
	case "A100-40GB":
		names := map[int]string{1: "5gb", 2: "10gb", 4: "20gb", 8: "40gb"}
		return migTable(func(s int) string { return names[s] }, func(s int) int64 { return int64(s) * 5 * 1024 }, "1g.10gb")
	case "A100-80GB", "H100-80GB":
		names := map[int]string{1: "10gb", 2: "20gb", 4: "40gb", 8: "80gb"}
		return migTable(func(s int) string { return names[s] }, func(s int) int64 { return int64(s) * 10 * 1024 }, "1g.20gb")
	case "H200-141GB":
		names := map[int]string{1: "18gb", 2: "35gb", 4: "71gb", 8: "141gb"}
		// Memory as NVML reports it on a real H200 (nvidia-smi mig -lgip:
		// 16.00, 32.50, 69.75 and 140.00 GiB; benchmarks/calibrate/testdata/
		// h200-device), not as the names read: a 1g.18gb instance holds 16 GiB.
		mib := map[int]int64{1: 16 * 1024, 2: 32*1024 + 512, 4: 69*1024 + 768, 8: 140 * 1024}
		return migTable(func(s int) string { return names[s] }, func(s int) int64 { return mib[s] }, "1g.35gb")
	case "B200":
		// NVIDIA MIG User Guide (R580), "B200 MIG Profiles": 1/8, 2/8, 4/8
		// and all of 180 GB. Memory as go-nvml's B200 mock gives it (23, 45,
		// 90 and 180 GiB); no B200 has been measured here, and a real H200
		// reported 16 GiB for its 1g.18gb (above), so a real B200 may too
		// report less than the names say.
		names := map[int]string{1: "23gb", 2: "45gb", 4: "90gb", 8: "180gb"}
		gib := map[int]int64{1: 23, 2: 45, 4: 90, 8: 180}
		return migTable(func(s int) string { return names[s] }, func(s int) int64 { return gib[s] << 10 }, "1g.45gb")
	case "GB200":
		// NVIDIA MIG User Guide (R580): GB200, 186 GB, up to 7 instances;
		// the profile names of NVIDIA's GPU Operator (mig-parted) for it:
		// 1g.23gb, 1g.47gb, 2g.47gb, 3g.93gb, 4g.93gb, 7g.186gb. Memory
		// read off the names, as for B200.
		names := map[int]string{1: "23gb", 2: "47gb", 4: "93gb", 8: "186gb"}
		gib := map[int]int64{1: 23, 2: 47, 4: 93, 8: 186}
		return migTable(func(s int) string { return names[s] }, func(s int) int64 { return gib[s] << 10 }, "1g.47gb")
	case "B300", "GB300":
		// NVIDIA's mig-parted default configuration (NVIDIA/mig-parted
		// deployments/systemd/config-default.yaml at 219e780d, Apache-2.0):
		// B300 (device 0x3182) 1g.34gb x7, 1g.67gb x4, 2g.67gb x3,
		// 3g.135gb x2, 4g.135gb x1, 7g.269gb x1; GB300 (0x31C2) 1g.35gb x7,
		// 1g.70gb x4, 2g.70gb x3, 3g.139gb x2, 4g.139gb x1, 7g.278gb x1;
		// their all-balanced layouts (2 x 1g, 1 x 2g, 1 x 3g) are the same
		// slices as the other models'. Memory read off the names, as for B200.
		gib := map[int]int64{1: 34, 2: 67, 4: 135, 8: 269}
		if model == "GB300" {
			gib = map[int]int64{1: 35, 2: 70, 4: 139, 8: 278}
		}
		return migTable(func(s int) string { return fmt.Sprintf("%dgb", gib[s]) }, func(s int) int64 { return gib[s] << 10 }, fmt.Sprintf("1g.%dgb", gib[2]))
	}
	return nil
}

// MIGModels lists the GPU models with MIG profiles.
func MIGModels() []string {
	return []string{"A100-40GB", "A100-80GB", "B200", "B300", "GB200", "GB300", "H100-80GB", "H200-141GB"}
}

// MIGProfileByName finds a profile of a model.
func MIGProfileByName(model, name string) (MIGProfile, bool) {
	for _, p := range MIGProfiles(model) {
		if p.Name == name {
			return p, true
		}
	}
	return MIGProfile{}, false
}

// MIGPlacement is one GPU instance of a layout: its profile and start slice.
type MIGPlacement struct {
	Profile MIGProfile
	Start   int
}

// PlaceMIG finds non-overlapping start slices for the given instances on
// one GPU of the model, or says why there are none. Larger instances are
// placed first and every valid start is tried (a small exhaustive search).
func PlaceMIG(model string, profiles []string) ([]MIGPlacement, error) {
	var todo []MIGProfile
	for _, name := range profiles {
		p, ok := MIGProfileByName(model, name)
		if !ok {
			return nil, fmt.Errorf("%s has no MIG profile %q (it has %s)", model, name, strings.Join(migNames(model), ", "))
		}
		todo = append(todo, p)
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].MemorySlices > todo[j].MemorySlices })
	compute := 0
	for _, p := range todo {
		compute += p.Compute
	}
	if compute > 7 {
		return nil, fmt.Errorf("%s: the instances need %d compute slices of 7", model, compute)
	}
	var used [8]bool
	out := make([]MIGPlacement, len(todo))
	var place func(i int) bool
	place = func(i int) bool {
		if i == len(todo) {
			return true
		}
		p := todo[i]
	next:
		for _, s := range p.Starts {
			for k := s; k < s+p.MemorySlices; k++ {
				if k >= len(used) || used[k] {
					continue next
				}
			}
			for k := s; k < s+p.MemorySlices; k++ {
				used[k] = true
			}
			out[i] = MIGPlacement{Profile: p, Start: s}
			if place(i + 1) {
				return true
			}
			for k := s; k < s+p.MemorySlices; k++ {
				used[k] = false
			}
		}
		return false
	}
	if !place(0) {
		return nil, fmt.Errorf("%s: %s do not fit on one GPU (no non-overlapping placement)", model, strings.Join(profiles, " + "))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

func migNames(model string) []string {
	var out []string
	for _, p := range MIGProfiles(model) {
		out = append(out, p.Name)
	}
	return out
}

// MIGLayout expands a mig-parted style layout name for a model:
// "all-<profile>" (as many as fit) or "all-balanced" (2 x 1g, 1 x 2g,
// 1 x 3g, as in mig-parted's default configuration).
func MIGLayout(model, layout string) ([]string, error) {
	ps := MIGProfiles(model)
	if ps == nil {
		return nil, fmt.Errorf("%s has no MIG support (MIG models: %s)", model, strings.Join(MIGModels(), ", "))
	}
	if layout == "all-balanced" {
		return []string{ps[0].Name, ps[0].Name, ps[2].Name, ps[3].Name}, nil
	}
	if name, ok := strings.CutPrefix(layout, "all-"); ok {
		p, ok := MIGProfileByName(model, name)
		if !ok {
			return nil, fmt.Errorf("%s has no MIG profile %q (it has %s)", model, name, strings.Join(migNames(model), ", "))
		}
		out := make([]string, p.Max)
		for i := range out {
			out[i] = p.Name
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown MIG layout %q (want all-<profile> or all-balanced)", layout)
}

// MIGProfileNames lists the profile names of every MIG-capable model,
// sorted, each once.
func MIGProfileNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range MIGModels() {
		for _, p := range MIGProfiles(m) {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// IsMIGProfile reports whether name is a profile of some MIG-capable
// model.
func IsMIGProfile(name string) bool {
	for _, n := range MIGProfileNames() {
		if n == name {
			return true
		}
	}
	return false
}
