package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/validate/strict"
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

// ParseError is nccl-tests output that cannot be read; it names the file,
// the line and the field (a column of the results table, or a JSON key)
// when known, as every reader's InputError does (exit code 2).
type ParseError = strict.InputError

// Bounds on what ParseOutput reads (the same as scenarios'): a line of
// text output, the whole of a JSON output, and what an error quotes.
const (
	maxLineBytes = strict.MaxLineBytes
	maxJSONBytes = strict.MaxFileBytes
)

// quote quotes at most a few bytes of input (strict.Quote).
func quote(s string) string { return strict.Quote(s) }

// clip bounds a decoder's message, which may carry input.
func clip(msg string) string {
	const most = 4 * strict.MaxQuote
	if len(msg) <= most {
		return msg
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes of message cut)", msg[:cut], len(msg)-cut)
}

var (
	// slurm's srun -l prefixes every line with the task number: " 0: ".
	slurmPrefix = regexp.MustCompile(`^\s*\d+:\s?`)
	rankLine    = regexp.MustCompile(`^#\s+Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.*)$`)
)

// ParseOutput reads nccl-tests text output, or its JSON (-J) output
// when the first non-blank character is '{'. A leading byte order mark is
// skipped; r being an *os.File that is not a regular file (a device, a
// pipe, a folder) is refused, and no line of more than 1 MiB is read.
func ParseOutput(file string, r io.Reader) (*Run, error) {
	if f, ok := r.(*os.File); ok {
		st, err := f.Stat()
		if err != nil {
			return nil, &ParseError{File: file, Msg: clip(err.Error())}
		}
		if !st.Mode().IsRegular() {
			return nil, &ParseError{File: file, Msg: "is not a regular file (" + st.Mode().Type().String() + "): gpuplan reads files, not devices, pipes or folders"}
		}
	}
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		br.Discard(3)
	}
	for skipped := 0; ; skipped++ {
		b, err := br.Peek(1)
		if err != nil {
			return nil, &ParseError{File: file, Msg: "the file is empty"}
		}
		if b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t' {
			if skipped > maxJSONBytes {
				return nil, &ParseError{File: file, Msg: fmt.Sprintf("more than %d MiB of blank space and nothing else", maxJSONBytes>>20)}
			}
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
	sc.Buffer(make([]byte, 0, 1<<16), maxLineBytes)
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
					if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
						return nil, &ParseError{File: file, Line: line, Field: "Avg bus bandwidth", Msg: fmt.Sprintf("%s is not a non-negative number", quote(f[0]))}
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
			var fe *fieldError
			if errors.As(err, &fe) {
				return nil, &ParseError{File: file, Line: line, Field: fe.field, Msg: fe.msg}
			}
			return nil, &ParseError{File: file, Line: line, Msg: err.Error()}
		}
		if !ok {
			run.Skipped++ // MPI noise and the like
			continue
		}
		if n := len(run.Points); n > 0 && p.Bytes <= run.Points[n-1].Bytes {
			return nil, &ParseError{File: file, Line: line, Field: "size", Msg: fmt.Sprintf("%d does not grow from the row before (%d)", p.Bytes, run.Points[n-1].Bytes)}
		}
		if len(run.Points) >= maxPoints {
			return nil, &ParseError{File: file, Line: line, Msg: fmt.Sprintf("more than %d result rows: is this one nccl-tests run?", maxPoints)}
		}
		run.WrongNA = run.WrongNA || p.wrongNA
		run.Wrong += p.wrong
		run.Points = append(run.Points, p.CommPoint)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{File: file, Line: line + 1, Msg: fmt.Sprintf("the line is longer than %d MiB: is this nccl-tests output?", maxLineBytes>>20)}
		}
		return nil, &ParseError{File: file, Line: line + 1, Msg: clip(err.Error())}
	}
	if len(run.Points) == 0 {
		return nil, &ParseError{File: file, Msg: "no result rows: is this nccl-tests output?"}
	}
	return run, nil
}

// maxPoints bounds the result rows of one run (nccl-tests sweeps sizes by
// powers of two: a few dozen rows).
const maxPoints = 1 << 16

// fieldError is a bad value in a column of a result row.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

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
		return row{}, false, &fieldError{"size", fmt.Sprintf("%d is out of range (1 B to 1 PiB)", size)}
	}
	m := f[len(f)-8:]
	num := func(s, what string) (float64, error) {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return 0, &fieldError{what, fmt.Sprintf("%s is not a non-negative number", quote(s))}
		}
		return x, nil
	}
	var v [6]float64
	for i, k := range []int{0, 1, 2, 4, 5, 6} {
		name := [...]string{"out-of-place time", "out-of-place algbw", "out-of-place busbw", "in-place time", "in-place algbw", "in-place busbw"}[i]
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
	data, err := io.ReadAll(io.LimitReader(r, maxJSONBytes+1))
	if err != nil {
		return nil, &ParseError{File: file, Msg: clip(err.Error())}
	}
	if len(data) > maxJSONBytes {
		return nil, &ParseError{File: file, Msg: fmt.Sprintf("the JSON output is larger than %d MiB: is this nccl-tests -J output?", maxJSONBytes>>20)}
	}
	// nccl-tests writes NaN as the string "nan"; such a field fails to
	// decode as a number and is reported.
	var rep jsonReport
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&rep); err != nil {
		line := 1 + bytes.Count(data[:min(int(dec.InputOffset()), len(data))], []byte("\n"))
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, &ParseError{File: file, Line: line, Field: clip(ute.Field), Msg: fmt.Sprintf("not nccl-tests JSON output: expected %s, got a JSON %s", ute.Type, clip(ute.Value))}
		}
		return nil, &ParseError{File: file, Line: line, Msg: "not nccl-tests JSON output: " + clip(err.Error())}
	}
	if len(rep.Results) > maxPoints {
		return nil, &ParseError{File: file, Field: "results", Msg: fmt.Sprintf("more than %d results: is this one nccl-tests run?", maxPoints)}
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
			return nil, &ParseError{File: file, Field: fmt.Sprintf("results[%d].size", i), Msg: fmt.Sprintf("%d is not positive and growing", res.Size)}
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
				return 0, 0, 0, &fieldError{fmt.Sprintf("results[%d]", i), "a time and non-negative bandwidths are required"}
			}
			return *t, m.AlgBW, m.BusBW, nil
		}
		if p.TimeUS, p.AlgBWGBps, p.BusBWGBps, err = take(res.OutOfPlace); err != nil {
			fe := err.(*fieldError)
			return nil, &ParseError{File: file, Field: fe.field + ".out_of_place", Msg: fe.msg}
		}
		var inAlg float64
		if p.InTimeUS, inAlg, p.InBusBWGBp, err = take(res.InPlace); err != nil {
			fe := err.(*fieldError)
			return nil, &ParseError{File: file, Field: fe.field + ".in_place", Msg: fe.msg}
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
