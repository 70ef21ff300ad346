package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/sim"
)

// Metric series files.
const (
	// FileMetricsCSV is every sample as a CSV row.
	FileMetricsCSV = "metrics.csv"
	// FileMetricsProm is the Prometheus text exposition format (0.0.4),
	// timestamps in milliseconds.
	FileMetricsProm = "metrics.prom"
	// FileMetricsOpenMetrics is the same samples as OpenMetrics text, the
	// format `promtool tsdb create-blocks-from openmetrics` backfills.
	FileMetricsOpenMetrics = "metrics.om.txt"
)

// Label is one label of a series.
type Label struct{ Name, Value string }

// Series is one metric series: a value per timeline interval, stamped with
// the interval's end.
type Series struct {
	Labels []Label
	Values []float64
}

// MetricFamily is the series of one metric name.
type MetricFamily struct {
	Name, Help, Type string // Type: gauge or counter
	Series           []Series
}

// MetricSeries are a run's time series under the names dashboards already
// chart, one sample per timeline interval (its mean, or for counters the
// count at its end), stamped with the interval's end:
//
//   - DCGM_FI_DEV_GPU_UTIL{pool,modelName}: the pool's GPU utilisation in
//     percent, as dcgm-exporter reports it per GPU; here the pool's mean,
//     and a GPU counts as busy while a pod holds it (the simulation does not
//     model SM activity inside a job).
//   - gpuplan_gpus_allocated and gpuplan_gpus_present{pool}: mean GPUs.
//   - ml_training_jobs_pending and ml_training_jobs_running{queue}: mean
//     jobs waiting (submit to first start) and running (first start to end).
//   - ml_training_jobs_completed_total{queue}: jobs completed so far.
//   - gpuplan_cost_usd_total{pool}: cost of the nodes present so far.
//   - with inference services, per service: gpuplan_service_replicas,
//     gpuplan_service_ready_replicas, gpuplan_service_requests_per_second,
//     gpuplan_service_request_latency_p95_seconds (NaN for an interval
//     that served nothing), gpuplan_service_requests_served_total and
//     gpuplan_service_requests_dropped_total{service}.
//
// times are the intervals' ends in milliseconds of simulated time.
func MetricSeries(res *sim.Result, s *Summary) (times []sim.Time, fams []MetricFamily) {
	tl := &res.Timeline
	var idx []int // the non-empty intervals
	for i := range tl.PendingJobMs {
		if w := tl.Width(i, res.End); w > 0 {
			idx = append(idx, i)
			times = append(times, sim.Time(i)*tl.Interval+w)
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	mean := func(v int64, i int) float64 { return float64(v) / float64(tl.Width(i, res.End)) }
	supplied := func(p, i int) int64 {
		if tl.Supplied != nil {
			return tl.Supplied[p][i]
		}
		sp := res.Pools[p].Spec
		return int64(sp.Nodes) * int64(sp.GPUsPerNode) * 1000 * int64(tl.Width(i, res.End))
	}
	util := MetricFamily{Name: "DCGM_FI_DEV_GPU_UTIL", Type: "gauge",
		Help: "GPU utilization (in %), the pool's mean over the interval; a GPU is busy while a pod holds it (simulated by gpuplan)."}
	alloc := MetricFamily{Name: "gpuplan_gpus_allocated", Type: "gauge", Help: "GPUs held by pods, mean over the interval."}
	present := MetricFamily{Name: "gpuplan_gpus_present", Type: "gauge", Help: "GPUs on the pool's nodes, mean over the interval."}
	for p, pool := range res.Pools {
		if pool.Spec.GPUsPerNode == 0 {
			continue
		}
		labels := []Label{{"modelName", pool.Spec.GPUModel}, {"pool", pool.Spec.Name}}
		u, a, pr := Series{Labels: labels}, Series{Labels: labels[1:]}, Series{Labels: labels[1:]}
		for _, i := range idx {
			sup := supplied(p, i)
			v := 0.0
			if sup > 0 {
				v = 100 * float64(tl.Allocated[p][i]) / float64(sup)
			}
			u.Values = append(u.Values, round(v, 3))
			a.Values = append(a.Values, round(mean(tl.Allocated[p][i], i)/1000, 4))
			pr.Values = append(pr.Values, round(mean(sup, i)/1000, 4))
		}
		util.Series, alloc.Series, present.Series = append(util.Series, u), append(alloc.Series, a), append(present.Series, pr)
	}
	fams = append(fams, util, alloc, present)

	// Per-queue job counts from the job records.
	queues := map[string]int{}
	var names []string
	for _, j := range res.Records() {
		q := j.Queue
		if _, ok := queues[q]; !ok {
			queues[q] = len(names)
			names = append(names, q)
		}
	}
	nb := len(tl.PendingJobMs)
	pending, running, done := make([][]int64, len(names)), make([][]int64, len(names)), make([][]int64, len(names))
	for q := range names {
		pending[q], running[q], done[q] = make([]int64, nb), make([]int64, nb), make([]int64, nb)
	}
	spread := func(acc []int64, from, to sim.Time) {
		if to <= from || tl.Interval <= 0 {
			return
		}
		for b := int(from / tl.Interval); b < nb; b++ {
			lo, hi := sim.Time(b)*tl.Interval, sim.Time(b+1)*tl.Interval
			if lo >= to {
				break
			}
			acc[b] += int64(min(hi, to) - max(lo, from))
		}
	}
	for _, j := range res.Records() {
		if j.Outcome == sim.Unschedulable {
			continue
		}
		q := queues[j.Queue]
		end := j.End
		if end < 0 {
			end = res.End
		}
		if j.Start >= 0 {
			spread(pending[q], j.Submit, j.Start)
			spread(running[q], j.Start, end)
		} else {
			spread(pending[q], j.Submit, end)
		}
		if j.Outcome == sim.Completed && j.End >= 0 && tl.Interval > 0 {
			if b := int(j.End / tl.Interval); b < nb {
				done[q][b]++
			} else {
				done[q][nb-1]++
			}
		}
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	pend := MetricFamily{Name: "ml_training_jobs_pending", Type: "gauge", Help: "Jobs submitted and not yet started, mean over the interval."}
	run := MetricFamily{Name: "ml_training_jobs_running", Type: "gauge", Help: "Jobs started and not yet ended, mean over the interval."}
	comp := MetricFamily{Name: "ml_training_jobs_completed_total", Type: "counter", Help: "Jobs completed by the interval's end."}
	for _, q := range order {
		labels := []Label{{"queue", names[q]}}
		ps, rs, cs := Series{Labels: labels}, Series{Labels: labels}, Series{Labels: labels}
		var total int64
		for _, i := range idx {
			ps.Values = append(ps.Values, round(mean(pending[q][i], i), 4))
			rs.Values = append(rs.Values, round(mean(running[q][i], i), 4))
			total += done[q][i]
			cs.Values = append(cs.Values, float64(total))
		}
		pend.Series, run.Series, comp.Series = append(pend.Series, ps), append(run.Series, rs), append(comp.Series, cs)
	}
	fams = append(fams, pend, run, comp)

	if pr := s.pricing; pr != nil {
		cost := MetricFamily{Name: "gpuplan_cost_usd_total", Type: "counter", Help: "USD paid for the pool's nodes so far (node-hours present times the node price)."}
		for p, pool := range res.Pools {
			if p >= len(pr.Pools) || pr.Pools[p].PerHour <= 0 || pool.Spec.GPUsPerNode == 0 {
				continue
			}
			cs := Series{Labels: []Label{{"pool", pool.Spec.Name}}}
			total := 0.0
			for _, i := range idx {
				// milli-GPU x ms over GPUs per node is node-ms x 1000.
				nodeHours := float64(supplied(p, i)) / 1000 / float64(pool.Spec.GPUsPerNode) / 3.6e6
				total += nodeHours * pr.Pools[p].PerHour
				cs.Values = append(cs.Values, round(total, 4))
			}
			cost.Series = append(cost.Series, cs)
		}
		if len(cost.Series) > 0 {
			fams = append(fams, cost)
		}
	}
	if len(res.Services) > 0 {
		fams = append(fams, serviceFamilies(res, idx)...)
	}
	return times, fams
}

// serviceFamilies are the inference services' series, per service: the
// replicas held and ready and the request rate (interval means), the p95
// latency of the interval's served requests (NaN when none was served),
// and the requests served and dropped so far.
func serviceFamilies(res *sim.Result, idx []int) []MetricFamily {
	held := MetricFamily{Name: "gpuplan_service_replicas", Type: "gauge", Help: "Replica pods of the inference service, pending ones included, mean over the interval."}
	ready := MetricFamily{Name: "gpuplan_service_ready_replicas", Type: "gauge", Help: "Replicas serving (bound and past their cold start), mean over the interval."}
	rate := MetricFamily{Name: "gpuplan_service_requests_per_second", Type: "gauge", Help: "Requests arriving per second, mean over the interval."}
	p95 := MetricFamily{Name: "gpuplan_service_request_latency_p95_seconds", Type: "gauge", Help: "95th percentile latency (queueing, batching wait, service) of the requests served in the interval."}
	served := MetricFamily{Name: "gpuplan_service_requests_served_total", Type: "counter", Help: "Requests served so far (the fluid serving model: fractional)."}
	dropped := MetricFamily{Name: "gpuplan_service_requests_dropped_total", Type: "counter", Help: "Requests dropped so far (queue limit or timeout)."}
	for k := range res.Services {
		r := &res.Services[k]
		labels := []Label{{"service", r.Name}}
		h, rd, rt, p, sv, dr := Series{Labels: labels}, Series{Labels: labels}, Series{Labels: labels}, Series{Labels: labels}, Series{Labels: labels}, Series{Labels: labels}
		var s, d float64
		for _, i := range idx {
			var pt sim.ServicePoint
			if i < len(r.Timeline) {
				pt = r.Timeline[i]
			}
			s += pt.Served
			d += pt.Dropped
			lat := math.NaN()
			if pt.P95Ms > 0 {
				lat = round(pt.P95Ms/1000, 6)
			}
			h.Values, rd.Values, rt.Values = append(h.Values, round(pt.Replicas, 4)), append(rd.Values, round(pt.Ready, 4)), append(rt.Values, round(pt.Rate, 4))
			p.Values, sv.Values, dr.Values = append(p.Values, lat), append(sv.Values, round(s, 3)), append(dr.Values, round(d, 3))
		}
		held.Series, ready.Series, rate.Series = append(held.Series, h), append(ready.Series, rd), append(rate.Series, rt)
		p95.Series, served.Series, dropped.Series = append(p95.Series, p), append(served.Series, sv), append(dropped.Series, dr)
	}
	return []MetricFamily{held, ready, rate, p95, served, dropped}
}

func labelText(ls []Label) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		v := strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(l.Value)
		parts[i] = fmt.Sprintf(`%s="%s"`, l.Name, v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func helpText(h string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(h)
}

// WritePrometheus writes the series in the Prometheus text exposition
// format, every sample with its timestamp (start plus simulated time, in
// milliseconds since the epoch).
func WritePrometheus(w io.Writer, start time.Time, times []sim.Time, fams []MetricFamily) error {
	base := start.UnixMilli()
	for _, f := range fams {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.Name, helpText(f.Help), f.Name, f.Type)
		for _, s := range f.Series {
			lt := labelText(s.Labels)
			for i, v := range s.Values {
				fmt.Fprintf(w, "%s%s %s %d\n", f.Name, lt, strconv.FormatFloat(v, 'g', -1, 64), base+int64(times[i]))
			}
		}
	}
	return nil
}

// WriteOpenMetrics writes the series as OpenMetrics text (timestamps in
// seconds, counters' family names without _total, a closing # EOF).
func WriteOpenMetrics(w io.Writer, start time.Time, times []sim.Time, fams []MetricFamily) error {
	base := start.UnixMilli()
	for _, f := range fams {
		family := f.Name
		if f.Type == "counter" {
			family = strings.TrimSuffix(family, "_total")
		}
		fmt.Fprintf(w, "# TYPE %s %s\n# HELP %s %s\n", family, f.Type, family, helpText(f.Help))
		for _, s := range f.Series {
			lt := labelText(s.Labels)
			for i, v := range s.Values {
				ms := base + int64(times[i])
				fmt.Fprintf(w, "%s%s %s %d.%03d\n", f.Name, lt, strconv.FormatFloat(v, 'g', -1, 64), ms/1000, ms%1000)
			}
		}
	}
	_, err := io.WriteString(w, "# EOF\n")
	return err
}

// WriteMetricsCSV writes one row per sample: the simulated time, the
// wall-clock timestamp, the metric, its labels and the value.
func WriteMetricsCSV(w io.Writer, start time.Time, times []sim.Time, fams []MetricFamily) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"time_s", "timestamp", "metric", "pool", "modelName", "queue", "value"}); err != nil {
		return err
	}
	for _, f := range fams {
		for _, s := range f.Series {
			var pool, model, queue string
			for _, l := range s.Labels {
				switch l.Name {
				case "pool":
					pool = l.Value
				case "modelName":
					model = l.Value
				case "queue":
					queue = l.Value
				}
			}
			for i, v := range s.Values {
				ts := start.Add(time.Duration(times[i]) * time.Millisecond).UTC().Format(time.RFC3339Nano)
				if err := cw.Write([]string{msText(times[i]), ts, f.Name, pool, model, queue, strconv.FormatFloat(v, 'g', -1, 64)}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
