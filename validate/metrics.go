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
	// Milliseconds is a latency in ms; thresholds may be a plain number of
	// milliseconds or a duration (250ms, 1.5s).
	Milliseconds
)

// String is the unit's name as JSON gives it.
func (u Unit) String() string {
	switch u {
	case Seconds:
		return "seconds"
	case Ratio:
		return "ratio"
	case USD:
		return "usd"
	case Milliseconds:
		return "milliseconds"
	}
	return "number"
}

// serviceFields are an inference service's metrics (service.NAME.FIELD),
// named as summary.json's services[] names them.
var serviceFields = map[string]Unit{
	"sloAttainment": Ratio, "p50Ms": Milliseconds, "p95Ms": Milliseconds, "p99Ms": Milliseconds,
	"requestsArrived": Number, "requestsServed": Number, "requestsDropped": Number,
	"replicaHours": Number, "readyHours": Number, "gpuHours": Number,
	"meanReplicas": Number, "peakReplicas": Number, "peakGPUs": Number,
	"coldStarts": Number, "meanColdStartSeconds": Seconds, "preempted": Number, "disrupted": Number,
	"cost": USD, "costPerMillionRequests": USD,
}

// commitmentFields are the commitment advice's metrics (commitment.FIELD),
// named as summary.json's cost.commitmentAdvice names them.
var commitmentFields = map[string]Unit{
	"level": USD, "bill": USD, "billNone": USD, "saving": USD, "spotBill": USD, "mixBill": USD,
	"breakEven": USD, "breakEvenFall": Ratio, "utilisation": Ratio, "coverage": Ratio,
}

// poolFields are a node pool's metrics (pool.NAME.FIELD), named as
// summary.json's pools[] names them.
var poolFields = map[string]Unit{
	"allocation": Ratio, "nodes": Number, "gpus": Number,
	"gpuHoursSupplied": Number, "gpuHoursAllocated": Number, "gpuHoursIdle": Number,
}

func fieldList(m map[string]Unit) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "{" + strings.Join(keys, ",") + "}"
}

// Metrics lists the metric names (QUEUE is a queue's name).
func Metrics() []string {
	return []string{
		"allocation", "wait.{mean,p50,p95,p99,max}", "jct.{mean,p50,p95,p99,max}",
		"jobs.total", "jobs.<outcome>", "gpuHours.allocated", "gpuHours.idle",
		"queue.QUEUE.wait.{mean,p50,p95,p99,max}", "queue.QUEUE.jct.{...}", "queue.QUEUE.completed", "queue.QUEUE.gpuHours",
		"queue.QUEUE.jobs", "queue.QUEUE.preempted",
		"jctAllJobs.{p50,p95}", "gpuHours.supplied", "oomKilled",
		"cost.total", "cost.allocated", "cost.idle", "cost.idleGPU", "cost.lost", "cost.checkpoint",
		"cost.perUsefulGPUHour", "cost.perMillionRequests", "commitment." + fieldList(commitmentFields),
		"lostGPUHours", "disruptions", "fragmentation.mean", "fragmentation.max", "training.step",
		"service.SERVICE." + fieldList(serviceFields), "pool.POOL." + fieldList(poolFields),
	}
}

// UnknownMetricError is a metric name validate does not know; its
// message lists every metric, whole.
type UnknownMetricError struct{ Name string }

func (e *UnknownMetricError) Error() string {
	return fmt.Sprintf("unknown metric %q (metrics: %s)", e.Name, strings.Join(Metrics(), ", "))
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
		case rest == "completed" || rest == "gpuHours" || rest == "jobs" || rest == "preempted":
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
		case "total", "allocated", "idle", "idleGPU", "lost", "checkpoint", "perUsefulGPUHour", "perMillionRequests":
			return USD, nil
		}
	case len(p) == 2 && p[0] == "commitment":
		if u, ok := commitmentFields[p[1]]; ok {
			return u, nil
		}
	case name == "jctAllJobs.p50" || name == "jctAllJobs.p95":
		return Seconds, nil
	case name == "gpuHours.supplied":
		return Number, nil
	case name == "lostGPUHours" || name == "disruptions" || name == "oomKilled":
		return Number, nil
	case name == "fragmentation.mean" || name == "fragmentation.max":
		return Number, nil
	case len(p) >= 3 && p[0] == "service":
		if u, ok := serviceFields[p[len(p)-1]]; ok {
			return u, nil
		}
	case len(p) >= 3 && p[0] == "pool":
		if u, ok := poolFields[p[len(p)-1]]; ok {
			return u, nil
		}
	case name == "training.step":
		return Seconds, nil
	}
	return 0, &UnknownMetricError{Name: name}
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
		switch p[1] {
		case "idle":
			return s.Cluster.GPUHoursIdle, nil
		case "supplied":
			return s.Cluster.GPUHoursSupplied, nil
		}
		return s.Cluster.GPUHoursAllocated, nil
	case p[0] == "jctAllJobs":
		v := s.JCTAllJobs.P50
		if p[1] == "p95" {
			v = s.JCTAllJobs.P95
		}
		if v < 0 {
			return 0, fmt.Errorf("metric %s: not reached in this run (more than %s of its %d jobs never completed); bound the jobs completed instead",
				name, map[bool]string{true: "half", false: "5%"}[p[1] == "p50"], s.JCTAllJobs.Jobs)
		}
		return v, nil
	case name == "oomKilled":
		return float64(s.OOMKilled), nil
	case p[0] == "service":
		return serviceMetric(s, name, strings.Join(p[1:len(p)-1], "."), p[len(p)-1])
	case p[0] == "pool":
		return poolMetric(s, name, strings.Join(p[1:len(p)-1], "."), p[len(p)-1])
	case p[0] == "queue":
		last := p[len(p)-1]
		qname := strings.Join(p[1:len(p)-1], ".")
		if last != "completed" && last != "gpuHours" && last != "jobs" && last != "preempted" {
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
			case "preempted":
				return float64(q.Preempted), nil
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
		case "allocated":
			return c.Allocated, nil
		case "checkpoint":
			return c.CheckpointCost, nil
		case "perMillionRequests":
			if len(s.Services) == 0 {
				return 0, fmt.Errorf("metric %s: the run has no inference services", name)
			}
			return reports.Figures("", s).CostPerMillionRequests, nil
		}
		return c.CostPerUsefulGPUHour, nil
	case p[0] == "commitment":
		return commitmentMetric(s, name, p[1])
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
	case name == "fragmentation.max":
		if s.Fragmentation == nil {
			return 0, fmt.Errorf("metric %s: the run did not sample fragmentation (output.fragmentation: true)", name)
		}
		return s.Fragmentation.MaxFragGPUs, nil
	case name == "training.step":
		return reports.Figures("", s).StepSeconds, nil
	}
	return 0, fmt.Errorf("unknown metric %q", name)
}

// commitmentMetric is a figure of the run's commitment advice.
func commitmentMetric(s *reports.Summary, name, field string) (float64, error) {
	if s.Cost == nil || s.Cost.CommitmentAdvice == nil {
		return 0, fmt.Errorf("metric %s: the run has no commitment advice (set spec.pricing.commitmentAdvice.discount)", name)
	}
	a := s.Cost.CommitmentAdvice
	switch field {
	case "level":
		return a.Level, nil
	case "bill":
		return a.Bill, nil
	case "billNone":
		return a.BillNone, nil
	case "saving":
		return a.Saving, nil
	case "spotBill":
		return a.SpotBill, nil
	case "mixBill":
		return a.MixBill, nil
	case "breakEven":
		return a.BreakEven, nil
	case "breakEvenFall":
		return a.BreakEvenFall, nil
	case "utilisation":
		return a.Utilisation, nil
	}
	return a.Coverage, nil
}

// serviceMetric is an inference service's figure off summary.json's
// services[].
func serviceMetric(s *reports.Summary, name, svc, field string) (float64, error) {
	for i := range s.Services {
		v := &s.Services[i]
		if v.Name != svc {
			continue
		}
		switch field {
		case "sloAttainment":
			if v.SLOMs == 0 {
				return 0, fmt.Errorf("metric %s: service %s has no latency SLO (give it slo.latency)", name, svc)
			}
			return v.SLOAttainment, nil
		case "p50Ms":
			return v.P50Ms, nil
		case "p95Ms":
			return v.P95Ms, nil
		case "p99Ms":
			return v.P99Ms, nil
		case "requestsArrived":
			return v.RequestsArrived, nil
		case "requestsServed":
			return v.RequestsServed, nil
		case "requestsDropped":
			return v.RequestsDropped, nil
		case "replicaHours":
			return v.ReplicaHours, nil
		case "readyHours":
			return v.ReadyHours, nil
		case "gpuHours":
			return v.GPUHours, nil
		case "meanReplicas":
			return v.MeanReplicas, nil
		case "peakReplicas":
			return v.PeakReplicas, nil
		case "peakGPUs":
			return v.PeakGPUs, nil
		case "coldStarts":
			return float64(v.ColdStarts), nil
		case "meanColdStartSeconds":
			return v.MeanColdStartSeconds, nil
		case "preempted":
			return float64(v.Preempted), nil
		case "disrupted":
			return float64(v.Disrupted), nil
		}
		if v.Cost == nil {
			return 0, fmt.Errorf("metric %s: the run has no prices (give pools an instanceType or pricePerHour)", name)
		}
		if field == "cost" {
			return v.Cost.Cost, nil
		}
		return v.Cost.PerMillionRequests, nil
	}
	names := make([]string, 0, len(s.Services))
	for _, v := range s.Services {
		names = append(names, v.Name)
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("metric %s: the run has no inference services", name)
	}
	return 0, fmt.Errorf("metric %s: no service %q (services: %s)", name, svc, strings.Join(names, ", "))
}

// poolMetric is a node pool's figure off summary.json's pools[].
func poolMetric(s *reports.Summary, name, pool, field string) (float64, error) {
	names := make([]string, 0, len(s.Pools))
	for _, p := range s.Pools {
		names = append(names, p.Name)
		if p.Name != pool {
			continue
		}
		switch field {
		case "allocation":
			return p.Allocation, nil
		case "nodes":
			return float64(p.Nodes), nil
		case "gpus":
			return float64(p.GPUs), nil
		case "gpuHoursSupplied":
			return p.GPUHoursSupplied, nil
		case "gpuHoursAllocated":
			return p.GPUHoursAllocated, nil
		}
		return p.GPUHoursIdle, nil
	}
	return 0, fmt.Errorf("metric %s: no pool %q (pools: %s)", name, pool, strings.Join(names, ", "))
}
