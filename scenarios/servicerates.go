package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models/serving"
)

// MaxRatePoints bounds the rows of a rate file (a row a second for
// eleven days, a row a minute for two years).
const MaxRatePoints = 1_000_000

// RateCSVHeader is the header a rate file starts with.
const RateCSVHeader = "time,requests_per_second"

// ReadRateCSV reads a request-rate file: the header
// time,requests_per_second, then one row per change of rate, times
// strictly increasing. A time is seconds from the start (90, 5400.5) or a
// duration (90m, 1d2h); a rate is requests per second, from 0 to
// MaxServiceRate. Blank lines and lines starting with # are skipped.
// Every error names the file, line and field and quotes at most MaxQuote
// bytes of the input.
func ReadRateCSV(file string, data []byte) ([]serving.Point, error) {
	if len(data) > MaxFileBytes {
		return nil, inputErr(file, 0, "", "is %d bytes, more than %d (%d MiB), the most a rate file holds", len(data), MaxFileBytes, MaxFileBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// One point a line at most (a 1,000,000-row file spent most of its
	// reading growing the slice).
	out := make([]serving.Point, 0, min(bytes.Count(data, []byte{'\n'})+1, MaxRatePoints))
	header := false
	prevLine := 0
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
		// Two fields, without the slice strings.Split makes a row.
		first, second, _ := strings.Cut(text, ",")
		fields := [2]string{first, second}
		nfields := strings.Count(text, ",") + 1
		if !header {
			if nfields != 2 || strings.TrimSpace(fields[0]) != "time" || strings.TrimSpace(fields[1]) != "requests_per_second" {
				return nil, inputErr(file, line, "header", "is %s; a rate file starts with the header %s", Quote(text), RateCSVHeader)
			}
			header = true
			continue
		}
		if nfields != 2 {
			return nil, inputErr(file, line, "", "%s has %d fields; a row is time,requests_per_second", Quote(text), nfields)
		}
		if len(out) == MaxRatePoints {
			return nil, inputErr(file, line, "", "more than %d rows, the most a rate file holds", MaxRatePoints)
		}
		at, err := rateTime(strings.TrimSpace(fields[0]))
		if err != nil {
			return nil, inputErr(file, line, "time", "%v", err)
		}
		rs := strings.TrimSpace(fields[1])
		r, err := strconv.ParseFloat(rs, 64)
		if err != nil || !finite(r) || r < 0 || r > MaxServiceRate {
			return nil, inputErr(file, line, "requests_per_second", "%s is not a rate from 0 to %g requests/s", Quote(rs), MaxServiceRate)
		}
		if n := len(out); n > 0 && at <= out[n-1].AtMs {
			return nil, inputErr(file, line, "time", "%s is not after the row before (line %d, %s): rows must be in time order, one per time", Quote(strings.TrimSpace(fields[0])), prevLine, msText(out[n-1].AtMs))
		}
		out = append(out, serving.Point{AtMs: at, Rate: r})
		prevLine = line
	}
	if !header {
		return nil, inputErr(file, 0, "header", "the file is empty; a rate file starts with the header %s", RateCSVHeader)
	}
	if len(out) == 0 {
		return nil, inputErr(file, 0, "", "has a header and no rows")
	}
	return out, nil
}

// rateTime reads a row's time: seconds, or a duration; from 0 to a
// century, in whole milliseconds.
func rateTime(s string) (int64, error) {
	if sec, err := strconv.ParseFloat(s, 64); err == nil {
		if !finite(sec) || sec < 0 || sec*1000 > maxDurationMs {
			return 0, fmt.Errorf("%s seconds: a time is from 0 to 100 years", Quote(s))
		}
		return int64(math.Round(sec * 1000)), nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s is neither seconds nor a duration (examples: 90, 5400.5, 90m, 1d2h)", Quote(s))
	}
	if d < 0 || d.Milliseconds() > maxDurationMs {
		return 0, fmt.Errorf("%s: a time is from 0 to 100 years", Quote(s))
	}
	return d.Milliseconds(), nil
}

// msText writes ms as seconds the way a rate file may.
func msText(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
}
