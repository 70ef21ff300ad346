package compare

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// summary builds a run's summary.json as simulate writes it, with the
// figures compare reads.
type summary struct {
	name                    string
	completed, failed       int
	allocation              float64
	waitP95, jctP50, jctP95 float64
	cost, idle, perGPUHour  float64
	services                string // JSON of .services, "" for none
}

func (s summary) json() []byte {
	services := ""
	if s.services != "" {
		services = `, "services": ` + s.services
	}
	return []byte(fmt.Sprintf(`{"schemaVersion": %d, "scenario": {"name": %q},
  "jobs": {"total": %d, "byOutcome": {"completed": %d, "failed": %d}},
  "cluster": {"allocation": %g},
  "queueWait": {"p95Seconds": %g}, "jct": {"p50Seconds": %g, "p95Seconds": %g},
  "cost": {"total": %g, "idle": %g, "costPerUsefulGPUHour": %g}%s}`,
		reports.SchemaVersion, s.name, s.completed+s.failed, s.completed, s.failed, s.allocation,
		s.waitP95, s.jctP50, s.jctP95, s.cost, s.idle, s.perGPUHour, services))
}

func decode(t *testing.T, s summary) *reports.Summary {
	t.Helper()
	out, err := Decode(s.name+"/summary.json", s.json())
	require.NoError(t, err)
	return out
}

func row(t *testing.T, c *Comparison, metric string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %q", metric)
	return Row{}
}

func TestChangesWorkedByHand(t *testing.T) {
	a := summary{name: "before", completed: 200, failed: 2, allocation: 0.8, waitP95: 3600, jctP50: 7200, jctP95: 36000, cost: 1000, idle: 250, perGPUHour: 2.5}
	b := summary{name: "after", completed: 150, allocation: 0.65, waitP95: 5400, jctP50: 7200, jctP95: 27000, cost: 800, idle: 250, perGPUHour: 3}
	c := New("a/summary.json", decode(t, a), "b/summary.json", decode(t, b))

	// 150 - 200 = -50, -50/200 = -25%.
	r := row(t, c, "jobs completed")
	require.Equal(t, Row{Metric: "jobs completed", A: 200, B: 150, Change: -50, RelativeChange: -0.25, Unit: Count}, r)
	require.Equal(t, "-25.0%", r.FormatChange())
	// A share changes by percentage points: 65% - 80% = -15 pp.
	r = row(t, c, "GPU allocation")
	require.InDelta(t, -0.15, r.Change, 1e-12)
	require.Equal(t, "80.0%", r.Format(r.A))
	require.Equal(t, "-15.0 pp", r.FormatChange())
	// 5400 s over 3600 s: +50%, shown in hours.
	r = row(t, c, "p95 queue wait")
	require.Equal(t, 0.5, r.RelativeChange)
	require.Equal(t, "+50.0%", r.FormatChange())
	// The bill: $800 against $1,000, -20%.
	r = row(t, c, "cost (USD)")
	require.Equal(t, -0.2, r.RelativeChange)
	require.Equal(t, "$1,000", r.Format(r.A))
	// No change: +0.0%; nothing from zero: no relative change at all.
	require.Equal(t, "+0.0%", row(t, c, "idle cost (USD)").FormatChange())
	r = row(t, c, "disruptions")
	require.Equal(t, 0.0, r.RelativeChange)
	require.Equal(t, "", r.FormatChange())
	// Jobs alone: one cost per useful GPU-hour, no training step.
	require.Equal(t, 3.0, row(t, c, "cost per useful GPU-hour").B)
	for _, r := range c.Rows {
		require.NotContains(t, r.Metric, "its share")
		require.NotEqual(t, "mean training step", r.Metric)
	}
	require.Len(t, c.Rows, 11)

	var md bytes.Buffer
	require.NoError(t, c.WriteMarkdown(&md))
	require.Contains(t, md.String(), "| | before | after | change |\n|---|---:|---:|---:|\n| jobs completed | 200 | 150 | -25.0% |\n")
	var tab bytes.Buffer
	require.NoError(t, c.WriteTable(&tab))
	require.Contains(t, tab.String(), "A: before")
	require.Contains(t, tab.String(), "GPU allocation")
}

// A service both runs have, by name, gets its rows; one only a run has
// gets none.
func TestServicesMatchedByName(t *testing.T) {
	a := summary{name: "a", services: `[{"name": "bert", "p95Ms": 20, "sloAttainment": 0.99, "requestsDropped": 10, "gpuHours": 4},
	  {"name": "only-a", "p95Ms": 5}]`}
	b := summary{name: "b", services: `[{"name": "bert", "p95Ms": 30, "sloAttainment": 0.9, "requestsDropped": 0, "gpuHours": 2}]`}
	c := New("a", decode(t, a), "b", decode(t, b))
	// 30 ms against 20 ms: +50%.
	r := row(t, c, "bert p95 latency")
	require.Equal(t, 0.5, r.RelativeChange)
	require.Equal(t, "20.0 ms", r.Format(r.A))
	// 90% against 99%: -9 pp.
	require.Equal(t, "-9.0 pp", row(t, c, "bert within SLO").FormatChange())
	require.Equal(t, -1.0, row(t, c, "bert requests dropped").RelativeChange)
	require.Equal(t, "4.0", row(t, c, "bert GPU-hours").Format(4))
	for _, r := range c.Rows {
		require.NotContains(t, r.Metric, "only-a")
		// Neither run has a cost per million requests: no row.
		require.NotEqual(t, "bert cost per million requests", r.Metric)
	}
}

func TestDecodeRefusesOtherFiles(t *testing.T) {
	_, err := Decode("x.json", []byte("root:x:0:0"))
	require.ErrorContains(t, err, "x.json: not a gpuplan summary.json")
	_, err = Decode("y.json", []byte(`{"schemaVersion": 99}`))
	require.ErrorContains(t, err, fmt.Sprintf("y.json: schemaVersion 99, this gpuplan reads %d", reports.SchemaVersion))
}
