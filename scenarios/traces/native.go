package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// NativeColumns lists the native CSV columns. submit and duration are
// required; the rest default.
//
//	name           job name (default job-<row>)
//	queue          queue or tenant (default "default")
//	submit         submit time, seconds from the trace start (decimals allowed)
//	duration       run time in seconds once every pod is bound (> 0)
//	replicas       pods in the job, a gang when > 1 (default 1)
//	gpus           GPUs per pod: a whole number, or below 1 for a share of one GPU (default 0)
//	cpu            CPU per pod, a Kubernetes quantity such as 8 or 500m (default 0)
//	memory         memory per pod, a quantity such as 64Gi (default 0)
//	priority       integer priority, higher first (default 0)
//	deadline       absolute deletion time in seconds, empty for none
//	node_selector  key=value pairs separated by ';'
//	tolerations    key[=value][:Effect] entries separated by ';' (no value: operator Exists)
//	mig            MIG profile the pod's gpus are (e.g. 1g.10gb), empty for nvidia.com/gpu
//	gpu_memory     GPU memory each GPU of the pod uses, a quantity (checked on time-sliced GPUs)
//	gpu_model      GPU models the pod may run on, separated by '|' (node affinity on gpuplan.dev/gpu-model)
func NativeColumns() []string {
	return []string{"name", "queue", "submit", "duration", "replicas", "gpus", "cpu", "memory", "priority", "deadline", "node_selector", "tolerations", "mig", "gpu_memory", "gpu_model"}
}

// Native CSV columns by position in NativeColumns.
const (
	cName = iota
	cQueue
	cSubmit
	cDuration
	cReplicas
	cGPUs
	cCPU
	cMemory
	cPriority
	cDeadline
	cNodeSelector
	cTolerations
	cMIG
	cGPUMemory
	cGPUModel
	numNativeColumns
)

type csvSource struct {
	*csvTable
	cols   [numNativeColumns]int // record index of each column, -1 when absent
	in     interner
	qty    map[string]int64  // memory quantities seen, in MiB
	cpuQty map[string]int64  // CPU quantities seen, in millicores
	gpuQty map[string]int64  // GPU memory quantities seen, in MiB
	queues map[string]string // one string per queue name
	key    []byte            // scratch for the constraints' key
}

// newCSVSource reads a native CSV trace. Rows a little out of submit
// order (within ReorderWindow rows) are put back in order.
func newCSVSource(file string, r io.Reader, closer func() error) (*streamTrace, error) {
	t, header, err := openCSVTable(file, r, '#', "the trace is empty; it needs a header row ("+strings.Join(NativeColumns(), ",")+")")
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, c := range NativeColumns() {
		known[c] = true
	}
	for i, h := range header {
		if !known[h] {
			line, _ := t.r.FieldPos(0)
			_, col := t.r.FieldPos(i)
			return nil, &strict.InputError{File: file, Line: line, Column: col, Field: colName(h), Msg: fmt.Sprintf("unknown column (known: %s)", strings.Join(NativeColumns(), ", "))}
		}
	}
	if err := t.require("required column is missing", "submit", "duration"); err != nil {
		return nil, err
	}
	t.viewRows()
	src := &csvSource{csvTable: t, in: interner{}, qty: map[string]int64{}, cpuQty: map[string]int64{}, gpuQty: map[string]int64{}, queues: map[string]string{}}
	for c, name := range NativeColumns() {
		src.cols[c] = -1
		if i, ok := t.col[name]; ok {
			src.cols[c] = i
		}
	}
	return csvStream(t, FormatCSV, closer, "submit", true, src.parse), nil
}

// v is column c of the row, trimmed ("" when the file has no such column).
func (s *csvSource) v(rec []string, c int) string {
	if i := s.cols[c]; i >= 0 {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

func (s *csvSource) parse(rec []string, a *absJob) (bool, error) {
	j := &a.job
	var err error
	q := s.v(rec, cQueue)
	for _, c := range []struct {
		col  int
		name string
	}{{cName, "name"}, {cQueue, "queue"}, {cNodeSelector, "node_selector"}, {cTolerations, "tolerations"}, {cGPUModel, "gpu_model"}, {cMIG, "mig"}} {
		if err := checkText(s.v(rec, c.col)); err != nil {
			return false, s.bad(c.name, "%v", err)
		}
	}
	if iq, ok := s.queues[q]; ok {
		q = iq
	} else if len(s.queues) < 1<<16 {
		q = strings.Clone(q)
		s.queues[q] = q
	} else {
		q = strings.Clone(q)
	}
	// The fields are views of the read buffer: the name is copied (into
	// the table's name blocks).
	*j = cluster.JobSpec{Name: s.name(s.v(rec, cName)), Queue: q, Replicas: 1}
	if j.Name == "" {
		j.Name = s.numbered("job-", s.rows)
	}
	if j.Queue == "" {
		j.Queue = "default"
	}
	if j.Submit, err = Seconds(s.v(rec, cSubmit), true); err != nil {
		return false, s.bad("submit", "%v", err)
	}
	a.at = j.Submit
	if j.Duration, err = Seconds(s.v(rec, cDuration), true); err != nil {
		return false, s.bad("duration", "%v", err)
	}
	if j.Duration <= 0 {
		return false, s.bad("duration", "must be positive")
	}
	if v := s.v(rec, cDeadline); v != "" {
		if j.Deadline, err = Seconds(v, true); err != nil {
			return false, s.bad("deadline", "%v", err)
		}
		if j.Deadline < j.Submit {
			return false, s.bad("deadline", "is before submit")
		}
	}
	if v := s.v(rec, cReplicas); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > strict.MaxReplicas {
			return false, s.bad("replicas", "%s is not a whole number in 1..%d", strict.Quote(v), strict.MaxReplicas)
		}
		j.Replicas = int32(n)
	}
	if v := s.v(rec, cPriority); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return false, s.bad("priority", "%s is not a whole number (32 bits)", strict.Quote(v))
		}
		j.Priority = int32(n)
	}
	if v := s.v(rec, cGPUs); v != "" {
		f, err := gpuCount(v)
		if err != nil {
			return false, s.bad("gpus", "%s is not a number", strict.Quote(v))
		}
		if j.Pod.GPUs, j.Pod.GPUMilli, err = gpuRequest(f); err != nil {
			return false, s.bad("gpus", "%v", err)
		}
	}
	if v := s.v(rec, cCPU); v != "" {
		if j.Pod.MilliCPU, err = s.quantity(v, qtyCPU); err != nil {
			return false, s.bad("cpu", "%v", err)
		}
	}
	if v := s.v(rec, cMemory); v != "" {
		if j.Pod.MemoryMiB, err = s.quantity(v, qtyMemory); err != nil {
			return false, s.bad("memory", "%v", err)
		}
	}
	if v := s.v(rec, cGPUMemory); v != "" {
		if j.Pod.GPUMemMiB, err = s.quantity(v, qtyGPUMemory); err != nil {
			return false, s.bad("gpu_memory", "%v", err)
		}
	}
	if v := s.v(rec, cMIG); v != "" {
		if err := checkMIG(v); err != nil {
			return false, s.bad("mig", "%v", err)
		}
		if j.Pod.GPUs < 1 {
			return false, s.bad("mig", "a pod asking for MIG instances asks for at least one in gpus")
		}
		j.Pod.MIG = strings.Clone(v)
	}
	if sel, tol, models := s.v(rec, cNodeSelector), s.v(rec, cTolerations), s.v(rec, cGPUModel); sel != "" || tol != "" || models != "" {
		s.key = append(append(append(append(append(s.key[:0], sel...), 0), tol...), 0), models...)
		j.Constraints, err = s.in.get(view(s.key), func() (*cluster.Constraints, error) {
			c, err := parseConstraintText(strings.Clone(sel), strings.Clone(tol))
			if err == nil && models != "" {
				c.Affinity = []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: strings.Split(strings.Clone(models), "|")}}}
			}
			return c, err
		})
		if err != nil {
			field := "tolerations"
			if strings.HasPrefix(err.Error(), "node selector") {
				field = "node_selector"
			}
			return false, s.bad(field, "%v", err)
		}
	}
	return false, nil
}

// What a quantity column holds.
const (
	qtyCPU = iota
	qtyMemory
	qtyGPUMemory
)

// quantity parses a Kubernetes quantity to millicores (cpu) or MiB,
// remembering the texts it has seen.
func (s *csvSource) quantity(v string, kind int) (int64, error) {
	m := s.qty
	switch kind {
	case qtyCPU:
		m = s.cpuQty
	case qtyGPUMemory:
		m = s.gpuQty
	}
	if n, ok := m[v]; ok {
		return n, nil
	}
	n, err := parseQuantity(v, kind)
	if err != nil {
		return 0, err
	}
	if len(m) < 1<<16 {
		m[strings.Clone(v)] = n
	}
	return n, nil
}

// parseQuantity reads a CPU quantity in millicores, or a memory quantity
// in MiB (rounded up), refusing what no node holds before converting.
func parseQuantity(v string, kind int) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		if kind == qtyCPU {
			return 0, fmt.Errorf("%s is not a CPU quantity (examples: 8, 0.5, 500m)", strict.Quote(v))
		}
		return 0, fmt.Errorf("%s is not a memory quantity (examples: 64Gi, 512Mi)", strict.Quote(v))
	}
	return boundQuantity(q, v, kind)
}

// boundQuantity converts a quantity once it is known to be in range; an
// error quotes text (the quantity as written) rather than the quantity's
// canonical form, which may look nothing like it (8Ei: 9223372036854775807).
func boundQuantity(q resource.Quantity, text string, kind int) (int64, error) {
	var n int64
	var err error
	switch kind {
	case qtyCPU:
		n, err = strict.MilliCPU(q)
	case qtyGPUMemory:
		n, err = strict.QuantityIn(q, false, 1<<20, strict.MaxPodMemoryMiB, "GPU memory")
	default:
		n, err = strict.MemoryMiB(q)
	}
	if err != nil && text != "" {
		return 0, errors.New(strings.Replace(err.Error(), strict.Quote(q.String()), strict.Quote(text), 1))
	}
	return n, err
}

// Seconds parses decimal seconds to milliseconds.
func Seconds(v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, fmt.Errorf("is required")
		}
		return 0, nil
	}
	if n, ok := smallUint(v); ok && float64(n) <= maxTraceSeconds {
		// Whole seconds under 10^12: n x 1000 is below 2^53, so the
		// float arithmetic below gives exactly this.
		return n * 1000, nil
	}
	if ms, ok := decimalMs(v); ok {
		return ms, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not a number of seconds", strict.Quote(v))
	}
	if f < 0 {
		return 0, fmt.Errorf("%s is negative", strict.Quote(v))
	}
	if f > maxTraceSeconds {
		return 0, fmt.Errorf("%s is out of range (at most %g seconds)", strict.Quote(v), maxTraceSeconds)
	}
	return int64(math.Round(f * 1000)), nil
}

// gpuCount parses a gpus value: a whole number of up to 12 digits
// directly (exactly its float), anything else by strconv.ParseFloat.
func gpuCount(v string) (float64, error) {
	if n, ok := smallUint(v); ok {
		return float64(n), nil
	}
	return strconv.ParseFloat(v, 64)
}

// decimalMs reads seconds written as up to 12 digits, a point and 1 to 3
// digits ("46.849") as milliseconds, exactly what Seconds' float
// arithmetic gives them: the value is a whole number N of milliseconds
// below 10^15 < 2^50, the nearest float64 to N/1000 times 1000 is within
// N x 2^-52 < 0.5 of N, and rounding gives N. ok is false for anything
// else (Seconds parses it as a float).
func decimalMs(v string) (int64, bool) {
	dot := strings.IndexByte(v, '.')
	if dot < 1 || dot > 12 || len(v)-dot-1 < 1 || len(v)-dot-1 > 3 {
		return 0, false
	}
	var n int64
	for i := range len(v) {
		if i == dot {
			continue
		}
		c := v[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	for range 3 - (len(v) - dot - 1) {
		n *= 10
	}
	return n, true
}

// gpuRequest splits a GPUs-per-pod number into whole GPUs or a share.
func gpuRequest(f float64) (int32, int32, error) {
	switch {
	case math.IsNaN(f) || f < 0:
		return 0, 0, fmt.Errorf("%g is not a GPU count", f)
	case f == 0:
		return 0, 0, nil
	case f < 1:
		m := int32(math.Round(f * cluster.MilliGPU))
		if m < 1 {
			return 0, 0, fmt.Errorf("a share of %g GPU is below 1/1000", f)
		}
		if m >= cluster.MilliGPU {
			return 1, 0, nil
		}
		return 0, m, nil
	case f != math.Trunc(f):
		return 0, 0, fmt.Errorf("%g GPUs: ask for whole GPUs, or a share below 1 of one GPU", f)
	case f > min(cluster.MaxGPUsPerNode, strict.MaxPodGPUs):
		return 0, 0, fmt.Errorf("%g GPUs is more than a node can have (%d)", f, min(cluster.MaxGPUsPerNode, strict.MaxPodGPUs))
	}
	return int32(f), 0, nil
}

// parseConstraintText reads "k=v;k2=v2" selectors and "key=value:Effect;key"
// tolerations.
func parseConstraintText(sel, tol string) (*cluster.Constraints, error) {
	c := &cluster.Constraints{}
	for _, kv := range splitList(sel) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("node selector %s is not key=value", strict.Quote(kv))
		}
		if c.NodeSelector == nil {
			c.NodeSelector = map[string]string{}
		}
		c.NodeSelector[k] = v
	}
	for _, t := range splitList(tol) {
		body, effect, _ := strings.Cut(t, ":")
		k, v, hasValue := strings.Cut(body, "=")
		tt := cluster.Toleration{Key: k, Value: v, Effect: cluster.TaintEffect(effect), Operator: "Equal"}
		if !hasValue {
			tt.Operator = "Exists"
		}
		switch tt.Effect {
		case "", cluster.NoSchedule, cluster.PreferNoSchedule, cluster.NoExecute:
		default:
			return nil, fmt.Errorf("toleration %s: effect %s is not NoSchedule, PreferNoSchedule or NoExecute", strict.Quote(t), strict.Quote(effect))
		}
		if k == "" && hasValue {
			return nil, fmt.Errorf("toleration %s has a value but no key", strict.Quote(t))
		}
		c.Tolerations = append(c.Tolerations, tt)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// jsonJob is one line of the native JSONL format: the CSV columns with the
// same meaning, plus structured constraints.
type jsonJob struct {
	Name         string             `json:"name"`
	Queue        string             `json:"queue"`
	Submit       *float64           `json:"submit"`
	Duration     *float64           `json:"duration"`
	Replicas     *int64             `json:"replicas"`
	GPUs         float64            `json:"gpus"`
	CPU          *resource.Quantity `json:"cpu"`
	Memory       *resource.Quantity `json:"memory"`
	Priority     int32              `json:"priority"`
	Deadline     *float64           `json:"deadline"`
	NodeSelector map[string]string  `json:"nodeSelector"`
	Affinity     []TermSpec         `json:"affinity"`
	Tolerations  []TolerationSpec   `json:"tolerations"`
	MIG          string             `json:"mig"`
	GPUMemory    *resource.Quantity `json:"gpuMemory"`
}

type jsonlSource struct {
	file string
	lr   *boundedReader
	sc   *bufio.Scanner
	line int
	rows int
	in   interner
}

// newJSONLSource reads a native JSONL trace. Lines a little out of submit
// order (within ReorderWindow lines) are put back in order.
func newJSONLSource(file string, r io.Reader, closer func() error) *streamTrace {
	lr := newBoundedReader(r)
	sc := bufio.NewScanner(lr)
	// The bounded reader fails a line over MaxLineBytes (with its number)
	// before the scanner's own bound.
	sc.Buffer(make([]byte, 0, 1<<16), strict.MaxLineBytes+1<<16)
	src := &jsonlSource{file: file, lr: lr, sc: sc, in: interner{}}
	st := newStreamTrace(file, FormatJSONL, false, closer, "submit", true)
	st.rows = func() int { return src.rows }
	st.read = src.read
	return st
}

func (s *jsonlSource) read(a *absJob) (bool, bool, error) {
	for {
		if !s.sc.Scan() {
			if err := s.sc.Err(); err != nil {
				var long *lineTooLong
				if errors.As(err, &long) {
					return false, false, long.inputError(s.file)
				}
				if errors.Is(err, bufio.ErrTooLong) {
					return false, false, (&lineTooLong{line: s.line + 1}).inputError(s.file)
				}
				return false, false, strict.Errorf(s.file, s.line+1, "", "%s", boundMessage(strict.ReadErr(err)))
			}
			return false, false, nil
		}
		s.line++
		// The scanner hands out what it has of a line cut at the bound
		// before it reports the error: the reader knows which line that is.
		if s.lr.err != nil {
			if long, ok := s.lr.err.(*lineTooLong); ok && s.line >= long.line {
				return false, false, long.inputError(s.file)
			}
		}
		b := bytes.TrimSpace(s.sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		s.rows++
		a.line = s.line
		if err := s.parse(b, &a.job); err != nil {
			return false, false, err
		}
		a.at = a.job.Submit
		return true, false, nil
	}
}

// jsonQuantityText is the text of a quantity field as the line has it,
// for an error (the quantity's canonical form when it cannot be found).
func jsonQuantityText(line []byte, field string, q *resource.Quantity) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(line, &raw) == nil {
		if v, ok := raw[field]; ok {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
			return string(v)
		}
	}
	return q.String()
}

// jsonLineErr is a JSON decoding error as an InputError at the line.
func jsonLineErr(file string, line int, err error) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return strict.Errorf(file, line, colName(ute.Field), "expected %s, got a JSON %s", ute.Type, boundMessage(ute.Value))
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		if u, err := strconv.Unquote(f); err == nil {
			f = u
		}
		return strict.Errorf(file, line, colName(f), "unknown field")
	}
	return strict.Errorf(file, line, "", "not a JSON object: %s", boundMessage(msg))
}

func (s *jsonlSource) parse(b []byte, j *cluster.JobSpec) error {
	bad := func(field, format string, args ...any) error {
		return strict.Errorf(s.file, s.line, field, format, args...)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var x jsonJob
	if err := dec.Decode(&x); err != nil {
		return jsonLineErr(s.file, s.line, err)
	}
	if dec.More() {
		return bad("", "more than one JSON value on the line")
	}
	for _, f := range []struct{ name, v string }{{"name", x.Name}, {"queue", x.Queue}, {"mig", x.MIG}} {
		if err := checkText(f.v); err != nil {
			return bad(f.name, "%v", err)
		}
	}
	*j = cluster.JobSpec{Name: x.Name, Queue: x.Queue, Replicas: 1, Priority: x.Priority}
	if j.Name == "" {
		j.Name = "job-" + strconv.Itoa(s.line)
	}
	if j.Queue == "" {
		j.Queue = "default"
	}
	ms := func(p *float64, field string) (int64, error) {
		if p == nil {
			return 0, bad(field, "is required")
		}
		v, err := Seconds(strconv.FormatFloat(*p, 'g', -1, 64), true)
		if err != nil {
			return 0, bad(field, "%v", err)
		}
		return v, nil
	}
	var err error
	if j.Submit, err = ms(x.Submit, "submit"); err != nil {
		return err
	}
	if j.Duration, err = ms(x.Duration, "duration"); err != nil {
		return err
	}
	if j.Duration <= 0 {
		return bad("duration", "must be positive")
	}
	if x.Deadline != nil {
		if j.Deadline, err = ms(x.Deadline, "deadline"); err != nil {
			return err
		}
		if j.Deadline < j.Submit {
			return bad("deadline", "is before submit")
		}
	}
	if x.Replicas != nil {
		if *x.Replicas < 1 || *x.Replicas > strict.MaxReplicas {
			return bad("replicas", "%d is not a whole number in 1..%d", *x.Replicas, strict.MaxReplicas)
		}
		j.Replicas = int32(*x.Replicas)
	}
	if j.Pod.GPUs, j.Pod.GPUMilli, err = gpuRequest(x.GPUs); err != nil {
		return bad("gpus", "%v", err)
	}
	for _, q := range []struct {
		name string
		v    *resource.Quantity
		kind int
		dst  *int64
	}{{"cpu", x.CPU, qtyCPU, &j.Pod.MilliCPU}, {"memory", x.Memory, qtyMemory, &j.Pod.MemoryMiB}, {"gpuMemory", x.GPUMemory, qtyGPUMemory, &j.Pod.GPUMemMiB}} {
		if q.v == nil {
			continue
		}
		if *q.dst, err = boundQuantity(*q.v, "", q.kind); err != nil {
			_, err = boundQuantity(*q.v, jsonQuantityText(b, q.name, q.v), q.kind)
			return bad(q.name, "%v", err)
		}
	}
	if x.MIG != "" {
		if err := checkMIG(x.MIG); err != nil {
			return bad("mig", "%v", err)
		}
		if j.Pod.GPUs < 1 {
			return bad("mig", "a pod asking for MIG instances asks for at least one in gpus")
		}
		j.Pod.MIG = x.MIG
	}
	c, err := ConstraintsFrom(x.NodeSelector, x.Affinity, x.Tolerations)
	if err != nil {
		return bad("", "%s", boundMessage(err.Error()))
	}
	if c != nil {
		key := c.Key()
		if len(key) > 4*maxTextBytes {
			return bad("", "the node selector, affinity and tolerations are longer than %d bytes", 4*maxTextBytes)
		}
		j.Constraints, _ = s.in.get(key, func() (*cluster.Constraints, error) { return c, nil })
	}
	return nil
}
