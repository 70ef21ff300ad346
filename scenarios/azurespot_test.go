package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/reports/focus"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate"
)

// Four Azure spot A100 nodes at $1.50 a node-hour whose every life lasts
// exactly 2 h (a lifetime trace of one value) and whose capacity stays
// gone exactly 1 h after a reclaim (an outage trace of one value), with
// Azure's 30 s notice, a 5-minute boot and a 10-minute image pull.
const azureSpotScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: azure-deallocate
spec:
  horizon: 6h
  pricing: {region: eastus}
  cluster:
    pools:
    - name: spotnp
      count: 4
      instanceType: Standard_NC24ads_A100_v4
      capacityType: spot
      pricePerHour: 1.5
      provisioning: 5m
      imagePull: 10m
      POLICY
      interruptions:
        lifetime: {trace: life.csv}
        outage: {trace: outage.csv}
        wave: 0
  workload:
    recovery:
      checkpoint: {interval: 1h, cost: 1m}
    synthetic:
      jobs: 1
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: 100h
`

func azureSpotRun(t *testing.T, policy string) (*sim.Result, *reports.CostSummary, *Built) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "life.csv"), []byte("seconds\n7200\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "outage.csv"), []byte("seconds\n3600\n"), 0o644))
	body := strings.Replace(azureSpotScenario, "POLICY", policy, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(body), 0o644))
	s, err := LoadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.NoError(t, validate.Invariants(res))
	return res, reports.Cost(res, b.Pricing), b
}

// By hand. Each node's life is 2 h from its launch; the notice comes at
// its end and the node goes 30 s later. The four go together:
//   - at 2h00m30s all four are evicted; the first starts the 1 h outage,
//     to 3h00m30s; the pool takes its nodes back when it ends.
//   - at 3h00m30s the four come back: under Deallocate the same four
//     nodes restart (Ready after the 5 min boot: their OS disks kept the
//     images), under Delete four new VMs (Ready after 5 + 10 min).
//   - their lives end at 5h00m30s, they go at 5h01m00s, and the outage
//     that starts then lasts past the 6 h horizon.
//
// VM time a node: 0 to 2h00m30s and 3h00m30s to 5h01m00s, 2 x 2h00m30s =
// 4.016667 h; four nodes 16.066667 h x $1.50 = $24.10, either policy.
// Deallocated time a node: 3h00m30s - 2h00m30s = 60 min, and 6h -
// 5h01m00s = 59 min; four nodes 4 x 119 min = 7.933333 h. The OS disk
// at the default P10 list price, $19.71 a month of 730 h = $0.027 an
// hour: 7.933333 x 0.027 = $0.2142. Deallocate's bill: $24.10 + $0.2142
// = $24.3142, $24.31; Delete's $24.10.
func TestAzureSpotDeallocateBillsTheDisk(t *testing.T) {
	res, cs, b := azureSpotRun(t, "evictionPolicy: Deallocate")
	st := res.Pools[0].Capacity
	require.Equal(t, int64(8), st.Deallocated)
	require.Equal(t, int64(4), st.Restarted)
	require.Equal(t, 4*119*sim.Minute, st.DeallocatedMs)
	require.InDelta(t, 16.066667, res.Pools[0].Usage.NodeHours, 1e-6)
	l := cs.ByPool[0]
	require.InDelta(t, 7.9333, l.DeallocatedHours, 1e-4)
	require.InDelta(t, 0.2142, l.DiskCost, 1e-4)
	require.Equal(t, "24.31", usd2(cs.Total))
	require.Equal(t, "24.31", usd2(l.Cost))
	require.Contains(t, b.Pricing.Pools[0].Interruptions, "eviction policy Deallocate: the evicted node is stopped-deallocated")
	require.Contains(t, b.Pricing.Pools[0].Interruptions, "$19.71 a month, Azure Premium SSD P10")
	require.Contains(t, b.Pricing.Pools[0].Interruptions, "Ready after 5m0s")

	// FOCUS: the disk is its own Storage row of 7.933333 disk-hours at
	// $0.027, and the rows add up to the bill.
	var buf bytes.Buffer
	require.NoError(t, reports.WriteFOCUS(&buf, res, reports.Summarize(res, b.Meta("s.yaml"))))
	header, rows, err := focus.ReadTable(&buf)
	require.NoError(t, err)
	require.NoError(t, focus.Check(header, rows))
	sum, disks := 0.0, 0
	for _, r := range rows {
		v, err := focus.ParseDecimal(r["BilledCost"])
		require.NoError(t, err)
		sum += v
		if r["ResourceType"] == "Disk" {
			disks++
			require.Equal(t, "Storage", r["ServiceCategory"])
			require.Equal(t, "Block Storage", r["ServiceSubcategory"])
			require.Equal(t, "Managed Disks", r["ServiceName"])
			require.Equal(t, "0.027", r["ListUnitPrice"])
			q, _ := focus.ParseDecimal(r["ConsumedQuantity"])
			require.InDelta(t, 7.933333, q, 1e-6)
			require.InDelta(t, 0.2142, v, 1e-9)
		}
	}
	require.Equal(t, 1, disks)
	require.Equal(t, "24.31", usd2(sum))

	res, cs, b = azureSpotRun(t, "evictionPolicy: Delete")
	st = res.Pools[0].Capacity
	require.Zero(t, st.Deallocated)
	require.Zero(t, st.DeallocatedMs)
	require.InDelta(t, 16.066667, res.Pools[0].Usage.NodeHours, 1e-6)
	require.Zero(t, cs.ByPool[0].DiskCost)
	require.Equal(t, "24.10", usd2(cs.Total))
	require.Contains(t, b.Pricing.Pools[0].Interruptions, "eviction policy Delete")
}

func usd2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func TestAzureEvictionPolicyRefused(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"POLICY", "evictionPolicy: Stop", `spec.cluster.pools[0].evictionPolicy: is "Stop"; Azure's eviction policies are Delete and Deallocate`},
		{"POLICY", "osDiskPricePerMonth: 5", `spec.cluster.pools[0].osDiskPricePerMonth: is what a deallocated node's OS disk bills: set evictionPolicy: Deallocate`},
		{"POLICY", "evictionPolicy: Deallocate\n      osDiskPricePerMonth: -1", `spec.cluster.pools[0].osDiskPricePerMonth: is -1; a disk's price is from 0 to 10000 USD a month`},
		{"Standard_NC24ads_A100_v4", "p4d.24xlarge", `spec.cluster.pools[0].evictionPolicy: Deallocate is Azure's (a Spot VM scale set's); "p4d.24xlarge" is not an Azure VM size`},
		{"      pricePerHour: 1.5\n", "      pricePerHour: 1.5\n      autoscaling: {maxNodes: 4}\n", `spec.cluster.pools[0].evictionPolicy: Deallocate is modelled on a fixed pool`},
	} {
		body := strings.Replace(azureSpotScenario, c.from, c.to, 1)
		body = strings.Replace(body, "POLICY", "evictionPolicy: Deallocate", 1)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "life.csv"), []byte("seconds\n7200\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "outage.csv"), []byte("seconds\n3600\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(body), 0o644))
		s, err := LoadFile(filepath.Join(dir, "s.yaml"))
		if err == nil {
			var b *Built
			if b, err = s.Build(Options{}); err == nil {
				b.Close()
			}
		}
		require.Error(t, err, c.want)
		requireInputError(t, err)
		require.Contains(t, err.Error(), c.want)
	}
	// On an on-demand pool.
	body := strings.Replace(strings.Replace(azureSpotScenario, "POLICY", "evictionPolicy: Deallocate", 1), "capacityType: spot", "capacityType: on-demand", 1)
	body = body[:strings.Index(body, "      interruptions:")] + body[strings.Index(body, "  workload:"):]
	s, err := Parse("s.yaml", "", []byte(body))
	if err == nil {
		_, err = s.Build(Options{})
	}
	require.ErrorContains(t, err, `spec.cluster.pools[0].evictionPolicy: is an Azure spot pool's: set capacityType: spot`)
}
