package scenarios

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/capacity"
	"gpuplan.dev/gpuplan/sim/cluster"
)

const capacityScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: capacity
spec:
  horizon: 2h
  cluster:
    pools:
    - name: od
      count: 1
      instanceType: p4d.24xlarge
    - name: spot
      count: 2
      instanceType: p4d.24xlarge
      capacityType: spot
      failures: {mtbf: 1000h}
    - name: ca
      count: 0
      instanceType: g5.12xlarge
      autoscaling: {maxNodes: 3, expander: least-waste, scanInterval: 30s}
      imagePull: 2m
    nodePools:
    - name: burst
      instanceTypes: [p5.48xlarge, g5.12xlarge]
      capacityTypes: [spot, on-demand]
      limits: {nvidia.com/gpu: 16}
      consolidation: {policy: WhenEmpty, consolidateAfter: 2m}
      interruptions: {ratePerHour: 0.5, notice: 30s}
      taints: [{key: burst, effect: NoSchedule}]
  workload:
    recovery:
      checkpoint: {interval: 30m, cost: 2m}
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 2}
        pod: {cpu: "8", memory: 64Gi, gpus: 8}
        duration: 30m
        recovery: {backoffLimit: 2, ignoreDisruptions: true, activeDeadline: 6h, doNotDisrupt: true}
`

func TestCapacityScenarioBuilds(t *testing.T) {
	s, err := Parse("c.yaml", "", []byte(capacityScenario))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	names := []string{}
	for _, p := range m.Pools {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"od", "spot", "ca", "burst/p5.48xlarge/spot", "burst/p5.48xlarge/on-demand", "burst/g5.12xlarge/spot", "burst/g5.12xlarge/on-demand"}, names)
	// The catalog fills in the size of an instance type.
	od := m.Pools[0]
	require.Equal(t, [4]int64{96000, 1152 << 10, 8, 40 << 10}, [4]int64{od.MilliCPU, od.MemoryMiB, int64(od.GPUsPerNode), od.GPUMemoryMiB})
	require.Equal(t, "A100-40GB", od.GPUModel)
	require.Equal(t, "on-demand", od.Labels[LabelCapacityType])
	require.Equal(t, "us-east-1", od.Labels[LabelRegion])
	require.Equal(t, 21.957642, m.Prices[0].PerHour)
	require.Equal(t, 6.7915, m.Prices[1].PerHour)

	c := m.Capacity
	require.NotNil(t, c)
	// A spot pool without an interruption model takes the measured
	// preset: lifetimes, outages and waves fitted to the V100 preemption
	// traces, borrowed for the A100 and said so.
	require.Zero(t, c.Pools[1].Interruptions.RatePerHour)
	require.Equal(t, models.MeasuredV100Lifetime, c.Pools[1].Interruptions.Lifetime)
	require.Equal(t, models.MeasuredV100Outage, c.Pools[1].Interruptions.Outage)
	require.Equal(t, models.MeasuredWave, c.Pools[1].Interruptions.Wave)
	require.Equal(t, cluster.Time(2*60*1000), c.Pools[1].Interruptions.Notice)
	require.Contains(t, m.Prices[1].Interruptions, "measured on V100 (no public preemption trace of A100-40GB")
	require.Equal(t, cluster.Time(1000*3600*1000), c.Pools[1].FailureMTBF)
	require.True(t, c.Pools[0].Replace)
	require.Equal(t, cluster.Time(DefaultProvisioning), c.Pools[0].Provisioning)
	// The autoscaled pool is a cluster-autoscaler group of its own.
	require.Equal(t, int32(0), c.Pools[2].Group)
	require.Equal(t, capacity.Group{Name: "ca", Kind: capacity.Autoscaler, Pools: []int32{2}, MaxNodes: 3, Expander: "least-waste",
		ScaleDownUnneeded: 600000, ScaleDownDelayAfterAdd: 600000, ScanInterval: 30000}, c.Groups[0])
	require.Equal(t, cluster.Time(DefaultProvisioning+2*60*1000), c.Pools[2].Provisioning, "image pull added")
	require.Equal(t, 3, m.Pools[2].MaxNodes)
	// The NodePool: one pool per offering, slots from the GPU limit.
	np := c.Groups[1]
	require.Equal(t, capacity.NodePool, np.Kind)
	require.Equal(t, []int32{3, 4, 5, 6}, np.Pools)
	require.Equal(t, int64(16), np.MaxGPUs)
	require.Equal(t, capacity.WhenEmpty, np.Consolidation)
	require.Equal(t, 2, m.Pools[3].MaxNodes, "16 GPUs of 8-GPU p5 nodes")
	require.Equal(t, 4, m.Pools[5].MaxNodes, "16 GPUs of 4-GPU g5 nodes")
	for k, v := range map[string]string{LabelNodePool: "burst", LabelKarpenterCT: "spot", LabelCapacityType: "spot", LabelRegion: "us-east-1",
		// and the well-known labels Karpenter puts on a p5.48xlarge
		"node.kubernetes.io/instance-type": "p5.48xlarge", "karpenter.k8s.aws/instance-family": "p5", "karpenter.k8s.aws/instance-gpu-name": "h100", "kubernetes.io/arch": "amd64"} {
		require.Equal(t, v, m.Pools[3].Labels[k], k)
	}
	require.Equal(t, []cluster.Taint{{Key: "burst", Effect: cluster.NoSchedule}}, m.Pools[3].Taints)
	require.Equal(t, 0.5, c.Pools[3].Interruptions.RatePerHour)
	require.Equal(t, cluster.Time(30000), c.Pools[3].Interruptions.Notice)
	require.False(t, c.Pools[4].Interruptions.Active(), "on-demand offerings are not interrupted")
	require.Equal(t, 55.04, c.Pools[4].PricePerHour)

	// The class's recovery replaces the workload's.
	b, err := s.Build(Options{})
	require.NoError(t, err)
	var j cluster.JobSpec
	ok, err := b.Config.Workload.Next(&j)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, &cluster.Recovery{BackoffLimit: 2, IgnoreDisruptions: true, ActiveDeadline: 6 * 3600 * 1000, DoNotDisrupt: true}, j.Recovery)
}

func TestCapacityErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"      capacityType: spot\n      failures", "      capacityType: preemptible\n      failures", `:15:21: spec.cluster.pools[1].capacityType: is "preemptible"; want on-demand, spot or reserved`},
		{"      instanceType: g5.12xlarge\n", "      instanceType: g5.12xlarge\n      interruptions: {mtbf: 1h}\n", `:20:22: spec.cluster.pools[2].interruptions: only spot nodes are interrupted`},
		{"      limits: {nvidia.com/gpu: 16}", "      limits: {}", `:26:15: spec.cluster.nodePools[0].limits: a NodePool needs limits`},
		{"      autoscaling: {maxNodes: 3, expander: least-waste, scanInterval: 30s}", "      autoscaling: {maxNodes: 3, expander: cheapest}", `spec.cluster.pools[2].autoscaling.expander: is "cheapest"`},
		{"      autoscaling: {maxNodes: 3, expander: least-waste, scanInterval: 30s}", "      count: 5\n      autoscaling: {maxNodes: 3}", `spec.cluster.pools[2].count: field "count" is given twice`},
		{"[p5.48xlarge, g5.12xlarge]", "[p5.48xlarge, x9.huge]", `spec.cluster.nodePools[0].instanceTypes[1]: instance type "x9.huge" is not in the price catalog`},
		{"      interruptions: {ratePerHour: 0.5, notice: 30s}", "      interruptions: {ratePerHour: 0.5, band: \"<5%\"}", `spec.cluster.nodePools[0].interruptions: give one of ratePerHour, mtbf, band, lifetime or a trace`},
		{"checkpoint: {interval: 30m, cost: 2m}", "checkpoint: {interval: 0s, cost: 2m}", `spec.workload.recovery.checkpoint.interval: must be positive`},
		{"      failures: {mtbf: 1000h}", "      failures: {mtbf: 1000h}\n      region: eu-north-1", `spec.cluster.pools[1].instanceType: instance type "p4d.24xlarge" has no prices in region "eu-north-1"`},
	}
	for _, c := range cases {
		body := strings.Replace(capacityScenario, c.from, c.to, 1)
		require.NotEqual(t, capacityScenario, body, c.from)
		s, err := Parse("c.yaml", "", []byte(body))
		if err == nil {
			_, err = s.Cluster()
		}
		require.Error(t, err, c.want)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
}

// The Spot Advisor band stays selectable (band: auto, the pool's type and
// region: p4d.24xlarge in us-east-1 is 10-15%, read as 15% of instances
// interrupted in a month); a type it does not know is refused. With no
// model the same type takes the measured preset instead.
func TestSpotAdvisorBandAuto(t *testing.T) {
	body := strings.Replace(capacityScenario, "      failures: {mtbf: 1000h}", "      failures: {mtbf: 1000h}\n      interruptions: {band: auto}", 1)
	s, err := Parse("c.yaml", "", []byte(body))
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	require.InEpsilon(t, -math.Log(0.85)/720, m.Capacity.Pools[1].Interruptions.RatePerHour, 1e-12)
	require.Nil(t, m.Capacity.Pools[1].Interruptions.Lifetime)
	require.Contains(t, m.Prices[1].Interruptions, "p4d.24xlarge in us-east-1: AWS Spot Advisor band 10-15%")

	gcp := strings.Replace(body, "      instanceType: p4d.24xlarge\n      capacityType: spot", "      instanceType: a2-highgpu-1g\n      capacityType: spot\n      region: us-central1", 1)
	s, err = Parse("c.yaml", "", []byte(gcp))
	require.NoError(t, err)
	_, err = s.Cluster()
	require.ErrorContains(t, err, `the Spot Advisor data has no band for "a2-highgpu-1g" in us-central1: give interruptions`)

	gcp = strings.Replace(gcp, "\n      interruptions: {band: auto}", "", 1)
	s, err = Parse("c.yaml", "", []byte(gcp))
	require.NoError(t, err)
	m, err = s.Cluster()
	require.NoError(t, err)
	require.Equal(t, models.MeasuredV100Lifetime, m.Capacity.Pools[1].Interruptions.Lifetime)
	require.Equal(t, cluster.Time(30000), m.Capacity.Pools[1].Interruptions.Notice, "GCP's notice")
}

func TestOnDemandOnly(t *testing.T) {
	s, err := Parse("c.yaml", "", []byte(capacityScenario))
	require.NoError(t, err)
	require.True(t, s.UsesSpot())
	od, err := s.OnDemandOnly()
	require.NoError(t, err)
	require.False(t, od.UsesSpot())
	m, err := od.Cluster()
	require.NoError(t, err)
	require.Equal(t, 21.957642, m.Prices[1].PerHour, "the spot pool at the on-demand price")
	require.Equal(t, "", m.Prices[1].Interruptions)
	require.Equal(t, int64(1000*3600*1000), m.Capacity.Pools[1].FailureMTBF, "failures stay")
	require.Len(t, m.Pools, 5, "the NodePool keeps its on-demand offerings")
	// The original is untouched.
	require.True(t, s.UsesSpot())
}

func FuzzSpotAdvisor(f *testing.F) {
	data, err := catalogFS.ReadFile(spotAdvisorFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:bytes.LastIndexByte(data[:2048], '\n')+1])
	f.Add([]byte("Region,InstanceType,InterruptionBand\nr,t,>20%\nr,,<5%\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		adv, err := ReadSpotAdvisor("fuzz.csv", bytes.NewReader(data))
		requireInputError(t, err)
		if err == nil && adv == nil {
			t.Fatal("no advisor and no error")
		}
	})
}

func FuzzInterruptionTimes(f *testing.F) {
	f.Add([]byte("time\n0\n3600.5\n7200\n"))
	f.Add([]byte("time,node\n10,a\n5,b\n"))
	f.Add([]byte("when\n1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadInterruptionTimes("fuzz.csv", bytes.NewReader(data))
		requireInputError(t, err)
		for i := 1; i < len(ts); i++ {
			if ts[i] < ts[i-1] || ts[i] < 0 {
				t.Fatalf("times out of order: %v", ts)
			}
		}
	})
}

func TestSpotAdvisorData(t *testing.T) {
	adv, err := DefaultSpotAdvisor()
	require.NoError(t, err)
	require.Equal(t, 822, adv.Len())
	a, ok := adv.Lookup("us-east-1", "p5.48xlarge")
	require.True(t, ok)
	require.Equal(t, models.SpotAdvice{Band: ">20%", Savings: 52, SavingsKnown: true}, a)
	ts, err := ReadInterruptionTimes("t.csv", strings.NewReader("time\n90\n3600.5\n"))
	require.NoError(t, err)
	require.Equal(t, []cluster.Time{90000, 3600500}, ts)
	_, err = ReadInterruptionTimes("t.csv", strings.NewReader("time\n90\n30\n"))
	require.ErrorContains(t, err, "t.csv:3:1: time: is before the previous row's")
}

func FuzzProfile(f *testing.F) {
	f.Add([]byte("apiVersion: gpuplan.dev/v1alpha1\nkind: CalibrationProfile\nfabrics:\n- {name: nvlink, kind: nvlink, collective: all_reduce, ranks: 8, nodes: 1, alpha_us: 20, busbw_gbps: 230, peak_busbw_gbps: 232}\n"))
	f.Add([]byte("kind: CalibrationProfile\nfabrics: [{name: x, kind: wifi}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile("fuzz.yaml", data)
		requireInputError(t, err)
		if err == nil {
			for _, fb := range p.Fabrics {
				if !(fb.BusBWGBps > 0) {
					t.Fatalf("accepted fabric %+v", fb)
				}
			}
		}
	})
}
