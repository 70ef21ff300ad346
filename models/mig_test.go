package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMIGProfileTables(t *testing.T) {
	// NVIDIA MIG User Guide, supported profiles: name, instances per GPU.
	want := map[string]map[string]int{
		"A100-40GB":  {"1g.5gb": 7, "1g.10gb": 4, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1},
		"A100-80GB":  {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
		"H100-80GB":  {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
		"H200-141GB": {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1},
		// B200: the guide's table 9; GB200: NVIDIA's GPU Operator names.
		"B200":  {"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1},
		"GB200": {"1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1},
		// B300 and GB300: the all-<profile> configurations of NVIDIA's
		// mig-parted default config (deployments/systemd/config-default.yaml),
		// the count each gives a GPU.
		"B300":  {"1g.34gb": 7, "1g.67gb": 4, "2g.67gb": 3, "3g.135gb": 2, "4g.135gb": 1, "7g.269gb": 1},
		"GB300": {"1g.35gb": 7, "1g.70gb": 4, "2g.70gb": 3, "3g.139gb": 2, "4g.139gb": 1, "7g.278gb": 1},
	}
	for model, profiles := range want {
		got := map[string]int{}
		for _, p := range MIGProfiles(model) {
			got[p.Name] = p.Max
			// Max instances alone must place, one more must not.
			layout, err := MIGLayout(model, "all-"+p.Name)
			require.NoError(t, err)
			_, err = PlaceMIG(model, layout)
			require.NoError(t, err, "%s all-%s", model, p.Name)
			_, err = PlaceMIG(model, append(layout, p.Name))
			require.Error(t, err, "%s %d x %s", model, p.Max+1, p.Name)
		}
		require.Equal(t, profiles, got, model)
	}
	p, _ := MIGProfileByName("H100-80GB", "3g.40gb")
	require.Equal(t, int32(428), p.ComputeMilli())
	require.Equal(t, "nvidia.com/mig-3g.40gb", p.Resource())
	require.Equal(t, int64(40*1024), p.MemoryMiB)
	require.Nil(t, MIGProfiles("T4"))
	// Every MIG model is a known model with memory, and its whole-GPU
	// profile holds the GPU's memory (within the 1 to 2 GiB NVML keeps
	// back on a real H200).
	for _, m := range MIGModels() {
		require.True(t, KnownGPUModel(m), m)
		full := MIGProfiles(m)[len(MIGProfiles(m))-1]
		require.Equal(t, 7, full.Compute, m)
		require.InDelta(t, GPUMemoryMiB(m), full.MemoryMiB, 2048, m)
	}
	// The B200 combinations of the guide's placement diagram: a 3g, a 2g
	// and two 1g use all 8 memory slices and 7 compute slices; a 4g and a
	// 3g too; a second 4g does not fit.
	_, err := PlaceMIG("B200", []string{"3g.90gb", "2g.45gb", "1g.23gb", "1g.23gb"})
	require.NoError(t, err)
	_, err = PlaceMIG("B200", []string{"4g.90gb", "3g.90gb"})
	require.NoError(t, err)
	_, err = PlaceMIG("B200", []string{"4g.90gb", "4g.90gb"})
	require.Error(t, err)
	// mig-parted's all-balanced for B300 and GB300: 2 x 1g, 1 x 2g, 1 x 3g.
	_, err = PlaceMIG("B300", []string{"1g.34gb", "1g.34gb", "2g.67gb", "3g.135gb"})
	require.NoError(t, err)
	_, err = PlaceMIG("GB300", []string{"1g.35gb", "1g.35gb", "2g.70gb", "3g.139gb"})
	require.NoError(t, err)
}

// Combinations from NVIDIA's list of valid A100 configurations, and some
// that are not valid.
func TestMIGCombinations(t *testing.T) {
	valid := [][]string{
		{"7g.40gb"},
		{"4g.20gb", "2g.10gb", "1g.5gb"},
		{"4g.20gb", "1g.5gb", "1g.5gb", "1g.5gb"},
		{"3g.20gb", "3g.20gb"},
		{"3g.20gb", "2g.10gb", "1g.5gb"},
		{"3g.20gb", "1g.5gb", "1g.5gb", "1g.5gb"},
		{"2g.10gb", "2g.10gb", "3g.20gb"},
		{"2g.10gb", "1g.5gb", "1g.5gb", "3g.20gb"},
		{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "3g.20gb"},
		{"2g.10gb", "2g.10gb", "2g.10gb", "1g.5gb"},
		{"2g.10gb", "2g.10gb", "1g.5gb", "1g.5gb", "1g.5gb"},
		{"2g.10gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"},
		{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"},
	}
	for _, c := range valid {
		pl, err := PlaceMIG("A100-40GB", c)
		require.NoError(t, err, "%v", c)
		require.Len(t, pl, len(c))
	}
	invalid := [][]string{
		{"7g.40gb", "1g.5gb"},                        // the whole GPU and more
		{"2g.10gb", "2g.10gb", "2g.10gb", "2g.10gb"}, // 2g starts only at 0, 2, 4
		{"3g.20gb", "3g.20gb", "1g.5gb"},             // two 3g take all 8 memory slices
		{"4g.20gb", "2g.10gb", "2g.10gb"},            // compute 8 > 7
		{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.5gb"},
	}
	for _, c := range invalid {
		_, err := PlaceMIG("A100-40GB", c)
		require.Error(t, err, "%v", c)
	}
	// The placement found for 4g + 2g + 1g: 4g at 0, 2g at 4, 1g at 6.
	pl, err := PlaceMIG("A100-40GB", []string{"1g.5gb", "2g.10gb", "4g.20gb"})
	require.NoError(t, err)
	require.Equal(t, []int{0, 4, 6}, []int{pl[0].Start, pl[1].Start, pl[2].Start})
	balanced, err := MIGLayout("H100-80GB", "all-balanced")
	require.NoError(t, err)
	require.Equal(t, []string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"}, balanced)
	_, err = PlaceMIG("H100-80GB", balanced)
	require.NoError(t, err)
	_, err = PlaceMIG("A100-40GB", []string{"5g.25gb"})
	require.ErrorContains(t, err, `no MIG profile "5g.25gb"`)
}

// The intra-node fabric of each model: B200 and GB200 went over the
// 12 GB/s PCIe assumption, 70 times slower than their NVLink 5.
func TestDefaultFabricFor(t *testing.T) {
	fabs := DefaultFabrics()
	for model, want := range map[string]float64{"A100-80GB": 234.29, "H100-80GB": 479.70, "H200-141GB": 475, "B200": 830, "GB200": 830, "L4": 12} {
		f, ok := fabs[DefaultFabricFor(model)]
		require.True(t, ok, model)
		require.Equal(t, want, f.BusBWGBps, model)
	}
}
