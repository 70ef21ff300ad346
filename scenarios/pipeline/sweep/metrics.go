package sweep

import (
	"fmt"
	"regexp"
	"strings"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/validate"
)

// Metric is a figure read off each run's summary: one of validate's
// metrics (cost.total, wait.p95, queue.team-a.wait.p95, ...), written
// either that way or with a queue selector (wait.p95{queue=team-a}), or
// "completed", the share of the jobs that completed
// (completed{queue=team-a}: of that queue's jobs).
type Metric struct {
	// Name is the metric as written, the column it heads.
	Name string
	// canonical is validate's name for it; queue is set for completed{queue=...}.
	canonical string
	completed bool
	queue     string
	unit      validate.Unit
}

var selector = regexp.MustCompile(`^([A-Za-z0-9_.]+)\{queue=([^{}=,]+)\}$`)

// ParseMetric reads a metric name.
func ParseMetric(name string) (Metric, error) {
	m := Metric{Name: name}
	base, queue := name, ""
	if sm := selector.FindStringSubmatch(name); sm != nil {
		base, queue = sm[1], sm[2]
	} else if strings.ContainsAny(name, "{}") {
		return m, fmt.Errorf("%s: a selector reads {queue=NAME}", scenarios.Quote(name))
	}
	if base == "completed" {
		m.completed, m.queue, m.unit = true, queue, validate.Ratio
		return m, nil
	}
	m.canonical = base
	if queue != "" {
		if strings.HasPrefix(base, "queue.") {
			return m, fmt.Errorf("%s: give the queue once", scenarios.Quote(name))
		}
		m.canonical = "queue." + queue + "." + base
	}
	u, err := validate.MetricUnit(m.canonical)
	if err != nil {
		return m, fmt.Errorf("%s: %v; or completed, the share of jobs completed", scenarios.Quote(name), err)
	}
	m.unit = u
	return m, nil
}

// Unit is what the metric measures.
func (m Metric) Unit() validate.Unit { return m.unit }

// Value reads the metric off a run's summary.
func (m Metric) Value(s *reports.Summary) (float64, error) {
	if !m.completed {
		return validate.Metric(s, m.canonical)
	}
	if m.queue == "" {
		if s.Jobs.Total == 0 {
			return 0, fmt.Errorf("metric completed: the run has no jobs")
		}
		return float64(s.Jobs.ByOutcome["completed"]) / float64(s.Jobs.Total), nil
	}
	for _, q := range s.Queues {
		if q.Name == m.queue {
			if q.Jobs == 0 {
				return 0, fmt.Errorf("metric %s: queue %s has no jobs", m.Name, m.queue)
			}
			return float64(q.Completed) / float64(q.Jobs), nil
		}
	}
	return 0, fmt.Errorf("metric %s: no queue %q", m.Name, m.queue)
}
