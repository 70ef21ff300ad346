//go:build cgo

package calibrate

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"

	"gpuplan.dev/gpuplan/models"
)

// smiProfile is one row of `nvidia-smi mig -lgip` on the real H200 of
// testdata/h200-device.
type smiProfile struct {
	name   string
	total  int
	memGiB float64
}

func readSMIProfiles(t *testing.T) []smiProfile {
	t.Helper()
	f, err := os.Open("testdata/h200-device/nvidia-smi.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []smiProfile
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// |   0  MIG 1g.18gb         19     7/7        16.00      No     16     1     0   |
		fields := strings.Fields(strings.Trim(sc.Text(), "| "))
		if len(fields) < 6 || fields[1] != "MIG" {
			continue
		}
		_, total, ok := strings.Cut(fields[4], "/")
		if !ok {
			t.Fatalf("instances column %q", fields[4])
		}
		n, err1 := strconv.Atoi(total)
		gib, err2 := strconv.ParseFloat(fields[5], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %q", sc.Text())
		}
		out = append(out, smiProfile{name: fields[2], total: n, memGiB: gib})
	}
	if len(out) != 7 {
		t.Fatalf("read %d GPU instance profiles from the nvidia-smi listing, want 7", len(out))
	}
	return out
}

// The built-in H200 MIG table against the profiles a real H200 lists: the
// same names, memory and instance counts (the media-extension profile
// aside, which the table leaves out).
func TestH200MIGTableMatchesRealDevice(t *testing.T) {
	for _, smi := range readSMIProfiles(t) {
		if strings.HasSuffix(smi.name, "+me") {
			continue
		}
		p, ok := models.MIGProfileByName("H200-141GB", smi.name)
		if !ok {
			t.Errorf("the H200 table has no %s", smi.name)
			continue
		}
		if want := int64(smi.memGiB * 1024); p.MemoryMiB != want {
			t.Errorf("%s: %d MiB, the device has %d (%.2f GiB)", smi.name, p.MemoryMiB, want, smi.memGiB)
		}
		if p.Max != smi.total {
			t.Errorf("%s: %d instances fit, the device lists %d", smi.name, p.Max, smi.total)
		}
	}
}

// NVML's own profile names: the v2 structure's "MIG 1g.18gb" is the
// device plugin's 1g.18gb, although its memory (16 GiB) would name it 1g.16gb.
func TestProfileNameFromNVML(t *testing.T) {
	for _, smi := range readSMIProfiles(t) {
		var info nvml.GpuInstanceProfileInfo_v2
		for i, c := range "MIG " + smi.name {
			info.Name[i] = int8(c)
		}
		info.MemorySizeMB = uint64(smi.memGiB * 1024)
		if got, ok := profileNameV2(info); !ok || got != smi.name {
			t.Errorf("profileNameV2(%q) = %q, %v", "MIG "+smi.name, got, ok)
		}
	}
	if _, ok := profileNameV2(nvml.GpuInstanceProfileInfo_v2{}); ok {
		t.Error("an empty name is a name")
	}
}

// Discover takes the names NVML gives over the ones made from memory.
func TestDiscoverUsesNVMLProfileNames(t *testing.T) {
	named := func(_ nvml.Device, id int) (string, bool) {
		if id == nvml.GPU_INSTANCE_PROFILE_1_SLICE {
			return "1g.nvml", true
		}
		return "", false
	}
	s := dgxh200.New()
	wire(s, 18, 700000, 1980, 3201)
	f, err := Discover(s, models.NodeFacts{}, named)
	if err != nil {
		t.Fatal(err)
	}
	got := f.GPUs[0].MIGProfiles
	if len(got) == 0 || got[0] != "1g.nvml" {
		t.Fatalf("profiles %v, want 1g.nvml first", got)
	}
	for _, n := range got[1:] {
		if n == "1g.18gb" {
			t.Errorf("the named profile is also listed by its memory name: %v", got)
		}
	}
}
