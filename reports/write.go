package reports

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"gpuplan.dev/gpuplan/sim"
)

// WriteFileAtomic writes a file through a temporary file in the same
// folder and renames it into place, so a reader never sees half a file.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Files are the names written into an output folder.
const (
	FileSummary  = "summary.json"
	FileJobs     = "jobs.csv"
	FileTimeline = "timeline.csv"
	FileReport   = "report.md"
	// FileNodes is written when fragmentation is sampled.
	FileNodes = "nodes.csv"
	// FileHTML is the self-contained HTML report; DirPlots holds each plot
	// as NAME.png and NAME.svg.
	FileHTML = "report.html"
	DirPlots = "plots"
)

// writeFile writes one file of an output folder. The folder is being
// built aside (see reports/outdir) and appears whole, so its files need no
// rename of their own.
func writeFile(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteDir writes summary.json, jobs.csv, timeline.csv, report.md, the
// plots and report.html into dir, a folder being built aside: write a
// run's folder through scenarios/pipeline, which puts it in place whole
// (and writes the pieces of its folders on the run's workers).
func WriteDir(dir string, res *sim.Result, s *Summary) error {
	f, err := NewFolder(dir, res, s)
	if err != nil {
		return err
	}
	for _, p := range f.Pieces() {
		if err := p.Write(); err != nil {
			return err
		}
	}
	return f.Finish()
}

// Folder is one run's output folder split into pieces (each chart, each
// file) that read the run and its summary and write files of their own,
// so that they may be written in any order and at once, on as many
// goroutines as there are cores: the bytes of every file are the same
// whatever the order. Finish writes what needs them all.
type Folder struct {
	dir   string
	res   *sim.Result
	s     *Summary
	specs []chartSpec
	plots []*Plot // by spec, once its piece has run; nil: nothing drawn
}

// Piece is one part of a folder: a chart (its PNG and SVG) or a file.
type Piece struct {
	// Cost is a rough estimate of the CPU time the piece takes (ns), so
	// that a pool can start the largest pieces first.
	Cost  int64
	Write func() error
}

// NewFolder makes dir (a folder being built aside) and its plots folder
// and lists what goes in it.
func NewFolder(dir string, res *sim.Result, s *Summary) (*Folder, error) {
	if err := os.MkdirAll(filepath.Join(dir, DirPlots), 0o755); err != nil {
		return nil, err
	}
	specs := chartSpecs(res, s)
	return &Folder{dir: dir, res: res, s: s, specs: specs, plots: make([]*Plot, len(specs))}, nil
}

// Pieces are the folder's charts and every file but report.html and
// summary.json. Each may run on its own goroutine, all before Finish.
func (f *Folder) Pieces() []Piece {
	res, s := f.res, f.s
	var out []Piece
	for i := range f.specs {
		c := &f.specs[i]
		out = append(out, Piece{Cost: c.cost, Write: func() error {
			p, err := c.render()
			if err != nil || p == nil {
				return err
			}
			for _, file := range []struct {
				ext  string
				data []byte
			}{{".png", p.PNG}, {".svg", p.SVG}} {
				path := filepath.Join(f.dir, DirPlots, p.Name+file.ext)
				if err := writeFile(path, func(w io.Writer) error { _, err := w.Write(file.data); return err }); err != nil {
					return fmt.Errorf("writing %s: %w", path, err)
				}
			}
			f.plots[i] = p
			return nil
		}})
	}
	file := func(name string, cost int64, fn func(io.Writer) error) {
		out = append(out, Piece{Cost: cost, Write: func() error { return f.write(name, fn) }})
	}
	jobs := int64(res.NumJobs())
	intervals := int64(len(res.Timeline.PendingJobMs))
	file(FileJobs, jobs*costJobRow, func(w io.Writer) error { return WriteJobsCSV(w, res, s.pricing, showbackOf(s)) })
	file(FileTimeline, intervals*costTLRow, func(w io.Writer) error { return WriteTimelineCSV(w, res) })
	file(FileReport, 0, func(w io.Writer) error { return WriteMarkdown(w, s) })
	if res.Nodes != nil {
		file(FileNodes, int64(len(res.Nodes))*costJobRow, func(w io.Writer) error { return WriteNodesCSV(w, res) })
	}
	// The three metric files share their series: one piece.
	out = append(out, Piece{Cost: 3*intervals*costTLRow + jobs*costMetricJob, Write: func() error {
		times, fams := MetricSeries(res, s)
		if err := f.write(FileMetricsCSV, func(w io.Writer) error { return WriteMetricsCSV(w, s.start, times, fams) }); err != nil {
			return err
		}
		if err := f.write(FileMetricsProm, func(w io.Writer) error { return WritePrometheus(w, s.start, times, fams) }); err != nil {
			return err
		}
		return f.write(FileMetricsOpenMetrics, func(w io.Writer) error { return WriteOpenMetrics(w, s.start, times, fams) })
	}})
	if s.Cost != nil {
		file(FileFOCUS, jobs*costFOCUSRow, func(w io.Writer) error { return WriteFOCUS(w, res, s) })
	}
	return out
}

// Finish writes report.html, which embeds the charts, then summary.json,
// whose presence says the rest is complete; after every piece has run.
func (f *Folder) Finish() error {
	if err := f.WriteHTML(); err != nil {
		return err
	}
	return f.WriteSummary()
}

// WriteHTML writes report.html, which embeds the charts: after every
// piece has run.
func (f *Folder) WriteHTML() error {
	var plots []Plot
	for _, p := range f.plots {
		if p != nil {
			plots = append(plots, *p)
		}
	}
	return f.write(FileHTML, func(w io.Writer) error { return WriteHTML(w, f.s, plots) })
}

// WriteSummary writes summary.json, whose presence says the rest is
// complete: last.
func (f *Folder) WriteSummary() error {
	return f.write(FileSummary, func(w io.Writer) error { return WriteJSON(w, f.s) })
}

func (f *Folder) write(name string, fn func(io.Writer) error) error {
	path := filepath.Join(f.dir, name)
	if err := writeFile(path, fn); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes the summary as indented JSON.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// JobsHeader is the header of jobs.csv. Times are seconds from the start of
// the run (empty when the job never started or has not ended).
func JobsHeader() []string {
	return []string{"id", "name", "queue", "priority", "replicas", "pods_bound", "gpus_per_pod", "cpu_milli", "memory_mib",
		"submit_s", "start_s", "end_s", "wait_s", "jct_s", "duration_s", "outcome", "pool", "gpu_hours", "wait_reason", "diagnosis",
		"attempts", "disruptions", "lost_s", "checkpoint_s", "cost_usd", "lost_cost_usd",
		"step_s", "comm_s", "fabric", "nodes_spanned", "admitted_s", "admission_wait_s", "preemptions", "showback_usd"}
}

func showbackOf(s *Summary) *Showback {
	if s.Cost == nil {
		return nil
	}
	return s.Cost.Showback
}

func msText(ms sim.Time) string {
	if ms < 0 {
		return ""
	}
	return string(appendMs(nil, ms))
}

// WriteJobsCSV writes one row per job; with pricing, its cost (else the
// cost columns are empty) and, with a showback, its cost with its share
// of its team's idle cost (what it paid times its team's showback over
// what the team's pods paid). Rows are built in one reused buffer, and
// written 32 KiB at a time: a million jobs cost no allocation per row.
func WriteJobsCSV(w io.Writer, res *sim.Result, pr *Pricing, sb *Showback) error {
	var cost, lost []float64
	if pr != nil {
		cost, lost = JobCosts(res, pr)
	}
	factor := map[string]float64{}
	if sb != nil {
		for _, t := range sb.Teams {
			if t.Allocated > 0 {
				factor[t.Team] = t.Total / t.Allocated
			}
		}
	}
	var r csvRow
	for _, h := range JobsHeader() {
		r.str(h)
	}
	if err := r.end(w); err != nil {
		return err
	}
	for i, j := range res.Records() {
		r.int(int64(j.ID))
		r.str(j.Name)
		r.str(j.Queue)
		r.int(int64(j.Priority))
		r.int(int64(j.Replicas))
		r.int(int64(j.PodsBound))
		if j.Pod.Shared() {
			r.thousandths(int64(j.Pod.GPUMilli))
		} else {
			r.int(int64(j.Pod.GPUs))
		}
		r.int(j.Pod.MilliCPU)
		r.int(j.Pod.MemoryMiB)
		r.ms(j.Submit)
		r.ms(j.Start)
		r.ms(j.End)
		r.ms(j.Wait())
		r.ms(j.JCT())
		r.ms(j.Duration)
		r.str(j.Outcome.String())
		if j.Pool >= 0 {
			r.str(res.Pools[j.Pool].Spec.Name)
		} else {
			r.empty()
		}
		r.float(gpuHours(j.HeldMilliMs), 3)
		r.str(res.Reason(j.Reason))
		r.str(j.Diagnosis())
		r.int(int64(j.Attempts))
		r.int(int64(j.Disruptions))
		r.ms(j.LostMs)
		r.ms(j.CheckpointMs)
		if cost != nil {
			r.float(cost[i], 4)
			r.float(lost[i], 4)
		} else {
			r.empty()
			r.empty()
		}
		if st := j.Step(); st != nil {
			r.float((st.ComputeMs+st.CommMs)/1000, 4)
			r.float(st.CommMs/1000, 4)
			r.str(st.Fabric)
			r.int(int64(st.Nodes))
		} else {
			r.empty()
			r.empty()
			r.empty()
			r.empty()
		}
		r.ms(j.Admitted)
		r.ms(j.AdmissionWait())
		r.int(int64(j.Preemptions))
		if sb != nil && cost != nil {
			r.float(cost[i]*factor[j.Queue], 4)
		} else {
			r.empty()
		}
		if err := r.end(w); err != nil {
			return err
		}
	}
	if err := res.RecordsErr(); err != nil {
		return err
	}
	return r.flush(w)
}

// WriteTimelineCSV writes, per bucket, each pool's mean allocated GPUs and
// the mean numbers of pending and running jobs.
func WriteTimelineCSV(w io.Writer, res *sim.Result) error {
	cw := csv.NewWriter(w)
	header := []string{"start_s", "end_s"}
	for _, p := range res.Pools {
		header = append(header, "alloc_gpus:"+p.Spec.Name)
	}
	header = append(header, "alloc_gpus:cluster", "allocation:cluster", "pending_jobs", "running_jobs")
	frag := res.Timeline.FragMilli != nil
	if frag {
		for _, p := range res.Pools {
			header = append(header, "frag_gpus:"+p.Spec.Name)
		}
		header = append(header, "frag_gpus:cluster")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	tl := &res.Timeline
	gpus := 0
	for _, p := range res.Pools {
		gpus += p.Spec.Nodes * int(p.Spec.GPUsPerNode)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for i := range tl.PendingJobMs {
		width := tl.Width(i, res.End)
		if width <= 0 {
			continue
		}
		lo := sim.Time(i) * tl.Interval
		row := []string{msText(lo), msText(lo + width)}
		var total int64
		for p := range res.Pools {
			a := tl.Allocated[p][i]
			total += a
			row = append(row, f(float64(a)/1000/float64(width)))
		}
		alloc := 0.0
		if gpus > 0 {
			alloc = float64(total) / 1000 / float64(width) / float64(gpus)
		}
		row = append(row, f(float64(total)/1000/float64(width)), strconv.FormatFloat(alloc, 'f', 4, 64),
			f(float64(tl.PendingJobMs[i])/float64(width)), f(float64(tl.RunningJobMs[i])/float64(width)))
		if frag {
			var sum int64
			for p := range res.Pools {
				sum += tl.FragMilli[p][i]
				row = append(row, f(float64(tl.FragMilli[p][i])/1000))
			}
			row = append(row, f(float64(sum)/1000))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteNodesCSV writes every node's state at the end of the run.
func WriteNodesCSV(w io.Writer, res *sim.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"node", "pool", "pods", "free_cpu_milli", "free_memory_mib", "free_gpus", "frag_gpus"}); err != nil {
		return err
	}
	f := func(milli int64) string { return strconv.FormatFloat(float64(milli)/1000, 'f', 3, 64) }
	for i, n := range res.Nodes {
		if err := cw.Write([]string{strconv.Itoa(i), res.Pools[n.Pool].Spec.Name, strconv.Itoa(int(n.Pods)),
			strconv.FormatInt(n.FreeMilliCPU, 10), strconv.FormatInt(n.FreeMemoryMiB, 10), f(n.FreeMilliGPU), f(n.FragMilliGPU)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
