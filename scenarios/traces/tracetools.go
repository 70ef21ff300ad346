package traces

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/stat"

	"maps"
	"slices"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// NativeWriter writes jobs in a native format: CSV (NativeColumns) or,
// for full fidelity of node affinity, JSON lines.
//
// The CSV is written as encoding/csv writes it (fields quoted where it
// would quote them), a row at a time into one reused buffer.
type NativeWriter struct {
	csv   *bufio.Writer
	enc   *json.Encoder
	row   []byte
	count int
}

// NewNativeWriter writes CSV, or JSON lines when jsonl is set.
func NewNativeWriter(w io.Writer, jsonl bool) (*NativeWriter, error) {
	if jsonl {
		return &NativeWriter{enc: json.NewEncoder(w)}, nil
	}
	nw := &NativeWriter{csv: bufio.NewWriterSize(w, 1<<16)}
	for i, c := range NativeColumns() {
		if i > 0 {
			nw.row = append(nw.row, ',')
		}
		nw.row = appendCSVField(nw.row, c)
	}
	nw.row = append(nw.row, '\n')
	_, err := nw.csv.Write(nw.row)
	return nw, err
}

func appendSeconds(b []byte, ms int64) []byte {
	if ms%1000 == 0 {
		return strconv.AppendInt(b, ms/1000, 10)
	}
	return appendThousandths(b, ms)
}

// exactThousandths bounds the values appendThousandths writes with
// integers: below it, n/1000 as a float64 is within 0.0005 of the exact
// value, so formatting the float to three places gives the same text.
const exactThousandths = 1_000_000_000_000_000

// appendThousandths appends n/1000 with three decimals, as
// strconv.AppendFloat(b, float64(n)/1000, 'f', 3, 64) writes it.
func appendThousandths(b []byte, n int64) []byte {
	if n <= -exactThousandths || n >= exactThousandths {
		return strconv.AppendFloat(b, float64(n)/1000, 'f', 3, 64)
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/1000, 10)
	f := n % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

func appendGPUs(b []byte, p *cluster.PodSpec) []byte {
	if p.GPUMilli > 0 {
		return appendThousandths(b, int64(p.GPUMilli))
	}
	return strconv.AppendInt(b, int64(p.GPUs), 10)
}

// appendCSVField appends a field as encoding/csv's Writer writes it: in
// quotes (a quote doubled) when it holds a comma, quote, CR or LF, starts
// with a space, or is \. alone.
func appendCSVField(b []byte, f string) []byte {
	quote := f == `\.`
	if f != "" && !quote {
		for i := 0; i < len(f) && !quote; i++ {
			c := f[i]
			quote = c == ',' || c == '"' || c == '\r' || c == '\n'
		}
		if !quote {
			r, _ := utf8.DecodeRuneInString(f)
			quote = unicode.IsSpace(r)
		}
	}
	if !quote {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}

// appendQuantity appends n with its unit (8000m, 64Mi), or nothing for 0.
func appendQuantity(b []byte, n int64, unit string) []byte {
	if n <= 0 {
		return b
	}
	return append(strconv.AppendInt(b, n, 10), unit...)
}

// gpuModels returns the models of a single gpu-model In term, and whether
// the constraints' affinity is only that.
func gpuModels(c *cluster.Constraints) (string, bool) {
	if c == nil || len(c.Affinity) == 0 {
		return "", true
	}
	if len(c.Affinity) == 1 && len(c.Affinity[0]) == 1 {
		if r := c.Affinity[0][0]; r.Key == cluster.LabelGPUModel && r.Op == cluster.OpIn {
			return strings.Join(r.Values, "|"), true
		}
	}
	return "", false
}

// Write writes one job (times in seconds).
func (w *NativeWriter) Write(j *cluster.JobSpec) error {
	w.count++
	if w.enc != nil {
		x := map[string]any{"name": j.Name, "queue": j.Queue, "submit": float64(j.Submit) / 1000, "duration": float64(j.Duration) / 1000,
			"replicas": j.Replicas, "gpus": float64(j.Pod.MilliGPUs()) / 1000}
		if j.Pod.MilliCPU > 0 {
			x["cpu"] = strconv.FormatInt(j.Pod.MilliCPU, 10) + "m"
		}
		if j.Pod.MemoryMiB > 0 {
			x["memory"] = strconv.FormatInt(j.Pod.MemoryMiB, 10) + "Mi"
		}
		if j.Priority != 0 {
			x["priority"] = j.Priority
		}
		if j.Deadline > 0 {
			x["deadline"] = float64(j.Deadline) / 1000
		}
		if j.Pod.MIG != "" {
			x["mig"] = j.Pod.MIG
		}
		if j.Pod.GPUMemMiB > 0 {
			x["gpuMemory"] = strconv.FormatInt(j.Pod.GPUMemMiB, 10) + "Mi"
		}
		if c := j.Constraints; c != nil {
			if len(c.NodeSelector) > 0 {
				x["nodeSelector"] = c.NodeSelector
			}
			var terms []TermSpec
			for _, t := range c.Affinity {
				var ts TermSpec
				for _, r := range t {
					ts.MatchExpressions = append(ts.MatchExpressions, RequirementSpec{Key: r.Key, Operator: string(r.Op), Values: r.Values})
				}
				terms = append(terms, ts)
			}
			if terms != nil {
				x["affinity"] = terms
			}
			var tols []TolerationSpec
			for _, t := range c.Tolerations {
				tols = append(tols, TolerationSpec{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: string(t.Effect)})
			}
			if tols != nil {
				x["tolerations"] = tols
			}
		}
		return w.enc.Encode(x)
	}
	models, ok := gpuModels(j.Constraints)
	if !ok {
		return fmt.Errorf("job %s has node affinity the CSV format cannot hold; write JSON lines (.jsonl)", j.Name)
	}
	sel, tol := "", ""
	if c := j.Constraints; c != nil {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.NodeSelector)) {
			parts = append(parts, k+"="+c.NodeSelector[k])
		}
		sel = strings.Join(parts, ";")
		parts = parts[:0]
		for _, t := range c.Tolerations {
			s := t.Key
			if t.Operator != "Exists" {
				s += "=" + t.Value
			}
			if t.Effect != "" {
				s += ":" + string(t.Effect)
			}
			parts = append(parts, s)
		}
		tol = strings.Join(parts, ";")
	}
	b := appendCSVField(w.row[:0], j.Name)
	b = appendCSVField(append(b, ','), j.Queue)
	b = appendSeconds(append(b, ','), j.Submit)
	b = appendSeconds(append(b, ','), j.Duration)
	b = strconv.AppendInt(append(b, ','), int64(j.Replicas), 10)
	b = appendGPUs(append(b, ','), &j.Pod)
	b = appendQuantity(append(b, ','), j.Pod.MilliCPU, "m")
	b = appendQuantity(append(b, ','), j.Pod.MemoryMiB, "Mi")
	b = strconv.AppendInt(append(b, ','), int64(j.Priority), 10)
	b = append(b, ',')
	if j.Deadline > 0 {
		b = appendSeconds(b, j.Deadline)
	}
	b = appendCSVField(append(b, ','), sel)
	b = appendCSVField(append(b, ','), tol)
	b = appendCSVField(append(b, ','), j.Pod.MIG)
	b = appendQuantity(append(b, ','), j.Pod.GPUMemMiB, "Mi")
	b = appendCSVField(append(b, ','), models)
	w.row = append(b, '\n')
	_, err := w.csv.Write(w.row)
	return err
}

// Flush finishes the output.
func (w *NativeWriter) Flush() error {
	if w.csv != nil {
		return w.csv.Flush()
	}
	return nil
}

// Count is the number of jobs written.
func (w *NativeWriter) Count() int { return w.count }

// TraceStats describe a trace.
type TraceStats struct {
	Jobs     int     `json:"jobs"`
	GPUJobs  int     `json:"gpuJobs"`
	Pods     int64   `json:"pods"`
	GPUHours float64 `json:"gpuHours"`
	// SpanSeconds is from the first submission to the last.
	SpanSeconds float64 `json:"spanSeconds"`
	// GPUsPerJob and DurationSeconds are quantiles over the GPU jobs.
	GPUsPerJob      Quantiles    `json:"gpusPerJob"`
	DurationSeconds Quantiles    `json:"durationSeconds"`
	Queues          []QueueCount `json:"queues"`
	// PeakGPUs is the most GPUs the jobs would hold at once if each ran
	// from its submission for its duration.
	PeakGPUs float64  `json:"peakGPUsIfStartedOnArrival"`
	Notes    []string `json:"notes,omitempty"`
}

// Quantiles of a sample.
type Quantiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// QueueCount is one queue's (virtual cluster's) share of a trace.
type QueueCount struct {
	Name     string  `json:"name"`
	Jobs     int     `json:"jobs"`
	GPUJobs  int     `json:"gpuJobs"`
	GPUHours float64 `json:"gpuHours"`
}

func quantiles(x []float64) Quantiles {
	if len(x) == 0 {
		return Quantiles{}
	}
	sort.Float64s(x)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, x, nil) }
	return Quantiles{P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: x[len(x)-1], Mean: stat.Mean(x, nil)}
}

// ComputeTraceStats reads a trace through and describes it.
func ComputeTraceStats(src TraceSource) (*TraceStats, error) {
	st := &TraceStats{}
	queues := map[string]*QueueCount{}
	var gpus, durs []float64
	type edge struct {
		at    int64
		milli int64
	}
	var edges []edge
	var first, last int64
	for {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if st.Jobs == 0 {
			first = j.Submit
		}
		last = j.Submit
		st.Jobs++
		st.Pods += int64(j.Replicas)
		q := queues[j.Queue]
		if q == nil {
			q = &QueueCount{Name: j.Queue}
			queues[j.Queue] = q
		}
		q.Jobs++
		milli := int64(j.Replicas) * j.Pod.MilliGPUs()
		if milli > 0 {
			st.GPUJobs++
			q.GPUJobs++
			h := float64(milli) / 1000 * float64(j.Duration) / 3.6e6
			st.GPUHours += h
			q.GPUHours += h
			gpus = append(gpus, float64(milli)/1000)
			durs = append(durs, float64(j.Duration)/1000)
			edges = append(edges, edge{j.Submit, milli}, edge{j.Submit + j.Duration, -milli})
		}
	}
	st.SpanSeconds = float64(last-first) / 1000
	st.GPUsPerJob, st.DurationSeconds = quantiles(gpus), quantiles(durs)
	sort.Slice(edges, func(a, b int) bool {
		if edges[a].at != edges[b].at {
			return edges[a].at < edges[b].at
		}
		return edges[a].milli < edges[b].milli // ends before starts at the same instant
	})
	var cur, peak int64
	for _, e := range edges {
		cur += e.milli
		peak = max(peak, cur)
	}
	st.PeakGPUs = float64(peak) / 1000
	names := make([]string, 0, len(queues))
	for k := range queues {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		q := *queues[n]
		q.GPUHours = math.Round(q.GPUHours*1000) / 1000
		st.Queues = append(st.Queues, q)
	}
	st.GPUHours = math.Round(st.GPUHours*1000) / 1000
	st.Notes = src.Notes()
	return st, nil
}

// TraceFilter selects and transforms jobs on the way to a native trace.
type TraceFilter struct {
	// From and To keep jobs submitted in [From, To) (To 0: no end), ms from
	// the trace start; kept jobs are shifted so the first is at From - From.
	From, To int64
	// Queues, when set, keeps these queues only.
	Queues map[string]bool
	// MinGPUs keeps jobs asking for at least this many GPUs in all.
	MinGPUs float64
	// MaxJobs stops after this many jobs (0: all).
	MaxJobs int
	// ArrivalScale divides the gaps between submissions (2: twice the
	// rate); DurationScale multiplies durations. 0 means 1.
	ArrivalScale, DurationScale float64
}

// ConvertTrace copies src's jobs through f to w. It returns how many were
// kept and how many read.
func ConvertTrace(src TraceSource, f TraceFilter, w *NativeWriter) (kept, read int, err error) {
	as, ds := f.ArrivalScale, f.DurationScale
	if as == 0 {
		as = 1
	}
	if ds == 0 {
		ds = 1
	}
	if as < 0 || ds < 0 || math.IsNaN(as) || math.IsNaN(ds) {
		return 0, 0, fmt.Errorf("arrival and duration scales must be positive")
	}
	for f.MaxJobs == 0 || kept < f.MaxJobs {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		if err != nil {
			return kept, read, err
		}
		if !ok {
			break
		}
		read++
		if j.Submit < f.From || (f.To > 0 && j.Submit >= f.To) {
			if f.To > 0 && j.Submit >= f.To {
				break // submit order: nothing later is in the window
			}
			continue
		}
		if f.Queues != nil && !f.Queues[j.Queue] {
			continue
		}
		if float64(int64(j.Replicas)*j.Pod.MilliGPUs())/1000 < f.MinGPUs {
			continue
		}
		off := j.Submit - f.From
		j.Submit = int64(math.Round(float64(off) / as))
		if j.Deadline > 0 {
			j.Deadline = j.Submit + int64(math.Round(float64(j.Deadline-f.From-off)*ds))
		}
		j.Duration = max(int64(math.Round(float64(j.Duration)*ds)), 1)
		if err := w.Write(&j); err != nil {
			return kept, read, err
		}
		kept++
	}
	return kept, read, w.Flush()
}

// DeriveCluster sizes a cluster for a trace that comes without one: one
// pool per GPU model the jobs ask for (by node affinity on
// gpuplan.dev/gpu-model; "generic" for the rest), nodes of 8 GPUs (more
// if a pod needs more), each pool large enough for the most GPUs, CPU and
// memory its jobs would hold at once if every job started on arrival and
// ran its recorded duration. It returns the pools and what it assumed.
// The jobs may come in any order (OpenTraceSizing reads them in the
// file's): the cluster is the same.
func DeriveCluster(src TraceSource) ([]cluster.PoolSpec, []string, error) {
	return deriveCluster(src, &clusterSizer{})
}

// deriveCluster is DeriveCluster tallying the jobs in z (which may
// stream: then it stops at the first job out of order, z.disorder).
func deriveCluster(src TraceSource, z *clusterSizer) ([]cluster.PoolSpec, []string, error) {
	var j cluster.JobSpec
	for {
		ok, err := src.Next(&j)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		if !z.add(&j) {
			return nil, nil, z.tooMuch(src.Info().File)
		}
		if z.disorder {
			return nil, nil, nil
		}
		j = cluster.JobSpec{}
	}
	if len(z.order) == 0 {
		return nil, nil, emptyTrace(src.Info(), "to size a cluster for")
	}
	return z.result(src.Info().File)
}

// clusterSizer is DeriveCluster's tally of the jobs, by pool.
//
// A sizer that streams (stream set) sweeps each pool's jobs as they come,
// holding only the jobs running at the latest submit instead of every
// job (40 bytes each): it takes the jobs of each pool in the order of
// their submits, and the first that comes earlier than the one before it
// sets disorder and is not counted: the caller then sizes the trace
// again with a sizer that keeps the jobs (and sorts them). Both find the
// same peaks.
type clusterSizer struct {
	stream   bool
	disorder bool
	pools    map[string]*sizerPool
	order    []string
	// The pool of the last job's constraints: readers share one
	// *Constraints between jobs with the same text.
	lastC *cluster.Constraints
	lastA *sizerPool
}

type sizerPool struct {
	jobs     sizedJobs
	unsorted bool
	// sweep, n and last: a streaming sizer's sweep of the jobs, their
	// count and the last one's submit.
	sweep                peakSweep
	n                    int
	last                 int64
	sumGPU, sumCPU       int64
	sumMem               int64
	maxPodGPU            int32
	maxPodCPU, maxPodMem int64
}

// add counts a job; false once the jobs ask for more than can be summed.
func (z *clusterSizer) add(j *cluster.JobSpec) bool {
	a := z.lastA
	if a == nil || j.Constraints != z.lastC {
		model := "generic"
		if m, ok := gpuModels(j.Constraints); ok && m != "" {
			model = strings.SplitN(m, "|", 2)[0]
		}
		if z.pools == nil {
			z.pools = map[string]*sizerPool{}
		}
		a = z.pools[model]
		if a == nil {
			a = &sizerPool{}
			z.pools[model] = a
			z.order = append(z.order, model)
		}
		z.lastC, z.lastA = j.Constraints, a
	}
	if z.stream && a.n > 0 && j.Submit < a.last {
		z.disorder = true
		return true
	}
	n := int64(j.Replicas)
	g, c, m := n*j.Pod.MilliGPUs(), n*j.Pod.MilliCPU, n*j.Pod.MemoryMiB
	// Readers bound a job (replicas and requests); the sums of the jobs
	// are bounded here, before any can overflow.
	a.sumGPU, a.sumCPU, a.sumMem = a.sumGPU+g, a.sumCPU+c, a.sumMem+m
	if a.sumGPU > 1<<62 || a.sumCPU > 1<<62 || a.sumMem > 1<<62 {
		return false
	}
	sj := sizedJob{at: j.Submit, end: j.Submit + j.Duration, use: [3]int64{g, c, m}}
	switch {
	case z.stream:
		a.sweep.add(&sj)
		a.n++
		a.last = j.Submit
	default:
		if a.jobs.n > 0 && j.Submit < a.jobs.last().at {
			a.unsorted = true
		}
		a.jobs.add(sj)
		a.n++
	}
	a.maxPodGPU = max(a.maxPodGPU, j.Pod.GPUs, min(1, j.Pod.GPUMilli))
	a.maxPodCPU, a.maxPodMem = max(a.maxPodCPU, j.Pod.MilliCPU), max(a.maxPodMem, j.Pod.MemoryMiB)
	return true
}

func (z *clusterSizer) tooMuch(file string) error {
	return &strict.InputError{File: file, Msg: "the jobs of the trace ask for more than gpuplan can size a cluster for"}
}

// result is the pools for the jobs counted (at least one) and the notes
// saying how each was sized.
func (z *clusterSizer) result(file string) ([]cluster.PoolSpec, []string, error) {
	var out []cluster.PoolSpec
	var notes []string
	for _, model := range z.order {
		a := z.pools[model]
		if a.unsorted {
			all := a.jobs.flat()
			slices.SortFunc(all, func(x, y sizedJob) int { return cmp.Compare(x.at, y.at) })
			a.jobs = sizedJobs{chunks: [][]sizedJob{all}, n: len(all)}
		}
		// A streaming sizer swept the jobs as they came (it keeps none).
		for _, c := range a.jobs.chunks {
			for i := range c {
				a.sweep.add(&c[i])
			}
		}
		peak := a.sweep.peaks()
		jobs := a.n
		a.jobs, a.sweep = sizedJobs{}, peakSweep{} // free as soon as done with
		pg, pc, pm := peak[0], peak[1], peak[2]
		per := max(int32(8), a.maxPodGPU)
		cpu := max(int64(96000), a.maxPodCPU)
		mem := max(int64(1<<20), a.maxPodMem)
		nodes := max(int64(1), (pg+int64(per)*1000-1)/(int64(per)*1000), (pc+cpu-1)/cpu, (pm+mem-1)/mem)
		if nodes > strict.MaxNodes {
			return nil, nil, &strict.InputError{File: file, Msg: fmt.Sprintf("sizing a cluster for the trace takes %d nodes of %s, more than %d, the most gpuplan models; give a scenario with a cluster (--cluster scenario)", nodes, model, strict.MaxNodes)}
		}
		name := "derived-" + strings.ToLower(model)
		out = append(out, cluster.PoolSpec{Name: name, GPUModel: model, Nodes: int(nodes), GPUsPerNode: per, MilliCPU: cpu, MemoryMiB: mem})
		notes = append(notes, fmt.Sprintf("cluster derived from the trace: pool %s, %d nodes of %d %s GPUs, %d CPUs and %d GiB, for the %.0f GPUs its %d jobs would hold at once if each started on arrival",
			name, nodes, per, model, cpu/1000, mem>>10, float64(pg)/1000, jobs))
	}
	return out, notes, nil
}

// sizedJob is a job as DeriveCluster sizes for it: its start and end
// (submit, and submit plus duration) and the GPU (milli), CPU (milli) and
// memory (MiB) it holds in between.
type sizedJob struct {
	at, end int64
	use     [3]int64
}

// sizedJobs holds jobs in chunks of a fixed size: appending never copies
// what is already held.
type sizedJobs struct {
	chunks [][]sizedJob
	n      int
}

const sizedChunk = 1 << 14

func (s *sizedJobs) add(j sizedJob) {
	if k := len(s.chunks); k == 0 || len(s.chunks[k-1]) == sizedChunk {
		s.chunks = append(s.chunks, make([]sizedJob, 0, sizedChunk))
	}
	k := len(s.chunks) - 1
	s.chunks[k] = append(s.chunks[k], j)
	s.n++
}

// last is the job added last (s.n > 0).
func (s *sizedJobs) last() *sizedJob {
	c := s.chunks[len(s.chunks)-1]
	return &c[len(c)-1]
}

// flat is every job in one slice, in the order added.
func (s *sizedJobs) flat() []sizedJob {
	out := make([]sizedJob, 0, s.n)
	for _, c := range s.chunks {
		out = append(out, c...)
	}
	return out
}

// peakSweep finds the most GPUs, CPU and memory (each on its own) that
// jobs, added in order of their starts, hold at once, a job holding its
// resources from its start to its end and none at its end (so a job that
// ends as another starts does not overlap it). The held amounts rise only
// at starts: once the jobs that start at an instant t are added and those
// that end by t are taken away (from a min-heap of the ends), what is held
// is what is held at t, and the peaks are the largest of these.
type peakSweep struct {
	held, peak [3]int64
	ends       endHeap
	t          int64 // the instant of the jobs being added
	started    bool
}

// add adds a job that starts no earlier than the one before.
func (p *peakSweep) add(j *sizedJob) {
	if p.started && j.at != p.t {
		p.settle()
	}
	p.t, p.started = j.at, true
	for k := range p.held {
		p.held[k] += j.use[k]
	}
	p.ends.push(j.end, j.use)
}

// settle takes away the jobs that end by the current instant and counts
// what is then held.
func (p *peakSweep) settle() {
	for len(p.ends) > 0 && p.ends[0].at <= p.t {
		use := p.ends.pop()
		for k := range p.held {
			p.held[k] -= use[k]
		}
	}
	for k := range p.held {
		p.peak[k] = max(p.peak[k], p.held[k])
	}
}

// peaks is the peaks once every job is added.
func (p *peakSweep) peaks() [3]int64 {
	if p.started {
		p.settle()
	}
	return p.peak
}

// heldEnd is a job's end and what the job holds until then.
type heldEnd struct {
	at  int64
	use [3]int64
}

// endHeap is a min-heap of jobs' ends.
type endHeap []heldEnd

func (h *endHeap) push(at int64, use [3]int64) {
	*h = append(*h, heldEnd{at, use})
	e := *h
	for i := len(e) - 1; i > 0; {
		p := (i - 1) / 2
		if e[p].at <= e[i].at {
			break
		}
		e[i], e[p] = e[p], e[i]
		i = p
	}
}

// pop takes the earliest end out and returns what its job held.
func (h *endHeap) pop() [3]int64 {
	e := *h
	use := e[0].use
	n := len(e) - 1
	e[0] = e[n]
	e = e[:n]
	*h = e
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && e[c+1].at < e[c].at {
			c++
		}
		if e[i].at <= e[c].at {
			break
		}
		e[i], e[c] = e[c], e[i]
		i = c
	}
	return use
}
