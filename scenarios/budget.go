package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/services"
)

// The work budget. A scenario's cost in events grows without bound with
// some of its settings: node failures and spot interruptions with the
// nodes, the horizon and one over the MTBF; a service's scaler periods
// with the horizon over the period; jobs with the arrival rates and the
// horizon; timeline buckets with the horizon over the interval; a rate
// file's samples with the horizon; spikes with their own number squared
// (each change of the rate looks at every spike). Build estimates each
// from the built plan and refuses a scenario whose estimate is over the
// budget (Options.MaxEvents, --max-events) before anything runs, naming
// the setting that costs most and the value of it that would fit, as the
// timeline's bound does.
//
// Each estimate is a floor of what the run does (a failure counts one
// event, where the run also provisions the node that replaces it; a job
// counts two, its arrival and its end, what the built-in default scenario
// measures), so a scenario refused would have made at least that many.

// DefaultMaxEvents is the budget of events a run may be estimated to make
// when --max-events does not say: the shipped examples are estimated at
// 780,000 at most (kserve-flash-sale, which makes 130,077); a trace makes
// about 2 events a job (401,689 for a generated trace of 200,000), so
// the 3,000,000-job benchmarks about 6 million; a century of the built-in
// default's arrivals would make 34 million.
const DefaultMaxEvents = 25_000_000

// eventsPerJob is what a job is counted in the budget: its arrival and its
// end (the built-in default scenario makes 2,780 events for 1,393 jobs).
const eventsPerJob = 2

// rateSampleMs is the step at which a rate file's curve is sampled to
// take its mean (serving.Load.Mean's midpoint rule).
const rateSampleMs = 1000

// budgetTerm is one setting's share of the estimate: the field it comes
// from, the events, what makes them in words, and the value of the field
// that would fit when the others keep theirs (fit gets the events the
// term may make).
type budgetTerm struct {
	field  string
	events float64
	what   string
	fit    func(allowed float64) string
}

// maxEvents is the budget an Options gives (DefaultMaxEvents when it
// gives none).
func (o Options) maxEvents() int64 {
	if o.MaxEvents > 0 {
		return o.MaxEvents
	}
	return DefaultMaxEvents
}

// checkBudget refuses a built plan whose estimated events are over the
// budget, naming the costliest setting (from says where the horizon came
// from when it is not spec.horizon).
func (s budgeter) checkBudget(b *Built, opts Options, from string) error {
	if opts.MaxEvents < 0 {
		return &InputError{File: "--max-events", Msg: fmt.Sprintf("%d: want a positive number of events", opts.MaxEvents)}
	}
	budget := float64(opts.maxEvents())
	terms := s.budgetTerms(b, from)
	total := 0.0
	worst := -1
	for i, t := range terms {
		total += t.events
		if worst < 0 || t.events > terms[worst].events {
			worst = i
		}
	}
	if !(total > budget) || worst < 0 {
		return nil
	}
	t := terms[worst]
	msg := fmt.Sprintf("%s makes about %.2g events, over the budget of %d (--max-events)", t.what, t.events, opts.maxEvents())
	if rest := total - t.events; rest > 0 {
		msg += fmt.Sprintf(" with the %.2g the rest of the scenario makes", rest)
	}
	if allowed := budget - (total - t.events); allowed >= 1 && t.fit != nil {
		if f := t.fit(allowed); f != "" {
			msg += "; " + f + " fits"
		}
	}
	if t.field == "--horizon" {
		return &InputError{File: "--horizon", Msg: msg}
	}
	return s.errAt(t.field, "%s", msg)
}

// budgetTerms lists the settings of a built plan whose cost grows without
// bound, with their estimates.
func (s budgeter) budgetTerms(b *Built, from string) []budgetTerm {
	cfg := &b.Config
	h := cfg.Horizon
	hText := durationText(h) + " horizon" + from
	var terms []budgetTerm
	if h > 0 {
		interval := cfg.TimelineInterval
		field := "spec.horizon"
		if interval <= 0 {
			interval = sim.Hour
		} else {
			field = "spec.output.timelineInterval"
		}
		if from != "" && field == "spec.horizon" {
			field = "--horizon"
		}
		n := float64(h) / float64(interval)
		terms = append(terms, budgetTerm{field: field, events: n,
			what: fmt.Sprintf("a timeline interval of %s over the %s", durationText(interval), hText),
			fit:  func(a float64) string { return "a timelineInterval of at least " + ceilDuration(float64(h)/a) }})
	}
	terms = append(terms, s.jobTerms(h, hText, from)...)
	if span, text := s.submitSpan(); h <= 0 && span > 0 {
		// Without a horizon the run lasts at least as long as its
		// arrivals take to submit a synthetic workload's jobs limit.
		terms = append(terms, s.capacityTerms(b, span, text)...)
	} else {
		terms = append(terms, s.capacityTerms(b, h, hText)...)
	}
	terms = append(terms, s.serviceTerms(cfg, h, hText)...)
	return terms
}

// jobTerms estimates the jobs of a synthetic workload or of manifests
// submitted by an arrival process.
func (s budgeter) jobTerms(h int64, hText, from string) []budgetTerm {
	var terms []budgetTerm
	w := &s.Spec.Workload
	if sy := w.Synthetic; sy != nil && w.Trace == nil {
		total, most, worst := 0.0, -1.0, 0
		if h > 0 {
			for i := range sy.Classes {
				n := expectedArrivals(&sy.Classes[i].Arrival, h)
				total += n
				if n > most {
					most, worst = n, i
				}
			}
		}
		switch {
		case sy.Jobs > 0 && (h <= 0 || float64(sy.Jobs) < total):
			jobs := float64(sy.Jobs)
			terms = append(terms, budgetTerm{field: "spec.workload.synthetic.jobs", events: jobs * eventsPerJob,
				what: fmt.Sprintf("%d jobs", sy.Jobs),
				fit:  func(a float64) string { return fmt.Sprintf("a jobs limit of at most %d", int64(a/eventsPerJob)) }})
		case h > 0 && total > 0:
			c := &sy.Classes[worst]
			terms = append(terms, budgetTerm{field: fmt.Sprintf("spec.workload.synthetic.classes[%d].arrival.ratePerHour", worst), events: total * eventsPerJob,
				what: fmt.Sprintf("%s arrivals at %g per hour (with the other classes', about %.2g jobs) over the %s", c.Arrival.Process, c.Arrival.RatePerHour, total, hText),
				fit: func(a float64) string {
					return fmt.Sprintf("a horizon of at most %s, a lower rate or a jobs limit of at most %d", floorDuration(float64(h)*a/(total*eventsPerJob)), int64(a/eventsPerJob))
				}})
		}
	}
	if h > 0 && w.Trace == nil {
		for i := range w.Manifests {
			m := &w.Manifests[i]
			if m.Arrival == nil || m.Count > 0 {
				continue
			}
			n := expectedArrivals(m.Arrival, h)
			terms = append(terms, budgetTerm{field: fmt.Sprintf("spec.workload.manifests[%d].arrival.ratePerHour", i), events: n * eventsPerJob,
				what: fmt.Sprintf("%s arrivals at %g per hour over the %s (about %.2g)", m.Arrival.Process, m.Arrival.RatePerHour, hText, n),
				fit: func(a float64) string {
					return fmt.Sprintf("a horizon of at most %s, a lower rate or a count", floorDuration(float64(h)*a/(n*eventsPerJob)))
				}})
		}
	}
	return terms
}

// submitSpan is how long a synthetic workload with a jobs limit takes to
// submit it at its classes' mean rates (0 when it has none), and that in
// words: a floor of how long a run without a horizon lasts.
func (s budgeter) submitSpan() (int64, string) {
	sy := s.Spec.Workload.Synthetic
	if sy == nil || sy.Jobs <= 0 || s.Spec.Workload.Trace != nil {
		return 0, ""
	}
	rate := 0.0
	for i := range sy.Classes {
		rate += sy.Classes[i].Arrival.RatePerHour
	}
	if !(rate > 0) {
		return 0, ""
	}
	span := float64(sy.Jobs) / rate * float64(sim.Hour)
	if span > float64(maxDurationMs) {
		span = maxDurationMs
	}
	ms := int64(span)
	return ms, fmt.Sprintf("%s the arrivals take to submit the %d jobs of spec.workload.synthetic.jobs (no horizon)", durationText(ms), sy.Jobs)
}

// capacityTerms estimates each pool's node failures and spot
// interruptions over the horizon, on the most nodes it can have.
func (s budgeter) capacityTerms(b *Built, h int64, hText string) []budgetTerm {
	cs := b.Config.Capacity
	if cs == nil || h <= 0 {
		return nil
	}
	var terms []budgetTerm
	for i := range cs.Pools {
		if i >= len(b.Config.Pools) {
			break
		}
		cp := &cs.Pools[i]
		ps := &b.Config.Pools[i]
		nodes := float64(ps.Slots())
		at, spec := s.poolField(i, ps.Name)
		nodesText := fmt.Sprintf("%d nodes", ps.Slots())
		if mtbf := cp.FailureMTBF; mtbf > 0 && nodes > 0 {
			n := nodes * float64(h) / float64(mtbf)
			terms = append(terms, budgetTerm{field: at + ".failures.mtbf", events: n,
				what: fmt.Sprintf("a failure MTBF of %s on %s over the %s (failures)", durationText(mtbf), nodesText, hText),
				fit:  func(a float64) string { return "an MTBF of at least " + ceilDuration(nodes*float64(h)/a) }})
		}
		p := &cp.Interruptions
		if r := p.RatePerHour; r > 0 && nodes > 0 {
			n := nodes * float64(h) / float64(sim.Hour) * r
			field, given := at+".capacityType", "the spot interruption rate of its band"
			if spec != nil && spec.Interruptions != nil {
				switch in := spec.Interruptions; {
				case in.MTBF != nil:
					field, given = at+".interruptions.mtbf", "a spot interruption MTBF of "+durationText(in.MTBF.Millis())
				case in.RatePerHour != nil:
					field, given = at+".interruptions.ratePerHour", fmt.Sprintf("spot interruptions at %g per node-hour", r)
				case in.Band != "":
					field = at + ".interruptions.band"
				}
			}
			terms = append(terms, budgetTerm{field: field, events: n,
				what: fmt.Sprintf("%s on %s over the %s (interruptions)", given, nodesText, hText),
				fit: func(a float64) string {
					return "an MTBF of at least " + ceilDuration(nodes*float64(h)/a) + fmt.Sprintf(" (%.3g per node-hour)", a/(nodes*float64(h)/float64(sim.Hour)))
				}})
		}
	}
	return terms
}

// poolField is the scenario field a built pool comes from and its
// capacity settings (nil for an imported node list's).
func (s budgeter) poolField(i int, name string) (string, *CapacitySpec) {
	if i < len(s.Spec.Cluster.Pools) {
		return fmt.Sprintf("spec.cluster.pools[%d]", i), &s.Spec.Cluster.Pools[i].CapacitySpec
	}
	np, _, _ := strings.Cut(name, "/")
	for k := range s.Spec.Cluster.NodePools {
		if p := &s.Spec.Cluster.NodePools[k]; p.Name == np {
			return fmt.Sprintf("spec.cluster.nodePools[%d]", k), &CapacitySpec{Interruptions: p.Interruptions, Failures: p.Failures}
		}
	}
	return "spec.cluster", nil
}

// serviceTerms estimates each service's scaler periods, rate samples and
// spike evaluations over the horizon.
func (s budgeter) serviceTerms(cfg *sim.Config, h int64, hText string) []budgetTerm {
	if h <= 0 {
		return nil
	}
	var terms []budgetTerm
	for k := range cfg.Services {
		c := &cfg.Services[k]
		at := fmt.Sprintf("spec.workload.services[%d]", k)
		var spec *ServiceSpec
		if k < len(s.Spec.Workload.Services) {
			spec = &s.Spec.Workload.Services[k]
		}
		period := int64(60_000)
		field, name := at+".autoscaler", "fixed replicas' period"
		if c.Scaler != nil {
			period = c.Scaler.PeriodMs()
		}
		if spec != nil && spec.Autoscaler != nil {
			switch a := spec.Autoscaler; {
			case a.KPA != nil:
				field, name = at+".autoscaler.kpa.tickInterval", "a KPA tickInterval"
			case a.HPA != nil:
				field, name = at+".autoscaler.hpa.syncPeriod", "an HPA syncPeriod"
			case a.KEDA != nil:
				field, name = at+".autoscaler.keda", "a KEDA ScaledObject's HPA sync period"
			default:
				field, name = at+".autoscaler.manifests", "the autoscaler's period"
			}
		} else {
			switch c.Scaler.(type) {
			case nil, services.Fixed, *services.Fixed:
			case services.KPA, *services.KPA:
				field, name = at+".manifests", "a KPA tick"
			default:
				field, name = at+".manifests", "the autoscaler's period"
			}
		}
		if period > 0 {
			n := float64(h) / float64(period)
			fit := func(a float64) string { return "a period of at least " + ceilDuration(float64(h)/a) }
			if field == at+".autoscaler" {
				// Fixed replicas: their period is not a setting.
				field = "spec.horizon"
				fit = func(a float64) string { return "a horizon of at most " + floorDuration(a*float64(period)) }
			}
			terms = append(terms, budgetTerm{field: field, events: n,
				what: fmt.Sprintf("%s of %s over the %s (scaler periods of service %s)", name, durationText(period), hText, c.Spec.Name),
				fit:  fit})
		}
		load := &c.Spec.Load
		samples := 0.0
		if len(load.Points) > 0 {
			samples = float64(h) / rateSampleMs
			field, what := at+".load.csv.path", fmt.Sprintf("a rate file of %d rows sampled every second over the %s", len(load.Points), hText)
			if spec != nil && spec.LLM != nil && spec.LLM.RequestTrace != nil {
				field, what = at+".llm.requestTrace", fmt.Sprintf("a request trace's %d rate changes (its bins) sampled every second over the %s", len(load.Points), hText)
			}
			terms = append(terms, budgetTerm{field: field, events: samples + float64(len(load.Points)),
				what: what,
				fit: func(a float64) string {
					return "a horizon of at most " + floorDuration(math.Max(a-float64(len(load.Points)), 0)*rateSampleMs)
				}})
		}
		if ns := float64(len(load.Spikes)); ns > 0 {
			// Every change of the rate (a spike's edges, a row) and every
			// sample or period looks at every spike.
			other := samples + float64(len(load.Points)) + float64(h)/float64(max(period, 1))
			n := ns * (2*ns + other)
			terms = append(terms, budgetTerm{field: at + ".load.spikes", events: n,
				what: fmt.Sprintf("%d spikes, each looked at on every change of the rate and every sample of service %s", len(load.Spikes), c.Spec.Name),
				fit: func(a float64) string {
					// 2 x^2 + other x <= a.
					x := (-other + math.Sqrt(other*other+8*a)) / 4
					return fmt.Sprintf("at most %d spikes", int64(x))
				}})
		}
	}
	return terms
}

// ceilDuration writes ms (rounded up to a whole second above one) as a
// duration.
func ceilDuration(ms float64) string {
	v := int64(math.Ceil(ms))
	if v > 1000 {
		v = (v + 999) / 1000 * 1000
	}
	return (time.Duration(max(v, 1)) * time.Millisecond).String()
}

// floorDuration writes ms (rounded down to a whole second above one) as a
// duration.
func floorDuration(ms float64) string {
	if ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		ms = float64(math.MaxInt64 / int64(time.Millisecond))
	}
	v := int64(ms)
	if v > 1000 {
		v = v / 1000 * 1000
	}
	return (time.Duration(v) * time.Millisecond).String()
}

// durationText writes ms as a duration.
func durationText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
