package traces

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The openb trace (Alibaba cluster-trace-gpu-v2023, used by the FGD paper).
//
// Pods: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
// creation_time,deletion_time,scheduled_time, times in seconds from the
// trace start. Each pod becomes a one-pod job:
//
//	submit     creation_time
//	duration   deletion_time - scheduled_time (the time it ran)
//	gpus       num_gpu whole GPUs; num_gpu = 1 with gpu_milli < 1000 is a
//	           share of gpu_milli/1000 of one GPU
//	cpu, mem   cpu_milli, memory_mib
//	affinity   gpu_spec "A|B" -> node label gpuplan.dev/gpu-model In [A, B]
//	queue      qos (LS, BE, Burstable, Guaranteed)
//
// Pods that never ran in the source (no scheduled_time, phase Pending) are
// submitted with their deletion time as a deadline and the time from
// creation to deletion as an upper bound on their run (pendingPods:
// replay), or set aside and counted (pendingPods: exclude). A pod whose
// lifetime is 0 s is given 1 ms and counted.
//
// Nodes: sn,cpu_milli,memory_mib,gpu,model; identical nodes form one pool.

type openbSource struct {
	*csvTable
	in      interner
	exclude bool

	pods, gpuPods, pending, zero int
	phases                       textCounts
}

// newOpenbSource reads an openb pod list with times. Rows a little out of
// creation order (within ReorderWindow rows) are put back in order.
func newOpenbSource(file string, r io.Reader, closer func() error, opts TraceOptions) (*streamTrace, error) {
	t, _, err := openCSVTable(file, r, 0, "the trace is empty")
	if err != nil {
		return nil, err
	}
	if err := t.require("required openb pod column is missing (the header must have name,cpu_milli,memory_mib,num_gpu,gpu_milli)",
		"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"); err != nil {
		return nil, err
	}
	if err := t.require("column is missing: this openb pod list has no times, so it cannot be replayed in time (it is an input for the inflation experiment)",
		"creation_time", "deletion_time", "scheduled_time"); err != nil {
		return nil, err
	}
	t.viewRows()
	src := &openbSource{csvTable: t, in: interner{}, exclude: opts.PendingPods == PendingExclude, phases: textCounts{}}
	st := csvStream(t, FormatOpenb, closer, "creation_time", true, func(rec []string, a *absJob) (bool, error) {
		skip, err := src.parse(rec, &a.job)
		a.at = a.job.Submit
		return skip, err
	})
	st.notes = src.Notes
	return st, nil
}

func (s *openbSource) Notes() []string {
	var out []string
	out = append(out, fmt.Sprintf("openb: %d pods read, %d of them ask for GPUs", s.pods, s.gpuPods))
	if s.pending > 0 {
		if s.exclude {
			out = append(out, fmt.Sprintf("openb: %d pods never ran in the source trace (Pending, no scheduled_time) and were excluded (pendingPods: exclude)", s.pending))
		} else {
			out = append(out, fmt.Sprintf("openb: %d pods never ran in the source trace (Pending, no scheduled_time); they were submitted with their deletion time as a deadline (pendingPods: replay)", s.pending))
		}
	}
	if s.zero > 0 {
		out = append(out, fmt.Sprintf("openb: %d pods with a zero-second run were given 1 ms", s.zero))
	}
	if len(s.phases) > 0 {
		out = append(out, "openb: pod phases in the source: "+s.phases.String())
	}
	return out
}

// openbNum parses a non-negative whole number column of at most max; ok
// is false when empty.
func openbNum(t *csvTable, rec []string, field string, required bool, max int64) (n int64, ok bool, err error) {
	v := t.get(rec, field)
	if v == "" {
		if required {
			return 0, false, t.bad(field, "is empty")
		}
		return 0, false, nil
	}
	n, err = strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, t.bad(field, "%s is not a non-negative whole number", strict.Quote(v))
	}
	if n > max {
		return 0, false, t.bad(field, "%d is more than %d, the most gpuplan takes here", n, max)
	}
	return n, true, nil
}

// The largest openb time, in seconds from the trace start.
const maxOpenbSeconds = int64(maxTraceSeconds)

// openbPod reads a row's name, queue, requests and GPU models into a one-pod job.
func openbPod(t *csvTable, in interner, rec []string, j *cluster.JobSpec) error {
	var v [4]int64
	for i, f := range []struct {
		name string
		max  int64
	}{{"cpu_milli", strict.MaxPodMilliCPU}, {"memory_mib", strict.MaxPodMemoryMiB}, {"num_gpu", 1 << 30}, {"gpu_milli", 1 << 30}} {
		n, _, err := openbNum(t, rec, f.name, true, f.max)
		if err != nil {
			return err
		}
		v[i] = n
	}
	for _, f := range []string{"name", "qos", "gpu_spec"} {
		if err := checkText(t.get(rec, f)); err != nil {
			return t.bad(f, "%v", err)
		}
	}
	cpu, mem, ngpu, milli := v[0], v[1], v[2], v[3]
	if ngpu > cluster.MaxGPUsPerNode {
		return t.bad("num_gpu", "%d GPUs is more than a node can have", ngpu)
	}
	if milli > cluster.MilliGPU {
		return t.bad("gpu_milli", "%d is over 1000 (one whole GPU)", milli)
	}
	*j = cluster.JobSpec{
		Name:     t.name(t.get(rec, "name")),
		Queue:    strings.Clone(t.get(rec, "qos")),
		Replicas: 1,
		Pod:      cluster.PodSpec{MilliCPU: cpu, MemoryMiB: mem},
	}
	if j.Queue == "" {
		j.Queue = "default"
	}
	switch {
	case ngpu == 1 && milli > 0 && milli < cluster.MilliGPU:
		j.Pod.GPUMilli = int32(milli)
	case ngpu > 0:
		j.Pod.GPUs = int32(ngpu)
	}
	if spec := t.get(rec, "gpu_spec"); spec != "" {
		j.Constraints, _ = in.get(spec, func() (*cluster.Constraints, error) {
			return &cluster.Constraints{Affinity: []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: strings.Split(strings.Clone(spec), "|")}}}}, nil
		})
	}
	return nil
}

func (s *openbSource) parse(rec []string, j *cluster.JobSpec) (skip bool, err error) {
	if err := openbPod(s.csvTable, s.in, rec, j); err != nil {
		return false, err
	}
	var created, deleted, scheduled int64
	var hasSched bool
	if created, _, err = openbNum(s.csvTable, rec, "creation_time", true, maxOpenbSeconds); err != nil {
		return false, err
	}
	if deleted, _, err = openbNum(s.csvTable, rec, "deletion_time", true, maxOpenbSeconds); err != nil {
		return false, err
	}
	if scheduled, hasSched, err = openbNum(s.csvTable, rec, "scheduled_time", false, maxOpenbSeconds); err != nil {
		return false, err
	}
	if deleted < created {
		return false, s.bad("deletion_time", "is before creation_time")
	}
	if hasSched && (scheduled < created || scheduled > deleted) {
		return false, s.bad("scheduled_time", "is outside creation_time..deletion_time")
	}
	s.pods++
	if j.Pod.MilliGPUs() > 0 {
		s.gpuPods++
	}
	s.phases.add(s.get(rec, "pod_phase"))
	if !hasSched {
		s.pending++
		if s.exclude {
			return true, nil
		}
	}
	j.Submit = created * 1000
	if hasSched {
		j.Duration = (deleted - scheduled) * 1000
	} else {
		j.Duration = (deleted - created) * 1000
		j.Deadline = deleted * 1000
		j.Flags |= cluster.FlagNoRecordedRun
	}
	if j.Duration == 0 {
		j.Duration = 1
		s.zero++
	}
	return false, nil
}

// ReadOpenbPods reads every pod of an openb pod list (times, if any, are
// ignored): the input of the inflation experiment.
func ReadOpenbPods(path string) ([]cluster.JobSpec, error) {
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closer()
	return parseOpenbPods(path, r)
}

func parseOpenbPods(path string, r io.Reader) ([]cluster.JobSpec, error) {
	t, _, err := openCSVTable(path, r, 0, "the pod list is empty")
	if err != nil {
		return nil, err
	}
	if err := t.require("required openb pod column is missing (the header must have name,cpu_milli,memory_mib,num_gpu,gpu_milli)",
		"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"); err != nil {
		return nil, err
	}
	t.viewRows()
	in := interner{}
	var out []cluster.JobSpec
	err = t.each(func(rec []string) error {
		if len(out) >= sim.MaxJobs {
			line, _ := t.r.FieldPos(0)
			return tooManyJobs(path, line)
		}
		var j cluster.JobSpec
		if err := openbPod(t, in, rec, &j); err != nil {
			return err
		}
		j.Duration = 1
		out = append(out, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, strict.Errorf(path, 2, "", "the pod list has no pods")
	}
	return out, nil
}

// ReadOpenbNodes reads an openb node list (sn,cpu_milli,memory_mib,gpu,model)
// into pools of identical nodes, in order of first appearance.
func ReadOpenbNodes(path string) ([]cluster.PoolSpec, error) {
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closer()
	return parseOpenbNodes(path, r)
}

func parseOpenbNodes(path string, r io.Reader) ([]cluster.PoolSpec, error) {
	t, _, err := openCSVTable(path, r, 0, "the node list is empty")
	if err != nil {
		return nil, err
	}
	if err := t.require("required column is missing (the header must have sn,cpu_milli,memory_mib,gpu,model)", "cpu_milli", "memory_mib", "gpu", "model"); err != nil {
		return nil, err
	}
	t.viewRows()
	var pools poolsByShape
	nodes := 0
	err = t.each(func(rec []string) error {
		if nodes++; nodes > strict.MaxNodes {
			return t.bad("sn", "the node list has more than %d nodes, the most gpuplan models", strict.MaxNodes)
		}
		var k poolShape
		k.model = t.get(rec, "model")
		if err := checkText(k.model); err != nil {
			return t.bad("model", "%v", err)
		}
		k.model = strings.Clone(k.model)
		for _, f := range []struct {
			name string
			dst  *int64
			max  int64
		}{{"cpu_milli", &k.cpu, strict.MaxPodMilliCPU}, {"memory_mib", &k.mem, strict.MaxPodMemoryMiB}, {"gpu", &k.gpu, 1 << 30}} {
			n, _, err := openbNum(t, rec, f.name, true, f.max)
			if err != nil {
				return err
			}
			*f.dst = n
		}
		switch {
		case k.cpu == 0 || k.mem == 0:
			return t.bad("cpu_milli", "a node needs CPU and memory")
		case k.gpu > cluster.MaxGPUsPerNode:
			return t.bad("gpu", "%d GPUs is more than %d", k.gpu, cluster.MaxGPUsPerNode)
		case k.gpu > 0 && k.model == "":
			return t.bad("model", "a node with GPUs needs a model")
		}
		pools.add(k, func(int) cluster.PoolSpec {
			name := strings.ToLower(k.model)
			if name == "" {
				name = "cpu"
			}
			return cluster.PoolSpec{
				Name: fmt.Sprintf("%s-%dgpu-%dcpu-%dgi", name, k.gpu, k.cpu/1000, k.mem/1024), GPUModel: k.model, GPUsPerNode: int32(k.gpu),
				MilliCPU: k.cpu, MemoryMiB: k.mem,
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pools.pools) == 0 {
		return nil, strict.Errorf(path, 2, "", "the node list has no nodes")
	}
	return pools.pools, nil
}
