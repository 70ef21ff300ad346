package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// Scenario is the base scenario with the point's values set.
func (sw *Sweep) Scenario(pt Point) (*scenarios.Scenario, error) {
	return sw.scenarioOnly(pt, -1)
}

// scenarioOnly sets the point's values; with only >= 0, only that
// parameter's (the others keep the base scenario's).
func (sw *Sweep) scenarioOnly(pt Point, only int) (*scenarios.Scenario, error) {
	b, err := sw.patch(pt, only)
	if err != nil {
		return nil, err
	}
	return sw.patched(pt, b)
}

// patched is the base scenario with a point's patch applied.
func (sw *Sweep) patched(pt Point, patch []byte) (*scenarios.Scenario, error) {
	return sw.Base.Patched(fmt.Sprintf("point-%d", pt.Index), patch)
}

// patch is the JSON merge patch that sets the point's values (with only
// >= 0, only that parameter's) on the base scenario: two points with
// the same patch make the same scenario.
func (sw *Sweep) patch(pt Point, only int) ([]byte, error) {
	patch := map[string]any{}
	// A field of a pool a spot share makes needs the share.
	spotToo := only >= 0 && sw.Params[only].spotOf == "" && len(sw.Params[only].path) > 1 &&
		sw.spotPools[sw.Params[only].path[1].name]
	use := func(j int) bool {
		return only < 0 || j == only || (spotToo && sw.Params[j].spotOf != "") || sw.siblings(only, j)
	}
	for j, p := range sw.Params {
		if !use(j) || p.spotOf != "" {
			continue
		}
		setPath(patch, p.path, pt.Values[j])
	}
	for j, p := range sw.Params {
		if !use(j) || p.spotOf == "" {
			continue
		}
		if err := sw.splitSpot(patch, p.spotOf, pt.Values[j].(float64)); err != nil {
			return nil, err
		}
	}
	// Marshal writes a map's keys sorted: the same settings, the same bytes.
	return json.Marshal(patch)
}

// siblings reports whether parameters i and j set fields of one object
// (workload.recovery.checkpoint's interval and cost): checked alone, one
// would be checked without the other it may need.
func (sw *Sweep) siblings(i, j int) bool {
	if i < 0 || j < 0 || i == j {
		return false
	}
	a, b := sw.Params[i].path, sw.Params[j].path
	return len(a) > 1 && len(a) == len(b) && slices.Equal(a[:len(a)-1], b[:len(b)-1])
}

// setPath sets value at path in a merge patch, items of named lists as
// {name: ...} entries merged by name.
func setPath(patch map[string]any, path []segment, value any) {
	cur := patch
	for i, s := range path {
		if i == len(path)-1 {
			cur[s.key] = value
			return
		}
		if !s.inList {
			next, ok := cur[s.key].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[s.key] = next
			}
			cur = next
			continue
		}
		list, _ := cur[s.key].([]any)
		item := findNamed(list, s.name)
		if item == nil {
			item = map[string]any{"name": s.name}
			list = append(list, item)
			cur[s.key] = list
		}
		cur = item
	}
}

// splitSpot moves share of pool's nodes (as the patch leaves them) into a
// pool POOL-spot of the same nodes bought as spot.
func (sw *Sweep) splitSpot(patch map[string]any, pool string, share float64) error {
	base := findNamed(listAt(sw.baseDoc, "cluster", "pools"), pool)
	setPath(patch, []segment{{key: "cluster"}, {key: "pools", name: pool, inList: true}, {key: "name"}}, pool)
	item := findNamed(listAt(patch, "cluster", "pools"), pool)
	merged := deepMerge(clone(base), item).(map[string]any)
	count, _ := merged["count"].(float64)
	if count != math.Trunc(count) || count < 0 {
		return fmt.Errorf("pool %s: count %v is not a whole number", pool, merged["count"])
	}
	spot := math.Round(share * count)
	item["count"] = count - spot
	sp := clone(merged).(map[string]any)
	delete(sp, "pricePerHour")
	delete(sp, "onDemandPricePerHour")
	delete(sp, "interruptions")
	cl := patch["cluster"].(map[string]any)
	list := cl["pools"].([]any)
	// Fields set on POOL-spot by other parameters win.
	if own := findNamed(list, pool+"-spot"); own != nil {
		sp = deepMerge(sp, own).(map[string]any)
		list = slices.DeleteFunc(list, func(x any) bool { return x.(map[string]any)["name"] == pool+"-spot" })
	}
	sp["name"] = pool + "-spot"
	sp["count"] = spot
	sp["capacityType"] = "spot"
	cl["pools"] = append(list, sp)
	return nil
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// deepMerge merges patch's maps into doc's (enough for one pool's fields).
func deepMerge(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		if patch == nil {
			return doc
		}
		return clone(patch)
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for k, v := range p {
		d[k] = deepMerge(d[k], v)
	}
	return d
}

// Result is one point's figures: Metrics[m][r] is metric m of the run
// with seed Seeds[r].
type Result struct {
	Index   int         `json:"index"`
	Values  []any       `json:"values"`
	Seeds   []uint64    `json:"seeds"`
	Metrics [][]float64 `json:"metrics"`
	// Advice is each seed's commitment advice, when the sweep reads a
	// commitment metric (not in the point's file): what one level for
	// the seeds is chosen from (OneCommitmentLevel).
	Advice []*reports.CommitmentAdvice `json:"-"`
}

// RunPoint runs the point with each of the given seeds through the run
// pipeline (invariants checked in every run) and reads the metrics.
func (sw *Sweep) RunPoint(pt Point, seeds []uint64) (*Result, error) {
	return sw.runPoint(pt, seeds, nil)
}

// sharedJobs is how many jobs of synthetic streams a sweep keeps to share
// among its points (pipeline.JobStreams: 160 bytes a job, 40 MB).
const sharedJobs = 250_000

// runPoint is RunPoint, the points sharing the job streams of jobs
// (nil: none).
func (sw *Sweep) runPoint(pt Point, seeds []uint64, jobs *pipeline.JobStreams) (*Result, error) {
	sc, err := sw.Scenario(pt)
	if err != nil {
		return nil, fmt.Errorf("point %d: %w", pt.Index, err)
	}
	return sw.runScenario(pt, sc, seeds, jobs)
}

// runScenario runs sc, point pt's scenario, with each of the seeds.
func (sw *Sweep) runScenario(pt Point, sc *scenarios.Scenario, seeds []uint64, jobs *pipeline.JobStreams) (*Result, error) {
	res := &Result{Index: pt.Index, Values: pt.Values, Seeds: seeds, Metrics: make([][]float64, len(sw.Metrics))}
	for _, seed := range seeds {
		s := seed
		run, err := pipeline.One(sc, pipeline.Options{Build: scenarios.Options{Seed: &s, MaxEvents: sw.maxEvents, Cache: sw.cache}, File: sw.baseFile(),
			NoVariants: true, NoSpotTwin: true, NoSensitivity: true, Jobs: jobs}, sc.Metadata.Name, false)
		if err != nil {
			return nil, fmt.Errorf("point %d (%s), seed %d: %w", pt.Index, sw.Describe(pt), seed, err)
		}
		for m, metric := range sw.Metrics {
			v, err := metric.Value(run.Summary)
			if err != nil {
				return nil, &pipeline.InputError{Err: fmt.Errorf("point %d, seed %d: %w", pt.Index, seed, err)}
			}
			res.Metrics[m] = append(res.Metrics[m], v)
		}
		if sw.readsCommitment() {
			res.Advice = append(res.Advice, run.Summary.Cost.CommitmentAdvice)
		}
	}
	if err := sw.OneCommitmentLevel(res.Metrics, res.Advice); err != nil {
		return nil, &pipeline.InputError{Err: fmt.Errorf("point %d: %w", pt.Index, err)}
	}
	return res, nil
}

// readsCommitment is whether a metric of the sweep is the commitment
// advice's (commitment.FIELD): a run without advice fails to read it.
func (sw *Sweep) readsCommitment() bool {
	for _, m := range sw.Metrics {
		if strings.HasPrefix(m.canonical, "commitment.") {
			return true
		}
	}
	return false
}

// OneCommitmentLevel puts the commitment metrics of several seeds' runs
// of one point (metrics[m][r], advice[r] seed r's) at one commitment
// level for them all, reports.OneLevel's: the level that makes the mean
// bill over the seeds least, and each seed's bill, saving and the rest at
// it. With one seed, or no commitment metric, it changes nothing.
func (sw *Sweep) OneCommitmentLevel(metrics [][]float64, advice []*reports.CommitmentAdvice) error {
	if len(advice) < 2 || !sw.readsCommitment() {
		return nil
	}
	one, err := reports.OneLevel(advice)
	if err != nil {
		return err
	}
	for m, metric := range sw.Metrics {
		if !strings.HasPrefix(metric.canonical, "commitment.") {
			continue
		}
		for r, a := range one {
			v, err := metric.Value(&reports.Summary{MoneyFigures: reports.MoneyFigures{Cost: &reports.CostSummary{CommitmentAdvice: a}}})
			if err != nil {
				return err
			}
			metrics[m][r] = v
		}
	}
	return nil
}

func (sw *Sweep) baseFile() string {
	if sw.Doc.Spec.Scenario == "" {
		return ""
	}
	return sw.Base.File()
}

// Describe writes a point's settings: name=value, ...
func (sw *Sweep) Describe(pt Point) string {
	s := ""
	for j, p := range sw.Params {
		if j > 0 {
			s += ", "
		}
		s += p.Name + "=" + FormatValue(pt.Values[j])
	}
	return s
}
