package validate

import (
	"fmt"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/reports"
)

// Unit is what a metric measures, for parsing thresholds and printing.
type Unit uint8

const (
	Number  Unit = iota // a plain number
	Seconds             // a duration; thresholds may be written 30m, 2h
	Ratio               // 0..1; thresholds may be written 70%
	USD
)

// Metrics lists the metric names (QUEUE is a queue's name).
func Metrics() []string {
	return []string{
		"allocation", "wait.{mean,p50,p95,p99,max}", "jct.{mean,p50,p95,p99,max}",
		"jobs.total", "jobs.<outcome>", "gpuHours.allocated", "gpuHours.idle",
		"queue.QUEUE.wait.{mean,p50,p95,p99,max}", "queue.QUEUE.jct.{...}", "queue.QUEUE.completed", "queue.QUEUE.gpuHours",
		"cost.total", "cost.idle", "cost.idleGPU", "cost.lost", "cost.perUsefulGPUHour",
		"lostGPUHours", "disruptions", "fragmentation.mean", "training.step",
	}
}

func statOf(st reports.Stats, which string) (float64, bool) {
	switch which {
	case "mean":
		return st.Mean, true
	case "p50":
		return st.P50, true
	case "p95":
		return st.P95, true
	case "p99":
		return st.P99, true
	case "max":
		return st.Max, true
	}
	return 0, false
}

// MetricUnit is a metric's unit (and whether the name is known at all,
// queue names aside).
func MetricUnit(name string) (Unit, error) {
	p := strings.Split(name, ".")
	switch {
	case name == "allocation":
		return Ratio, nil
	case len(p) == 2 && (p[0] == "wait" || p[0] == "jct"):
		if _, ok := statOf(reports.Stats{}, p[1]); ok {
			return Seconds, nil
		}
	case len(p) == 2 && p[0] == "jobs", len(p) == 2 && p[0] == "gpuHours" && (p[1] == "allocated" || p[1] == "idle"):
		return Number, nil
	case len(p) >= 3 && p[0] == "queue":
		switch rest := p[len(p)-1]; {
		case rest == "completed" || rest == "gpuHours" || rest == "jobs":
			if len(p) >= 3 {
				return Number, nil
			}
		default:
			if len(p) >= 4 && (p[len(p)-2] == "wait" || p[len(p)-2] == "jct") {
				if _, ok := statOf(reports.Stats{}, rest); ok {
					return Seconds, nil
				}
			}
		}
	case len(p) == 2 && p[0] == "cost":
		switch p[1] {
		case "total", "idle", "idleGPU", "lost", "perUsefulGPUHour":
			return USD, nil
		}
	case name == "lostGPUHours" || name == "disruptions":
		return Number, nil
	case name == "fragmentation.mean":
		return Number, nil
	case name == "training.step":
		return Seconds, nil
	}
	return 0, fmt.Errorf("unknown metric %q (metrics: %s)", name, strings.Join(Metrics(), ", "))
}

// Metric reads a metric off a run's summary.
func Metric(s *reports.Summary, name string) (float64, error) {
	if _, err := MetricUnit(name); err != nil {
		return 0, err
	}
	p := strings.Split(name, ".")
	switch {
	case name == "allocation":
		return s.Cluster.Allocation, nil
	case p[0] == "wait" || p[0] == "jct":
		st := s.QueueWait
		if p[0] == "jct" {
			st = s.JCT
		}
		v, _ := statOf(st, p[1])
		return v, nil
	case p[0] == "jobs":
		if p[1] == "total" {
			return float64(s.Jobs.Total), nil
		}
		n, ok := s.Jobs.ByOutcome[p[1]]
		if !ok {
			keys := make([]string, 0, len(s.Jobs.ByOutcome))
			for k := range s.Jobs.ByOutcome {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return 0, fmt.Errorf("metric %s: no outcome %q (outcomes: %s)", name, p[1], strings.Join(keys, ", "))
		}
		return float64(n), nil
	case p[0] == "gpuHours":
		if p[1] == "idle" {
			return s.Cluster.GPUHoursIdle, nil
		}
		return s.Cluster.GPUHoursAllocated, nil
	case p[0] == "queue":
		last := p[len(p)-1]
		qname := strings.Join(p[1:len(p)-1], ".")
		if last != "completed" && last != "gpuHours" && last != "jobs" {
			qname = strings.Join(p[1:len(p)-2], ".")
		}
		for _, q := range s.Queues {
			if q.Name != qname {
				continue
			}
			switch last {
			case "completed":
				return float64(q.Completed), nil
			case "jobs":
				return float64(q.Jobs), nil
			case "gpuHours":
				return q.GPUHoursAllocated, nil
			}
			st := q.QueueWait
			if p[len(p)-2] == "jct" {
				st = q.JCT
			}
			v, _ := statOf(st, last)
			return v, nil
		}
		var names []string
		for _, q := range s.Queues {
			names = append(names, q.Name)
		}
		return 0, fmt.Errorf("metric %s: no queue %q (queues: %s)", name, qname, strings.Join(names, ", "))
	case p[0] == "cost":
		c := s.Cost
		if c == nil {
			return 0, fmt.Errorf("metric %s: the run has no prices (give pools an instanceType or pricePerHour)", name)
		}
		switch p[1] {
		case "total":
			return c.Total, nil
		case "idle":
			return c.Idle, nil
		case "idleGPU":
			return c.IdleGPU, nil
		case "lost":
			return c.LostCost, nil
		}
		return c.CostPerUsefulGPUHour, nil
	case name == "lostGPUHours" || name == "disruptions":
		f := reports.Figures("", s)
		if name == "disruptions" {
			return float64(f.Disruptions), nil
		}
		return f.LostGPUHours, nil
	case name == "fragmentation.mean":
		if s.Fragmentation == nil {
			return 0, fmt.Errorf("metric %s: the run did not sample fragmentation (output.fragmentation: true)", name)
		}
		return s.Fragmentation.MeanFragGPUs, nil
	case name == "training.step":
		return reports.Figures("", s).StepSeconds, nil
	}
	return 0, fmt.Errorf("unknown metric %q", name)
}
