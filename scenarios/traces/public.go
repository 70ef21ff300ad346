package traces

import (
	"fmt"
	"io"
	"time"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Public GPU cluster traces, read as published. Each row becomes a gpuplan
// job; times become milliseconds from the trace's first submission. Rows
// may be a little out of time order: a reorder buffer of ReorderWindow
// rows puts them back in order, and a row later than that is an error.
//
// Philly (Microsoft, ATC'19), the processed form of the Pollux and Sia
// simulators: timestamp,duration,num_gpus,gpu_time,cluster
//
//	submit     timestamp (YYYY-MM-DD HH:MM:SS)
//	duration   duration, seconds
//	pods       num_gpus split into the fewest equal pods of at most
//	           GPUsPerNode (8) GPUs each: 16 -> 2 x 8, 12 -> 2 x 6
//	queue      cluster (the virtual cluster)
//	cpu, mem   none (the trace has none)
//
// Helios (SenseTime, SC'21) cluster_log.csv:
// job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,
// end_time,duration,queue
//
//	name       job_id; queue vc
//	submit     submit_time (YYYY-MM-DD HH:MM:SS)
//	duration   duration, seconds (0 -> 1 ms, counted)
//	pods       node_num pods (at least 1) sharing gpu_num GPUs and cpu_num
//	           CPUs equally (split further when they do not divide)
//	(the queue column is the job's wait in the source, in seconds: not used)

// ReorderWindow is how many rows a trace may be out of time order by.
const ReorderWindow = 4096

// TraceTimeLayout is the wall-clock layout of Philly and Helios times.
const TraceTimeLayout = "2006-01-02 15:04:05"

// parseWallTime reads a time in TraceTimeLayout (UTC) as ms since the
// epoch. A time written exactly as the layout is (19 bytes, every field
// in range) is read directly; anything else goes through time.Parse,
// which reads it, or says what is wrong, as it always has.
func parseWallTime(v string) (int64, error) {
	if ms, ok := wallTimeFast(v); ok {
		return ms, nil
	}
	t, err := time.Parse(TraceTimeLayout, v)
	if err != nil {
		return 0, fmt.Errorf("%s is not a time like 2017-10-03 04:52:56", strict.Quote(v))
	}
	return t.UnixMilli(), nil
}

// wallTimeFast reads "YYYY-MM-DD HH:MM:SS" with every field in the range
// time.Parse accepts (day within its month, hour 0-23, minute and second
// 0-59) as ms since the epoch; ok false for anything else (time.Parse
// then decides).
func wallTimeFast(v string) (ms int64, ok bool) {
	if len(v) != len(TraceTimeLayout) || v[4] != '-' || v[7] != '-' || v[10] != ' ' || v[13] != ':' || v[16] != ':' {
		return 0, false
	}
	c0, c1, c2, c3 := v[0]-'0', v[1]-'0', v[2]-'0', v[3]-'0'
	mo0, mo1, d0, d1 := v[5]-'0', v[6]-'0', v[8]-'0', v[9]-'0'
	h0, h1, mi0, mi1 := v[11]-'0', v[12]-'0', v[14]-'0', v[15]-'0'
	s0, s1 := v[17]-'0', v[18]-'0'
	// A byte below '0' wraps around to more than 9.
	if max(c0, c1, c2, c3, mo0, mo1, d0, d1, h0, h1, mi0, mi1, s0, s1) > 9 {
		return 0, false
	}
	year := int64(c0)*1000 + int64(c1)*100 + int64(c2)*10 + int64(c3)
	month, day := int64(mo0)*10+int64(mo1), int64(d0)*10+int64(d1)
	hour, minute, sec := int64(h0)*10+int64(h1), int64(mi0)*10+int64(mi1), int64(s0)*10+int64(s1)
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	return ((daysFromCivil(year, month, day)*24+hour)*60+minute)*60_000 + sec*1000, true
}

// daysIn is the number of days of a month (1-12) of the proleptic
// Gregorian calendar.
func daysIn(month, year int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the days from 1970-01-01 to a date of the proleptic
// Gregorian calendar (year >= 0), by H. Hinnant's days_from_civil: years
// counted from March, so that a leap day ends its year, in eras of 400
// years (146,097 days).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400 // 0..399
	mp := (m + 9) % 12 // March 0 .. February 11
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// splitPods divides n GPUs over at least minPods pods of at most perNode
// GPUs each, all equal: the fewest such pods. A job on more nodes than it
// has GPUs gets one pod per GPU.
func splitPods(n, minPods, perNode int64) (pods, each int64) {
	if n <= 0 {
		return max(minPods, 1), 0
	}
	k := min(max(minPods, 1, (n+perNode-1)/perNode), n)
	for n%k != 0 {
		k++
	}
	return k, n / k
}

// streamTrace streams a trace whose rows parse into jobs (with absolute
// times, or times kept), through the reorder buffer.
type streamTrace struct {
	info   TraceInfo
	closer func() error
	ro     reorderer
	// read parses the next row into a (its at and line set); ok is false
	// at the end of the file, skip set for a row set aside.
	read  func(a *absJob) (ok, skip bool, err error)
	rows  func() int
	notes func() []string
	err   error
	row   absJob    // scratch for read (a local would escape to the heap)
	table *csvTable // the CSV table read, if the format is CSV
}

func newStreamTrace(file, format string, header bool, closer func() error, submitField string, keepTimes bool) *streamTrace {
	return &streamTrace{info: TraceInfo{File: file, Format: format, Header: header}, closer: closer,
		ro: reorderer{file: file, window: ReorderWindow, field: submitField, keepTimes: keepTimes}}
}

func (s *streamTrace) Close() error { return s.closer() }

func (s *streamTrace) Notes() []string {
	if s.notes == nil {
		return nil
	}
	return s.notes()
}

func (s *streamTrace) Info() TraceInfo {
	i := s.info
	if s.rows != nil {
		i.Rows = s.rows()
	}
	return i
}

func (s *streamTrace) Next(j *cluster.JobSpec) (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	for !s.ro.ready(s.ro.done) {
		if s.ro.done {
			return false, nil
		}
		a := &s.row
		*a = absJob{}
		ok, skip, err := s.read(a)
		if err != nil {
			s.err = err
			return false, err
		}
		if !ok {
			s.ro.done = true
			continue
		}
		if skip {
			continue
		}
		if s.ro.seq >= sim.MaxJobs {
			s.err = tooManyJobs(s.info.File, a.line)
			return false, s.err
		}
		if s.ro.passThrough {
			s.ro.seq++
			if err := s.ro.give(a, j); err != nil {
				s.err = err
				return false, err
			}
			return true, nil
		}
		s.ro.push(a)
	}
	if err := s.ro.pop(j); err != nil {
		s.err = err
		return false, err
	}
	return true, nil
}

// csvStream streams a CSV trace whose rows parse into jobs through the
// reorder buffer (times made relative to the first, or kept).
func csvStream(t *csvTable, format string, closer func() error, submitField string, keepTimes bool, parse func(rec []string, a *absJob) (skip bool, err error)) *streamTrace {
	s := newStreamTrace(t.file, format, true, closer, submitField, keepTimes)
	s.table = t
	s.rows = func() int { return t.rows }
	s.read = func(a *absJob) (bool, bool, error) {
		rec, ok, err := t.next()
		if !ok || err != nil {
			return false, false, err
		}
		a.line, _ = t.r.FieldPos(0)
		skip, err := parse(rec, a)
		return true, skip, err
	}
	return s
}

// secondsIn reads v, the value of field, a non-negative number of
// seconds, as ms.
func secondsIn(t *csvTable, field, v string) (int64, error) {
	ms, err := Seconds(v, true)
	if err != nil {
		return 0, t.bad(field, "%v", err)
	}
	return ms, nil
}

func count(t *csvTable, rec []string, field string, max int64) (int64, error) {
	return countIn(t, field, t.get(rec, field), max)
}

// countIn is count of v, the value of field.
func countIn(t *csvTable, field, v string, max int64) (int64, error) {
	if n, ok := lightCount(v, max); ok {
		return n, nil
	}
	return 0, t.bad(field, "%s is not a whole number in 0..%d", strict.Quote(v), max)
}

// smallUint reads 1 to 12 decimal digits (nothing else) as a number, which
// strconv.ParseFloat reads exactly; ok false for anything else.
func smallUint(v string) (int64, bool) {
	if len(v) == 0 || len(v) > 12 {
		return 0, false
	}
	var n int64
	for i := range len(v) {
		c := v[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	return n, true
}

// maxTraceGPUs bounds a job's GPUs in a trace (a job that big is rejected).
const maxTraceGPUs = 1 << 16

func newPhillySource(file string, r io.Reader, closer func() error, opts TraceOptions) (*streamTrace, error) {
	t, _, err := openCSVTable(file, r, '#', "the trace is empty; it needs a header row (timestamp,duration,num_gpus,gpu_time,cluster)")
	if err != nil {
		return nil, err
	}
	if err := t.require("required Philly column is missing (the header is timestamp,duration,num_gpus,gpu_time,cluster)", "timestamp", "duration", "num_gpus"); err != nil {
		return nil, err
	}
	t.viewRows()
	queues := texts{}
	per := opts.gpusPerNode()
	rows, zero := 0, 0
	iTime, iDur, iGPUs, iCluster := t.index("timestamp"), t.index("duration"), t.index("num_gpus"), t.index("cluster")
	s := csvStream(t, FormatPhilly, closer, "timestamp", false, func(rec []string, a *absJob) (bool, error) {
		rows++
		at, err := parseWallTime(t.at(rec, iTime))
		if err != nil {
			return false, t.bad("timestamp", "%v", err)
		}
		dur, err := secondsIn(t, "duration", t.at(rec, iDur))
		if err != nil {
			return false, err
		}
		if dur == 0 {
			dur, zero = 1, zero+1
		}
		n, err := countIn(t, "num_gpus", t.at(rec, iGPUs), maxTraceGPUs)
		if err != nil {
			return false, err
		}
		pods, each := splitPods(n, 1, per)
		q := queues.get(t.at(rec, iCluster))
		if q == "" {
			q = "philly"
		}
		a.at = at
		a.job = cluster.JobSpec{Name: t.numbered("philly-", rows), Queue: q, Duration: dur, Replicas: int32(pods), Pod: cluster.PodSpec{GPUs: int32(each)}}
		return false, nil
	})
	s.notes = func() []string {
		out := []string{fmt.Sprintf("philly: %d jobs read; no CPU or memory requests in the trace; jobs over %d GPUs split into equal pods", rows, per)}
		if zero > 0 {
			out = append(out, fmt.Sprintf("philly: %d jobs with a zero duration were given 1 ms", zero))
		}
		return out
	}
	return s, nil
}

func newHeliosSource(file string, r io.Reader, closer func() error, opts TraceOptions) (*streamTrace, error) {
	t, _, err := openCSVTable(file, r, '#', "the trace is empty; it needs a header row (job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue)")
	if err != nil {
		return nil, err
	}
	if err := t.require("required Helios column is missing (cluster_log.csv has job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue)",
		"job_id", "vc", "gpu_num", "cpu_num", "node_num", "submit_time", "duration"); err != nil {
		return nil, err
	}
	t.viewRows()
	queues := texts{}
	per := opts.gpusPerNode()
	rows, zero, gpuJobs := 0, 0, 0
	states := textCounts{}
	iTime, iDur, iGPUs, iCPUs, iNodes := t.index("submit_time"), t.index("duration"), t.index("gpu_num"), t.index("cpu_num"), t.index("node_num")
	iState, iID, iVC := t.index("state"), t.index("job_id"), t.index("vc")
	s := csvStream(t, FormatHelios, closer, "submit_time", false, func(rec []string, a *absJob) (bool, error) {
		rows++
		at, err := parseWallTime(t.at(rec, iTime))
		if err != nil {
			return false, t.bad("submit_time", "%v", err)
		}
		dur, err := secondsIn(t, "duration", t.at(rec, iDur))
		if err != nil {
			return false, err
		}
		if dur == 0 {
			dur, zero = 1, zero+1
		}
		gpus, err := countIn(t, "gpu_num", t.at(rec, iGPUs), maxTraceGPUs)
		if err != nil {
			return false, err
		}
		cpus, err := countIn(t, "cpu_num", t.at(rec, iCPUs), 1<<20)
		if err != nil {
			return false, err
		}
		nodes, err := countIn(t, "node_num", t.at(rec, iNodes), 1<<12)
		if err != nil {
			return false, err
		}
		if nodes == 0 && gpus > 0 {
			// CPU-only rows of the source give 0 nodes; a GPU job runs on one.
			return false, t.bad("node_num", "is 0 for a job of %d GPUs; a job with GPUs runs on at least one node", gpus)
		}
		pods, each := splitPods(gpus, nodes, per)
		if gpus == 0 {
			pods = max(nodes, 1)
		}
		if cpus*1000/pods > strict.MaxPodMilliCPU {
			return false, t.bad("cpu_num", "%d CPUs over %d pods is more than any node holds (at most %d cores a pod)", cpus, pods, strict.MaxPodMilliCPU/1000)
		}
		if gpus > 0 {
			gpuJobs++
		}
		if st := t.at(rec, iState); st != "" {
			states.add(st)
		}
		name := t.name(t.at(rec, iID))
		if name == "" {
			name = t.numbered("helios-", rows)
		}
		q := queues.get(t.at(rec, iVC))
		if q == "" {
			q = "helios"
		}
		a.at = at
		a.job = cluster.JobSpec{Name: name, Queue: q, Duration: dur, Replicas: int32(pods),
			Pod: cluster.PodSpec{GPUs: int32(each), MilliCPU: cpus * 1000 / pods}}
		return false, nil
	})
	s.notes = func() []string {
		out := []string{fmt.Sprintf("helios: %d jobs read, %d of them ask for GPUs; no memory requests in the trace", rows, gpuJobs)}
		if zero > 0 {
			out = append(out, fmt.Sprintf("helios: %d jobs with a zero duration were given 1 ms", zero))
		}
		if len(states) > 0 {
			out = append(out, "helios: job states in the source: "+states.String())
		}
		return out
	}
	return s, nil
}
