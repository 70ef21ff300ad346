package scenarios

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
	closer func() error
	row    int
	order  orderCheck
	in     interner
	qty    map[string]int64  // memory quantities seen, in MiB
	cpuQty map[string]int64  // CPU quantities seen, in millicores
	queues map[string]string // one string per queue name
}

func newCSVSource(file string, r io.Reader, closer func() error) (*csvSource, error) {
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
			return nil, &InputError{File: file, Line: 1, Column: i + 1, Field: h, Msg: fmt.Sprintf("unknown column (known: %s)", strings.Join(NativeColumns(), ", "))}
		}
	}
	if err := t.require("required column is missing", "submit", "duration"); err != nil {
		return nil, err
	}
	src := &csvSource{csvTable: t, closer: closer, in: interner{}, qty: map[string]int64{}, cpuQty: map[string]int64{}, queues: map[string]string{}}
	for c, name := range NativeColumns() {
		src.cols[c] = -1
		if i, ok := t.col[name]; ok {
			src.cols[c] = i
		}
	}
	return src, nil
}

// v is column c of the row, trimmed ("" when the file has no such column).
func (s *csvSource) v(rec []string, c int) string {
	if i := s.cols[c]; i >= 0 {
		return strings.TrimSpace(rec[i])
	}
	return ""
}

func (s *csvSource) Close() error    { return s.closer() }
func (s *csvSource) Notes() []string { return nil }

func (s *csvSource) Next(j *cluster.JobSpec) (bool, error) {
	rec, ok, err := s.next()
	if !ok || err != nil {
		return false, err
	}
	s.row++
	q := s.v(rec, cQueue)
	if iq, ok := s.queues[q]; ok {
		q = iq
	} else if len(s.queues) < 1<<16 {
		q = strings.Clone(q)
		s.queues[q] = q
	}
	// The fields share one string per row: clone the name, so a job keeps
	// only its own bytes alive.
	*j = cluster.JobSpec{Name: strings.Clone(s.v(rec, cName)), Queue: q, Replicas: 1}
	if j.Name == "" {
		j.Name = "job-" + strconv.Itoa(s.row)
	}
	if j.Queue == "" {
		j.Queue = "default"
	}
	if j.Submit, err = seconds(s.v(rec, cSubmit), true); err != nil {
		return false, s.bad("submit", "%v", err)
	}
	if j.Duration, err = seconds(s.v(rec, cDuration), true); err != nil {
		return false, s.bad("duration", "%v", err)
	}
	if j.Duration <= 0 {
		return false, s.bad("duration", "must be positive")
	}
	if v := s.v(rec, cDeadline); v != "" {
		if j.Deadline, err = seconds(v, true); err != nil {
			return false, s.bad("deadline", "%v", err)
		}
		if j.Deadline < j.Submit {
			return false, s.bad("deadline", "is before submit")
		}
	}
	if v := s.v(rec, cReplicas); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return false, s.bad("replicas", "%q is not a whole number of at least 1", v)
		}
		j.Replicas = int32(n)
	}
	if v := s.v(rec, cPriority); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return false, s.bad("priority", "%q is not a whole number", v)
		}
		j.Priority = int32(n)
	}
	if v := s.v(rec, cGPUs); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false, s.bad("gpus", "%q is not a number", v)
		}
		if j.Pod.GPUs, j.Pod.GPUMilli, err = gpuRequest(f); err != nil {
			return false, s.bad("gpus", "%v", err)
		}
	}
	if v := s.v(rec, cCPU); v != "" {
		if j.Pod.MilliCPU, err = s.quantity(v, true); err != nil {
			return false, s.bad("cpu", "%v", err)
		}
	}
	if v := s.v(rec, cMemory); v != "" {
		if j.Pod.MemoryMiB, err = s.quantity(v, false); err != nil {
			return false, s.bad("memory", "%v", err)
		}
	}
	if v := s.v(rec, cGPUMemory); v != "" {
		if j.Pod.GPUMemMiB, err = s.quantity(v, false); err != nil {
			return false, s.bad("gpu_memory", "%v", err)
		}
	}
	if v := s.v(rec, cMIG); v != "" {
		if j.Pod.GPUs < 1 {
			return false, s.bad("mig", "a pod asking for MIG instances asks for at least one in gpus")
		}
		j.Pod.MIG = v
	}
	if sel, tol, models := s.v(rec, cNodeSelector), s.v(rec, cTolerations), s.v(rec, cGPUModel); sel != "" || tol != "" || models != "" {
		j.Constraints, err = s.in.get(sel+"\x00"+tol+"\x00"+models, func() (*cluster.Constraints, error) {
			c, err := parseConstraintText(sel, tol)
			if err == nil && models != "" {
				c.Affinity = []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: strings.Split(models, "|")}}}
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
	if !s.order.ok(j.Submit) {
		return false, s.bad("submit", "rows must be in submit order; this one is earlier than the row before")
	}
	return true, nil
}

// quantity parses a Kubernetes quantity to millicores (cpu) or MiB,
// remembering the texts it has seen.
func (s *csvSource) quantity(v string, cpu bool) (int64, error) {
	m := s.qty
	if cpu {
		m = s.cpuQty
	}
	if n, ok := m[v]; ok {
		return n, nil
	}
	n, err := parseQuantity(v, cpu)
	if err != nil {
		return 0, err
	}
	if len(m) < 1<<16 {
		m[strings.Clone(v)] = n
	}
	return n, nil
}

func parseQuantity(v string, cpu bool) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		if cpu {
			return 0, fmt.Errorf("%q is not a CPU quantity (examples: 8, 0.5, 500m)", v)
		}
		return 0, fmt.Errorf("%q is not a memory quantity (examples: 64Gi, 512Mi)", v)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	if cpu {
		return q.MilliValue(), nil
	}
	return (q.Value() + (1<<20 - 1)) >> 20, nil
}

// seconds parses decimal seconds to milliseconds.
func seconds(v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, fmt.Errorf("is required")
		}
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number of seconds", v)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	if f > 9e12 {
		return 0, fmt.Errorf("%q is out of range", v)
	}
	return int64(math.Round(f * 1000)), nil
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
	case f > cluster.MaxGPUsPerNode:
		return 0, 0, fmt.Errorf("%g GPUs is more than a node can have (%d)", f, cluster.MaxGPUsPerNode)
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
			return nil, fmt.Errorf("node selector %q is not key=value", kv)
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
			return nil, fmt.Errorf("toleration %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t, effect)
		}
		if k == "" && hasValue {
			return nil, fmt.Errorf("toleration %q has a value but no key", t)
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
	Replicas     *int32             `json:"replicas"`
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
	file   string
	sc     *bufio.Scanner
	closer func() error
	line   int
	order  orderCheck
	in     interner
}

func newJSONLSource(file string, r io.Reader, closer func() error) *jsonlSource {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	return &jsonlSource{file: file, sc: sc, closer: closer, in: interner{}}
}

func (s *jsonlSource) Close() error    { return s.closer() }
func (s *jsonlSource) Notes() []string { return nil }

func (s *jsonlSource) Next(j *cluster.JobSpec) (bool, error) {
	for {
		if !s.sc.Scan() {
			if err := s.sc.Err(); err != nil {
				return false, inputErr(s.file, s.line+1, "", "%v", err)
			}
			return false, nil
		}
		s.line++
		b := bytes.TrimSpace(s.sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		return true, s.parse(b, j)
	}
}

func (s *jsonlSource) parse(b []byte, j *cluster.JobSpec) error {
	bad := func(field, format string, args ...any) error {
		return inputErr(s.file, s.line, field, format, args...)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var x jsonJob
	if err := dec.Decode(&x); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return bad(ute.Field, "expected %s, got a JSON %s", ute.Type, ute.Value)
		}
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return bad(strings.Trim(f, `"`), "unknown field")
		}
		return bad("", "not a JSON object: %s", msg)
	}
	if dec.More() {
		return bad("", "more than one JSON value on the line")
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
		v, err := seconds(strconv.FormatFloat(*p, 'g', -1, 64), true)
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
		if *x.Replicas < 1 {
			return bad("replicas", "must be at least 1")
		}
		j.Replicas = *x.Replicas
	}
	if j.Pod.GPUs, j.Pod.GPUMilli, err = gpuRequest(x.GPUs); err != nil {
		return bad("gpus", "%v", err)
	}
	if x.CPU != nil {
		if x.CPU.Sign() < 0 {
			return bad("cpu", "is negative")
		}
		j.Pod.MilliCPU = x.CPU.MilliValue()
	}
	if x.Memory != nil {
		if x.Memory.Sign() < 0 {
			return bad("memory", "is negative")
		}
		j.Pod.MemoryMiB = (x.Memory.Value() + (1<<20 - 1)) >> 20
	}
	if x.GPUMemory != nil {
		if x.GPUMemory.Sign() < 0 {
			return bad("gpuMemory", "is negative")
		}
		j.Pod.GPUMemMiB = (x.GPUMemory.Value() + (1<<20 - 1)) >> 20
	}
	if x.MIG != "" {
		if j.Pod.GPUs < 1 {
			return bad("mig", "a pod asking for MIG instances asks for at least one in gpus")
		}
		j.Pod.MIG = x.MIG
	}
	c, err := constraintsFrom(x.NodeSelector, x.Affinity, x.Tolerations)
	if err != nil {
		return bad("", "%v", err)
	}
	if c != nil {
		key := c.Key()
		j.Constraints, _ = s.in.get(key, func() (*cluster.Constraints, error) { return c, nil })
	}
	if !s.order.ok(j.Submit) {
		return bad("submit", "lines must be in submit order; this one is earlier than the line before")
	}
	return nil
}
