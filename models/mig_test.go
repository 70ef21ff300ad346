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
