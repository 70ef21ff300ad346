package scenarios

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Checks on the sizes a scenario or a policy asks for, made when it is
// read so that a typo is an error at its line and field rather than an
// out-of-memory crash, a silent overflow or a run of nonsense.

// maxNameBytes bounds metadata.name (a Kubernetes object name's limit).
const maxNameBytes = 253

// maxDurationMs bounds any duration a distribution or a training class
// gives a job: a century, far past any horizon, far below where
// milliseconds overflow.
const maxDurationMs = 100 * 365 * 24 * 3600 * 1000

// maxRatePerHour bounds an interruption rate per node-hour: one a
// millisecond.
const maxRatePerHour = 3.6e6

// maxClampedShare is the share of a duration distribution's samples that
// may fall outside what gpuplan represents (below 1 ms, above a century)
// or, with min and max, the share clamped at either.
const maxClampedShare = 0.10

// maxSigma bounds a lognormal's sigma: at 10 one standard deviation is a
// factor of 22 000, and the distribution is a few ms or decades.
const maxSigma = 10

// Quota bounds: a quota's CPU covers at most a whole cluster of MaxNodes
// nodes of the largest size; memory (in bytes) and counts of anything else
// at most 2^62 and 2^50, so that thousands of quotas add up without
// overflow.
const (
	maxQuotaMilliCPU  = MaxNodes * MaxPodMilliCPU
	maxQuotaMemoryMiB = 1 << 42 // 4 EiB
	maxQuotaCount     = 1 << 50
)

// fieldErr is an InputError at a policy document's field path: the
// field's own line and column when the document has it, else the
// document's.
func (d policyDoc) fieldErr(path, format string, args ...any) *InputError {
	e := &InputError{File: d.file, Line: d.line, Field: path, Msg: fmt.Sprintf(format, args...)}
	if d.root != nil {
		if n, _ := strict.NodeAt(d.root, path); n != nil && n.Line > 0 {
			e.Line, e.Column = n.Line, n.Column
		}
	}
	return e
}

// quantityErr is an InputError for a quantity at path that quotaAmount
// refused, quoting it as written (a quantity past int64 prints as
// 9223372036854775807 whatever it was).
func (d policyDoc) quantityErr(path, res string, q resource.Quantity, err error) *InputError {
	e := d.fieldErr(path, "%s: %v", res, err)
	if d.root != nil {
		if n, ok := strict.NodeAt(d.root, path); ok && n.Kind == yamlv3.ScalarNode {
			e.Msg = strings.Replace(e.Msg, Quote(q.String()), Quote(n.Value), 1)
		}
	}
	return e
}

// has reports whether a policy document gives a field.
func (d policyDoc) has(path string) bool {
	if d.root == nil {
		return false
	}
	_, ok := strict.NodeAt(d.root, path)
	return ok
}

// quotaAmount converts a quota (of a ClusterQueue, Cohort or Volcano
// Queue) into the simulator's units: milli-CPU, MiB of memory, a count of
// anything else. It refuses NaN, infinities and negative amounts, and
// amounts larger than a cluster of MaxNodes of the largest nodes could
// hold, before converting, so the conversion cannot overflow.
func quotaAmount(res string, q resource.Quantity) (int64, error) {
	f := q.AsApproximateFloat64()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not a finite quantity", Quote(q.String()))
	}
	if f < 0 {
		return 0, fmt.Errorf("%s is negative", Quote(q.String()))
	}
	switch res {
	case "cpu":
		if f*1000 > maxQuotaMilliCPU {
			return 0, fmt.Errorf("%s is more CPU than %d nodes of %d cores hold", Quote(q.String()), MaxNodes, MaxPodMilliCPU/1000)
		}
		return q.MilliValue(), nil
	case "memory":
		if f/(1<<20) > maxQuotaMemoryMiB {
			return 0, fmt.Errorf("%s is more memory than gpuplan counts (4 EiB)", Quote(q.String()))
		}
		return q.Value() >> 20, nil
	}
	if f > maxQuotaCount {
		return 0, fmt.Errorf("%s is more than %d, the most gpuplan counts of %s", Quote(q.String()), int64(maxQuotaCount), res)
	}
	return q.Value(), nil
}

// mulDivInt64 is a*b/c for non-negative a, b and b <= c, without overflow.
func mulDivInt64(a, b, c int64) int64 {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// fitInterval is the shortest timeline interval that keeps a horizon
// within MaxTimelineBuckets, rounded up to a whole second (or ms below one).
func fitInterval(horizonMs int64) time.Duration {
	ms := (horizonMs + MaxTimelineBuckets - 1) / MaxTimelineBuckets
	if ms > 1000 {
		ms = (ms + 999) / 1000 * 1000
	}
	return time.Duration(ms) * time.Millisecond
}

// sharePercent writes a share as a percentage with the digits it needs.
func sharePercent(p float64) string {
	switch {
	case p >= 0.1:
		return strconv.FormatFloat(p*100, 'f', 0, 64) + "%"
	case p >= 0.001:
		return strconv.FormatFloat(p*100, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p*100, 'g', 2, 64) + "%"
}

// subfield is the path of field under at when the file gives it (or when
// there are no positions to go by, in a variant), else at: an error about
// a distribution written as a scalar names the scalar.
func (s *Scenario) subfield(at, field string) string {
	if field == "" {
		return at
	}
	p := at + "." + field
	if _, ok := s.pos[p]; ok {
		return p
	}
	if _, ok := s.pos[at]; ok {
		return at
	}
	return p
}

// checkNodeCount bounds the nodes the scenario's pools and NodePools can
// have at their largest, as written (Cluster checks them again once
// NodePools are expanded into their instance types).
func (s validator) checkNodeCount() error {
	var total int64
	for i, p := range s.Spec.Cluster.Pools {
		n := int64(p.Count)
		if a := p.Autoscaling; a != nil {
			n = max(n, int64(a.MaxNodes))
		}
		if total += n; total > MaxNodes {
			return s.errAt(fmt.Sprintf("spec.cluster.pools[%d].count", i), "the pools have %d nodes or more at their largest, more than %d, the most one cluster has", total, MaxNodes)
		}
	}
	for i, np := range s.Spec.Cluster.NodePools {
		at := fmt.Sprintf("spec.cluster.nodePools[%d].limits", i)
		if np.Limits.Nodes > MaxNodes {
			return s.errAt(at, "%d nodes is more than %d, the most one cluster has", np.Limits.Nodes, MaxNodes)
		}
		if np.Limits.GPUs > MaxNodes*MaxPodGPUs {
			return s.errAt(at, "%d GPUs is more than %d nodes of %d GPUs have", np.Limits.GPUs, MaxNodes, MaxPodGPUs)
		}
		if total += int64(np.Limits.Nodes); total > MaxNodes {
			return s.errAt(at, "the pools and NodePools have %d nodes or more at their largest, more than %d, the most one cluster has", total, MaxNodes)
		}
	}
	return nil
}

// checkClusterSize bounds the nodes of a built cluster, every pool at its
// largest (a NodePool's limits count once for each of its instance types
// and capacity types).
func (s builder) checkClusterSize(pools []cluster.PoolSpec) error {
	var total int64
	for _, p := range pools {
		total += int64(p.Slots())
	}
	if total <= MaxNodes {
		return nil
	}
	return s.errAt("spec.cluster", "the cluster has %d nodes with every pool at its largest (a NodePool's limits count for each of its instance types and capacity types), more than %d, the most gpuplan simulates; lower counts, maxNodes or limits", total, MaxNodes)
}

// checkTimeline refuses a timeline of more than MaxTimelineBuckets
// intervals over a horizon of horizonMs (from names where the horizon
// came from when it is not spec.horizon), before anything is allocated.
func (s builder) checkTimeline(horizonMs int64, from string) error {
	interval := int64(sim.Hour)
	field := "spec.horizon"
	if t := s.Spec.Output.TimelineInterval; t != nil && t.Millis() > 0 {
		interval, field = t.Millis(), "spec.output.timelineInterval"
	}
	if horizonMs <= 0 {
		return nil
	}
	n := (horizonMs + interval - 1) / interval
	if n <= MaxTimelineBuckets {
		return nil
	}
	return s.errAt(field, "an interval of %s over the %s horizon%s makes %d timeline intervals, more than %d; use a timelineInterval of at least %s",
		time.Duration(interval)*time.Millisecond, time.Duration(horizonMs)*time.Millisecond, from, n, MaxTimelineBuckets, fitInterval(horizonMs))
}

// expectedArrivals is how many jobs a class's arrival process submits on
// average before horizonMs: poisson and fixed at their rate from their
// start; diurnal poisson by the integral of its rate,
// r (1 + a cos(2 pi (t/24h - peak/24))).
func expectedArrivals(a *ArrivalSpec, horizonMs int64) float64 {
	start := 0.0
	if a.Start != nil {
		start = float64(a.Start.Millis())
	}
	h := float64(horizonMs)
	if start >= h {
		return 0
	}
	r := a.RatePerHour / float64(sim.Hour)
	span := h - start
	switch {
	case a.Process == "fixed":
		return math.Ceil(span * r)
	case a.Diurnal != nil:
		day := float64(24 * sim.Hour)
		phase := func(t float64) float64 { return 2 * math.Pi * (t/day - a.Diurnal.PeakHour/24) }
		return r*span + r*a.Diurnal.Amplitude*day/(2*math.Pi)*(math.Sin(phase(h))-math.Sin(phase(start)))
	}
	return r * span
}

// checkArrivals refuses a synthetic workload expected to submit more than
// MaxJobs jobs over horizonMs (from names where the horizon came from when
// it is not spec.horizon) with no jobs limit below that, before a job is
// generated: the field named is the rate of the class that submits most.
func (s builder) checkArrivals(horizonMs int64, from string) error {
	sy := s.Spec.Workload.Synthetic
	if sy == nil || horizonMs <= 0 || (sy.Jobs > 0 && sy.Jobs <= MaxJobs) {
		return nil
	}
	total, most, worst := 0.0, -1.0, 0
	for i := range sy.Classes {
		n := expectedArrivals(&sy.Classes[i].Arrival, horizonMs)
		total += n
		if n > most {
			most, worst = n, i
		}
	}
	if !(total > MaxJobs) {
		return nil
	}
	c := &sy.Classes[worst]
	return s.errAt(fmt.Sprintf("spec.workload.synthetic.classes[%d].arrival.ratePerHour", worst),
		"%s arrivals at %g per hour over the %s horizon%s would submit about %.3g jobs (all classes: %.3g), more than %d, the most one run holds; lower the rate, shorten the horizon or cap spec.workload.synthetic.jobs",
		c.Arrival.Process, c.Arrival.RatePerHour, time.Duration(horizonMs)*time.Millisecond, from, most, total, MaxJobs)
}

// readWholeBounded reads a scenario or policy file whole with
// ReadFileBounded (no devices, FIFOs or folders, at most MaxFileBytes),
// as an InputError naming the file.
func readWholeBounded(path string) ([]byte, error) {
	data, err := ReadFileBounded(path)
	if err == nil {
		return data, nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return nil, err
	}
	return nil, &InputError{File: path, Msg: strings.TrimPrefix(readErr(err), path+" ")}
}

// checkScenarioQuantity checks a scenario's quantity by its field's name, as
// Validate does again (for variants): a pod's or a pool's cpu, memory and
// gpuMemory against the bounds of one node, a training class's
// gradientBytes against a node's memory; any other quantity for being
// finite and not negative.
func checkScenarioQuantity(path string, q resource.Quantity) error {
	field := path[strings.LastIndexByte(path, '.')+1:]
	var err error
	switch field {
	case "cpu":
		_, err = MilliCPU(q)
	case "memory":
		_, err = MemoryMiB(q)
	case "gpuMemory":
		_, err = strict.QuantityIn(q, false, 1<<20, MaxPodMemoryMiB, "gpuMemory")
	case "gradientBytes":
		_, err = strict.QuantityIn(q, false, 1, MaxPodMemoryMiB<<20, "gradientBytes")
	default:
		f := q.AsApproximateFloat64()
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			err = fmt.Errorf("%s is not a finite quantity", Quote(q.String()))
		case f < 0:
			err = fmt.Errorf("%s is negative", Quote(q.String()))
		}
	}
	return err
}
