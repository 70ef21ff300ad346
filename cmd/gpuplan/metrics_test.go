package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// The metric series parse with Prometheus's own text parser and add up to
// the summary: the last cumulative cost is each pool's cost, the completed
// counter each queue's completed jobs, the time-weighted mean of
// DCGM_FI_DEV_GPU_UTIL each pool's allocation, and per-queue pending jobs
// sum to the timeline's (the default scenario has no disruptions).
func TestMetricSeriesAddUp(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)

	f, err := os.Open(filepath.Join(dir, reports.FileMetricsProm))
	require.NoError(t, err)
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	require.NoError(t, err)
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "gpuplan_gpus_allocated", "gpuplan_gpus_present",
		"ml_training_jobs_pending", "ml_training_jobs_running", "ml_training_jobs_completed_total", "gpuplan_cost_usd_total"} {
		require.Contains(t, fams, name)
	}
	type key struct{ metric, label string }
	last := map[key]float64{}
	sum := map[key]float64{}
	n := map[key]int{}
	var firstTS, lastTS int64
	for name, fam := range fams {
		for _, m := range fam.Metric {
			label := ""
			for _, l := range m.Label {
				if l.GetName() == "pool" || l.GetName() == "queue" {
					label = l.GetValue()
				}
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			k := key{name, label}
			last[k] = v
			sum[k] += v
			n[k]++
			if ts := m.GetTimestampMs(); firstTS == 0 || ts < firstTS {
				firstTS = ts
			}
			if ts := m.GetTimestampMs(); ts > lastTS {
				lastTS = ts
			}
		}
	}
	// 2026-01-01T01:00:00Z (the first hour's end) to 72 h after the start.
	assert.Equal(t, int64(1767229200000), firstTS)
	assert.Equal(t, int64(1767225600000+72*3600*1000), lastTS)
	for _, p := range s.Cost.ByPool {
		assert.InDelta(t, p.Cost, last[key{"gpuplan_cost_usd_total", p.Name}], 0.01, p.Name)
	}
	for _, p := range s.Pools {
		// Equal hour-long intervals and a fixed supply: the mean of the
		// hourly utilisations is the pool's allocation.
		k := key{"DCGM_FI_DEV_GPU_UTIL", p.Name}
		assert.Equal(t, 72, n[k])
		assert.InDelta(t, 100*p.Allocation, sum[k]/float64(n[k]), 0.01, p.Name)
	}
	pending := 0.0
	for _, q := range s.Queues {
		assert.Equal(t, float64(q.Completed), last[key{"ml_training_jobs_completed_total", q.Name}], q.Name)
		pending += sum[key{"ml_training_jobs_pending", q.Name}]
	}
	timeline := 0.0
	rows := readCSV(t, dir, reports.FileTimeline)
	col := indexOf(rows[0], "pending_jobs")
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		require.NoError(t, err)
		timeline += v
	}
	assert.InDelta(t, timeline, pending, 0.01*float64(len(rows)), "per-queue pending jobs sum to the timeline's")

	// The CSV holds the same samples.
	rows = readCSV(t, dir, reports.FileMetricsCSV)
	assert.Equal(t, []string{"time_s", "timestamp", "metric", "pool", "modelName", "queue", "value"}, rows[0])
	samples := 0
	for _, fam := range fams {
		samples += len(fam.Metric)
	}
	assert.Equal(t, samples, len(rows)-1)
	assert.Equal(t, "2026-01-01T01:00:00Z", rows[1][1])

	om, err := os.ReadFile(filepath.Join(dir, reports.FileMetricsOpenMetrics))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(om), "\n# EOF\n"))
	assert.Contains(t, string(om), "# TYPE ml_training_jobs_completed counter\n")
	assert.Contains(t, string(om), `DCGM_FI_DEV_GPU_UTIL{modelName="H100-80GB",pool="h100-train"} `)
	assert.Contains(t, string(om), " 1767229200.000\n")
}

func indexOf(h []string, name string) int {
	for i, c := range h {
		if c == name {
			return i
		}
	}
	return -1
}
