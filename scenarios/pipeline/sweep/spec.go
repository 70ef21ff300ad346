package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/scenarios"
)

// Kind is a sweep document's kind.
const Kind = "Sweep"

// Limits on what a spec may ask for, checked before anything is expanded.
const (
	MaxValues       = 10000   // values one parameter may take
	MaxPoints       = 100000  // points a design may have
	MaxReplications = 1000    // seeds a point may run
	MaxParameters   = 32      // parameters a sweep may vary
	MaxRuns         = 1000000 // points x replications
)

// Document is a sweep spec as written.
type Document struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names the sweep.
type Metadata struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Spec is what a sweep varies and keeps.
type Spec struct {
	// Scenario is the base scenario's file, relative to the sweep file
	// (empty: the built-in default scenario).
	Scenario string `json:"scenario,omitempty"`
	// Parameters are the settings varied, in the order of the table's
	// columns; the grid varies the last one fastest.
	Parameters []Parameter `json:"parameters"`
	// Design picks the points (default: the full grid).
	Design DesignSpec `json:"design,omitempty"`
	// Replications is how many seeds each point runs (default 3): the
	// scenario's seed, then seed+1, ...
	Replications int `json:"replications,omitempty"`
	// Metrics are the figures kept for each run (see ParseMetric).
	Metrics []string `json:"metrics"`
	// Constraints mark the points whose means meet them all
	// ("wait.p95{queue=team-a} <= 30m"); their metrics must be kept.
	Constraints []string `json:"constraints,omitempty"`
}

// Parameter is one setting varied: a path into the scenario's spec, or
// the spot share of a pool, and the values it takes (a list, a range or a
// log range).
type Parameter struct {
	// Name heads the parameter's column (default: the path).
	Name string `json:"name,omitempty"`
	// Path is a field of the scenario's spec: keys joined by dots, an item
	// of a list of named items by its name in brackets, e.g.
	// cluster.pools[h100-train].count,
	// workload.recovery.checkpoint.interval,
	// cluster.pools[l4].autoscaling.maxNodes, policy.manifests.
	Path string `json:"path,omitempty"`
	// SpotShareOf is a pool whose nodes are split: the share given (0..1,
	// rounded to whole nodes) becomes a pool POOL-spot of the same nodes
	// bought as spot, the rest stays as it is.
	SpotShareOf string `json:"spotShareOf,omitempty"`
	// Values lists the values (any JSON value the field takes).
	Values []any `json:"values,omitempty"`
	// Range is from, to (inclusive) and step: numbers or durations.
	Range *Range `json:"range,omitempty"`
	// LogRange is points values spaced evenly in log scale from from to to.
	LogRange *LogRange `json:"logRange,omitempty"`
}

// Range is an arithmetic range: numbers (2, 10, 2) or durations (15m, 2h, 15m).
type Range struct {
	From any `json:"from"`
	To   any `json:"to"`
	Step any `json:"step"`
}

// LogRange is a geometric range of numbers.
type LogRange struct {
	From   float64 `json:"from"`
	To     float64 `json:"to"`
	Points int     `json:"points"`
	// Integer rounds each value to a whole number (duplicates dropped).
	Integer bool `json:"integer,omitempty"`
}

// Design kinds.
const (
	Grid           = "grid"
	Random         = "random"
	LatinHypercube = "latinHypercube"
)

// DesignSpec says which points of the space run.
type DesignSpec struct {
	// Kind is grid (every combination), random (points drawn uniformly)
	// or latinHypercube (each parameter's values covered evenly).
	Kind string `json:"kind,omitempty"`
	// Points is how many points random and latinHypercube draw.
	Points int `json:"points,omitempty"`
	// Seed seeds random and latinHypercube.
	Seed uint64 `json:"seed,omitempty"`
}

// Sweep is a checked spec, ready to expand: its base scenario loaded, its
// parameters' values listed.
type Sweep struct {
	Doc    Document
	File   string
	Base   *scenarios.Scenario
	Params []Param
	// Metrics are the parsed metrics, in the spec's order.
	Metrics []Metric
	// Constraints are the parsed constraints.
	Constraints []Constraint
	// Seeds are the seeds each point runs.
	Seeds []uint64
	// baseBytes is the base scenario's file, for the digest.
	baseBytes []byte
	baseDoc   map[string]any
	spotPools map[string]bool
	// maxEvents is the work budget every run is built with (MaxEvents).
	maxEvents int64
	// cache is what the points' builds share (scenarios.BuildCache).
	cache *scenarios.BuildCache
}

// Option is a setting of a sweep made in code rather than in its spec.
type Option func(*Sweep)

// MaxEvents sets the work budget (scenarios.Options.MaxEvents, the
// commands' --max-events) that each parameter's values are checked
// against at load and every point is built with; 0 is
// scenarios.DefaultMaxEvents.
func MaxEvents(n int64) Option { return func(sw *Sweep) { sw.maxEvents = n } }

// Param is a parameter with its values listed and its path parsed.
type Param struct {
	Name   string
	Values []any
	path   []segment
	spotOf string
}

type segment struct {
	key    string
	name   string // an item of a named list
	inList bool
}

// Load reads a sweep spec; the base scenario is read relative to it.
func Load(file string) (*Sweep, error) { return LoadWith(file, scenarios.LoadOptions{}) }

// LoadWith is Load reading the base scenario as the options say; with
// RestrictPaths the base scenario must be in the sweep file's folder too.
func LoadWith(file string, o scenarios.LoadOptions, opts ...Option) (*Sweep, error) {
	data, err := scenarios.ReadFileBounded(file)
	if err != nil {
		if _, ok := err.(*scenarios.InputError); ok {
			return nil, err
		}
		return nil, &scenarios.InputError{File: file, Msg: scenarios.ReadErr(err)}
	}
	s, err := parse(file, data, o, opts...)
	return s, scenarios.BoundError(err)
}

// Parse reads a sweep spec from data. Errors are *scenarios.InputError
// naming the file, line and field.
func Parse(file string, data []byte) (*Sweep, error) {
	s, err := parse(file, data, scenarios.LoadOptions{})
	return s, scenarios.BoundError(err)
}

func parse(file string, data []byte, o scenarios.LoadOptions, opts ...Option) (*Sweep, error) {
	if err := scenarios.CheckLines(file, data); err != nil {
		return nil, err
	}
	var doc Document
	pos, err := scenarios.DecodeStrictYAML(file, data, &doc)
	if err != nil {
		return nil, err
	}
	bad := func(path, format string, args ...any) error {
		e := &scenarios.InputError{File: file, Field: path, Msg: fmt.Sprintf(format, args...)}
		for p := path; p != ""; p = parent(p) {
			if lc, ok := pos[p]; ok {
				e.Line, e.Column = lc[0], lc[1]
				break
			}
		}
		return e
	}
	if doc.APIVersion != scenarios.APIVersion || doc.Kind != Kind {
		return nil, bad("kind", "want apiVersion %s, kind %s", scenarios.APIVersion, Kind)
	}
	if doc.Metadata.Name == "" {
		return nil, bad("metadata.name", "is required")
	}
	sp := &doc.Spec
	sw := &Sweep{Doc: doc, File: file, cache: &scenarios.BuildCache{}}
	for _, opt := range opts {
		opt(sw)
	}
	if sp.Scenario == "" {
		sw.Base, err = scenarios.Default()
		sw.baseBytes = scenarios.DefaultYAML()
	} else {
		path := sp.Scenario
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(file), path)
		}
		if o.RestrictPaths {
			if msg := scenarios.OutsideFolder(filepath.Dir(file), path); msg != "" {
				return nil, bad("spec.scenario", "%s %s; with --restrict-paths a sweep reads only files in its own folder", scenarios.Quote(sp.Scenario), msg)
			}
		}
		if sw.baseBytes, err = scenarios.ReadFileBounded(path); err == nil {
			sw.Base, err = scenarios.ParseWith(path, filepath.Dir(path), sw.baseBytes, o)
		}
		if err != nil {
			if _, ok := err.(*scenarios.InputError); ok {
				return nil, err
			}
			return nil, bad("spec.scenario", "%v", err)
		}
	}
	if err != nil {
		return nil, err
	}
	return sw, sw.check(bad)
}

// New is a sweep of a loaded scenario built in code (recommend's search
// space): the same checks as a spec file's, errors naming the field as
// "spec.parameters[i]..." of a spec with no file.
func New(base *scenarios.Scenario, baseBytes []byte, doc Document, opts ...Option) (*Sweep, error) {
	doc.APIVersion, doc.Kind = scenarios.APIVersion, Kind
	sw := &Sweep{Doc: doc, File: "(command line)", Base: base, baseBytes: baseBytes, cache: &scenarios.BuildCache{}}
	for _, opt := range opts {
		opt(sw)
	}
	bad := func(path, format string, args ...any) error {
		return &scenarios.InputError{File: sw.File, Field: path, Msg: fmt.Sprintf(format, args...)}
	}
	if err := sw.check(bad); err != nil {
		return nil, err
	}
	return sw, nil
}

func (sw *Sweep) check(bad func(string, string, ...any) error) error {
	sp := &sw.Doc.Spec
	var err error
	sw.baseDoc, err = specDoc(sw.Base)
	if err != nil {
		return err
	}
	if len(sp.Parameters) == 0 {
		return bad("spec.parameters", "give at least one parameter")
	}
	if len(sp.Parameters) > MaxParameters {
		return bad("spec.parameters", "%d parameters; at most %d", len(sp.Parameters), MaxParameters)
	}
	// Pools made by a spot share may be set like the scenario's own
	// (cluster.pools[POOL-spot].interruptions.mtbf).
	sw.spotPools = map[string]bool{}
	for _, ps := range sp.Parameters {
		if ps.SpotShareOf != "" {
			sw.spotPools[ps.SpotShareOf+"-spot"] = true
		}
	}
	seen := map[string]string{}
	combos := 1.0
	for i := range sp.Parameters {
		at := fmt.Sprintf("spec.parameters[%d]", i)
		p, err := sw.param(&sp.Parameters[i], at, bad)
		if err != nil {
			return err
		}
		if prev, ok := seen[p.Name]; ok {
			return bad(at+".name", "%s is also %s's name; give each parameter its own", scenarios.Quote(p.Name), prev)
		}
		seen[p.Name] = at
		combos *= float64(len(p.Values))
		sw.Params = append(sw.Params, p)
	}
	// Two parameters setting the same field contradict each other.
	for i := range sw.Params {
		for j := range i {
			a, b := sw.Params[i], sw.Params[j]
			if a.key() == b.key() {
				return bad(fmt.Sprintf("spec.parameters[%d]", i), "sets the same field as spec.parameters[%d] (%s)", j, a.key())
			}
		}
	}
	d := &sp.Design
	switch d.Kind {
	case "", Grid:
		d.Kind = Grid
		if d.Points != 0 {
			return bad("spec.design.points", "a grid runs every combination; points is for random and latinHypercube")
		}
		if combos > MaxPoints {
			return bad("spec.design", "the grid has %.0f points; at most %d (use random or latinHypercube)", combos, MaxPoints)
		}
	case Random, LatinHypercube:
		if d.Points < 1 || d.Points > MaxPoints {
			return bad("spec.design.points", "must be in 1..%d", MaxPoints)
		}
	default:
		return bad("spec.design.kind", "is %s; want grid, random or latinHypercube", scenarios.Quote(d.Kind))
	}
	if sp.Replications == 0 {
		sp.Replications = 3
	}
	if sp.Replications < 1 || sp.Replications > MaxReplications {
		return bad("spec.replications", "must be in 1..%d", MaxReplications)
	}
	if n := float64(sw.NumPoints()) * float64(sp.Replications); n > MaxRuns {
		return bad("spec.replications", "%.0f runs; at most %d", n, MaxRuns)
	}
	if len(sp.Metrics) == 0 {
		return bad("spec.metrics", "give at least one metric (cost.total, wait.p95, completed, ...)")
	}
	mseen := map[string]bool{}
	for i, name := range sp.Metrics {
		m, err := ParseMetric(name)
		if err != nil {
			return bad(fmt.Sprintf("spec.metrics[%d]", i), "%v", err)
		}
		if mseen[name] {
			return bad(fmt.Sprintf("spec.metrics[%d]", i), "%s is listed twice", scenarios.Quote(name))
		}
		mseen[name] = true
		sw.Metrics = append(sw.Metrics, m)
	}
	for i, text := range sp.Constraints {
		at := fmt.Sprintf("spec.constraints[%d]", i)
		c, err := ParseConstraint(text)
		if err != nil {
			return bad(at, "%v", err)
		}
		if !mseen[c.Metric.Name] {
			return bad(at, "metric %s is not in spec.metrics; add it there", scenarios.Quote(c.Metric.Name))
		}
		sw.Constraints = append(sw.Constraints, c)
		if msg := Contradiction(sw.Constraints); msg != "" {
			return bad(at, "%s", msg)
		}
	}
	seed := sw.Base.Seed()
	for r := range sp.Replications {
		sw.Seeds = append(sw.Seeds, seed+uint64(r))
	}
	// Each parameter's values must make a scenario that checks: try each
	// value alone on the base, so a bad path or value is named here, at
	// its line, not in the middle of the sweep.
	for i, p := range sw.Params {
		at := fmt.Sprintf("spec.parameters[%d]", i)
		for k, v := range p.Values {
			pt := Point{Values: make([]any, len(sw.Params))}
			for j := range sw.Params {
				pt.Values[j] = sw.Params[j].Values[0]
			}
			pt.Values[i] = v
			sc, err := sw.scenarioOnly(pt, i)
			if err == nil {
				// Building finds what checking does not (an
				// instance type with no spot price).
				var b *scenarios.Built
				if b, err = sc.Build(scenarios.Options{MaxEvents: sw.maxEvents, Cache: sw.cache}); err == nil {
					b.Close()
				}
			}
			if err != nil {
				field := at + ".values"
				if p.spotOf == "" && len(p.path) > 0 && k == 0 {
					field = at + ".path"
				}
				return bad(field, "%s = %s: %s", p.Name, FormatValue(v), trimInputError(err))
			}
		}
	}
	return nil
}

func trimInputError(err error) string {
	if ie, ok := err.(*scenarios.InputError); ok {
		msg := ie.Msg
		// The point is built as a one-variant patch: say what the patch
		// did, not where a variant would be.
		for _, p := range []string{"variant point-0: ", "the patched spec does not decode: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		if strings.HasPrefix(ie.Field, "spec.variants[") {
			return msg
		}
		if ie.Field != "" {
			msg = ie.Field + ": " + msg
		}
		return msg
	}
	return err.Error()
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// specDoc is the scenario's spec as decoded JSON.
func specDoc(sc *scenarios.Scenario) (map[string]any, error) {
	b, err := json.Marshal(sc.Spec)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	return doc, json.Unmarshal(b, &doc)
}

func (p Param) key() string {
	if p.spotOf != "" {
		return "cluster.pools[" + p.spotOf + "-spot]"
	}
	var b strings.Builder
	for i, s := range p.path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
		if s.inList {
			b.WriteString("[" + s.name + "]")
		}
	}
	return b.String()
}

func (sw *Sweep) param(ps *Parameter, at string, bad func(string, string, ...any) error) (Param, error) {
	p := Param{Name: ps.Name}
	switch {
	case ps.Path != "" && ps.SpotShareOf != "":
		return p, bad(at, "give path or spotShareOf, not both")
	case ps.Path != "":
		segs, err := parsePath(strings.TrimPrefix(ps.Path, "spec."))
		if err != nil {
			return p, bad(at+".path", "%v", err)
		}
		if segs, err = resolve(sw.baseDoc, segs, sw.spotPools); err != nil {
			return p, bad(at+".path", "%v", err)
		}
		p.path = segs
		if p.Name == "" {
			p.Name = ps.Path
		}
	case ps.SpotShareOf != "":
		pool := findNamed(listAt(sw.baseDoc, "cluster", "pools"), ps.SpotShareOf)
		if pool == nil {
			return p, bad(at+".spotShareOf", "no pool %s in spec.cluster.pools (pools: %s)", scenarios.Quote(ps.SpotShareOf), strings.Join(names(listAt(sw.baseDoc, "cluster", "pools")), ", "))
		}
		if _, priced := pool["pricePerHour"]; priced {
			return p, bad(at+".spotShareOf", "pool %s has a pricePerHour; a spot share needs a pool priced by its instanceType", ps.SpotShareOf)
		}
		if findNamed(listAt(sw.baseDoc, "cluster", "pools"), ps.SpotShareOf+"-spot") != nil {
			return p, bad(at+".spotShareOf", "the scenario already has a pool %s-spot", ps.SpotShareOf)
		}
		p.spotOf = ps.SpotShareOf
		if p.Name == "" {
			p.Name = "spotShare." + ps.SpotShareOf
		}
	default:
		return p, bad(at, "give path (a field of the scenario's spec) or spotShareOf (a pool)")
	}
	set := 0
	for _, b := range []bool{ps.Values != nil, ps.Range != nil, ps.LogRange != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return p, bad(at, "give one of values, range or logRange")
	}
	var err error
	switch {
	case ps.Values != nil:
		if len(ps.Values) == 0 {
			return p, bad(at+".values", "is empty")
		}
		if len(ps.Values) > MaxValues {
			return p, bad(at+".values", "%d values; at most %d", len(ps.Values), MaxValues)
		}
		p.Values = ps.Values
	case ps.Range != nil:
		if p.Values, err = ps.Range.values(); err != nil {
			return p, bad(at+".range", "%v", err)
		}
	default:
		if p.Values, err = ps.LogRange.values(); err != nil {
			return p, bad(at+".logRange", "%v", err)
		}
	}
	seen := map[string]int{}
	for i, v := range p.Values {
		k := FormatValue(v)
		if j, ok := seen[k]; ok {
			return p, bad(fmt.Sprintf("%s.values[%d]", at, i), "%s is also value %d", scenarios.Quote(k), j)
		}
		seen[k] = i
		if p.spotOf != "" {
			f, ok := v.(float64)
			if !ok || f < 0 || f > 1 {
				return p, bad(fmt.Sprintf("%s.values[%d]", at, i), "a spot share is a number in 0..1, got %s", scenarios.Quote(k))
			}
		}
	}
	return p, nil
}

// parsePath splits a.b[name].c into segments.
func parsePath(s string) ([]segment, error) {
	if s == "" {
		return nil, fmt.Errorf("is empty")
	}
	var segs []segment
	for s != "" {
		i := strings.IndexAny(s, ".[")
		var seg segment
		if i < 0 {
			seg.key, s = s, ""
		} else {
			seg.key = s[:i]
			s = s[i:]
			if s[0] == '[' {
				j := strings.IndexByte(s, ']')
				if j < 0 {
					return nil, fmt.Errorf("%s: a [ without ]", scenarios.Quote(s))
				}
				seg.name, seg.inList = s[1:j], true
				if seg.name == "" {
					return nil, fmt.Errorf("empty [] in the path")
				}
				s = s[j+1:]
			}
			if s != "" {
				if s[0] != '.' || len(s) == 1 {
					return nil, fmt.Errorf("%s: expected .field after ]", scenarios.Quote(s))
				}
				s = s[1:]
			}
		}
		if seg.key == "" {
			return nil, fmt.Errorf("an empty field name in the path")
		}
		segs = append(segs, seg)
	}
	if len(segs) > 16 {
		return nil, fmt.Errorf("a path of %d fields; at most 16", len(segs))
	}
	return segs, nil
}

// resolve checks the path against the base spec: a list item named must
// exist (an index becomes the item's name). The last fields may be new
// (an optional field not set in the base); decoding the scenario checks
// them.
func resolve(doc map[string]any, segs []segment, spotPools map[string]bool) ([]segment, error) {
	var cur any = doc
	for i := range segs {
		s := &segs[i]
		m, ok := cur.(map[string]any)
		if !ok {
			if cur == nil {
				if s.inList {
					return nil, fmt.Errorf("%s: the scenario has no list %s to pick an item of", s.key, s.key)
				}
				continue // a new optional field: decoding will check it
			}
			return nil, fmt.Errorf("%s is not a mapping in the scenario", pathString(segs[:i]))
		}
		cur = m[s.key]
		if !s.inList {
			continue
		}
		list, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a list in the scenario", pathString(segs[:i+1]))
		}
		if n, err := strconv.Atoi(s.name); err == nil {
			if n < 0 || n >= len(list) {
				return nil, fmt.Errorf("%s has %d items; no item %d", pathString(segs[:i+1]), len(list), n)
			}
			item, _ := list[n].(map[string]any)
			name, _ := item["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("%s[%d] has no name; items are picked by name", pathString(segs[:i+1]), n)
			}
			s.name = name
		}
		item := findNamed(list, s.name)
		if item == nil && i == 1 && segs[0].key == "cluster" && s.key == "pools" && spotPools[s.name] {
			if i == len(segs)-1 {
				return nil, fmt.Errorf("%s picks a whole item; name one of its fields", pathString(segs))
			}
			return segs, nil // a pool a spot share makes; decoding checks the rest
		}
		if item == nil {
			return nil, fmt.Errorf("no item named %s in %s (names: %s)", scenarios.Quote(s.name), pathString(segs[:i+1]), strings.Join(names(list), ", "))
		}
		if i == len(segs)-1 {
			return nil, fmt.Errorf("%s picks a whole item; name one of its fields", pathString(segs))
		}
		cur = item
	}
	return segs, nil
}

func pathString(segs []segment) string {
	return Param{path: segs}.key()
}

func listAt(doc map[string]any, keys ...string) []any {
	var cur any = doc
	for _, k := range keys {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	l, _ := cur.([]any)
	return l
}

func findNamed(list []any, name string) map[string]any {
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

func names(list []any) []string {
	var out []string
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func (r *Range) values() ([]any, error) {
	if r.From == nil || r.To == nil || r.Step == nil {
		return nil, fmt.Errorf("give from, to and step")
	}
	if fs, ok := r.From.(string); ok {
		ts, ok1 := r.To.(string)
		ss, ok2 := r.Step.(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("from is a duration; to and step must be too")
		}
		from, err := scenarios.ParseDuration(fs)
		if err != nil {
			return nil, fmt.Errorf("from: %v", err)
		}
		to, err := scenarios.ParseDuration(ts)
		if err != nil {
			return nil, fmt.Errorf("to: %v", err)
		}
		step, err := scenarios.ParseDuration(ss)
		if err != nil {
			return nil, fmt.Errorf("step: %v", err)
		}
		if step <= 0 {
			return nil, fmt.Errorf("step must be positive")
		}
		if to < from {
			return nil, fmt.Errorf("is empty: to (%s) is before from (%s)", ts, fs)
		}
		if n := (to-from)/step + 1; n > MaxValues {
			return nil, fmt.Errorf("%d values; at most %d", n, MaxValues)
		}
		var out []any
		for d := from; d <= to; d += step {
			out = append(out, FormatDuration(d))
		}
		return out, nil
	}
	from, ok := r.From.(float64)
	to, ok1 := r.To.(float64)
	step, ok2 := r.Step.(float64)
	if !ok || !ok1 || !ok2 {
		return nil, fmt.Errorf("from, to and step are numbers, or all three durations (15m)")
	}
	if step <= 0 {
		return nil, fmt.Errorf("step must be positive")
	}
	if to < from {
		return nil, fmt.Errorf("is empty: to (%g) is below from (%g)", to, from)
	}
	n := math.Floor((to-from)/step+1e-9) + 1
	if n > MaxValues {
		return nil, fmt.Errorf("%.0f values; at most %d", n, MaxValues)
	}
	out := make([]any, 0, int(n))
	for i := range int(n) {
		out = append(out, roundSig(from+float64(i)*step))
	}
	return out, nil
}

func (r *LogRange) values() ([]any, error) {
	if !(r.From > 0) || !(r.To > 0) {
		return nil, fmt.Errorf("from and to must be positive")
	}
	if r.To < r.From {
		return nil, fmt.Errorf("is empty: to (%g) is below from (%g)", r.To, r.From)
	}
	if r.Points < 1 || r.Points > MaxValues {
		return nil, fmt.Errorf("points must be in 1..%d", MaxValues)
	}
	if r.Points == 1 && r.To != r.From {
		return nil, fmt.Errorf("one point cannot span %g to %g", r.From, r.To)
	}
	var out []any
	last := math.NaN()
	for i := range r.Points {
		v := r.From
		if r.Points > 1 {
			v = math.Exp(math.Log(r.From) + float64(i)*(math.Log(r.To)-math.Log(r.From))/float64(r.Points-1))
		}
		v = roundSig(v)
		if r.Integer {
			v = math.Round(v)
		}
		if v == last {
			continue
		}
		last = v
		out = append(out, v)
	}
	return out, nil
}

// roundSig rounds to 9 significant digits, so 0.1+0.2 reads 0.3.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 9, 64), 64)
	return f
}

// FormatDuration writes a duration in its shortest whole unit (90m, 2h, 45s).
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

// FormatValue writes a parameter's value as the table shows it: strings
// as they are, anything else as compact JSON.
func FormatValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// NumPoints is how many points the design has.
func (sw *Sweep) NumPoints() int {
	if sw.Doc.Spec.Design.Kind == Grid || sw.Doc.Spec.Design.Kind == "" {
		n := 1
		for _, p := range sw.Params {
			n *= len(p.Values)
		}
		return n
	}
	return sw.Doc.Spec.Design.Points
}
