package traces

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"maps"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Traces that are not in time order as published are read whole, then
// sorted (they fit: the Philly job log has 117,325 jobs, the PAI task
// table about 1.2 million tasks).
//
// Philly cluster_job_log (JSON, msr-fiddle/philly-traces): an array of jobs
// {status, vc, jobid, submitted_time, user, attempts: [{start_time,
// end_time, detail: [{ip, gpus: [...]}]}]}:
//
//	name       jobid; queue vc
//	submit     submitted_time
//	duration   the sum of the attempts' end - start (the GPU time the job
//	           used, failed attempts included)
//	pods       one per machine of the first attempt's detail, with the most
//	           GPUs any of them used
//	           jobs with no attempt that started and ended are set aside
//
// Alibaba PAI cluster-trace-gpu-v2020 pai_task_table.csv:
// job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
// plan_gpu,gpu_type (times in seconds; plan_cpu in percent of a core,
// plan_mem in GB, plan_gpu in percent of a GPU). One job per task:
//
//	name       job_name/task_name; queue the job's user (pai_job_table:
//	           job_name,inst_id,user,status,start_time,end_time), else "pai"
//	submit     start_time (the trace has no submit time)
//	duration   end_time - start_time; tasks without both are set aside
//	pods       inst_num (at least 1)
//	gpus       plan_gpu/100: a share below 100, whole GPUs above (rounded up)
//	cpu, mem   plan_cpu/100 cores, plan_mem GB
//	affinity   gpu_type (not MISC) -> gpuplan.dev/gpu-model In [gpu_type]

// batchSource serves sorted jobs from memory.
type batchSource struct {
	jobs  []cluster.JobSpec
	i     int
	notes []string
	info  TraceInfo
}

func (b *batchSource) Next(j *cluster.JobSpec) (bool, error) {
	if b.i >= len(b.jobs) {
		return false, nil
	}
	*j = b.jobs[b.i]
	b.jobs[b.i] = cluster.JobSpec{}
	b.i++
	return true, nil
}
func (b *batchSource) Notes() []string { return b.notes }
func (b *batchSource) Close() error    { return nil }
func (b *batchSource) Info() TraceInfo { return b.info }

// sortJobs orders absolute-time jobs and makes their times relative to the
// first.
func sortJobs(in []absJob) []cluster.JobSpec {
	slices.SortStableFunc(in, func(a, b absJob) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	out := make([]cluster.JobSpec, len(in))
	for i := range in {
		out[i] = in[i].job
		out[i].Submit = in[i].at - in[0].at
	}
	return out
}

type phillyAttempt struct {
	Start  *string `json:"start_time"`
	End    *string `json:"end_time"`
	Detail []struct {
		IP   string   `json:"ip"`
		GPUs []string `json:"gpus"`
	} `json:"detail"`
}

type phillyJob struct {
	Status    string          `json:"status"`
	VC        string          `json:"vc"`
	JobID     string          `json:"jobid"`
	Submitted *string         `json:"submitted_time"`
	User      string          `json:"user"`
	Attempts  []phillyAttempt `json:"attempts"`
}

// phillyTime reads a Philly log time; "None" or empty is missing.
func phillyTime(v *string) (int64, bool, error) {
	if v == nil || *v == "" || *v == "None" {
		return 0, false, nil
	}
	ms, err := parseWallTime(*v)
	return ms, err == nil, err
}

func readPhillyRaw(file string, r io.Reader) (*batchSource, error) {
	// The log may be one line of hundreds of MB: it is bounded per job
	// rather than per line.
	lr := &valueLimit{r: newBoundedReaderNoLines(r), limit: maxJSONValueBytes}
	dec := json.NewDecoder(lr)
	bad := func(i int, field, format string, args ...any) error {
		return &strict.InputError{File: file, Field: fmt.Sprintf("[%d].%s", i, field), Msg: fmt.Sprintf(format, args...)}
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, strict.Errorf(file, 0, "", "the job log is empty; it is a JSON array of jobs")
		}
		return nil, jsonErr(file, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, strict.Errorf(file, 0, "", "the job log must be a JSON array of jobs (cluster_job_log)")
	}
	var jobs []absJob
	statuses := map[string]int{}
	never, uneven := 0, 0
	for i := 0; dec.More(); i++ {
		if i >= sim.MaxJobs {
			return nil, tooManyJobs(file, 0)
		}
		lr.reset()
		var pj phillyJob
		if err := dec.Decode(&pj); err != nil {
			return nil, jsonErr(file, dec, fmt.Errorf("job %d: %w", i, err))
		}
		for _, f := range []struct{ name, v string }{{"jobid", pj.JobID}, {"vc", pj.VC}, {"status", pj.Status}} {
			if err := checkText(f.v); err != nil {
				return nil, bad(i, f.name, "%v", err)
			}
		}
		statuses[pj.Status]++
		sub, ok, err := phillyTime(pj.Submitted)
		if err != nil {
			return nil, bad(i, "submitted_time", "%v", err)
		}
		if !ok {
			return nil, bad(i, "submitted_time", "is missing")
		}
		var dur int64
		ran := false
		for k, a := range pj.Attempts {
			s, okS, err := phillyTime(a.Start)
			if err != nil {
				return nil, bad(i, fmt.Sprintf("attempts[%d].start_time", k), "%v", err)
			}
			e, okE, err := phillyTime(a.End)
			if err != nil {
				return nil, bad(i, fmt.Sprintf("attempts[%d].end_time", k), "%v", err)
			}
			if okS && okE && e >= s {
				dur += e - s
				ran = true
				if dur > maxTraceMillis {
					return nil, bad(i, "attempts", "the attempts run for more than %g seconds", maxTraceSeconds)
				}
			}
		}
		if !ran {
			never++
			continue
		}
		pods, each := int64(1), int64(0)
		if len(pj.Attempts) > 0 && len(pj.Attempts[0].Detail) > 0 {
			d := pj.Attempts[0].Detail
			pods = int64(len(d))
			for _, m := range d {
				if n := int64(len(m.GPUs)); n != each && each != 0 {
					uneven++
				}
				each = max(each, int64(len(m.GPUs)))
			}
		}
		if pods > 1<<12 || each > cluster.MaxGPUsPerNode {
			return nil, bad(i, "attempts[0].detail", "%d machines of up to %d GPUs is more than gpuplan models", pods, each)
		}
		if dur == 0 {
			dur = 1
		}
		name := pj.JobID
		if name == "" {
			name = "philly-" + strconv.Itoa(i+1)
		}
		q := pj.VC
		if q == "" {
			q = "philly"
		}
		jobs = append(jobs, absJob{at: sub, job: cluster.JobSpec{Name: name, Queue: q, Duration: dur, Replicas: int32(pods), Pod: cluster.PodSpec{GPUs: int32(each)}}})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(file, dec, err)
	}
	info := TraceInfo{File: file, Format: FormatPhillyRaw, Rows: len(jobs) + never}
	notes := []string{fmt.Sprintf("philly-raw: %d jobs read, %d replayed; run time = the sum of a job's attempts", len(jobs)+never, len(jobs))}
	if never > 0 {
		notes = append(notes, fmt.Sprintf("philly-raw: %d jobs with no attempt that started and ended were set aside", never))
	}
	if uneven > 0 {
		notes = append(notes, fmt.Sprintf("philly-raw: %d jobs used different GPU counts per machine; each pod got the most", uneven))
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(statuses)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, statuses[k]))
	}
	notes = append(notes, "philly-raw: job statuses in the source: "+strings.Join(parts, ", "))
	return &batchSource{jobs: sortJobs(jobs), notes: notes, info: info}, nil
}

func jsonErr(file string, dec *json.Decoder, err error) error {
	var long *valueTooLong
	if errors.As(err, &long) {
		return &strict.InputError{File: file, Msg: fmt.Sprintf("a job of the log is larger than %d MiB (near byte %d): is this the Philly cluster_job_log?", maxJSONValueBytes>>20, dec.InputOffset())}
	}
	var se *json.SyntaxError
	msg := err.Error()
	if errors.As(err, &se) {
		msg = "invalid JSON: " + se.Error()
	}
	return &strict.InputError{File: file, Msg: fmt.Sprintf("%s (near byte %d)", boundMessage(msg), dec.InputOffset())}
}

// valueTooLong is a JSON value over its reader's limit.
type valueTooLong struct{}

func (valueTooLong) Error() string { return "JSON value too long" }

// valueLimit fails once more than limit bytes are read between resets
// (one job of a JSON log, with the decoder's read-ahead).
type valueLimit struct {
	r     io.Reader
	n     int64
	limit int64
}

func (v *valueLimit) reset() { v.n = 0 }

func (v *valueLimit) Read(p []byte) (int, error) {
	if v.n >= v.limit {
		return 0, &valueTooLong{}
	}
	if int64(len(p)) > v.limit-v.n {
		p = p[:v.limit-v.n]
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	return n, err
}

// ReadPAIUsers reads pai_job_table.csv into job_name -> user.
func ReadPAIUsers(file string, r io.Reader) (map[string]string, error) {
	t, _, err := openCSVTable(file, r, '#', "the job table is empty")
	if err != nil {
		return nil, err
	}
	if err := t.require("required PAI job table column is missing (job_name,inst_id,user,status,start_time,end_time)", "job_name", "user"); err != nil {
		return nil, err
	}
	t.viewRows()
	users := map[string]string{}
	err = t.each(func(rec []string) error {
		if len(users) >= sim.MaxJobs {
			line, _ := t.r.FieldPos(0)
			return tooManyJobs(file, line)
		}
		job, user := t.get(rec, "job_name"), t.get(rec, "user")
		if err := checkText(job); err != nil {
			return t.bad("job_name", "%v", err)
		}
		if err := checkText(user); err != nil {
			return t.bad("user", "%v", err)
		}
		users[strings.Clone(job)] = strings.Clone(user)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return users, nil
}

func paiNumber(t *csvTable, rec []string, field string, max float64) (float64, bool, error) {
	v := t.get(rec, field)
	if v == "" {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > max {
		return 0, false, t.bad(field, "%s is not a number in 0..%g", strict.Quote(v), max)
	}
	return f, true, nil
}

func readPAITasks(file string, r io.Reader, users map[string]string) (*batchSource, error) {
	t, _, err := openCSVTable(file, r, '#', "the task table is empty; it needs a header row (job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)")
	if err != nil {
		return nil, err
	}
	if err := t.require("required PAI task table column is missing (pai_task_table has job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)",
		"job_name", "task_name", "inst_num", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu"); err != nil {
		return nil, err
	}
	t.viewRows()
	var jobs []absJob
	in := interner{}
	rows, unfinished, rounded := 0, 0, 0
	statuses := textCounts{}
	err = t.each(func(rec []string) error {
		rows++
		statuses.add(t.get(rec, "status"))
		start, okS, err := paiNumber(t, rec, "start_time", 9e9)
		if err != nil {
			return err
		}
		end, okE, err := paiNumber(t, rec, "end_time", 9e9)
		if err != nil {
			return err
		}
		if !okS || !okE || end < start {
			unfinished++
			return nil
		}
		inst, _, err := paiNumber(t, rec, "inst_num", 1<<16)
		if err != nil {
			return err
		}
		cpu, _, err := paiNumber(t, rec, "plan_cpu", strict.MaxPodMilliCPU/10)
		if err != nil {
			return err
		}
		mem, _, err := paiNumber(t, rec, "plan_mem", strict.MaxPodMemoryMiB>>10)
		if err != nil {
			return err
		}
		gpu, _, err := paiNumber(t, rec, "plan_gpu", 100*cluster.MaxGPUsPerNode)
		if err != nil {
			return err
		}
		var pod cluster.PodSpec
		pod.MilliCPU = int64(math.Round(cpu * 10))
		pod.MemoryMiB = int64(math.Round(mem * 1024))
		switch {
		case gpu == 0:
		case gpu < 100:
			pod.GPUMilli = int32(max(math.Round(gpu*10), 1))
		default:
			whole := math.Ceil(gpu / 100)
			if whole*100 != gpu {
				rounded++
			}
			pod.GPUs = int32(whole)
		}
		for _, f := range []string{"job_name", "task_name", "gpu_type"} {
			if err := checkText(t.get(rec, f)); err != nil {
				return t.bad(f, "%v", err)
			}
		}
		if len(jobs) >= sim.MaxJobs {
			line, _ := t.r.FieldPos(0)
			return tooManyJobs(file, line)
		}
		job := t.get(rec, "job_name")
		q := users[job]
		if q == "" {
			q = "pai"
		}
		j := cluster.JobSpec{Name: job + "/" + t.get(rec, "task_name"), Queue: q, Replicas: int32(max(inst, 1)), Pod: pod,
			Duration: max(int64(math.Round((end-start)*1000)), 1)}
		if gt := strings.Clone(t.get(rec, "gpu_type")); gt != "" && gt != "MISC" && pod.MilliGPUs() > 0 {
			if j.Constraints, err = in.get(gt, func() (*cluster.Constraints, error) {
				return &cluster.Constraints{Affinity: []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: []string{gt}}}}}, nil
			}); err != nil {
				return err
			}
		}
		jobs = append(jobs, absJob{at: int64(math.Round(start * 1000)), job: j})
		return nil
	})
	if err != nil {
		return nil, err
	}

	notes := []string{fmt.Sprintf("pai: %d tasks read, %d replayed, submitted at their start_time (the trace has no submit time)", rows, len(jobs))}
	if unfinished > 0 {
		notes = append(notes, fmt.Sprintf("pai: %d tasks without both a start and an end time were set aside", unfinished))
	}
	if rounded > 0 {
		notes = append(notes, fmt.Sprintf("pai: %d tasks asked for more than one GPU but not a whole number; rounded up", rounded))
	}
	if users == nil {
		notes = append(notes, "pai: no job table given; every task is in queue pai")
	}
	notes = append(notes, "pai: task statuses in the source: "+statuses.String())
	return &batchSource{jobs: sortJobs(jobs), notes: notes, info: TraceInfo{File: file, Format: FormatPAI, Rows: rows, Header: true}}, nil
}

// ReadPAIMachines reads pai_machine_spec.csv (machine,gpu_type,cap_cpu,
// cap_mem,cap_gpu: CPU cores, memory GB, GPUs) into pools of identical
// machines, in order of first appearance, named pai-<gpu_type>-<n>.
func ReadPAIMachines(path string) ([]cluster.PoolSpec, error) {
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closer()
	return parsePAIMachines(path, r)
}

func parsePAIMachines(path string, r io.Reader) ([]cluster.PoolSpec, error) {
	t, _, err := openCSVTable(path, r, '#', "the machine list is empty")
	if err != nil {
		return nil, err
	}
	if err := t.require("required column is missing (pai_machine_spec has machine,gpu_type,cap_cpu,cap_mem,cap_gpu)", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"); err != nil {
		return nil, err
	}
	t.viewRows()
	var pools poolsByShape
	nodes := 0
	err = t.each(func(rec []string) error {
		if nodes++; nodes > strict.MaxNodes {
			return t.bad("machine", "the machine list has more than %d machines, the most gpuplan models", strict.MaxNodes)
		}
		if err := checkText(t.get(rec, "gpu_type")); err != nil {
			return t.bad("gpu_type", "%v", err)
		}
		cpu, err := count(t, rec, "cap_cpu", strict.MaxPodMilliCPU/1000)
		if err != nil {
			return err
		}
		mem, err := count(t, rec, "cap_mem", strict.MaxPodMemoryMiB>>10)
		if err != nil {
			return err
		}
		gpu, err := count(t, rec, "cap_gpu", cluster.MaxGPUsPerNode)
		if err != nil {
			return err
		}
		if cpu == 0 || mem == 0 {
			return t.bad("cap_cpu", "a machine needs CPUs and memory")
		}
		k := poolShape{strings.Clone(t.get(rec, "gpu_type")), gpu, cpu, mem}
		pools.add(k, func(i int) cluster.PoolSpec {
			model := k.model
			if gpu == 0 {
				model = ""
			}
			return cluster.PoolSpec{Name: fmt.Sprintf("pai-%s-%d", strings.ToLower(k.model), i), GPUModel: model,
				GPUsPerNode: int32(gpu), MilliCPU: cpu * 1000, MemoryMiB: mem * 1024}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pools.pools) == 0 {
		return nil, strict.Errorf(path, 2, "", "the machine list has no machines")
	}
	return pools.pools, nil
}
