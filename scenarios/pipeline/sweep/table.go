package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
)

// Output files of a sweep.
const (
	FileCSV  = "sweep.csv"
	FileJSON = "sweep.json"
	FileHTML = "sweep.html"
	// FileDecision is the decision page: the answer first, then the
	// Pareto front, the sensitivity and every point.
	FileDecision = reports.FileDecision
)

// maxPointFile bounds a point file read back.
const maxPointFile = 16 << 20

// Table is a sweep's result: one row per point, in index order.
type Table struct {
	Sweep      string   `json:"sweep"`
	Digest     string   `json:"digest"`
	Parameters []string `json:"parameters"`
	Metrics    []string `json:"metrics"`
	// Constraints, when the spec has some, mark each row's Meets.
	Constraints []string `json:"constraints,omitempty"`
	Seeds       []uint64 `json:"seeds"`
	Rows        []Row    `json:"rows"`
}

// Row is one point's settings and, for each metric, its mean and 95%
// interval over the seeds.
type Row struct {
	Index  int    `json:"index"`
	Values []any  `json:"values"`
	Stats  []Stat `json:"metrics"`
	// Meets is whether every constraint's metric mean meets it (with
	// constraints only).
	Meets *bool `json:"meets,omitempty"`
}

// Stat is a metric's mean over n seeds with its 95% confidence interval
// (Student's t; lo = hi = mean with one seed).
type Stat struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo95"`
	Hi   float64 `json:"hi95"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// Summarize is the mean and 95% interval of x.
func Summarize(x []float64) Stat {
	s := Stat{N: len(x)}
	if len(x) == 0 {
		return s
	}
	if len(x) == 1 {
		s.Mean, s.Lo, s.Hi = x[0], x[0], x[0]
		return s
	}
	s.Mean, s.SD = stat.MeanStdDev(x, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(x) - 1)}.Quantile(0.975)
	h := t * s.SD / math.Sqrt(float64(len(x)))
	s.Lo, s.Hi = s.Mean-h, s.Mean+h
	return s
}

// Merge reads the point files of every folder given (each a sweep's
// output folder, or its points folder) and joins them into the table.
// Every point of the sweep must be there exactly once, all of one sweep.
func Merge(dirs []string) (*Table, error) {
	var files []string
	for _, d := range dirs {
		pd := d
		if st, err := os.Stat(filepath.Join(d, DirPoints)); err == nil && st.IsDir() {
			pd = filepath.Join(d, DirPoints)
		}
		m, err := filepath.Glob(filepath.Join(pd, "[0-9]*.json"))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(pd); err != nil {
			return nil, &IOError{err}
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, &scenarios.InputError{File: dirs[0], Msg: "no sweep point files (points/NNNNNN.json)"}
	}
	var t *Table
	var total int
	var cons []Constraint
	from := map[int]string{}
	var rows []Row
	for _, f := range files {
		pf, err := readPoint(f)
		if err != nil {
			return nil, err
		}
		if t == nil {
			t = &Table{Sweep: pf.Sweep, Digest: pf.Digest, Parameters: pf.Parameters, Metrics: pf.MetricNames, Constraints: pf.Constraints, Seeds: pf.Seeds}
			total = pf.Total
			for _, text := range pf.Constraints {
				c, err := ParseConstraint(text)
				if err != nil {
					return nil, &scenarios.InputError{File: f, Field: "constraints", Msg: err.Error()}
				}
				cons = append(cons, c)
			}
		}
		if pf.Digest != t.Digest {
			return nil, &scenarios.InputError{File: f, Field: "digest", Msg: fmt.Sprintf("is a point of another sweep (digest %s; %s has %s)", scenarios.Quote(pf.Digest), files[0], t.Digest)}
		}
		if pf.Index < 0 || pf.Index >= total || pf.Total != total || len(pf.Values) != len(t.Parameters) || len(pf.MetricNames) != len(t.Metrics) || len(pf.Result.Metrics) != len(t.Metrics) {
			return nil, &scenarios.InputError{File: f, Field: "index", Msg: fmt.Sprintf("point %d of %d does not fit the sweep", pf.Index, pf.Total)}
		}
		if prev, ok := from[pf.Index]; ok {
			return nil, &scenarios.InputError{File: f, Field: "index", Msg: fmt.Sprintf("point %d is also in %s: a point may be merged once", pf.Index, prev)}
		}
		from[pf.Index] = f
		row := Row{Index: pf.Index, Values: pf.Values}
		for _, x := range pf.Result.Metrics {
			row.Stats = append(row.Stats, Summarize(x))
		}
		if len(cons) > 0 {
			meets := true
			for _, c := range cons {
				m := slices.Index(t.Metrics, c.Metric.Name)
				if m < 0 {
					return nil, &scenarios.InputError{File: f, Field: "constraints", Msg: fmt.Sprintf("metric %s is not kept", c.Metric.Name)}
				}
				meets = meets && c.Meets(row.Stats[m].Mean)
			}
			row.Meets = &meets
		}
		rows = append(rows, row)
	}
	if len(rows) != total {
		var missing []int
		for i := 0; i < total && len(missing) < 10; i++ {
			if _, ok := from[i]; !ok {
				missing = append(missing, i)
			}
		}
		return nil, &scenarios.InputError{File: dirs[0], Msg: fmt.Sprintf("%d of the sweep's %d points are missing (first: %v); run the shards that hold them", total-len(rows), total, missing)}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Index < rows[j].Index })
	t.Rows = rows
	return t, nil
}

func readPoint(f string) (*PointFile, error) {
	st, err := os.Stat(f)
	if err != nil {
		return nil, &IOError{err}
	}
	if st.Size() > maxPointFile {
		return nil, &scenarios.InputError{File: f, Msg: fmt.Sprintf("a point file of %d bytes; at most %d", st.Size(), maxPointFile)}
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return nil, &IOError{err}
	}
	var pf PointFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return nil, &scenarios.InputError{File: f, Msg: "not a sweep point file: " + err.Error()}
	}
	return &pf, nil
}

// CSV writes the table: index, one column per parameter, then for each
// metric its mean, lo95 and hi95.
func (t *Table) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := append([]string{"index"}, t.Parameters...)
	for _, m := range t.Metrics {
		head = append(head, m+".mean", m+".lo95", m+".hi95")
	}
	if len(t.Constraints) > 0 {
		head = append(head, "meets")
	}
	w.Write(head)
	for _, r := range t.Rows {
		rec := []string{strconv.Itoa(r.Index)}
		for _, v := range r.Values {
			rec = append(rec, FormatValue(v))
		}
		for _, s := range r.Stats {
			rec = append(rec, num(s.Mean), num(s.Lo), num(s.Hi))
		}
		if r.Meets != nil {
			rec = append(rec, strconv.FormatBool(*r.Meets))
		}
		w.Write(rec)
	}
	w.Flush()
	return b.Bytes()
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', 10, 64) }

// JSON writes the table as indented JSON.
func (t *Table) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	return append(b, '\n'), err
}

// Write writes sweep.csv, sweep.json, sweep.html and decision.html into dir, each
// atomically.
func (t *Table) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &IOError{err}
	}
	j, err := t.JSON()
	if err != nil {
		return err
	}
	html, err := t.HTML()
	if err != nil {
		return err
	}
	d, err := t.Decision()
	if err != nil {
		return err
	}
	page, err := d.HTML()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{FileCSV, t.CSV()}, {FileJSON, j}, {FileHTML, html}, {FileDecision, page}} {
		if err := writeBytesAtomic(dir, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

func writeBytesAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-"+name+"-*")
	if err != nil {
		return &IOError{err}
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// CreateTemp makes the file 0600; the sweep's files are for whoever
	// reads the folder, as every other output (0644).
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return &IOError{err}
	}
	return nil
}
