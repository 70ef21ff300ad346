package pipeline

// Metamorphic tests: relations between two runs that must hold whatever
// the right answer of either run is, so they need no oracle.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
)

func scenarioText(t *testing.T, text string) *scenarios.Scenario {
	t.Helper()
	file := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	return load(t, file)
}

func runText(t *testing.T, text string, seed uint64) *Outcome {
	t.Helper()
	out, err := Scenario(scenarioText(t, text), Options{Build: scenarios.Options{Seed: &seed}})
	require.NoError(t, err)
	return out
}

const fifoCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: fifo}
spec:
  horizon: 48h
  cluster:
    pools:
    - {name: a100, count: %d, gpuModel: A100, gpusPerNode: 8, cpu: "96", memory: 1152Gi}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 3}
        replicas: {values: [1, 2], weights: [0.7, 0.3]}
        pod: {gpus: {values: [1, 2, 4, 8]}, cpu: "8", memory: 64Gi}
        duration: {distribution: lognormal, median: 3h, sigma: 0.8, max: 24h}
  queueing: {policy: FIFO, backfill: false}
`

// Doubling every pool's node count never raises the mean wait of a FIFO
// queue without preemption: each job starts no later than it did.
func TestDoublingNodesNeverRaisesFIFOWait(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		for _, n := range []int{2, 3, 4} {
			one := runText(t, fmt.Sprintf(fifoCluster, n), seed)
			two := runText(t, fmt.Sprintf(fifoCluster, 2*n), seed)
			require.Equal(t, len(one.Main.Result.Jobs), len(two.Main.Result.Jobs))
			w1, w2 := censoredMeanWait(one.Main.Result), censoredMeanWait(two.Main.Result)
			require.LessOrEqual(t, w2, w1, "seed %d: %d nodes wait %.0fs on average, %d nodes %.0fs", seed, n, w1, 2*n, w2)
			for i, j := range one.Main.Result.Jobs {
				k := two.Main.Result.Jobs[i]
				require.Equal(t, j.Submit, k.Submit)
				if j.Start >= 0 {
					require.True(t, k.Start >= 0 && k.Start <= j.Start, "seed %d: %s starts at %d on %d nodes, %d on %d", seed, j.Name, j.Start, n, k.Start, 2*n)
				}
			}
		}
	}
}

// censoredMeanWait is the mean wait of every job, a job that never
// started counted as waiting until the end of the run. The mean over the
// started jobs alone is no such measure: more nodes start more of the
// long-waiting jobs, and their waits raise it.
func censoredMeanWait(res *sim.Result) float64 {
	var sum float64
	for _, j := range res.Jobs {
		start := j.Start
		if start < 0 {
			start = res.End
		}
		sum += float64(start - j.Submit)
	}
	return sum / float64(len(res.Jobs)) / 1000
}

const pricedCluster = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: priced}
spec:
  horizon: 72h
  pricing:
    cpuMemoryRates: {cpu: %[3]g, memory: %[4]g}
  cluster:
    pools:
    - {name: od, count: 2, gpuModel: A100, gpusPerNode: 8, cpu: "96", memory: 1152Gi, pricePerHour: %[1]g}
    - name: spot
      count: 2
      gpuModel: A100
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      capacityType: spot
      pricePerHour: %[2]g
      onDemandPricePerHour: %[1]g
      interruptions: {mtbf: 12h}
  workload:
    synthetic:
      classes:
      - name: train
        queue: research
        arrival: {process: poisson, ratePerHour: 2}
        replicas: {values: [1, 2]}
        pod: {gpus: 8, cpu: "90", memory: 1000Gi}
        duration: {distribution: lognormal, median: 4h, sigma: 0.6, max: 24h}
        recovery: {checkpoint: {interval: 30m, cost: 2m}}
      - name: dev
        queue: dev
        arrival: {process: poisson, ratePerHour: 6}
        pod: {gpus: 1, cpu: "8", memory: 64Gi}
        duration: {distribution: lognormal, median: 40m, sigma: 0.7, max: 8h}
`

// moneyKeys are the JSON keys of the summary that hold dollars (or
// dollars per hour); every other number is a count, an amount of time or
// a ratio.
var moneyKeys = map[string]bool{
	"total": true, "allocated": true, "idle": true, "idleGPU": true, "costPerUsefulGPUHour": true,
	"lostCost": true, "checkpointCost": true, "pricePerHour": true, "cost": true, "idleCost": true, "savings": true,
	"nodePricePerHour": true, "perGPUHour": true, "idleShare": true, "spot": true, "onDemand": true, "budget": true,
	"onDemandPricePerHour": true, "delta": true,
}

// scaled checks b against a: money scaled by k to the cent, everything
// else equal.
func scaled(t *testing.T, path string, a, b any, k float64) {
	t.Helper()
	switch av := a.(type) {
	case map[string]any:
		bv := b.(map[string]any)
		require.Equal(t, len(av), len(bv), path)
		for key, x := range av {
			y, ok := bv[key]
			require.True(t, ok, "%s.%s missing", path, key)
			if key == "model" {
				continue // words, quoting the CPU and memory rates
			}
			if f, isNum := x.(float64); isNum && moneyKeys[key] {
				// Each figure is rounded (to 1/10,000 of a dollar, the
				// showback to the cent) before and after scaling.
				require.InDelta(t, k*f, y.(float64), 0.005*(1+k)+1e-9*math.Abs(k*f), "%s.%s: $%.4f x %g", path, key, f, k)
				continue
			}
			scaled(t, path+"."+key, x, y, k)
		}
	case []any:
		bv := b.([]any)
		require.Equal(t, len(av), len(bv), path)
		for i := range av {
			scaled(t, fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], k)
		}
	default:
		require.Equal(t, a, b, path)
	}
}

func costJSON(t *testing.T, o *Outcome) any {
	t.Helper()
	s := o.Main.Summary
	b, err := json.Marshal(map[string]any{"cost": s.Cost, "spot": s.SpotVsOnDemand})
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// Scaling every price by k (the nodes' and the CPU and memory rates that
// split them) scales every cost in the report by k, to the cent, and
// changes nothing else (the simulation never looks at prices here: no
// Karpenter price choice).
func TestScalingPricesScalesEveryCost(t *testing.T) {
	base := runText(t, fmt.Sprintf(pricedCluster, 32.77, 11.34, 0.037, 0.0036), 4)
	require.NotNil(t, base.Main.Summary.Cost)
	require.NotNil(t, base.Main.Summary.SpotVsOnDemand)
	require.Greater(t, base.Main.Summary.Cost.Total, 1000.0)
	for _, k := range []float64{3, 0.25, 7.5} {
		run := runText(t, fmt.Sprintf(pricedCluster, 32.77*k, 11.34*k, 0.037*k, 0.0036*k), 4)
		scaled(t, "summary", costJSON(t, base), costJSON(t, run), k)
	}
}

type jobKey struct {
	name             string
	submit, duration sim.Time
	start, end       sim.Time
	replicas         int32
	outcome          string
}

func jobsOf(res *sim.Result, class string) []jobKey {
	var out []jobKey
	for _, j := range res.Jobs {
		if strings.HasPrefix(j.Name, class+"-") {
			out = append(out, jobKey{j.Name, j.Submit, j.Duration, j.Start, j.End, j.Replicas, j.Outcome.String()})
		}
	}
	return out
}

const twoClasses = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: classes}
spec:
  horizon: 48h
  cluster:
    pools:
    - {name: a100, count: 3, gpuModel: A100, gpusPerNode: 8, cpu: "96", memory: 1152Gi, labels: {team: a}}
    - {name: l4, count: 4, gpuModel: L4, gpusPerNode: 4, cpu: "48", memory: 192Gi, labels: {team: b}}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 2}
        pod: {gpus: {values: [2, 4, 8]}, cpu: "16", memory: 128Gi}
        duration: {distribution: lognormal, median: 3h, sigma: 0.8, max: 24h}
        nodeSelector: {team: a}
%s  queueing: {policy: FIFO, backfill: true}
`

const extraClass = `      - name: infer
        arrival: {process: poisson, ratePerHour: 9, diurnal: {amplitude: 0.5, peakHour: 13}}
        pod: {gpus: 1, cpu: "4", memory: 16Gi}
        duration: {distribution: exponential, mean: 30m}
        nodeSelector: {team: b}
`

// Adding a class with its own arrival stream, on its own pool, leaves
// every job of the other classes exactly as it was: same arrivals, same
// durations, same starts and ends. (With backfill: a strict FIFO queue
// shared by both classes rightly lets the new class's head block the
// others.)
func TestAddingAClassLeavesOtherClassesAlone(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		alone := runText(t, fmt.Sprintf(twoClasses, ""), seed)
		with := runText(t, fmt.Sprintf(twoClasses, extraClass), seed)
		a, b := jobsOf(alone.Main.Result, "train"), jobsOf(with.Main.Result, "train")
		require.NotEmpty(t, a)
		require.NotEmpty(t, jobsOf(with.Main.Result, "infer"))
		require.Equal(t, a, b, "seed %d", seed)
	}
}

// Shuffling the rows of a trace changes nothing: a generated trace of
// 3,000 jobs, its rows shuffled within blocks of 1,000 (the reorder
// buffer holds 4,096), replays to the same jobs and the same summary.
func TestShufflingTraceRowsChangesNothing(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	w, err := traces.NewNativeWriter(&b, false)
	require.NoError(t, err)
	require.NoError(t, scenarios.GenerateTrace(scenarios.GenerateOptions{Jobs: 3000, Seed: 4, GPUs: 256, Load: 0.9}, w))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	header, rows := lines[0], lines[1:]
	shuffled := append([]string(nil), rows...)
	rng := rand.New(rand.NewPCG(9, 9))
	for lo := 0; lo < len(shuffled); lo += 1000 {
		blk := shuffled[lo:min(lo+1000, len(shuffled))]
		rng.Shuffle(len(blk), func(i, j int) { blk[i], blk[j] = blk[j], blk[i] })
	}
	require.NotEqual(t, rows, shuffled)
	run := func(name string, rows []string) *Outcome {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(header+"\n"+strings.Join(rows, "\n")+"\n"), 0o644))
		sc, err := scenarios.GeneratedScenario(scenarios.GenerateOptions{Jobs: 3000, Seed: 4, GPUs: 256, Load: 0.9})
		require.NoError(t, err)
		out, err := Scenario(sc, Options{Build: scenarios.Options{Trace: &scenarios.TraceSpec{Path: path, Format: "csv"}}})
		require.NoError(t, err)
		return out
	}
	a, c := run("sorted.csv", rows), run("shuffled.csv", shuffled)
	require.Len(t, a.Main.Result.Jobs, 3000)
	require.Equal(t, a.Main.Result.Jobs, c.Main.Result.Jobs)
	ja, err := json.Marshal(a.Main.Summary)
	require.NoError(t, err)
	jc, err := json.Marshal(c.Main.Summary)
	require.NoError(t, err)
	require.Equal(t, strings.ReplaceAll(string(ja), "sorted.csv", "X"), strings.ReplaceAll(string(jc), "shuffled.csv", "X"))
}
