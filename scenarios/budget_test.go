package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// The work budget: settings whose cost grows without bound are refused
// before the run, naming the field and what fits. The figures in the
// messages are worked out by hand in the comments.

const budgetBase = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: budget}
spec:
  horizon: 168h
  cluster:
    pools:
    - name: a
      count: 8
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1024Gi
  workload:
    synthetic:
      classes:
      - name: c
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: 1h
`

const budgetService = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: budget}
spec:
  horizon: 24h
  cluster:
    pools:
    - name: a
      count: 4
      gpuModel: A10G
      gpusPerNode: 1
      cpu: "8"
      memory: 32Gi
  workload:
    services:
    - name: s
      pod: {cpu: "1", memory: 1Gi, gpus: 1}
      replicas: {min: 2}
      load: {constant: 10}
`

func budgetScenario(t *testing.T, body string, files map[string]string) *Scenario {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	p := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	s, err := LoadFile(p)
	require.NoError(t, err)
	return s
}

func edit(t *testing.T, body, from, to string) string {
	t.Helper()
	out := strings.Replace(body, from, to, 1)
	require.NotEqual(t, body, out, "%q not found", from)
	return out
}

func TestBudgetRefusesBeforeTheRun(t *testing.T) {
	var spikes strings.Builder
	spikes.WriteString("      load:\n        constant: 10\n        spikes:\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&spikes, "        - {start: %ds, length: 1s, multiplier: 2}\n", 2*i)
	}
	var rows strings.Builder
	rows.WriteString("time,requests_per_second\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&rows, "%d,%d\n", 60*i, 1+50*(i%2))
	}
	for _, c := range []struct {
		name, body string
		files      map[string]string
		want       string
	}{
		// The rest of the base scenario: 168 timeline buckets (1h) and 168
		// fixed arrivals x 2 events = 504. Failures: 8 nodes x 168h
		// (604,800,000 ms) / 1 ms = 4.8384e9; the MTBF that fits is
		// 8 x 604,800,000 / (25,000,000 - 504) = 193.54 ms, 194ms.
		{"failures", edit(t, budgetBase, "      memory: 1024Gi\n", "      memory: 1024Gi\n      failures: {mtbf: 1ms}\n"), nil,
			":14:24: spec.cluster.pools[0].failures.mtbf: a failure MTBF of 1ms on 8 nodes over the 168h0m0s horizon (failures) makes about 4.8e+09 events, over the budget of 25000000 (--max-events) with the 5e+02 the rest of the scenario makes; an MTBF of at least 194ms fits"},
		// Without a horizon, 1,000 jobs at 1 an hour take 1,000 h to
		// submit: 8 x 3.6e9 failures at least; 2,000 job events besides.
		// 8 x 3.6e9 / 24,998,000 = 1,152.1 ms: 2s fits.
		{"failures-no-horizon", edit(t, edit(t, edit(t, budgetBase, "  horizon: 168h\n", ""), "    synthetic:\n", "    synthetic:\n      jobs: 1000\n"), "      memory: 1024Gi\n", "      memory: 1024Gi\n      failures: {mtbf: 1ms}\n"), nil,
			":13:24: spec.cluster.pools[0].failures.mtbf: a failure MTBF of 1ms on 8 nodes over the 1000h0m0s the arrivals take to submit the 1000 jobs of spec.workload.synthetic.jobs (no horizon) (failures) makes about 2.9e+10 events, over the budget of 25000000 (--max-events) with the 2e+03 the rest of the scenario makes; an MTBF of at least 2s fits"},
		// The same count of spot interruptions (3.6e6 per node-hour);
		// 24,999,496 / (8 x 168) = 18,600.8 per node-hour fits.
		{"interruptions", edit(t, budgetBase, "      memory: 1024Gi\n", "      memory: 1024Gi\n      capacityType: spot\n      interruptions: {mtbf: 1ms}\n"), nil,
			":15:29: spec.cluster.pools[0].interruptions.mtbf: a spot interruption MTBF of 1ms on 8 nodes over the 168h0m0s horizon (interruptions) makes about 4.8e+09 events, over the budget of 25000000 (--max-events) with the 5e+02 the rest of the scenario makes; an MTBF of at least 194ms (1.86e+04 per node-hour) fits"},
		// 24h / 1ms = 86,400,000 KPA ticks; 24 buckets besides; a tick of
		// 86,400,000 / 24,999,976 = 3.46 ms, 4ms, fits.
		{"kpa-tick", edit(t, budgetService, "      replicas: {min: 2}\n      load: {constant: 10}\n", "      replicas: {min: 1, max: 4}\n      load: {constant: 10}\n      autoscaler:\n        kpa: {target: 1, tickInterval: 1ms}\n"), nil,
			":21:40: spec.workload.services[0].autoscaler.kpa.tickInterval: a KPA tickInterval of 1ms over the 24h0m0s horizon (scaler periods of service s) makes about 8.6e+07 events, over the budget of 25000000 (--max-events) with the 24 the rest of the scenario makes; a period of at least 4ms fits"},
		// A century (876,000 h) of fixed replicas, looked at every minute:
		// 52,560,000 periods and 876,000 buckets; (25,000,000 - 876,000) x
		// 1 min = 402,066.67 h fits.
		{"service-century", edit(t, budgetService, "horizon: 24h", "horizon: 876000h"), nil,
			":5:12: spec.horizon: fixed replicas' period of 1m0s over the 876000h0m0s horizon (scaler periods of service s) makes about 5.3e+07 events, over the budget of 25000000 (--max-events) with the 8.8e+05 the rest of the scenario makes; a horizon of at most 402066h40m0s fits"},
		// 5,000 spikes, each looked at on each of the 10,000 spike edges
		// and 1,440 periods: 5.72e7. x spikes fit when 2x^2 + 1440x <=
		// 25,000,000 - 1,464: x = 3193.7.
		{"spikes", edit(t, budgetService, "      load: {constant: 10}\n", spikes.String()), nil,
			":22:9: spec.workload.services[0].load.spikes: 5000 spikes, each looked at on every change of the rate and every sample of service s makes about 5.7e+07 events, over the budget of 25000000 (--max-events) with the 1.5e+03 the rest of the scenario makes; at most 3193 spikes fits"},
		// A rate file over a year is sampled every second: 31,536,000
		// samples and 1,000 rows; besides them 525,600 periods and 8,760
		// buckets. (25,000,000 - 534,360 - 1,000) s = 6,795.73 h fits.
		{"rate-file-year", edit(t, edit(t, budgetService, "horizon: 24h", "horizon: 8760h"), "load: {constant: 10}", "load: {csv: {path: rates.csv}}"), map[string]string{"rates.csv": rows.String()},
			":19:26: spec.workload.services[0].load.csv.path: a rate file of 1000 rows sampled every second over the 8760h0m0s horizon makes about 3.2e+07 events, over the budget of 25000000 (--max-events) with the 5.3e+05 the rest of the scenario makes; a horizon of at most 6795h44m0s fits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := budgetScenario(t, c.body, c.files)
			start := time.Now()
			_, err := s.Build(Options{})
			require.Error(t, err)
			require.Equal(t, s.file+c.want, err.Error())
			require.Less(t, time.Since(start), 5*time.Second)
			// A budget that holds it lets it build.
			b, err := s.Build(Options{MaxEvents: 1 << 40})
			require.NoError(t, err)
			b.Close()
		})
	}
}

// A century of the built-in default's arrivals: 0.35 + 4 + 15 jobs an
// hour (the diurnal class's mean over whole days is its rate) x 876,000 h
// = 16,950,600 jobs, 33,901,200 events; besides them 876,000 buckets. A
// horizon of 876,000 h x 24,124,000 / 33,901,200 = 623,359.17 h fits, or
// a jobs limit of 24,124,000 / 2.
func TestBudgetRefusesACenturyOfTheDefault(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	h := 876000 * time.Hour
	_, err = s.Build(Options{Horizon: &h})
	require.EqualError(t, err, "<built-in default scenario>:69:24: spec.workload.synthetic.classes[2].arrival.ratePerHour: poisson arrivals at 15 per hour (with the other classes', about 1.7e+07 jobs) over the 876000h0m0s horizon (--horizon) makes about 3.4e+07 events, over the budget of 25000000 (--max-events) with the 8.8e+05 the rest of the scenario makes; a horizon of at most 623359h10m23s, a lower rate or a jobs limit of at most 12062000 fits")
}

// The default scenario over its 72 h: (0.35 + 4 + 15) x 72 = 1,393.2 jobs,
// 2,786.4 events, and 72 buckets: 2,858.4 in all. A budget of 2,859 holds
// it, one of 2,858 does not; the run itself makes 2,780 events.
func TestBudgetFlagMovesTheLine(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	b, err := s.Build(Options{MaxEvents: 2859})
	require.NoError(t, err)
	require.InDelta(t, 2858.4, totalEstimate(s, b), 1e-6)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	require.EqualValues(t, 2780, res.Stats.Events)
	b.Close()
	_, err = s.Build(Options{MaxEvents: 2858})
	require.ErrorContains(t, err, "spec.workload.synthetic.classes[2].arrival.ratePerHour: poisson arrivals at 15 per hour (with the other classes', about 1.4e+03 jobs) over the 72h0m0s horizon makes about 2.8e+03 events, over the budget of 2858 (--max-events) with the 72 the rest of the scenario makes")
	_, err = s.Build(Options{MaxEvents: -1})
	require.EqualError(t, err, "--max-events: -1: want a positive number of events")
}

func totalEstimate(s *Scenario, b *Built) float64 {
	n := 0.0
	for _, t := range (builder{s}).budgetTerms(b, "") {
		n += t.events
	}
	return n
}

// Every shipped example scenario, and each of its variants, is estimated
// at a twentieth of the default budget or less (the most, about 780,000,
// is kserve-flash-sale's: 259,200 rate samples and 129,600 KPA ticks over
// 72 h, and its spike looked at on each).
func TestBudgetHoldsEveryShippedExample(t *testing.T) {
	files, err := filepath.Glob("examples/*.yaml")
	require.NoError(t, err)
	more, err := filepath.Glob("examples/*/scenario.yaml")
	require.NoError(t, err)
	files = append(files, more...)
	more, err = filepath.Glob("examples/*/*/scenario.yaml")
	require.NoError(t, err)
	files = append(files, more...)
	files = append(files, "examples/validate/baseline.yaml", "examples/validate/candidate.yaml")
	require.GreaterOrEqual(t, len(files), 14)
	for _, f := range files {
		s, err := LoadFile(f)
		require.NoError(t, err, f)
		runs := []*Scenario{s}
		for _, v := range s.VariantNames() {
			vs, err := s.Variant(v)
			require.NoError(t, err, f)
			runs = append(runs, vs)
		}
		for _, r := range runs {
			b, err := r.Build(Options{})
			require.NoError(t, err, f)
			n := totalEstimate(r, b)
			b.Close()
			require.Less(t, n, float64(DefaultMaxEvents)/20, f)
			t.Logf("%s: about %.0f events", f, n)
		}
	}
}

// --horizon 0 runs until the workload drains: manifests submitted by a
// rate or a schedule never do, and are refused at once; a finite trace
// still runs without a horizon.
func TestHorizonZeroRefusesManifestsThatNeverDrain(t *testing.T) {
	s, err := LoadFile("examples/manifests/scenario.yaml")
	require.NoError(t, err)
	zero := time.Duration(0)
	start := time.Now()
	_, err = s.Build(Options{Horizon: &zero})
	require.EqualError(t, err, "--horizon: 0 runs until the workload drains, and spec.workload.manifests[0] (workloads/train-pytorchjob.yaml) submits by a rate without a count, so it never does: give a horizon (or a count)")
	require.Less(t, time.Since(start), 5*time.Second)

	s, err = LoadFile("examples/openb-replay.yaml")
	require.NoError(t, err)
	b, err := s.Build(Options{Horizon: &zero})
	require.NoError(t, err)
	require.Zero(t, b.Config.Horizon)
	b.Close()
}

// cohortChain is a ClusterQueue in Cohort c0 under a chain of Cohorts
// c0 -> c1 -> ... -> c(n-1), the root: n levels.
func cohortChain(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n")
	b.WriteString("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  cohortName: c0\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 4}\n---\n")
	b.WriteString("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: train}\nspec: {clusterQueue: q}\n")
	for i := 0; i < n; i++ {
		parent := ""
		if i < n-1 {
			parent = fmt.Sprintf("parentName: c%d", i+1)
		}
		fmt.Fprintf(&b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c%d}\nspec: {%s}\n", i, parent)
	}
	return []byte(b.String())
}

// A tree of Cohorts is at most MaxCohortDepth (64) levels deep: 64 are
// read, 65 refused at the Cohort at the bottom, as a chain of 1,000 is.
func TestCohortTreeDepthBounded(t *testing.T) {
	_, err := ParsePolicy("k.yaml", cohortChain(64))
	require.NoError(t, err)
	_, err = ParsePolicy("k.yaml", cohortChain(65))
	require.EqualError(t, err, `k.yaml:22: Cohort c0: Cohort "c0" is 65 levels deep (its chain of parents goes up through "c1" to "c64"); gpuplan models trees of Cohorts at most 64 levels deep`)
	_, err = ParsePolicy("k.yaml", cohortChain(1000))
	require.ErrorContains(t, err, `Cohort "c0" is 1000 levels deep`)
	// A cycle is still found where it starts.
	cyc := strings.Replace(string(cohortChain(3)), "metadata: {name: c2}\nspec: {}", "metadata: {name: c2}\nspec: {parentName: c1}", 1)
	_, err = ParsePolicy("k.yaml", []byte(cyc))
	require.ErrorContains(t, err, "Cohort c0: Cohort c0 is in a cycle of parents")
}
