package scenarios

import (
	"bytes"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models/serving"
)

// An LLM service's request trace (llm.requestTrace): a CSV of requests,
// header `time,input_tokens,output_tokens`, then a row a request: its
// arrival in seconds from the start (decimals allowed) and its prompt and
// output lengths in tokens; arrivals in time order (several may share a
// time). Published traces (Azure's LLM inference traces: TIMESTAMP,
// ContextTokens, GeneratedTokens) convert to it with the timestamps made
// relative.

// LLMTraceHeader is the header a request trace starts with.
const LLMTraceHeader = "time,input_tokens,output_tokens"

// MaxLLMTraceRows bounds a request trace: the exact model is for short
// windows.
const MaxLLMTraceRows = 5_000_000

// LLMTraceSpec names a request trace file.
type LLMTraceSpec struct {
	Path string `json:"path"`
}

// ReadLLMTraceCSV reads a request trace strictly: errors name the file,
// line and column (time, input_tokens or output_tokens); a request
// longer than maxModelLen is one (0: no limit).
func ReadLLMTraceCSV(file string, data []byte, maxModelLen int) ([]serving.LLMRequest, error) {
	if len(data) > MaxFileBytes {
		return nil, inputErr(file, 0, "", "is %d bytes, more than %d (%d MiB), the most a request trace holds", len(data), MaxFileBytes, MaxFileBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	out := make([]serving.LLMRequest, 0, min(bytes.Count(data, []byte{'\n'})+1, MaxLLMTraceRows))
	header := false
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
			if strings.ReplaceAll(text, " ", "") != LLMTraceHeader {
				return nil, inputErr(file, line, "header", "is %s; a request trace starts with the header %s", Quote(text), LLMTraceHeader)
			}
			header = true
			continue
		}
		if len(fields) != 3 {
			return nil, inputErr(file, line, "", "%s has %d fields; a row is %s", Quote(text), len(fields), LLMTraceHeader)
		}
		if len(out) == MaxLLMTraceRows {
			return nil, inputErr(file, line, "", "more than %d rows, the most a request trace holds", MaxLLMTraceRows)
		}
		ts := strings.TrimSpace(fields[0])
		sec, err := strconv.ParseFloat(ts, 64)
		if err != nil || !finite(sec) || sec < 0 || sec*1000 > maxDurationMs {
			return nil, inputErr(file, line, "time", "%s is not a time in seconds from 0 to 100 years", Quote(ts))
		}
		var n [2]int
		for j, name := range []string{"input_tokens", "output_tokens"} {
			v := strings.TrimSpace(fields[1+j])
			n[j], err = strconv.Atoi(v)
			if err != nil || n[j] < 1 || n[j] > serving.MaxTokens {
				return nil, inputErr(file, line, name, "%s is not a count of tokens from 1 to %d", Quote(v), serving.MaxTokens)
			}
		}
		if maxModelLen > 0 && n[0]+n[1] > maxModelLen {
			return nil, inputErr(file, line, "output_tokens", "a request of %d prompt and %d output tokens is above maxModelLen %d", n[0], n[1], maxModelLen)
		}
		r := serving.LLMRequest{ArrivalMs: sec * 1000, Input: n[0], Output: n[1]}
		if k := len(out); k > 0 && r.ArrivalMs < out[k-1].ArrivalMs {
			return nil, inputErr(file, line, "time", "%s is before the row before: requests must be in time order", Quote(ts))
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
