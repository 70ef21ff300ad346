package traces

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// TraceScan is what one light pass over a trace learned (SizeTrace): the
// cluster sized for it and, when that pass read every row, the order of
// its rows, which OpenTrace then takes (TraceOptions.Scan) instead of
// reading the submit column again.
type TraceScan struct {
	// Pools and Notes are DeriveCluster's.
	Pools []cluster.PoolSpec
	Notes []string

	path, format string
	order        traceOrder
	known        bool // order is known
}

// orderOf is the order the scan found for a trace opened as path and
// format (ok false when it found none, or scanned another file).
func (sc *TraceScan) orderOf(path, format string) (traceOrder, bool) {
	if sc == nil || !sc.known || sc.path != path || sc.format != format {
		return orderWindow, false
	}
	return sc.order, true
}

// SizeTrace sizes a cluster for a trace as DeriveCluster does over
// OpenTraceSizing, sweeping the jobs as they come where each pool's come
// in order (clusterSizer.stream; where they do not, a second pass keeps
// them). A Philly or Helios CSV is read in one light pass, its
// lines split at commas and only the columns the sizing needs parsed, which
// also finds the rows' order for OpenTrace; a line that pass does not read
// exactly as the reader would (a quote, a line over 64 KiB, a value the
// reader would refuse) hands the trace to OpenTraceSizing and DeriveCluster,
// which report any error. tick, when not nil, is called every 4,096 jobs
// with the count so far (for a progress display).
func SizeTrace(path, format string, opts TraceOptions, tick func(n int)) (*TraceScan, error) {
	tick = rising(tick)
	if sc, ok := lightSize(path, format, opts, tick); ok {
		return sc, nil
	}
	// A sizer that streams first; one that keeps the jobs when a pool's
	// come out of order (a second pass over the trace).
	for _, stream := range []bool{true, false} {
		z := &clusterSizer{stream: stream}
		pools, notes, err := sizeWith(path, format, opts, tick, z)
		if err != nil {
			return nil, err
		}
		if !z.disorder {
			return &TraceScan{Pools: pools, Notes: notes}, nil
		}
	}
	panic("unreachable: a sizer that keeps the jobs takes any order")
}

// rising is tick called only with counts above those it was called with
// (a second pass over the trace counts again from 0; nil stays nil).
func rising(tick func(int)) func(int) {
	if tick == nil {
		return nil
	}
	top := 0
	return func(n int) {
		if n > top {
			top = n
			tick(n)
		}
	}
}

// sizeWith is DeriveCluster over OpenTraceSizing, tallying in z.
func sizeWith(path, format string, opts TraceOptions, tick func(int), z *clusterSizer) ([]cluster.PoolSpec, []string, error) {
	src, err := OpenTraceSizing(path, format, opts)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	if tick != nil {
		src = Counting(src, 4096, tick)
	}
	return deriveCluster(src, z)
}

// lightColumns are the columns a light sizing pass reads for a format,
// those the reader requires (ok false for a format it does not read).
func lightColumns(format string) (cols []string, ok bool) {
	switch format {
	case FormatPhilly:
		// timestamp, duration, num_gpus: the reader's required columns.
		return []string{"timestamp", "duration", "num_gpus"}, true
	case FormatHelios:
		// submit_time, duration, gpu_num, cpu_num, node_num; job_id and
		// vc are required by the reader but not read here.
		return []string{"submit_time", "duration", "gpu_num", "cpu_num", "node_num", "job_id", "vc"}, true
	}
	return nil, false
}

// lightSize is SizeTrace's light pass (ok false: read the trace with its
// reader instead).
func lightSize(path, format string, opts TraceOptions, tick func(int)) (*TraceScan, bool) {
	names, ok := lightColumns(format)
	if !ok {
		return nil, false
	}
	r, closer, err := OpenMaybeGzip(path)
	if err != nil {
		return nil, false
	}
	sc, ok, disorder := lightSizeFrom(path, format, r, names, opts, tick, true)
	closer()
	if !disorder {
		return sc, ok
	}
	// A pool's jobs came out of order: again, keeping the jobs.
	if r, closer, err = OpenMaybeGzip(path); err != nil {
		return nil, false
	}
	defer closer()
	sc, ok, _ = lightSizeFrom(path, format, r, names, opts, tick, false)
	return sc, ok
}

// lightSizeFrom is lightSize reading r (file names it).
// With stream its sizer streams, and disorder reports that it stopped
// at a job out of order.
func lightSizeFrom(path, format string, r io.Reader, names []string, opts TraceOptions, tick func(int), stream bool) (_ *TraceScan, ok, disorder bool) {
	br := bufio.NewReaderSize(r, 1<<16)
	per := opts.gpusPerNode()
	var (
		idx     []int // the index of each of names in a row
		fields  int   // fields a row has (the header's)
		row     []string
		z       = clusterSizer{stream: stream}
		w       = newTimeWindow()
		late    bool
		base    int64
		rows    int
		first   = true
		job     cluster.JobSpec
		comment = byte('#')
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || (err != nil && !errors.Is(err, io.EOF)) {
			return nil, false, false
		}
		if len(line) == 0 {
			break
		}
		if first {
			line = bytes.TrimPrefix(line, utf8BOM)
			first = false
		}
		if bytes.IndexByte(line, '"') >= 0 {
			return nil, false, false
		}
		// The line's end as the reader takes it off: "\r\n", "\n", or a
		// "\r" that ends the file.
		n := len(line)
		switch {
		case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
			line = line[:n-2]
		case n >= 1 && line[n-1] == '\n':
			line = line[:n-1]
		case n >= 1 && err != nil && line[n-1] == '\r':
			line = line[:n-1]
		}
		more := err == nil
		switch {
		case len(line) == 0 || line[0] == comment:
		case idx == nil:
			header := strings.Split(string(line), ",")
			fields = len(header)
			at := map[string]int{}
			for i, h := range header {
				h = strings.TrimSpace(h)
				if _, dup := at[h]; dup {
					return nil, false, false
				}
				at[h] = i
			}
			for _, c := range names {
				i, ok := at[c]
				if !ok {
					return nil, false, false
				}
				idx = append(idx, i)
			}
		default:
			row = row[:0]
			s := view(line)
			for {
				k := strings.IndexByte(s, ',')
				if k < 0 {
					row = append(row, s)
					break
				}
				row = append(row, s[:k])
				s = s[k+1:]
			}
			if len(row) != fields {
				return nil, false, false
			}
			if rows++; rows > sim.MaxJobs {
				return nil, false, false
			}
			job = cluster.JobSpec{}
			at, ok := lightJob(format, row, idx, per, &job)
			if !ok {
				return nil, false, false
			}
			if rows == 1 {
				base = at
			}
			if !late && !w.add(at) {
				late = true
			}
			job.Submit = at - base
			if !z.add(&job) {
				return nil, false, false
			}
			if z.disorder {
				return nil, false, true
			}
			if tick != nil && rows%4096 == 0 {
				tick(rows)
			}
		}
		if !more {
			break
		}
	}
	if rows == 0 {
		return nil, false, false
	}
	pools, notes, err := z.result(path)
	if err != nil {
		return nil, false, false
	}
	order := orderLate
	if !late {
		order = w.order()
	}
	return &TraceScan{Pools: pools, Notes: notes, path: path, format: format, order: order, known: true}, true, false
}

// lightJob reads a row's submit time and what sizing needs into j, as the
// format's reader would (ok false for a value the reader would refuse).
func lightJob(format string, row []string, idx []int, per int64, j *cluster.JobSpec) (at int64, ok bool) {
	v := func(k int) string { return strings.TrimSpace(row[idx[k]]) }
	at, err := parseWallTime(v(0))
	if err != nil {
		return 0, false
	}
	dur, err := Seconds(v(1), true)
	if err != nil {
		return 0, false
	}
	j.Duration = max(dur, 1) // a zero duration is 1 ms
	switch format {
	case FormatPhilly:
		n, ok := lightCount(v(2), maxTraceGPUs)
		if !ok {
			return 0, false
		}
		pods, each := splitPods(n, 1, per)
		j.Replicas, j.Pod.GPUs = int32(pods), int32(each)
	case FormatHelios:
		gpus, ok1 := lightCount(v(2), maxTraceGPUs)
		cpus, ok2 := lightCount(v(3), 1<<20)
		nodes, ok3 := lightCount(v(4), 1<<12)
		if !ok1 || !ok2 || !ok3 || (gpus > 0 && nodes == 0) {
			return 0, false // the reader says why
		}
		pods, each := splitPods(gpus, nodes, per)
		if gpus == 0 {
			pods = max(nodes, 1)
		}
		if cpus*1000/pods > strict.MaxPodMilliCPU {
			return 0, false
		}
		j.Replicas, j.Pod.GPUs, j.Pod.MilliCPU = int32(pods), int32(each), cpus*1000/pods
	default:
		return 0, false
	}
	return at, true
}

// lightCount is a whole number in 0..max (0 for an empty value), as
// countIn reads it; ok is false where countIn refuses it.
func lightCount(v string, max int64) (int64, bool) {
	if v == "" {
		return 0, true
	}
	if n, ok := smallUint(v); ok && n <= max {
		return n, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > float64(max) || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}
