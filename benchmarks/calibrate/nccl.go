package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models"
)

// Run is one nccl-tests run: its collective, devices and measured sizes.
type Run struct {
	File       string
	Collective string // all_reduce, all_gather, reduce_scatter ("" when the output does not say)
	Version    string // nccl-tests version, when printed
	// Devices are the "# Using devices" lines: rank, host, device name.
	Devices []Device
	Points  []models.CommPoint
	// AvgBusBW is the "# Avg bus bandwidth" footer (GB/s); HasAvg whether there was one.
	AvgBusBW float64
	HasAvg   bool
	// Skipped counts lines that were neither header nor data (MPI noise).
	Skipped int
	// WrongNA is set when #wrong was N/A (validation off).
	WrongNA bool
	Wrong   float64
}

// Device is one rank of a run.
type Device struct {
	Rank   int    `json:"rank"`
	Host   string `json:"host"`
	Device int    `json:"device"`
	Name   string `json:"name"`
}

// Hosts counts the distinct hosts of the run's ranks.
func (r *Run) Hosts() int {
	seen := map[string]bool{}
	for _, d := range r.Devices {
		seen[d.Host] = true
	}
	return len(seen)
}

// ParseError is nccl-tests output that cannot be read; it names the file
// and line.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ExitCode is 2: bad input.
func (e *ParseError) ExitCode() int { return 2 }

var (
	// slurm's srun -l prefixes every line with the task number: " 0: ".
	slurmPrefix = regexp.MustCompile(`^\s*\d+:\s?`)
	rankLine    = regexp.MustCompile(`^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.*)$`)
)

// ParseOutput reads nccl-tests text output, or its JSON (-J) output
// when the first non-blank character is '{'.
func ParseOutput(file string, r io.Reader) (*Run, error) {
	br := bufio.NewReader(r)
	for {
		b, err := br.Peek(1)
		if err != nil {
			return nil, &ParseError{File: file, Msg: "the file is empty"}
		}
		if b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t' {
			br.ReadByte()
			continue
		}
		if b[0] == '{' {
			return parseJSON(file, br)
		}
		return parseText(file, br)
	}
}

func parseText(file string, r io.Reader) (*Run, error) {
	run := &Run{File: file}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), " \t\r")
		if loc := slurmPrefix.FindStringIndex(s); loc != nil && strings.Contains(s[:loc[1]], ":") {
			s = s[loc[1]:]
		}
		t := strings.TrimSpace(s)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			body := strings.TrimSpace(strings.TrimPrefix(t, "#"))
			switch {
			case strings.HasPrefix(body, "nccl-tests version"):
				if f := strings.Fields(body); len(f) >= 3 {
					run.Version = f[2]
				}
			case strings.HasPrefix(body, "Collective test starting:"):
				run.Collective = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(body, "Collective test starting:")), "_perf")
			case strings.HasPrefix(body, "Avg bus bandwidth"):
				v := strings.TrimSpace(body[strings.Index(body, ":")+1:])
				if f := strings.Fields(v); len(f) > 0 {
					x, err := strconv.ParseFloat(f[0], 64)
					if err != nil || x < 0 {
						return nil, &ParseError{File: file, Line: line, Msg: fmt.Sprintf("Avg bus bandwidth %q is not a number", f[0])}
					}
					run.AvgBusBW, run.HasAvg = x, true
				}
			default:
				if m := rankLine.FindStringSubmatch(t); m != nil {
					rank, _ := strconv.Atoi(m[1])
					dev, _ := strconv.Atoi(m[3])
					run.Devices = append(run.Devices, Device{Rank: rank, Host: m[2], Device: dev, Name: strings.TrimSpace(m[4])})
				}
			}
			continue
		}
		p, ok, err := parseRow(t)
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Msg: err.Error()}
		}
		if !ok {
			run.Skipped++ // MPI noise and the like
			continue
		}
		if n := len(run.Points); n > 0 && p.Bytes <= run.Points[n-1].Bytes {
			return nil, &ParseError{File: file, Line: line, Msg: fmt.Sprintf("size %d does not grow from the row before (%d)", p.Bytes, run.Points[n-1].Bytes)}
		}
		run.WrongNA = run.WrongNA || p.wrongNA
		run.Wrong += p.wrong
		run.Points = append(run.Points, p.CommPoint)
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{File: file, Line: line + 1, Msg: err.Error()}
	}
	if len(run.Points) == 0 {
		return nil, &ParseError{File: file, Msg: "no result rows: is this nccl-tests output?"}
	}
	return run, nil
}

type row struct {
	models.CommPoint
	wrong   float64
	wrongNA bool
}

// parseRow reads a data row: size count type [redop root] then time,
// algbw, busbw, #wrong out of place and in place. ok is false for a line
// that is not a data row at all.
func parseRow(t string) (row, bool, error) {
	f := strings.Fields(t)
	if len(f) < 11 {
		return row{}, false, nil
	}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return row{}, false, nil
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return row{}, false, nil
	}
	if size <= 0 || size > 1<<50 {
		return row{}, false, fmt.Errorf("size %d is out of range", size)
	}
	m := f[len(f)-8:]
	num := func(s, what string) (float64, error) {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return 0, fmt.Errorf("%s %q is not a non-negative number", what, s)
		}
		return x, nil
	}
	var v [6]float64
	for i, k := range []int{0, 1, 2, 4, 5, 6} {
		name := [...]string{"time", "algbw", "busbw", "time", "algbw", "busbw"}[i]
		if v[i], err = num(m[k], name); err != nil {
			return row{}, false, err
		}
	}
	r := row{CommPoint: models.CommPoint{Bytes: size, TimeUS: v[0], AlgBWGBps: v[1], BusBWGBps: v[2], InTimeUS: v[3], InBusBWGBp: v[5]}}
	for _, w := range []string{m[3], m[7]} {
		if w == "N/A" {
			r.wrongNA = true
			continue
		}
		x, err := num(w, "#wrong")
		if err != nil {
			return row{}, false, err
		}
		r.wrong += x
	}
	return r, true, nil
}

// jsonReport is nccl-tests' -J output (version 2).
type jsonReport struct {
	Version int `json:"version"`
	Config  struct {
		NGPUs   int `json:"ngpus"`
		Devices []struct {
			Rank       int    `json:"rank"`
			Hostname   string `json:"hostname"`
			Device     int    `json:"device"`
			DeviceInfo string `json:"device_info"`
		} `json:"devices"`
	} `json:"config"`
	Args    []string `json:"args"`
	Results []struct {
		Size       int64            `json:"size"`
		OutOfPlace *jsonMeasurement `json:"out_of_place"`
		InPlace    *jsonMeasurement `json:"in_place"`
	} `json:"results"`
	AverageBusBandwidth *struct {
		Bandwidth json.Number `json:"bandwidth"`
	} `json:"average_bus_bandwidth"`
}

type jsonMeasurement struct {
	Time    *float64 `json:"time"`
	CPUTime *float64 `json:"cpu_time"`
	AlgBW   float64  `json:"alg_bw"`
	BusBW   float64  `json:"bus_bw"`
}

func parseJSON(file string, r io.Reader) (*Run, error) {
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, &ParseError{File: file, Msg: err.Error()}
	}
	// nccl-tests writes NaN as the string "nan"; such a field fails to
	// decode as a number and is reported.
	var rep jsonReport
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&rep); err != nil {
		return nil, &ParseError{File: file, Msg: "not nccl-tests JSON output: " + err.Error()}
	}
	run := &Run{File: file}
	for _, a := range rep.Args {
		base := a[strings.LastIndex(a, "/")+1:]
		if strings.HasSuffix(base, "_perf") {
			run.Collective = strings.TrimSuffix(base, "_perf")
		}
	}
	for _, d := range rep.Config.Devices {
		run.Devices = append(run.Devices, Device{Rank: d.Rank, Host: d.Hostname, Device: d.Device, Name: d.DeviceInfo})
	}
	for i, res := range rep.Results {
		if res.Size <= 0 || (len(run.Points) > 0 && res.Size <= run.Points[len(run.Points)-1].Bytes) {
			return nil, &ParseError{File: file, Msg: fmt.Sprintf("results[%d].size %d is not positive and growing", i, res.Size)}
		}
		p := models.CommPoint{Bytes: res.Size}
		take := func(m *jsonMeasurement) (float64, float64, float64, error) {
			if m == nil {
				return 0, 0, 0, nil
			}
			t := m.Time
			if t == nil {
				t = m.CPUTime
			}
			if t == nil || *t < 0 || m.AlgBW < 0 || m.BusBW < 0 {
				return 0, 0, 0, fmt.Errorf("results[%d]: a time and non-negative bandwidths are required", i)
			}
			return *t, m.AlgBW, m.BusBW, nil
		}
		if p.TimeUS, p.AlgBWGBps, p.BusBWGBps, err = take(res.OutOfPlace); err != nil {
			return nil, &ParseError{File: file, Msg: err.Error()}
		}
		var inAlg float64
		if p.InTimeUS, inAlg, p.InBusBWGBp, err = take(res.InPlace); err != nil {
			return nil, &ParseError{File: file, Msg: err.Error()}
		}
		if p.TimeUS == 0 {
			p.TimeUS, p.AlgBWGBps, p.BusBWGBps = p.InTimeUS, inAlg, p.InBusBWGBp
		}
		run.Points = append(run.Points, p)
	}
	if rep.AverageBusBandwidth != nil {
		if x, err := rep.AverageBusBandwidth.Bandwidth.Float64(); err == nil {
			run.AvgBusBW, run.HasAvg = x, true
		}
	}
	if len(run.Points) == 0 {
		return nil, &ParseError{File: file, Msg: "no results in the JSON output"}
	}
	return run, nil
}

// Fabric fits the run: its kind (network when the ranks span hosts,
// PCIe when the devices say so, NVLink otherwise), ranks and alpha/beta.
func (r *Run) Fabric(name string) (models.Fabric, error) {
	f := models.Fabric{Name: name, Collective: r.Collective, Ranks: len(r.Devices), Nodes: r.Hosts(),
		Source: "nccl-tests output " + r.File, Points: append([]models.CommPoint(nil), r.Points...)}
	if f.Collective == "" {
		f.Collective = models.AllReduce
		f.Notes = append(f.Notes, "the output does not name its collective: read as all_reduce")
	}
	if f.Ranks == 0 {
		// No device lines: the bus factor tells n for all-reduce.
		best := r.Points[len(r.Points)-1]
		if best.AlgBWGBps > 0 {
			k := best.BusBWGBps / best.AlgBWGBps
			if k < 2 {
				f.Ranks = int(math.Round(2 / (2 - k)))
			}
		}
		f.Nodes = 1
		f.Notes = append(f.Notes, fmt.Sprintf("no device lines: %d ranks inferred from busbw/algbw", f.Ranks))
	}
	f.Kind = models.FabricNVLink
	switch {
	case f.Nodes > 1:
		f.Kind = models.FabricNetwork
	case len(r.Devices) > 0 && strings.Contains(strings.ToUpper(r.Devices[0].Name), "PCIE"):
		f.Kind = models.FabricPCIe
	}
	if err := models.FitFabric(&f); err != nil {
		return f, err
	}
	return f, nil
}
