package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/models/serving"
)

// An LLM service's request trace (llm.requestTrace): a CSV of requests,
// header `time,input_tokens,output_tokens`, then a row a request: its
// arrival in seconds from the start (decimals allowed) and its prompt and
// output lengths in tokens; arrivals in time order (several may share a
// time). Azure's published LLM inference traces (AzurePublicDataset,
// AzureLLMInferenceTrace_conv.csv and _code.csv) are read as written:
// header `TIMESTAMP,ContextTokens,GeneratedTokens`, timestamps such as
// `2023-11-16 18:15:46.6805900`, made relative to the first row's.

// LLMTraceHeader is the header a request trace starts with.
const LLMTraceHeader = "time,input_tokens,output_tokens"

// AzureLLMTraceHeader is the header of Azure's LLM inference traces.
const AzureLLMTraceHeader = "TIMESTAMP,ContextTokens,GeneratedTokens"

// azureTimestamp is the layout of Azure's TIMESTAMP (UTC, up to 9
// decimals of a second).
const azureTimestamp = "2006-01-02 15:04:05.999999999"

// MaxLLMTraceRows bounds a request trace: the exact model is for short
// windows.
const MaxLLMTraceRows = 5_000_000

// LLMTraceSpec names a request trace file. The cluster run serves it as
// the service's load and lengths: its arrivals counted in bins of Bin
// (default 1m) from the run's start, each bin's count over its length a
// rate held over the bin, and its prompt and output lengths the trace's
// own (each an empirical distribution). After the trace's last bin no
// request arrives, unless Loop replays it from the start; a trace longer
// than the horizon is cut there.
type LLMTraceSpec struct {
	Path string    `json:"path"`
	Bin  *Duration `json:"bin,omitempty"`
	Loop bool      `json:"loop,omitempty"`
}

// DefaultLLMTraceBin is a request trace's bin when none is given.
const DefaultLLMTraceBin = 60_000

// Bounds of llm.requestTrace.bin, ms.
const (
	minLLMTraceBin = 1000
	maxLLMTraceBin = 24 * 3600 * 1000
)

// binMs is the trace's bin, ms.
func (t *LLMTraceSpec) binMs() int64 {
	if t.Bin == nil {
		return DefaultLLMTraceBin
	}
	return t.Bin.Millis()
}

// LLMTraceLoad is a request trace's arrivals as a rate curve: the count
// in each bin of binMs from 0 over the bin's length (requests a second),
// held over the bin, up to the last request's bin; then 0, or with loop
// the bins again from the start up to horizonMs (0: no horizon, no
// repeat). A point is given where the rate changes. Bins from horizonMs
// on are left out; cut reports whether a request of the trace was. The
// curve is built from the requests, not from an array of bins (a trace
// of two requests a century apart is two bins, not 3e9), and a curve of
// more than MaxRatePoints changes of rate (a short trace in small bins
// looped over a long horizon) is an error, as a load.csv of more rows is.
func LLMTraceLoad(reqs []serving.LLMRequest, binMs int64, loop bool, horizonMs int64) (pts []serving.Point, cut bool, err error) {
	if len(reqs) == 0 || binMs <= 0 {
		return nil, false, nil
	}
	period := (int64(reqs[len(reqs)-1].ArrivalMs)/binMs + 1) * binMs
	end := period
	if horizonMs > 0 && (loop || horizonMs < period) {
		end = horizonMs
	}
	// The last bin holds a request: a horizon before its end loses some.
	cut = end < period
	perSec := float64(binMs) / 1000
	add := func(at int64, rate float64) error {
		if n := len(pts); n == MaxRatePoints && pts[n-1].Rate != rate {
			return fmt.Errorf("more than %d changes of rate up to %s: give a larger bin or a shorter horizon", MaxRatePoints, time.Duration(end)*time.Millisecond)
		}
		pts = appendRate(pts, at, rate)
		return nil
	}
	// One pass over the trace: the bins with requests, 0 between them,
	// a point where the rate changes.
	var once []serving.Point
	put := func(at int64, rate float64) { once = appendRate(once, at, rate) }
	for i, done := 0, int64(0); i < len(reqs); {
		bin := int64(reqs[i].ArrivalMs) / binMs
		j := i
		for j < len(reqs) && int64(reqs[j].ArrivalMs)/binMs == bin {
			j++
		}
		if bin*binMs > done {
			put(done, 0)
		}
		put(bin*binMs, float64(j-i)/perSec)
		i, done = j, (bin+1)*binMs
	}
	// A replay of a trace whose rate changes (two points or more) adds
	// all of its points but perhaps the first, so the replays stop at
	// MaxRatePoints, each costing its points; a trace of one rate is one
	// point whatever the horizon.
	flat := len(once) == 1
	for k := int64(0); k*period < end; k++ {
		for _, p := range once {
			at := k*period + p.AtMs
			if at >= end {
				break
			}
			if err := add(at, p.Rate); err != nil {
				return nil, false, err
			}
		}
		if flat {
			break
		}
	}
	if end == period {
		if err := add(period, 0); err != nil {
			return nil, false, err
		}
	}
	return pts, cut, nil
}

// appendRate appends a point of rate at at unless the curve pts is at
// that rate already.
func appendRate(pts []serving.Point, at int64, rate float64) []serving.Point {
	if n := len(pts); n > 0 && pts[n-1].Rate == rate {
		return pts
	}
	return append(pts, serving.Point{AtMs: at, Rate: rate})
}

// ReadLLMTraceCSV reads a request trace, gpuplan's or Azure's, strictly:
// errors name the file, line and column (time, input_tokens or
// output_tokens; TIMESTAMP, ContextTokens or GeneratedTokens); a request
// longer than maxModelLen is one (0: no limit).
func ReadLLMTraceCSV(file string, data []byte, maxModelLen int) ([]serving.LLMRequest, error) {
	if len(data) > MaxFileBytes {
		return nil, inputErr(file, 0, "", "is %d bytes, more than %d (%d MiB), the most a request trace holds", len(data), MaxFileBytes, MaxFileBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	out := make([]serving.LLMRequest, 0, min(bytes.Count(data, []byte{'\n'})+1, MaxLLMTraceRows))
	header, azure := false, false
	cols := [3]string{"time", "input_tokens", "output_tokens"}
	var first time.Time
	for line := 1; len(data) > 0; line++ {
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		if len(raw) > MaxLineBytes {
			return nil, inputErr(file, line, "", "a line of %d bytes, more than %d", len(raw), MaxLineBytes)
		}
		text := strings.TrimSpace(string(bytes.TrimSuffix(raw, []byte("\r"))))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		if !header {
			switch strings.ReplaceAll(text, " ", "") {
			case LLMTraceHeader:
			case AzureLLMTraceHeader:
				azure, cols = true, [3]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
			default:
				return nil, inputErr(file, line, "header", "is %s; a request trace starts with the header %s (or Azure's %s)", Quote(text), LLMTraceHeader, AzureLLMTraceHeader)
			}
			header = true
			continue
		}
		if len(fields) != 3 {
			return nil, inputErr(file, line, "", "%s has %d fields; a row is %s", Quote(text), len(fields), strings.Join(cols[:], ","))
		}
		if len(out) == MaxLLMTraceRows {
			return nil, inputErr(file, line, "", "more than %d rows, the most a request trace holds", MaxLLMTraceRows)
		}
		ts := strings.TrimSpace(fields[0])
		// The arrival in ms, as near as a float64 holds the time given:
		// sec*1000 would round twice (1.001 s to 1000.999... ms, a bin
		// edge's request into the bin before).
		var ms float64
		var err error
		if azure {
			t, perr := time.Parse(azureTimestamp, ts)
			if perr != nil {
				return nil, inputErr(file, line, cols[0], "%s is not a time such as 2023-11-16 18:15:46.6805900", Quote(ts))
			}
			if len(out) == 0 {
				first = t
			}
			d := t.Sub(first)
			if d < 0 {
				return nil, inputErr(file, line, cols[0], "%s is before the row before: requests must be in time order", Quote(ts))
			}
			if d.Milliseconds() > maxDurationMs {
				return nil, inputErr(file, line, cols[0], "%s is more than 100 years after the first row", Quote(ts))
			}
			ms = float64(d.Nanoseconds()) / 1e6
		} else {
			sec, err := strconv.ParseFloat(ts, 64)
			if err != nil || !finite(sec) || sec < 0 || sec*1000 > maxDurationMs {
				return nil, inputErr(file, line, cols[0], "%s is not a time in seconds from 0 to 100 years", Quote(ts))
			}
			// To the microsecond, then in ms.
			ms = math.Round(sec*1e6) / 1e3
		}
		var n [2]int
		for j, name := range cols[1:] {
			v := strings.TrimSpace(fields[1+j])
			n[j], err = strconv.Atoi(v)
			if err != nil || n[j] < 1 || n[j] > serving.MaxTokens {
				return nil, inputErr(file, line, name, "%s is not a count of tokens from 1 to %d", Quote(v), serving.MaxTokens)
			}
		}
		if maxModelLen > 0 && n[0]+n[1] > maxModelLen {
			return nil, inputErr(file, line, cols[2], "a request of %d prompt and %d output tokens is above maxModelLen %d", n[0], n[1], maxModelLen)
		}
		r := serving.LLMRequest{ArrivalMs: ms, Input: n[0], Output: n[1]}
		if k := len(out); k > 0 && r.ArrivalMs < out[k-1].ArrivalMs {
			return nil, inputErr(file, line, cols[0], "%s is before the row before: requests must be in time order", Quote(ts))
		}
		out = append(out, r)
	}
	if !header {
		return nil, inputErr(file, 0, "header", "the file is empty; a request trace starts with the header %s", LLMTraceHeader)
	}
	if len(out) == 0 {
		return nil, inputErr(file, 0, "", "has a header and no requests")
	}
	return out, nil
}
