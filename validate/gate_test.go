package validate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/validate/strict"
)

const head = "apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\n"

func TestParseAssertionsThresholds(t *testing.T) {
	a, err := ParseAssertions("r.yaml", []byte(head+`replications: 3
rules:
- {metric: queue.team-a.wait.p95, op: "<=", value: 30m}
- {metric: cost.total, of: relativeChange, op: "<=", value: 5%}
- {metric: allocation, op: ">=", value: 70%}
- {metric: allocation, op: ">=", value: 0.7}
- {metric: jct.p50, of: change, op: "<", value: 90s}
- {metric: jobs.completed, op: ">", value: 1000}
`))
	require.NoError(t, err)
	require.Len(t, a.Rules, 6)
	want := []float64{1800, 0.05, 0.7, 0.7, 90, 1000}
	for i, w := range want {
		assert.InDelta(t, w, a.Rules[i].threshold, 1e-12, "rule %d", i)
	}
	assert.Equal(t, OfCandidate, a.Rules[0].Of, "of defaults to the candidate")
	assert.Equal(t, 3, a.Replications)
}

func TestParseAssertionsErrorsNameLineAndField(t *testing.T) {
	cases := []struct{ body, field, line string }{
		{"rules:\n- {metric: allocaton, op: '>=', value: 0.7}\n", "rules[0].metric", ":4:"},
		{"rules:\n- {metric: allocation, op: '=>', value: 0.7}\n", "rules[0].op", ":4:"},
		{"rules:\n- {metric: allocation, of: delta, op: '>=', value: 0.7}\n", "rules[0].of", ":4:"},
		{"rules:\n- metric: wait.p95\n  op: '<='\n  value: 5%\n", "rules[0].value", ":6:"},
		{"rules:\n- {metric: cost.total, op: '<=', value: lots}\n", "rules[0].value", ":4:"},
		{"rules: []\n", "rules", ":3:"},
		{"replications: -1\nrules:\n- {metric: allocation, op: '>=', value: 1}\n", "replications", ":3:"},
		{"rules:\n- {metric: allocation, op: '>=', value: 1, bogus: 2}\n", "bogus", ""},
	}
	for _, c := range cases {
		_, err := ParseAssertions("rules.yaml", []byte(head+c.body))
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%q: %v", c.body, err)
		assert.Contains(t, err.Error(), "rules.yaml", c.body)
		assert.Contains(t, err.Error(), c.field, c.body)
		if c.line != "" {
			assert.Contains(t, err.Error(), "rules.yaml"+c.line, c.body)
		}
		assert.Equal(t, 2, ie.ExitCode())
	}
	_, err := ParseAssertions("s.yaml", []byte("apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nrules: []\n"))
	assert.ErrorContains(t, err, "kind Assertions")
}

// YAML's .inf and .nan, a line over 1 MiB and a long value: each an
// InputError at its line and field, quoting at most 80 bytes.
func TestParseAssertionsBadValues(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"rules:\n- {metric: allocation, op: '>=', value: .inf}\n", `rules.yaml:4:41: rules[0].value: ".inf" is not a finite number`},
		{"rules:\n- {metric: allocation, op: '>=', value: 1}\n- metric: allocation\n  op: '<='\n  value: .nan\n", `rules.yaml:7:10: rules[1].value: ".nan" is not a finite number`},
		{"rules:\n- {metric: allocation, op: '>=', value: -.Inf}\n", `rules.yaml:4:41: rules[0].value: "-.Inf" is not a finite number`},
		{"rules:\n- {metric: allocation, op: '>=', value: '" + strings.Repeat("9", 5000) + "x'}\n", `rules.yaml:4:41: rules[0].value: "99999`},
		{"rules:\n- {metric: allocation, op: '" + strings.Repeat("<", 5000) + "', value: 1}\n", `rules.yaml:4:28: rules[0].op: is "<<<`},
		{"rules:\n- {metric: allocation, op: '>=', value: 1}\n# " + strings.Repeat("x", strict.MaxLineBytes) + "\n", `rules.yaml:5: the line is longer than 1 MiB`},
		// A second document is refused as a rules file's, not a scenario's.
		{"rules:\n- {metric: allocation, op: '>=', value: 1}\n---\nrules: []\n", `rules.yaml:5: the file has more than one YAML document; a rules file is one document`},
	} {
		_, err := ParseAssertions("rules.yaml", []byte(head+c.body))
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%v", err)
		assert.Contains(t, err.Error(), c.want)
		assert.Less(t, len(err.Error()), 300, err.Error())
		assert.Equal(t, 2, ie.ExitCode())
	}
}

func FuzzParseAssertions(f *testing.F) {
	for _, s := range []string{
		head + "rules:\n- {metric: allocation, op: '>=', value: 0.7}\n",
		head + "rules:\n- {metric: queue.a.b.wait.p99, of: change, op: '<', value: 2h}\n",
		head + "rules:\n- {metric: cost.total, of: relativeChange, op: '==', value: '-5%'}\n",
		head + "replications: 9\nrules:\n- {metric: jobs.failed, op: '<=', value: 0}\n",
		"rules: {",
		head + "rules:\n- {metric: allocation, op: '>=', value: .nan}\n",
		head + "replications: .inf\nrules:\n- {metric: allocation, op: '>=', value: -.inf}\n",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile("../scenarios/examples/validate/rules.yaml"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAssertions("f.yaml", data)
		if err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %T %v", err, err)
			}
			return
		}
		for _, r := range a.Rules {
			if _, err := MetricUnit(r.Metric); err != nil || math.IsNaN(r.threshold) {
				t.Fatalf("accepted a bad rule %+v", r)
			}
		}
	})
}

// fake gives each side's summaries from fixed per-seed figures.
func fake(base, cand []float64, set func(*reports.Summary, float64)) RunFunc {
	return func(side Side, seed uint64) (*reports.Summary, error) {
		v := base
		if side == Candidate {
			v = cand
		}
		s := &reports.Summary{JobFigures: reports.JobFigures{Jobs: reports.JobCounts{ByOutcome: map[string]int{}}}}
		set(s, v[int(seed-10)])
		return s, nil
	}
}

func TestEvaluateConfidenceIntervalByHand(t *testing.T) {
	// Candidate allocations 0.60 .. 0.80 over five seeds: mean 0.70,
	// sample sd sqrt(0.025)/... worked out: deviations -0.1,-0.05,0,0.05,0.1,
	// sum of squares 0.025, variance 0.025/4 = 0.00625, sd 0.0790569.
	// t(0.975, 4) = 2.776445; half-width 2.776445*0.0790569/sqrt(5) = 0.098161.
	a, err := ParseAssertions("r.yaml", []byte(head+"rules:\n- {metric: allocation, op: '>=', value: 0.65}\n- {metric: allocation, op: '>=', value: 0.75}\n"))
	require.NoError(t, err)
	set := func(s *reports.Summary, v float64) { s.Cluster.Allocation = v }
	res, err := Evaluate(a, 5, 10, fake([]float64{0, 0, 0, 0, 0}, []float64{0.6, 0.65, 0.7, 0.75, 0.8}, set))
	require.NoError(t, err)
	require.Len(t, res.Verdicts, 2)
	v := res.Verdicts[0]
	assert.InDelta(t, 0.70, v.Mean, 1e-12)
	assert.InDelta(t, 0.70-0.098161, v.CILow, 1e-5)
	assert.InDelta(t, 0.70+0.098161, v.CIHigh, 1e-5)
	assert.True(t, v.Pass, "mean 0.70 >= 0.65")
	assert.False(t, v.Certain, "the interval 0.60..0.80 crosses 0.65")
	assert.False(t, res.Verdicts[1].Pass, "mean 0.70 < 0.75")
	assert.False(t, res.Pass)
	assert.Equal(t, []uint64{10, 11, 12, 13, 14}, res.Seeds)
}

func TestEvaluatePairedChange(t *testing.T) {
	// Costs vary a lot by seed but the candidate is always 4 to 6% dearer:
	// the paired change is 4,5,6 (mean 5, sd 1, half-width
	// t(0.975,2)=4.302653 * 1/sqrt(3) = 2.484138) over a mean baseline of 100.
	set := func(s *reports.Summary, v float64) { s.Cost = &reports.CostSummary{Total: v} }
	run := fake([]float64{50, 100, 150}, []float64{54, 105, 156}, set)
	a, err := ParseAssertions("r.yaml", []byte(head+`rules:
- {name: cost up at most 5%, metric: cost.total, of: relativeChange, op: "<=", value: 5%}
- {name: cost up at most 4%, metric: cost.total, of: relativeChange, op: "<=", value: 4%}
- {metric: cost.total, of: change, op: "<", value: 10}
- {metric: cost.total, of: baseline, op: "==", value: 100}
`))
	require.NoError(t, err)
	res, err := Evaluate(a, 3, 10, run)
	require.NoError(t, err)
	rel := res.Verdicts[0]
	assert.InDelta(t, 0.05, rel.Mean, 1e-12)
	assert.InDelta(t, 0.05-0.02484138, rel.CILow, 1e-6)
	assert.True(t, rel.Pass, "5% <= 5%")
	assert.False(t, res.Verdicts[1].Pass, "5% > 4%")
	assert.InDelta(t, 5, res.Verdicts[2].Mean, 1e-12)
	assert.True(t, res.Verdicts[2].Pass)
	assert.True(t, res.Verdicts[2].Certain, "5 +- 2.48 is all below 10")
	assert.True(t, res.Verdicts[3].Pass, "the baseline's mean is 100")

	var md bytes.Buffer
	require.NoError(t, res.WriteMarkdown(&md, "a.yaml", "b.yaml"))
	out := md.String()
	assert.Contains(t, out, "### gpuplan validate: FAILED")
	assert.Contains(t, out, "1 of 4 rules failed")
	// Each rule: baseline mean (50+100+150)/3 = $100, candidate
	// (54+105+156)/3 = $105, the paired difference $5 +- $2.48 (5% of
	// $100), and the tested value with its interval against the bound.
	assert.Contains(t, out, "| baseline | candidate | difference (95% CI) | tested (95% CI) | bound |")
	assert.Contains(t, out, "| **FAIL** (uncertain) | cost up at most 4% (relativeChange of cost.total) | $100.00 | $105.00 | +$5.00 (+$2.52 to +$7.48), +5.0% | relativeChange: +5.00% (+2.52% to +7.48%) | <= 4% |")
	// The baseline's own interval: sd 50, 4.302653*50/sqrt(3) = 124.21.
	assert.Contains(t, out, "| baseline: $100.00 (-$24.21 to $224.21) | == 100 |")

	var j bytes.Buffer
	require.NoError(t, res.WriteJUnit(&j, 1500*time.Millisecond))
	var suites junitSuites
	require.NoError(t, xml.Unmarshal(j.Bytes(), &suites))
	require.Len(t, suites.Suites, 1)
	s := suites.Suites[0]
	assert.Equal(t, 4, s.Tests)
	assert.Equal(t, 1, s.Failures)
	assert.Equal(t, "1.500", s.Time)
	require.NotNil(t, s.Cases[1].Failure)
	assert.Equal(t, "cost up at most 4%", s.Cases[1].Name)
	assert.Nil(t, s.Cases[0].Failure)
	// One unit per case: a relative change's per-seed values are the
	// changes over the baseline's mean, 4/100, 5/100, 6/100, in percent
	// like its mean, not dollars beside a percentage.
	assert.Contains(t, s.Cases[1].SystemOut, "relativeChange of cost.total <= 4%: mean +5.00%, 95% CI +2.52% to +7.48%, per seed +4.00%, +5.00%, +6.00%")
	assert.Contains(t, s.Cases[2].SystemOut, "mean $5.00, 95% CI $2.52 to $7.48, per seed $4.00, $5.00, $6.00")
	assert.Equal(t, "fraction", rel.Unit)
	assert.Equal(t, []float64{0.04, 0.05, 0.06}, roundAll(rel.Samples))
	assert.Equal(t, "usd", res.Verdicts[2].Unit)
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*1e9) / 1e9
	}
	return out
}

// The verdicts' JSON: every key in one style (lowerCamelCase), the
// headline figures included.
func TestGateJSONKeysOneCase(t *testing.T) {
	set := func(s *reports.Summary, v float64) { s.Cost = &reports.CostSummary{Total: v} }
	a, err := ParseAssertions("r.yaml", []byte(head+"rules:\n- {metric: cost.total, op: '<', value: 200}\n"))
	require.NoError(t, err)
	res, err := Evaluate(a, 2, 10, fake([]float64{50, 100}, []float64{54, 105}, set))
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(b, &doc))
	lowerCamel := regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch v := x.(type) {
		case map[string]any:
			for k, y := range v {
				assert.Regexp(t, lowerCamel, k, "key %s.%s", path, k)
				walk(path+"."+k, y)
			}
		case []any:
			for _, y := range v {
				walk(path+"[]", y)
			}
		}
	}
	walk("", doc)
	m := doc.(map[string]any)
	assert.Contains(t, m, "baseline")
	assert.Contains(t, m, "candidate")
}

// An inference service's metrics, read off summary.json's services[]:
// a rule can gate a candidate on a service's SLO.
func TestServiceMetrics(t *testing.T) {
	s := &reports.Summary{
		JobFigures: reports.JobFigures{Jobs: reports.JobCounts{ByOutcome: map[string]int{}}},
		Services: []reports.ServiceSummary{{Name: "recommender", P50Ms: 40, P95Ms: 180, P99Ms: 420, SLOMs: 200, SLOAttainment: 0.97,
			RequestsArrived: 1e6, RequestsServed: 999000, RequestsDropped: 1000, GPUHours: 12, ColdStarts: 3,
			Cost: &reports.ServiceCost{Cost: 60, PerMillionRequests: 60.06}}},
		Pools:        []reports.PoolSummary{{Name: "l4.pool", Allocation: 0.25, GPUs: 8}},
		MoneyFigures: reports.MoneyFigures{Cost: &reports.CostSummary{Total: 100}},
	}
	for name, want := range map[string]float64{
		"service.recommender.sloAttainment": 0.97, "service.recommender.p95Ms": 180, "service.recommender.p99Ms": 420,
		"service.recommender.requestsDropped": 1000, "service.recommender.costPerMillionRequests": 60.06,
		"service.recommender.gpuHours": 12, "service.recommender.coldStarts": 3, "service.recommender.cost": 60,
		// The bill over the requests served: 100 / 0.999 M.
		"cost.perMillionRequests": 100 / 0.999,
		"pool.l4.pool.allocation": 0.25, "pool.l4.pool.gpus": 8,
	} {
		got, err := Metric(s, name)
		require.NoError(t, err, name)
		assert.InDelta(t, want, got, 1e-2, name)
	}
	units := map[string]Unit{"service.x.sloAttainment": Ratio, "service.x.p95Ms": Milliseconds, "service.x.requestsDropped": Number,
		"service.x.costPerMillionRequests": USD, "cost.perMillionRequests": USD}
	for name, want := range units {
		u, err := MetricUnit(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, u, name)
	}
	_, err := Metric(s, "service.search.p95Ms")
	assert.ErrorContains(t, err, `no service "search" (services: recommender)`)

	// Latency bounds: a plain number of milliseconds or a duration.
	a, err := ParseAssertions("r.yaml", []byte(head+`rules:
- {metric: service.recommender.p95Ms, op: "<=", value: 250ms}
- {metric: service.recommender.p95Ms, op: "<=", value: 0.3s}
- {metric: service.recommender.p95Ms, op: "<=", value: 250}
- {metric: service.recommender.sloAttainment, op: ">=", value: 99%}
- {metric: service.recommender.costPerMillionRequests, of: relativeChange, op: "<=", value: 5%}
`))
	require.NoError(t, err)
	for i, want := range []float64{250, 300, 250, 0.99, 0.05} {
		assert.InDelta(t, want, a.Rules[i].threshold, 1e-12, "rule %d", i)
	}
}

// An unknown metric names file, line and field, and then lists every
// metric validate knows, whole (it was cut after a few hundred bytes).
func TestUnknownMetricListsEveryMetric(t *testing.T) {
	_, err := ParseAssertions("rules.yaml", []byte(head+"rules:\n- {metric: service.recommender.sloAttainmnt, op: '>=', value: 0.99}\n"))
	var ie *strict.InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, 2, ie.ExitCode())
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, `rules.yaml:4:12: rules[0].metric: unknown metric "service.recommender.sloAttainmnt" (metrics: `), msg)
	for _, m := range Metrics() {
		assert.Contains(t, msg, m)
	}
	assert.True(t, strings.HasSuffix(msg, ")"), msg)
	assert.Contains(t, msg, "sloAttainment")
	assert.NotContains(t, msg, "bytes of message cut")
	// The name as written is still quoted bounded.
	_, err = ParseAssertions("rules.yaml", []byte(head+"rules:\n- {metric: "+strings.Repeat("x", 5000)+", op: '>=', value: 0.99}\n"))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300+len(strings.Join(Metrics(), ", ")))
}

func TestEvaluateRelativeChangeOfZeroBaseline(t *testing.T) {
	set := func(s *reports.Summary, v float64) { s.Cost = &reports.CostSummary{Total: v} }
	a, err := ParseAssertions("r.yaml", []byte(head+"rules:\n- {metric: cost.total, of: relativeChange, op: '<=', value: 5%}\n"))
	require.NoError(t, err)
	_, err = Evaluate(a, 2, 10, fake([]float64{0, 0}, []float64{1, 1}, set))
	assert.ErrorContains(t, err, "undefined")
}

func TestMetricNames(t *testing.T) {
	s := &reports.Summary{
		Cluster: reports.PoolSummary{Allocation: 0.5, GPUHoursIdle: 7},
		JobFigures: reports.JobFigures{
			QueueWait: reports.Stats{P95: 60},
			Jobs:      reports.JobCounts{Total: 9, ByOutcome: map[string]int{"completed": 8}},
			Queues:    []reports.QueueStats{{Name: "team.a", Completed: 3, QueueWait: reports.Stats{P99: 42}}},
		},
	}
	for name, want := range map[string]float64{
		"allocation": 0.5, "gpuHours.idle": 7, "wait.p95": 60, "jobs.total": 9, "jobs.completed": 8,
		"queue.team.a.wait.p99": 42, "queue.team.a.completed": 3,
	} {
		got, err := Metric(s, name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
	for name, msg := range map[string]string{
		"queue.team-b.wait.p95": "no queue \"team-b\" (queues: team.a)",
		"jobs.lost":             "no outcome",
		"cost.total":            "no prices",
		"fragmentation.mean":    "output.fragmentation",
	} {
		_, err := Metric(s, name)
		assert.ErrorContains(t, err, msg, name)
	}
	_, err := MetricUnit("wait.p42")
	assert.ErrorContains(t, err, "unknown metric")
}

func TestUnnamedRuleLabel(t *testing.T) {
	a, err := ParseAssertions("r.yaml", []byte(head+"rules:\n- {metric: cost.total, of: change, op: '<', value: 10}\n- {metric: allocation, op: '>=', value: 0.5}\n"))
	require.NoError(t, err)
	assert.Equal(t, "change of cost.total < 10", a.Rules[0].label())
	assert.Equal(t, "allocation >= 0.5", a.Rules[1].label())
}

// The commitment advice's figures as metrics (the hand-worked mix of
// scenarios' TestCommitmentAdviceMixByHand), and a run without advice
// named for what it lacks.
func TestCommitmentMetrics(t *testing.T) {
	s := &reports.Summary{}
	s.Cost = &reports.CostSummary{CommitmentAdvice: &reports.CommitmentAdvice{SpotBill: 8, MixBill: 22}}
	a := &s.Cost.CommitmentAdvice.CommitmentAdvice
	a.Level, a.Bill, a.BillNone, a.Saving, a.BreakEven, a.BreakEvenFall = 3.5, 14, 20, 6, 5, 0.3
	for name, want := range map[string]float64{"commitment.level": 3.5, "commitment.bill": 14, "commitment.billNone": 20,
		"commitment.saving": 6, "commitment.spotBill": 8, "commitment.mixBill": 22, "commitment.breakEven": 5, "commitment.breakEvenFall": 0.3} {
		v, err := Metric(s, name)
		require.NoError(t, err, name)
		assert.Equal(t, want, v, name)
	}
	u, err := MetricUnit("commitment.breakEvenFall")
	require.NoError(t, err)
	assert.Equal(t, Ratio, u)
	_, err = MetricUnit("commitment.levels")
	assert.ErrorContains(t, err, "commitment.{bill,billNone,breakEven,breakEvenFall,coverage,level,mixBill,saving,spotBill,utilisation}")
	s.Cost.CommitmentAdvice = nil
	_, err = Metric(s, "commitment.mixBill")
	assert.ErrorContains(t, err, "metric commitment.mixBill: the run has no commitment advice (set spec.pricing.commitmentAdvice.discount)")
}
