package scenarios

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An Azure spot pool of two A100 nodes in eastus, its interruptions as
// each case gives them.
const azureBandScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: azure-band
spec:
  horizon: 24h
  pricing: {region: eastus}
  cluster:
    pools:
    - name: spotnp
      count: 2
      instanceType: INSTANCE
      capacityType: spot
      pricePerHour: 1.5
      interruptions: INTERRUPTIONS
  workload:
    synthetic:
      jobs: 1
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: 1h
`

// Azure's eviction rates are an hourly chance (Microsoft: a 10% rate is a
// 10% chance of eviction within the next hour, over the trailing 28
// days). Before, a band on an Azure pool was read as an AWS Spot Advisor
// band (a monthly share: 5-10% gave an MTBF of 6,834 h and the report
// said "AWS Spot Advisor band"), and band auto was refused for want of a
// Spot Advisor row. By hand: 5-10% at its upper edge is -ln(0.9) =
// 0.105361 evictions a node-hour (MTBF 9.49 h); the Resource Graph result
// gives Standard_NC24ads_A100_v4 in eastus 5-10% too, and
// Standard_NC40ads_H100_v5 15-20%: -ln(0.8) = 0.223144 (MTBF 4.48 h).
func TestAzureEvictionBand(t *testing.T) {
	dir := t.TempDir()
	rates, err := os.ReadFile("testdata/azure-eviction/rates.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rates.json"), rates, 0o644))
	build := func(instance, interruptions string) (float64, string, error) {
		body := strings.NewReplacer("INSTANCE", instance, "INTERRUPTIONS", interruptions).Replace(azureBandScenario)
		path := filepath.Join(dir, "s.yaml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		s, err := LoadFile(path)
		if err != nil {
			return 0, "", err
		}
		m, err := s.Cluster()
		if err != nil {
			return 0, "", err
		}
		return m.Capacity.Pools[0].Interruptions.RatePerHour, m.Prices[0].Interruptions, nil
	}
	rate, why, err := build("Standard_NC24ads_A100_v4", `{band: "5-10%"}`)
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.9), rate, 1e-12)
	require.Contains(t, why, "Standard_NC24ads_A100_v4 in eastus: Azure Spot eviction-rate band 5-10% (Microsoft: the chance a VM is evicted within the next hour, from the trailing 28 days) read at 10% an hour: exponential, MTBF 9.49 h")
	require.NotContains(t, why, "AWS")
	require.Contains(t, why, "notice 30 s (Azure Spot VM eviction")

	rate, why, err = build("Standard_NC40ads_H100_v5", `{evictionRates: rates.json}`)
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.8), rate, 1e-12)
	require.Contains(t, why, "band 15-20%")
	require.Contains(t, why, "MTBF 4.48 h (Azure Resource Graph result rates.json)")

	rate, _, err = build("Standard_NC24ads_A100_v4", `{band: auto, evictionRates: rates.json}`)
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.9), rate, 1e-12)

	// An AWS type keeps the Spot Advisor's reading of the same label: a
	// monthly 10%, -ln(0.9)/720 a node-hour.
	rate, why, err = build("p4d.24xlarge", `{band: "5-10%"}`)
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.9)/720, rate, 1e-12)
	require.Contains(t, why, "AWS Spot Advisor band 5-10%")

	for _, c := range []struct{ instance, interruptions, want string }{
		{"Standard_NC24ads_A100_v4", `{band: auto}`, "spec.cluster.pools[0].interruptions.band: auto: Azure publishes Spot eviction rates per VM size and region only through Azure Resource Graph"},
		{"Standard_NC24ads_A100_v4", `{band: "<5%"}`, `spec.cluster.pools[0].interruptions.band: "<5%" is not an Azure eviction-rate band: one of [0-5% 5-10% 10-15% 15-20% 20+%]`},
		{"Standard_NC4as_T4_v3", `{evictionRates: rates.json, band: "0-5%"}`, `spec.cluster.pools[0].interruptions.band: is "0-5%" beside evictionRates`},
		{"Standard_ND96asr_v4", `{evictionRates: rates.json}`, `spec.cluster.pools[0].interruptions.evictionRates: "rates.json" has no eviction rate for Standard_ND96asr_v4 in eastus (4 VM sizes and regions in it)`},
		{"p4d.24xlarge", `{evictionRates: rates.json}`, `spec.cluster.pools[0].interruptions.evictionRates: is Azure's`},
	} {
		_, _, err := build(c.instance, c.interruptions)
		require.Error(t, err, c.interruptions)
		require.Contains(t, err.Error(), c.want, c.interruptions)
		requireInputError(t, err)
	}
	// A file that is not there is a usage mistake (exit 2), named.
	_, _, err = build("Standard_NC24ads_A100_v4", `{evictionRates: missing.json}`)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "missing.json")
}
