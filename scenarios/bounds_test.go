package scenarios

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bad scenario input of issue 13: every error is an *InputError naming
// the file, line, column and field, quoting little of the input, found
// before anything is allocated for it.

// loadBad writes minimal with from replaced by to and loads it (building
// it when it loads), returning the error and the file's path.
func loadBad(t *testing.T, from, to string) (error, string) {
	t.Helper()
	body := strings.Replace(minimal, from, to, 1)
	require.NotEqual(t, minimal, body, "replacement %q not in the scenario", from)
	p := writeFile(t, "bad.yaml", body)
	s, err := LoadFile(p)
	if err == nil {
		var b *Built
		if b, err = s.Build(Options{}); err == nil {
			b.Close()
		}
	}
	return err, p
}

func requireInputErrorText(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%T %v", err, err)
	require.Equal(t, want, err.Error())
	require.Less(t, len(err.Error()), 600, "the error quotes too much")
}

// allocatedBy is how many bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const (
	podLine  = "        pod: {cpu: \"8\", memory: 64Gi, gpus: 4}"
	poolCPU  = "      cpu: \"96\""
	poolMem  = "      memory: 1152Gi"
	arrival  = "        arrival: {process: fixed, ratePerHour: 2}"
	duration = "        duration: 30m"
	classes  = "    synthetic:\n      classes:"
	horizon  = "  horizon: 2h"
)

func TestBoundsQuantities(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		// Reproduction 1: no longer cpu 0, and no longer without a line.
		{podLine, `        pod: {cpu: "1e9999", memory: 64Gi, gpus: 4}`,
			`:21:20: spec.workload.synthetic.classes[0].pod.cpu: cpu "1e9999" is not a finite quantity`},
		{podLine, `        pod: {cpu: 8Ei, memory: 64Gi, gpus: 4}`,
			`:21:20: spec.workload.synthetic.classes[0].pod.cpu: cpu "8Ei" is more than any node holds (at most 4096 cores)`},
		{podLine, `        pod: {cpu: "-1", memory: 64Gi, gpus: 4}`,
			`:21:20: spec.workload.synthetic.classes[0].pod.cpu: cpu "-1" is negative`},
		{podLine, `        pod: {cpu: "8", memory: 1e20, gpus: 4}`,
			`:21:33: spec.workload.synthetic.classes[0].pod.memory: memory "1e20" is more than any node holds (at most 64 TiB)`},
		{podLine, `        pod: {cpu: "8", memory: 64Gi, gpus: 4, gpuMemory: 8Ei}`,
			`:21:59: spec.workload.synthetic.classes[0].pod.gpuMemory: gpuMemory "8Ei" is more than any node holds (at most 64 TiB)`},
		{poolCPU, `      cpu: "1e9999"`, `:13:12: spec.cluster.pools[0].cpu: cpu "1e9999" is not a finite quantity`},
		{poolMem, `      memory: -1Gi`, `:14:15: spec.cluster.pools[0].memory: memory "-1Gi" is negative`},
		{poolMem, "      memory: 1152Gi\n      gpuMemory: 9Ei", `:15:18: spec.cluster.pools[0].gpuMemory: gpuMemory "9Ei" is more than any node holds (at most 64 TiB)`},
	} {
		err, p := loadBad(t, c.from, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
}

func TestBoundsCounts(t *testing.T) {
	twoPools := "    - name: gpu\n      count: 600000\n      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"\n      memory: 1152Gi\n" +
		"    - name: gpu2\n      count: 600000\n      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"\n      memory: 1152Gi"
	for _, c := range []struct{ from, to, want string }{
		// Reproduction 2: refused at load, before anything is allocated.
		{classes, "    synthetic:\n      jobs: 1000000000000\n      classes:",
			`:17:13: spec.workload.synthetic.jobs: 1000000000000 jobs is more than 20000000, the most one run holds`},
		{classes, "    synthetic:\n      jobs: 50000000\n      classes:",
			`:17:13: spec.workload.synthetic.jobs: 50000000 jobs is more than 20000000, the most one run holds`},
		{"      count: 2", "      count: 1000000000000",
			`:10:14: spec.cluster.pools[0].count: 1000000000000 nodes is more than 1000000, the most one cluster has`},
		{"      count: 2", "      count: 2\n      autoscaling: {maxNodes: 2000000}",
			`:11:31: spec.cluster.pools[0].autoscaling.maxNodes: 2000000 nodes is more than 1000000, the most one cluster has`},
		{"    - name: gpu\n      count: 2\n      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"\n      memory: 1152Gi", twoPools,
			`:16:14: spec.cluster.pools[1].count: the pools have 1200000 nodes or more at their largest, more than 1000000, the most one cluster has`},
		{"      gpusPerNode: 8", "      gpusPerNode: 65", `:12:20: spec.cluster.pools[0].gpusPerNode: must be between 0 and 64`},
		{"        replicas: 2", "        replicas: 1000000000",
			`:20:19: spec.workload.synthetic.classes[0].replicas: 1e+09 pods is more than 100000, the most one job has`},
		{podLine, `        pod: {cpu: "8", memory: 64Gi, gpus: 65}`,
			`:21:45: spec.workload.synthetic.classes[0].pod.gpus: 65 GPUs is more than a node can have (64)`},
		{podLine, `        pod: {cpu: "8", memory: 64Gi, gpus: {min: 1, max: 1000}}`,
			`:21:45: spec.workload.synthetic.classes[0].pod.gpus: 1000 GPUs is more than a node can have (64)`},
	} {
		err, p := loadBad(t, c.from, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
}

func TestBoundsTimelineAndArrivals(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		// Reproduction 3: the interval that fits is named.
		{horizon, "  horizon: 720h\n  output: {timelineInterval: 1ms}",
			`:7:30: spec.output.timelineInterval: an interval of 1ms over the 720h0m0s horizon makes 2592000000 timeline intervals, more than 1000000; use a timelineInterval of at least 3s`},
		{horizon, "  horizon: 2h\n  output: {timelineInterval: 7ms}",
			`:7:30: spec.output.timelineInterval: an interval of 7ms over the 2h0m0s horizon makes 1028572 timeline intervals, more than 1000000; use a timelineInterval of at least 8ms`},
		// Reproduction 4: the expected count for each arrival process.
		{arrival, "        arrival: {process: fixed, ratePerHour: 1e12}",
			`:19:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: fixed arrivals at 1e+12 per hour over the 2h0m0s horizon would submit about 2e+12 jobs (all classes: 2e+12), more than 20000000, the most one run holds; lower the rate, shorten the horizon or cap spec.workload.synthetic.jobs`},
		{arrival, "        arrival: {process: poisson, ratePerHour: 1.5e7}",
			`:19:50: spec.workload.synthetic.classes[0].arrival.ratePerHour: poisson arrivals at 1.5e+07 per hour over the 2h0m0s horizon would submit about 3e+07 jobs (all classes: 3e+07), more than 20000000, the most one run holds; lower the rate, shorten the horizon or cap spec.workload.synthetic.jobs`},
		// Diurnal: 2 h at 9e6/h peaking at the start is 9e6 x (2 h + 0.9 x
		// 24 h/(2 pi) x sin(2 pi 2/24)) = 9e6 x 3.72 = 3.35e7.
		{arrival, "        arrival: {process: poisson, ratePerHour: 9e6, diurnal: {amplitude: 0.9, peakHour: 0}}",
			`:19:50: spec.workload.synthetic.classes[0].arrival.ratePerHour: poisson arrivals at 9e+06 per hour over the 2h0m0s horizon would submit about 3.35e+07 jobs (all classes: 3.35e+07), more than 20000000, the most one run holds; lower the rate, shorten the horizon or cap spec.workload.synthetic.jobs`},
	} {
		err, p := loadBad(t, c.from, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
	// The same diurnal rate peaking 12 hours later stays under the bound,
	// and a jobs limit lets any rate through.
	for _, ok := range []string{
		"        arrival: {process: poisson, ratePerHour: 9e6, diurnal: {amplitude: 0.9, peakHour: 12}}",
		"        arrival: {process: fixed, ratePerHour: 1e12}",
	} {
		body := strings.Replace(minimal, arrival, ok, 1)
		if strings.Contains(ok, "fixed") {
			body = strings.Replace(body, classes, "    synthetic:\n      jobs: 1000\n      classes:", 1)
		}
		_, err := LoadFile(writeFile(t, "ok.yaml", body))
		require.NoError(t, err, ok)
	}
}

// Reproduction 3 and 4 when the horizon comes from the command line.
func TestBoundsAtBuildWithHorizonOverride(t *testing.T) {
	body := strings.Replace(minimal, horizon, "  horizon: 2h\n  output: {timelineInterval: 10ms}", 1)
	p := writeFile(t, "ok.yaml", body)
	s, err := LoadFile(p)
	require.NoError(t, err)
	h := 30 * 24 * time.Hour
	_, err = s.Build(Options{Horizon: &h})
	requireInputErrorText(t, err, p+`:7:30: spec.output.timelineInterval: an interval of 10ms over the 720h0m0s horizon (--horizon) makes 259200000 timeline intervals, more than 1000000; use a timelineInterval of at least 3s`)

	s, err = LoadFile(writeFile(t, "ok.yaml", strings.Replace(minimal, "ratePerHour: 2}", "ratePerHour: 3e4}", 1)))
	require.NoError(t, err)
	_, err = s.Build(Options{Horizon: &h})
	require.ErrorContains(t, err, `:19:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: fixed arrivals at 30000 per hour over the 720h0m0s horizon (--horizon) would submit about 2.16e+07 jobs`)
}

// Reproductions 2, 3 and 4 come back at once, without allocating in
// proportion to the number asked for.
func TestBoundsRefusedWithoutAllocating(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{classes, "    synthetic:\n      jobs: 1000000000000\n      classes:", "spec.workload.synthetic.jobs"},
		{classes, "    synthetic:\n      jobs: 50000000\n      classes:", "spec.workload.synthetic.jobs"},
		{"      count: 2", "      count: 1000000000000", "spec.cluster.pools[0].count"},
		{horizon, "  horizon: 720h\n  output: {timelineInterval: 1ms}", "spec.output.timelineInterval"},
		{horizon + "\n", "  horizon: 720h\n", "spec.workload.synthetic.classes[0].arrival.ratePerHour"},
	} {
		body := strings.Replace(minimal, c.from, c.to, 1)
		if c.want == "spec.workload.synthetic.classes[0].arrival.ratePerHour" {
			body = strings.Replace(body, "ratePerHour: 2}", "ratePerHour: 1e12}", 1)
		}
		p := writeFile(t, "big.yaml", body)
		var err error
		start := time.Now()
		n := allocatedBy(func() {
			var s *Scenario
			if s, err = LoadFile(p); err == nil {
				var b *Built
				if b, err = s.Build(Options{}); err == nil {
					b.Close()
				}
			}
		})
		require.ErrorContains(t, err, c.want)
		require.Less(t, n, uint64(50<<20), "%s: %d bytes allocated", c.want, n)
		require.Less(t, time.Since(start), 10*time.Second)
	}
}

func TestBoundsFilesAndDescriptions(t *testing.T) {
	// Reproduction 5.
	long := strings.Replace(minimal, "  name: tiny", "  name: tiny\n  description: \""+strings.Repeat("x", 200<<10)+"\"", 1)
	p := writeFile(t, "long.yaml", long)
	_, err := LoadFile(p)
	requireInputErrorText(t, err, p+`:5:16: metadata.description: is 204800 bytes; a description, carried into every report, is at most 65536 (64 KiB)`)
	long = strings.Replace(minimal, "  name: tiny", "  name: "+strings.Repeat("n", 300), 1)
	p = writeFile(t, "name.yaml", long)
	_, err = LoadFile(p)
	requireInputErrorText(t, err, p+`:4:9: metadata.name: is 300 bytes; a name is at most 253`)
	dir := t.TempDir()
	_, err = LoadFile(dir)
	require.ErrorContains(t, err, dir+": is not a regular file")
	if _, serr := os.Stat("/dev/zero"); serr == nil {
		_, err = LoadFile("/dev/zero")
		requireInputErrorText(t, err, "/dev/zero: is not a regular file (Dc---------): gpuplan reads files, not devices, pipes or folders")
		_, err = LoadPolicy([]string{"/dev/zero"})
		requireInputErrorText(t, err, "/dev/zero: is not a regular file (Dc---------): gpuplan reads files, not devices, pipes or folders")
	}
}

func TestBoundsDurationDistributions(t *testing.T) {
	for _, c := range []struct{ to, want string }{
		// Reproduction 6: 197 of 200 durations at the clamp.
		{"        duration: {distribution: lognormal, median: 2h, sigma: 1000, max: 36h}",
			`:22:64: spec.workload.synthetic.classes[0].duration.sigma: lognormal with median 2h0m0s and sigma 1000 puts 49% of the durations outside 1 ms to 100 years, what gpuplan represents (49% below 1 ms, each made 1 ms); at most 10% may be`},
		{"        duration: {distribution: lognormal, median: 2h, sigma: 9}",
			`:22:64: spec.workload.synthetic.classes[0].duration.sigma: lognormal with median 2h0m0s and sigma 9 puts 11% of the durations outside 1 ms to 100 years, what gpuplan represents (4.0% below 1 ms, each made 1 ms; 7.4% above 100 years); at most 10% may be`},
		{"        duration: {distribution: exponential, mean: 5ms}",
			`:22:53: spec.workload.synthetic.classes[0].duration.mean: exponential with mean 5ms puts 18% of the durations outside 1 ms to 100 years, what gpuplan represents (18% below 1 ms, each made 1 ms); at most 10% may be`},
		{"        duration: {distribution: pareto, scale: 1m, alpha: 0.05}",
			`:22:60: spec.workload.synthetic.classes[0].duration.alpha: pareto with scale 1m0s and alpha 0.05 puts 41% of the durations outside 1 ms to 100 years, what gpuplan represents (41% above 100 years); at most 10% may be`},
		{"        duration: {distribution: lognormal, median: 2h, sigma: 3, min: 1m, max: 2m}",
			`:22:81: spec.workload.synthetic.classes[0].duration.max: lognormal with median 2h0m0s and sigma 3 would clamp 97% of the durations to min or max (91% to max 2m0s): the distribution would be mostly its clamps`},
		{"        duration: {distribution: lognormal, median: 1h, sigma: 11, min: 1s, max: 1000h}",
			`:22:64: spec.workload.synthetic.classes[0].duration.sigma: sigma 11 is more than 10: one standard deviation would be a factor of more than 22000`},
		{"        duration: 500us",
			`:22:19: spec.workload.synthetic.classes[0].duration: value 500µs is below 1 ms, the shortest duration gpuplan represents`},
	} {
		err, p := loadBad(t, duration, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
	// The default scenario's distributions, heavy-tailed as they are, pass.
	_, err := Default()
	require.NoError(t, err)
}

func TestBoundsNonFiniteAndDurationTypos(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		// Reproduction 7.
		{arrival, "        arrival: {process: fixed, ratePerHour: .inf}",
			`:19:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: ".inf" is not a finite number`},
		{arrival, "        arrival: {process: fixed, ratePerHour: .NaN}",
			`:19:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: ".NaN" is not a finite number`},
		{"        replicas: 2", "        replicas: {values: [1, 2], weights: [.nan, 1]}",
			`:20:46: spec.workload.synthetic.classes[0].replicas.weights[0]: ".nan" is not a finite number`},
		{"        replicas: 2", "        replicas: -.inf",
			`:20:19: spec.workload.synthetic.classes[0].replicas: "-.inf" is not a finite number`},
		{"      memory: 1152Gi", "      memory: 1152Gi\n      pricePerHour: -.Inf",
			`:15:21: spec.cluster.pools[0].pricePerHour: "-.Inf" is not a finite number`},
		{arrival, "        arrival: {process: fixed, ratePerHour: 1e400}",
			`:19:48: spec.workload.synthetic.classes[0].arrival.ratePerHour: "1e400" is out of range`},
		// Reproduction 9: the whole value, quoted, at its place.
		{horizon, "  horizon: 7days", `:6:12: spec.horizon: "7days" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{duration, "        duration: 30min",
			`:22:19: spec.workload.synthetic.classes[0].duration: "30min" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{duration, "        duration: 30m\n        recovery: {checkpoint: {interval: 30min}}",
			`:23:43: spec.workload.synthetic.classes[0].recovery.checkpoint.interval: "30min" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{duration, "        duration: {distribution: lognormal, median: 2hours, sigma: 1}",
			`:22:53: spec.workload.synthetic.classes[0].duration.median: "2hours" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)`},
		{horizon, "  horizon: 30", `:6:12: spec.horizon: expected a duration such as "30m", "6h" or "3d", got "30"`},
		{horizon, "  horizon: 500us", `:6:12: spec.horizon: 500µs is below 1 ms, the shortest duration gpuplan represents`},
	} {
		err, p := loadBad(t, c.from, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
}

func TestParseDurationWhole(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3d": 72 * time.Hour, "1d12h": 36 * time.Hour, "0.5d": 12 * time.Hour, "1.5d30m": 36*time.Hour + 30*time.Minute,
		"-1d2h": -26 * time.Hour, "+2h": 2 * time.Hour, "0": 0, "90s": 90 * time.Second,
	} {
		d, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, d, in)
	}
	for _, in := range []string{"7days", "30min", "3d-1h", "1e400d", "NaNd", "Infd", "d", "1dd", "100000000d", "", "-", "2d+3h"} {
		_, err := ParseDuration(in)
		require.EqualError(t, err, Quote(in)+" is not a duration (examples: 90s, 30m, 6h, 3d, 1d12h)", in)
	}
	_, err := ParseDuration(strings.Repeat("9", 1000) + "x")
	require.ErrorContains(t, err, `"9999999999`)
	require.Less(t, len(err.Error()), 200)
}

const boundsKueue = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
      - {name: cpu, nominalQuota: 64}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: train}
spec: {clusterQueue: q}
`

const boundsConfig = `---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 10m
`

const boundsVolcano = `apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: train
  annotations: {volcano.sh/hierarchy: root/eng/train, volcano.sh/hierarchy-weights: 1/2/3}
spec:
  weight: 2
  capability: {nvidia.com/gpu: 8, cpu: 64}
`

// Reproduction 8: policy manifests name their lines.
func TestBoundsPolicy(t *testing.T) {
	_, err := ParsePolicy("p.yaml", []byte(boundsKueue+boundsConfig))
	require.NoError(t, err)
	_, err = ParsePolicy("v.yaml", []byte(boundsVolcano))
	require.NoError(t, err)
	dupCQ := boundsKueue + "---\n" + boundsKueue[strings.Index(boundsKueue, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue"):strings.Index(boundsKueue, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue")]
	for _, c := range []struct{ base, from, to, want string }{
		{boundsKueue, "nominalQuota: 4}", "nominalQuota: -4}",
			`p.yaml:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: nvidia.com/gpu: "-4" is negative`},
		{boundsKueue, "nominalQuota: 4}", "nominalQuota: .inf}",
			`p.yaml:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: ".inf" is not a finite number`},
		{boundsKueue, "nominalQuota: 4}", "nominalQuota: 8Ei}",
			`p.yaml:15:46: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: nvidia.com/gpu: "8Ei" is more than 1125899906842624, the most gpuplan counts of nvidia.com/gpu`},
		{boundsKueue, "nominalQuota: 64}", "nominalQuota: 1e16}",
			`p.yaml:16:35: spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: cpu: "1e16" is more CPU than 1000000 nodes of 4096 cores hold`},
		{boundsKueue, "nominalQuota: 4}", "nominalQuota: 4, lendingLimit: 5}",
			`p.yaml:15:63: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: nvidia.com/gpu: lendingLimit 5 is more than nominalQuota 4`},
		{boundsKueue, "nominalQuota: 4}", "nominalQuota: 4, borrowingLimit: 2}",
			`p.yaml:15:65: spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: borrowingLimit and lendingLimit need a cohort (spec.cohortName)`},
		{dupCQ, "", "", `p.yaml:25:18: metadata.name: ClusterQueue "q" is defined twice (first at p.yaml:5)`},
		{boundsKueue, "clusterQueue: q}", "clusterQueue: nope}",
			`p.yaml:21:22: spec.clusterQueue: LocalQueue train points at ClusterQueue "nope", which no ClusterQueue of the policy defines (ClusterQueues: q)`},
		{boundsKueue, "    - name: f\n", "    - name: g\n",
			`p.yaml:13:13: spec.resourceGroups[0].flavors[0].name: flavor "g", which no ResourceFlavor defines (ResourceFlavors: f)`},
		// Refused at its own line, not skipped to blame the LocalQueue.
		{boundsKueue, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue", "apiVersion: kueue.x-k8s.io/v1\nkind: ClusterQueue",
			`p.yaml:5:13: apiVersion: "kueue.x-k8s.io/v1" is not an apiVersion gpuplan reads for a ClusterQueue (it reads kueue.x-k8s.io/v1beta1, kueue.x-k8s.io/v1beta2)`},
		{boundsKueue + boundsConfig, "timeout: 10m", "timeout: -5m",
			`p.yaml:26:12: waitForPodsReady.timeout: -5m0s is negative; Kueue's timeout is a positive duration (default 5m)`},
		{boundsKueue + boundsConfig, "timeout: 10m", "timeout: 5min",
			`p.yaml:26:12: waitForPodsReady.timeout: Configuration: time: unknown unit "min" in duration "5min"`},
		{boundsVolcano, "weight: 2", "weight: -1",
			`v.yaml:7:11: spec.weight: is -1; a Volcano Queue's weight is a positive integer (leave it out for the default, 1)`},
		{boundsVolcano, "weight: 2", "weight: 0",
			`v.yaml:7:11: spec.weight: is 0; a Volcano Queue's weight is a positive integer (leave it out for the default, 1)`},
		{boundsVolcano, "nvidia.com/gpu: 8", "nvidia.com/gpu: -8",
			`v.yaml:8:32: spec.capability["nvidia.com/gpu"]: nvidia.com/gpu: "-8" is negative`},
		{boundsVolcano, "hierarchy-weights: 1/2/3", "hierarchy-weights: 1/0/3",
			`v.yaml:5:85: metadata.annotations["volcano.sh/hierarchy-weights"]: "1/0/3": each weight is a whole number from 1 to 2147483647, got "0"`},
	} {
		body := strings.Replace(c.base, c.from, c.to, 1)
		file := "p.yaml"
		if c.base == boundsVolcano {
			file = "v.yaml"
		}
		_, err := ParsePolicy(file, []byte(body))
		requireInputErrorText(t, err, c.want)
	}
	// Left out, a Volcano weight is 1.
	p, err := ParsePolicy("v.yaml", []byte(strings.Replace(boundsVolcano, "  weight: 2\n", "", 1)))
	require.NoError(t, err)
	require.Equal(t, int32(0), p.Volcano[0].Spec.Weight)
}
