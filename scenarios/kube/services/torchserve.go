package services

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/validate/strict"
)

// TorchServe is what gpuplan reads of a TorchServe config.properties.
type TorchServe struct {
	File string
	// JobQueueSize is job_queue_size (default 100): requests a model queues
	// before refusing more.
	JobQueueSize int
	// DefaultResponseTimeoutS is default_response_timeout (default 120 s).
	DefaultResponseTimeoutS int
	// Models are the models of the `models` key, sorted by name and
	// version.
	Models []TorchServeModel
}

// TorchServeModel is one model version's settings.
type TorchServeModel struct {
	Name, Version string
	Line          int
	// BatchSize (default 1) and MaxBatchDelayMs (default 100).
	BatchSize       int
	MaxBatchDelayMs int
	// ResponseTimeoutS is responseTimeout, default default_response_timeout.
	ResponseTimeoutS       int
	MinWorkers, MaxWorkers int
}

// Batch is the model's batching with a service time of base + perItem x n.
func (m TorchServeModel) Batch(baseMs, perItemMs float64) serving.Batch {
	return serving.Batch{Size: m.BatchSize, MaxDelayMs: float64(m.MaxBatchDelayMs), BaseMs: baseMs, PerItemMs: perItemMs}
}

// propLine is one logical line of a properties file: its key, value, the
// natural line it starts on, and where each natural line starts in it.
type propLine struct {
	key, value string
	line       int
	starts     []int // offsets in the logical line where natural lines line, line+1, ... begin
	valueAt    int   // the value's offset in the logical line
}

// lineAt is the natural line of an offset into the value.
func (p propLine) lineAt(off int) int {
	i := sort.SearchInts(p.starts, p.valueAt+off+1) - 1
	return p.line + max(i, 0)
}

// properties splits Java properties text into logical lines (comments,
// blank lines and continuations as java.util.Properties reads them).
func properties(file string, data []byte) ([]propLine, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var out []propLine
	for i := 0; i < len(lines); i++ {
		l := strings.TrimLeft(lines[i], " \t\f")
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		p := propLine{line: i + 1}
		var b strings.Builder
		for {
			cont := trailingBackslashes(l)%2 == 1
			if cont {
				l = l[:len(l)-1]
			}
			p.starts = append(p.starts, b.Len())
			b.WriteString(l)
			if b.Len() > strict.MaxLineBytes {
				return nil, strict.Errorf(file, p.line, "", "a property longer than %d MiB", strict.MaxLineBytes>>20)
			}
			if !cont || i+1 >= len(lines) {
				break
			}
			i++
			l = strings.TrimLeft(lines[i], " \t\f")
		}
		full := b.String()
		p.key, p.value = splitProperty(full)
		p.valueAt = len(full) - len(p.value)
		out = append(out, p)
	}
	return out, nil
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// splitProperty cuts a logical line at the first unescaped '=', ':' or
// white space, and unescapes the key (the value's escapes are kept: the
// values gpuplan reads are numbers and JSON).
func splitProperty(s string) (key, value string) {
	i := 0
	var k strings.Builder
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			k.WriteByte(s[i])
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		k.WriteByte(c)
	}
	rest := strings.TrimLeft(s[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return k.String(), rest
}

// tsModel is a model version's entry in the `models` JSON; TorchServe has
// more keys (marName, handler, deviceType, ...), which gpuplan ignores.
type tsModel struct {
	BatchSize       *int `json:"batchSize"`
	MaxBatchDelay   *int `json:"maxBatchDelay"`
	ResponseTimeout *int `json:"responseTimeout"`
	MinWorkers      *int `json:"minWorkers"`
	MaxWorkers      *int `json:"maxWorkers"`
}

// ParseTorchServe reads a TorchServe config.properties.
func ParseTorchServe(file string, data []byte) (*TorchServe, error) {
	props, err := properties(file, data)
	if err != nil {
		return nil, err
	}
	ts := &TorchServe{File: file, JobQueueSize: 100, DefaultResponseTimeoutS: 120}
	var models *propLine
	for i := range props {
		p := props[i]
		switch p.key {
		case "job_queue_size":
			if ts.JobQueueSize, err = positiveInt(file, p, 1<<30); err != nil {
				return nil, err
			}
		case "default_response_timeout":
			if ts.DefaultResponseTimeoutS, err = positiveInt(file, p, 365*24*3600); err != nil {
				return nil, err
			}
		case "models":
			models = &props[i]
		}
	}
	if models == nil {
		return ts, nil
	}
	var byName map[string]map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(models.value))
	if err := dec.Decode(&byName); err != nil {
		line := models.line
		if se, ok := err.(*json.SyntaxError); ok {
			line = models.lineAt(int(se.Offset) - 1) // Offset is just past the bad byte
		}
		return nil, strict.Errorf(file, line, "models", "not the JSON TorchServe expects ({\"model\": {\"version\": {...}}}): %s", strict.Shorten(err.Error()))
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		versions := make([]string, 0, len(byName[name]))
		for v := range byName[name] {
			versions = append(versions, v)
		}
		sort.Strings(versions)
		nameAt := strings.Index(models.value, strconv.Quote(name))
		for _, v := range versions {
			var x tsModel
			field := fmt.Sprintf("models[%s][%s]", strict.Quote(name), strict.Quote(v))
			if err := json.Unmarshal(byName[name][v], &x); err != nil {
				return nil, strict.Errorf(file, models.lineAt(max(nameAt, 0)), field, "%s", strict.Shorten(err.Error()))
			}
			m := TorchServeModel{Name: name, Version: v, Line: models.lineAt(max(nameAt, 0)),
				BatchSize: 1, MaxBatchDelayMs: 100, ResponseTimeoutS: ts.DefaultResponseTimeoutS, MinWorkers: 1, MaxWorkers: 1}
			check := func(key string, p *int, dst *int, least, most int) error {
				if p == nil {
					return nil
				}
				if *p < least || *p > most {
					line := m.Line
					if at := strings.Index(models.value[max(nameAt, 0):], strconv.Quote(key)); at >= 0 {
						line = models.lineAt(max(nameAt, 0) + at)
					}
					return strict.Errorf(file, line, field+"."+key, "must be from %d to %d, got %d", least, most, *p)
				}
				*dst = *p
				return nil
			}
			for _, c := range []struct {
				key         string
				p           *int
				dst         *int
				least, most int
			}{
				{"batchSize", x.BatchSize, &m.BatchSize, 1, 1 << 16},
				{"maxBatchDelay", x.MaxBatchDelay, &m.MaxBatchDelayMs, 0, 3_600_000},
				{"responseTimeout", x.ResponseTimeout, &m.ResponseTimeoutS, 1, 365 * 24 * 3600},
				{"minWorkers", x.MinWorkers, &m.MinWorkers, 0, 1 << 16},
				{"maxWorkers", x.MaxWorkers, &m.MaxWorkers, 0, 1 << 16},
			} {
				if err := check(c.key, c.p, c.dst, c.least, c.most); err != nil {
					return nil, err
				}
			}
			if m.MinWorkers > m.MaxWorkers {
				return nil, strict.Errorf(file, m.Line, field, "minWorkers %d is more than maxWorkers %d", m.MinWorkers, m.MaxWorkers)
			}
			ts.Models = append(ts.Models, m)
		}
	}
	return ts, nil
}

func positiveInt(file string, p propLine, most int) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(p.value))
	if err != nil || v < 1 || v > most {
		return 0, strict.Errorf(file, p.line, p.key, "%s is not a whole number from 1 to %d", strict.Quote(p.value), most)
	}
	return v, nil
}
