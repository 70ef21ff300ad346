package skypilot

import (
	"fmt"
	"time"

	"gpuplan.dev/gpuplan/validate/strict"
)

// MaxTicks bounds a trace's data points (a year at 1-second ticks).
const MaxTicks = 366 * 24 * 3600

// maxGap bounds gap_seconds: a week between ticks.
const maxGap = 7 * 24 * 3600

// Trace is a spot capacity trace: Counts[i] instances held from i x Gap.
type Trace struct {
	Gap    time.Duration
	Counts []int32
	// Peak is the most instances held at any tick: the size of the
	// cluster the trace was collected with, as far as the data shows.
	Peak int32
	// Prices is the spot price in $/h at each tick, when the file gives
	// them (the repository's preemption traces of April 2023 do: a
	// "prices" list as long as "data"); nil otherwise.
	Prices []float64
}

// MaxPrice bounds a tick's price: $10,000 an hour.
const MaxPrice = 10_000

type file struct {
	Metadata struct {
		GapSeconds int64 `json:"gap_seconds"`
	} `json:"metadata"`
	Data   []int64   `json:"data"`
	Prices []float64 `json:"prices"`
}

// Parse reads a trace from data (JSON; YAML of the same shape is read
// too); file names it in errors.
func Parse(name string, data []byte) (*Trace, error) {
	var f file
	pos, err := strict.Decode(name, data, &f, strict.Options{What: "a spot trace"})
	if err != nil {
		return nil, err
	}
	bad := func(path, format string, args ...any) error {
		return pos.Errorf(name, path, format, args...)
	}
	g := f.Metadata.GapSeconds
	if g <= 0 || g > maxGap {
		return nil, bad("metadata.gap_seconds", "is %d; the seconds between ticks are from 1 to %d (a week)", g, maxGap)
	}
	if len(f.Data) == 0 {
		return nil, bad("data", "the trace has no data points")
	}
	if len(f.Data) > MaxTicks {
		return nil, bad("data", "has %d data points, more than %d", len(f.Data), MaxTicks)
	}
	t := &Trace{Gap: time.Duration(g) * time.Second, Counts: make([]int32, len(f.Data))}
	for i, v := range f.Data {
		if v < 0 || v > strict.MaxNodes {
			return nil, bad(fmt.Sprintf("data[%d]", i), "is %d; a count of instances is from 0 to %d", v, strict.MaxNodes)
		}
		t.Counts[i] = int32(v)
		t.Peak = max(t.Peak, int32(v))
	}
	if t.Peak == 0 {
		return nil, bad("data", "no tick holds an instance: the trace never had spot capacity")
	}
	if f.Prices != nil {
		if len(f.Prices) != len(f.Data) {
			return nil, bad("prices", "has %d prices for %d data points; a price is the $/h at each tick", len(f.Prices), len(f.Data))
		}
		for i, p := range f.Prices {
			if p < 0 || p > MaxPrice { // JSON has no NaN or infinities
				return nil, bad(fmt.Sprintf("prices[%d]", i), "is %g; a spot price is from 0 to %d $/h", p, MaxPrice)
			}
		}
		t.Prices = f.Prices
	}
	return t, nil
}

// Read reads a trace file, bounded by strict.MaxFileBytes.
func Read(path string) (*Trace, error) {
	data, err := strict.ReadFileBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Nodes is the trace for a pool of n nodes: at each tick the share of the
// trace's peak it held, of n, rounded down (a pool the trace's size
// follows it exactly; a 1-instance trace holds all n or none).
func (t *Trace) Nodes(n int) []int32 {
	out := make([]int32, len(t.Counts))
	for i, c := range t.Counts {
		out[i] = int32(int64(c) * int64(n) / int64(t.Peak))
	}
	return out
}

// Drops counts the instances lost over the trace for a pool of n nodes
// that relaunches lost ones as soon as the trace has room: at each tick,
// what it held before and the trace no longer allows. Nodes absent at the
// first tick are not counted.
func (t *Trace) Drops(n int) int64 {
	c := t.Nodes(n)
	var drops int64
	for i := 1; i < len(c); i++ {
		if c[i] < c[i-1] {
			drops += int64(c[i-1] - c[i])
		}
	}
	return drops
}

// Runs are the trace's runs of ticks with an instance held (held true)
// or none (false), in hours, in order: one node's lifetimes, or the
// outages after its preemptions, in a trace of one instance. A run the
// trace's end cuts is left out (it was longer), and so is a run without
// one before the first instance is held (no preemption began it).
func (t *Trace) Runs(held bool) []float64 {
	var out []float64
	for i := 0; i < len(t.Counts); {
		j := i
		for j < len(t.Counts) && (t.Counts[j] > 0) == (t.Counts[i] > 0) {
			j++
		}
		if (t.Counts[i] > 0) == held && j < len(t.Counts) && (held || i > 0) {
			out = append(out, float64(j-i)*t.Gap.Hours())
		}
		i = j
	}
	return out
}
