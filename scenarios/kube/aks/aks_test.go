package aks

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/validate/strict"
)

func sample(t testing.TB) []byte {
	b, err := Write([]Pool{
		{Name: "gpunp", VMSize: "Standard_NC24ads_A100_v4", Count: 2, Zones: []string{"1"}, Labels: map[string]string{"team": "ml"}},
		{Name: "spotnp", VMSize: "Standard_NC40ads_H100_v5", Count: 3, Spot: true, Taints: []string{"kubernetes.azure.com/scalesetpriority=spot:NoSchedule"}},
		{Name: "burst", VMSize: "Standard_NC24ads_A100_v4", MinCount: 0, MaxCount: 4},
	}, "eastus", []string{"test"})
	require.NoError(t, err)
	return b
}

// What Write writes, Read reads back as the same pools, in the location
// of the template's parameter.
func TestWriteThenRead(t *testing.T) {
	pools, notes, err := Read("a.json", sample(t), "westus")
	require.NoError(t, err)
	require.Empty(t, notes)
	require.Len(t, pools, 3)
	require.Equal(t, Pool{Name: "gpunp", VMSize: "Standard_NC24ads_A100_v4", Count: 2, Location: "eastus", Zones: []string{"1"}, Labels: map[string]string{"team": "ml"}, Line: pools[0].Line}, pools[0])
	require.True(t, pools[1].Spot)
	require.Equal(t, []string{"kubernetes.azure.com/scalesetpriority=spot:NoSchedule"}, pools[1].Taints)
	require.Equal(t, [2]int{0, 4}, [2]int{pools[2].MinCount, pools[2].MaxCount})
}

// Bad templates are refused with the file, the resource's line and the
// field; what gpuplan does not model is noted.
func TestReadRefusals(t *testing.T) {
	base := string(sample(t))
	for _, c := range []struct{ from, to, want string }{
		{`"scaleSetPriority": "Spot"`, `"scaleSetPriority": "Cheap"`, `resources[1].properties.scaleSetPriority: "Cheap" is not Regular or Spot`},
		{`"count": 2`, `"count": -2`, `resources[0].properties.count: -2 is not a count from 0 to 5000`},
		{`"maxCount": 4`, `"maxCount": 0`, `resources[2].properties.maxCount: an autoscaled agent pool needs maxCount`},
		{`'gpunp')]"`, `'GPU_np')]"`, `"GPU_np" is not an AKS agent pool name`},
		{`scalesetpriority=spot:NoSchedule`, `scalesetpriority=spot:Never`, `effect "Never" is not NoSchedule`},
		{`"vmSize": "Standard_NC24ads_A100_v4",` + "\n        \"count\": 2", `"count": 2`, `resources[0].properties.vmSize: is required`},
	} {
		body := strings.Replace(base, c.from, c.to, 1)
		require.NotEqual(t, base, body, c.from)
		_, _, err := Read("a.json", []byte(body), "eastus")
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%s: %v", c.to, err)
		require.Contains(t, err.Error(), c.want)
		require.Greater(t, ie.Line, 1, c.to)
	}
	_, notes, err := Read("a.json", []byte(strings.Replace(base, `"mode": "User",`, `"mode": "User", "osDiskSizeGB": 128,`, 1)), "eastus")
	require.NoError(t, err)
	require.Contains(t, strings.Join(notes, "\n"), "agent pool gpunp: osDiskSizeGB not modelled")
}

func FuzzRead(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte(`{"resources": [{"type": "Microsoft.Storage/storageAccounts", "name": "x"}]}`))
	f.Add([]byte(`{"resources": [{"type": "Microsoft.ContainerService/managedClusters/agentPools", "name": "c/p", "properties": {"vmSize": "x", "count": 1e30}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := Read("f.json", data, "eastus"); err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
		}
	})
}
