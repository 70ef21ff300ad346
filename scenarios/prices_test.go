package scenarios

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// The embedded catalog against the examples the data's provenance gives
// (us-east-1 and Azure eastus), read off the CSV rows by hand.
func TestDefaultCatalogQuotes(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	quote := func(it, region, zone, ct string) models.Quote {
		q, err := cat.Quote(it, region, zone, ct)
		require.NoError(t, err, it)
		return q
	}
	// On-demand p4d in us-east-1 comes from the newer Karpenter list
	// (after the 2025 cut), not the SkyPilot row's 32.7726.
	q := quote("p4d.24xlarge", "us-east-1", "", models.OnDemand)
	require.Equal(t, 21.957642, q.PerHour)
	require.Contains(t, q.Basis, "Karpenter on-demand list (generated 2026-01-19)")
	// Spot p4d: zones az1 6.7915, az2 9.6107, az6 5.0933: the median is 6.7915.
	q = quote("p4d.24xlarge", "us-east-1", "", models.Spot)
	require.Equal(t, 6.7915, q.PerHour)
	require.Equal(t, [3]float64{5.0933, 9.6107, 3}, [3]float64{q.Min, q.Max, float64(q.Zones)})
	require.Equal(t, 9.6107, quote("p4d.24xlarge", "us-east-1", "use1-az2", models.Spot).PerHour)
	// Outside us-east-1 the SkyPilot on-demand row stands.
	require.Equal(t, 39.32, quote("p4d.24xlarge", "ap-south-1", "aps1-az1", models.OnDemand).PerHour)
	require.Equal(t, 0.526, quote("Standard_NC4as_T4_v3", "eastus", "", models.OnDemand).PerHour)
	require.InDelta(t, 0.747, quote("Standard_NC24ads_A100_v4", "eastus", "", models.Spot).PerHour, 0.0005)
	// GCP: host 0.73948 + one A100 2.93391 in us-central1-a; spot 0.36975 + 1.4341.
	require.InDelta(t, 3.67339, quote("a2-highgpu-1g", "us-central1", "us-central1-a", models.OnDemand).PerHour, 1e-9)
	require.InDelta(t, 1.80385, quote("a2-highgpu-1g", "us-central1", "us-central1-a", models.Spot).PerHour, 1e-9)

	it, ok := cat.Instance("a2-ultragpu-8g")
	require.True(t, ok)
	require.Equal(t, models.InstanceType{Name: "a2-ultragpu-8g", Cloud: models.GCP, GPUModel: "A100-80GB", GPUs: 8, VCPUs: 96, MemoryGiB: 1360, GPUMemoryMiB: 81920}, it)
	it, _ = cat.Instance("p5.48xlarge")
	require.Equal(t, "H100-80GB", it.GPUModel)
	// Specs for a type only the Karpenter list prices.
	it, ok = cat.Instance("g6e.12xlarge")
	require.True(t, ok)
	require.Equal(t, int32(4), it.GPUs)
	require.Equal(t, "L40S", it.GPUModel)
	// p6-b300 only in Karpenter's newer list (2026-07-20): 142.416 a node-hour;
	// 8 B300 of 275,040 MiB, 192 vCPUs, 4 TiB (its instance-type labels).
	q = quote("p6-b300.48xlarge", "us-east-1", "", models.OnDemand)
	require.Equal(t, 142.416, q.PerHour)
	require.Contains(t, q.Basis, "generated 2026-07-20")
	it, ok = cat.Instance("p6-b300.48xlarge")
	require.True(t, ok)
	require.Equal(t, models.InstanceType{Name: "p6-b300.48xlarge", Cloud: models.AWS, GPUModel: "B300", GPUs: 8, VCPUs: 192, MemoryGiB: 4096, GPUMemoryMiB: 275040}, it)

	// No offer: the error says what is there.
	_, err = cat.Quote("p4d.24xlarge", "mars-1", "", models.Spot)
	require.ErrorContains(t, err, `no prices in region "mars-1" (it has: `)
	_, err = cat.Quote("p3.16xlarge", "us-east-1", "use1-az3", models.Spot)
	require.ErrorContains(t, err, "no spot offer in us-east-1 zone use1-az3")
	require.Contains(t, strings.Join(cat.Notes, "; "), "rows of VMs with a fractional GPU, left out")
}

func TestPriceFileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "p.csv:1: the price file is empty"},
		{"InstanceType,Price\n", "p.csv:1: AcceleratorName: required column is missing"},
		{"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\nx,T4,1,4,16,abc,,r\n", "p.csv:2:13: Price: price \"abc\" is not a number"},
		{"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\nx,T4,1,4,16\n", "p.csv:2: 5 fields, the header has 8"},
		{"InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\nx,T4,99,4,16,1,,r\n", "p.csv:2:6: AcceleratorCount: \"99\" is not a GPU count"},
		{"InstanceType,OnDemandUSDPerHour,Region\np4d.24xlarge,-1,us-east-1\n", "p.csv:2:14: OnDemandUSDPerHour: price \"-1\" is not a number"},
	} {
		_, err := ReadPriceFile("p.csv", strings.NewReader(c.in))
		require.Error(t, err, c.in)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
	// Azure's unquoted V1,V2 generation gives an extra field: tolerated.
	cat, err := ReadPriceFile("a.csv", strings.NewReader("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation\n"+
		"Standard_NC6s_v3,V100,1,6,112,V100,3.06,0.6,eastus,V1,V2\n"))
	require.NoError(t, err)
	q, err := cat.Quote("Standard_NC6s_v3", "eastus", "", models.Spot)
	require.NoError(t, err)
	require.Equal(t, 0.6, q.PerHour)
}

func FuzzPriceFile(f *testing.F) {
	for _, p := range DefaultCatalogFiles() {
		b, err := catalogFS.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 1024 {
			b = b[:bytes.LastIndexByte(b[:1024], '\n')+1]
		}
		f.Add(b)
	}
	f.Add([]byte(",,,A100,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 4096"))
	f.Add([]byte("\xef\xbb\xbfInstanceType,OnDemandUSDPerHour,Region\np4d.24xlarge,1e300,us-east-1\n"))
	f.Add([]byte("InstanceType,OnDemandUSDPerHour,Region\n" + strings.Repeat("p", MaxLineBytes+1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		cat, err := ReadPriceFile("fuzz.csv", bytes.NewReader(data))
		if err != nil {
			requireInputError(t, err)
			return
		}
		for _, it := range cat.Instances() {
			if it.GPUs < 0 || it.GPUs > 64 {
				t.Fatalf("instance %+v has an impossible GPU count", it)
			}
		}
	})
}
