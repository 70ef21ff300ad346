package manifests

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/require"
)

// This file evaluates the alert rules gpuplan writes (prometheusrule.yaml)
// by hand, in Prometheus' documented semantics, for exactly the expression
// shapes the rules use:
//
//   - an instant selector at time t takes the newest sample in (t-5m, t]
//     (the default lookback delta); with `offset d` it is evaluated at t-d;
//   - avg_over_time / max_over_time over `[r]` take every sample in
//     (t-r, t] (https://prometheus.io/docs/prometheus/latest/querying/functions/#aggregation_over_time:
//     "the average / maximum value of all points in the specified interval");
//   - `a == c`, `a < c` keep the series where the comparison holds;
//     `a and b` keeps a's series where b has one with the same labels;
//   - the rule is evaluated every minute (the rule group's default
//     interval); the first evaluation at which the expression returns the
//     series makes the alert pending, and it fires at the first evaluation
//     at least `for` later at which the expression has held at every
//     evaluation in between; without `for` it fires at once
//     (https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/:
//     "Prometheus will check that the alert continues to be active during
//     each evaluation for 10 minutes before firing the alert").
//
// dcgm-exporter is scraped every 15 s (the GPU Operator's ServiceMonitor
// default) or every 30 s (kube-prometheus-stack's global default); both are
// checked and give the same minutes. The pod takes the GPU at t = 0, which
// is the series' first sample (a new pod is a new series: exported_pod is
// one of its labels), and evaluations fall on whole minutes from t = 0.

const (
	lookback = 5 * time.Minute
	evalStep = time.Minute
	horizon  = 4 * time.Hour
)

type sample struct {
	t time.Duration
	v float64
}

// scrape samples util(t) every step from 0 to horizon.
func scrape(step time.Duration, util func(time.Duration) float64) []sample {
	var s []sample
	for t := time.Duration(0); t <= horizon; t += step {
		s = append(s, sample{t, util(t)})
	}
	return s
}

// window is the samples in (from, to].
func window(s []sample, from, to time.Duration) []sample {
	var w []sample
	for _, x := range s {
		if x.t > from && x.t <= to {
			w = append(w, x)
		}
	}
	return w
}

// instant is the selector's value at t: the newest sample in (t-5m, t].
func instant(s []sample, t time.Duration) (float64, bool) {
	w := window(s, t-lookback, t)
	if len(w) == 0 {
		return 0, false
	}
	return w[len(w)-1].v, true
}

const heldSelector = `DCGM_FI_DEV_GPU_UTIL{exported_pod!=""}`

var (
	// LHS [and SEL offset D]
	exprAnd = regexp.MustCompile(`^(.*?)(?: and ` + regexp.QuoteMeta(heldSelector) + ` offset (\d+[mh]))?$`)
	// fn_over_time(SEL[R]) OP N, or SEL OP N
	exprCmp = regexp.MustCompile(`^(?:(avg|max)_over_time\(` + regexp.QuoteMeta(heldSelector) + `\[(\d+[mh])\]\)|` +
		regexp.QuoteMeta(heldSelector) + `) (==|<) (\d+)$`)
)

// holds says whether expr returns the (single) series at t.
func holds(t *testing.T, expr string, s []sample, at time.Duration) bool {
	t.Helper()
	m := exprAnd.FindStringSubmatch(expr)
	require.NotNil(t, m, "expression shape not evaluated here: %s", expr)
	if m[2] != "" {
		d, err := time.ParseDuration(m[2])
		require.NoError(t, err)
		if _, ok := instant(s, at-d); !ok {
			return false
		}
	}
	c := exprCmp.FindStringSubmatch(m[1])
	require.NotNil(t, c, "expression shape not evaluated here: %s", m[1])
	var v float64
	switch c[1] {
	case "":
		var ok bool
		if v, ok = instant(s, at); !ok {
			return false
		}
	default:
		r, err := time.ParseDuration(c[2])
		require.NoError(t, err)
		w := window(s, at-r, at)
		if len(w) == 0 {
			return false
		}
		sum, max := 0.0, w[0].v
		for _, x := range w {
			sum += x.v
			if x.v > max {
				max = x.v
			}
		}
		if c[1] == "avg" {
			v = sum / float64(len(w))
		} else {
			v = max
		}
	}
	n, err := strconv.ParseFloat(c[4], 64)
	require.NoError(t, err)
	if c[3] == "==" {
		return v == n
	}
	return v < n
}

// firesAt is the first evaluation at which the rule fires, or -1 if it does
// not within the horizon.
func firesAt(t *testing.T, r monitoringv1.Rule, s []sample) time.Duration {
	t.Helper()
	var hold time.Duration
	if r.For != nil {
		var err error
		hold, err = time.ParseDuration(string(*r.For))
		require.NoError(t, err)
	}
	active, since := false, time.Duration(0)
	for at := time.Duration(0); at <= horizon; at += evalStep {
		if !holds(t, r.Expr.StrVal, s, at) {
			active = false
			continue
		}
		if !active {
			active, since = true, at
		}
		if at-since >= hold {
			return at
		}
	}
	return -1
}

func TestAlertRulesFireWhenTheirWordsSay(t *testing.T) {
	files := generate(t, goldenCases[0])
	pr := find[monitoringv1.PrometheusRule](t, files, "gpuplan-gpu-utilisation")
	require.Len(t, pr.Spec.Groups, 1)
	rules := map[string]monitoringv1.Rule{}
	for _, r := range pr.Spec.Groups[0].Rules {
		rules[r.Alert] = r
	}
	require.Len(t, rules, 2)

	const twoHours = 2 * time.Hour
	step := func(before, after float64) func(time.Duration) float64 {
		return func(t time.Duration) float64 {
			if t < twoHours {
				return before
			}
			return after
		}
	}
	const never = time.Duration(-1)
	cases := []struct {
		name string
		util func(time.Duration) float64
		// GPUUnderutilised: "averaged under 50% over the last 30
		// minutes", once the pod has held the GPU 30 minutes.
		// GPUHeldIdle: "0% at every check for an hour".
		underutilised, heldIdle time.Duration
	}{{
		// (a) idle from the start. The 30-minute mean is 0 from the
		// first sample, but the pod has held the GPU 30 minutes only at
		// t = 30m (the sample at 0 is then the offset-30m sample):
		// fires at 30m. 0 at every evaluation from t = 0: pending at 0,
		// fires at 0 + 1h = 60m.
		name: "idle from the start", util: func(time.Duration) float64 { return 0 },
		underutilised: 30 * time.Minute, heldIdle: time.Hour,
	}, {
		// (b) a steady 40%: the mean is 40 < 50 as soon as the pod has
		// held the GPU 30 minutes: 30m. Never 0: GPUHeldIdle never fires.
		name: "steady 40%", util: func(time.Duration) float64 { return 40 },
		underutilised: 30 * time.Minute, heldIdle: never,
	}, {
		// (c) 100% for 2h, then 0 (samples from t = 2h on read 0). At
		// 2h+k minutes the window (2h+k-30m, 2h+k] holds 120 samples at
		// 15 s, of which 4k+1 are 0 and 119-4k are 100: mean
		// 100(119-4k)/120 < 50 <=> k > 14.75, so k = 15 (at 30 s: 60
		// samples, 2k+1 zeros, 100(59-2k)/60 < 50 <=> k > 14.5, k = 15):
		// 2h15m. The continuous figure agrees: 15 minutes at 100 and 15
		// at 0 average 50. GPUHeldIdle: 0 at every evaluation from 2h:
		// fires at 3h.
		name: "100% for 2h, then idle", util: step(100, 0),
		underutilised: twoHours + 15*time.Minute, heldIdle: 3 * time.Hour,
	}, {
		// (d) 100% for 2h, then 40%. At 2h+k minutes, 15 s scrape:
		// (40(4k+1) + 100(119-4k))/120 < 50 <=> 11940-240k < 6000 <=>
		// k > 24.75, so k = 25 (at 30 s: (40(2k+1)+100(59-2k))/60 < 50
		// <=> k > 24.5, k = 25): 2h25m, when the last 30 minutes are 25
		// at 40% and 5 at 100% (mean 50 continuous, just under sampled).
		// Never 0: GPUHeldIdle never fires.
		name: "100% for 2h, then 40%", util: step(100, 40),
		underutilised: twoHours + 25*time.Minute, heldIdle: never,
	}}
	for _, every := range []time.Duration{15 * time.Second, 30 * time.Second} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s scraped every %s", c.name, every), func(t *testing.T) {
				s := scrape(every, c.util)
				require.Equal(t, c.underutilised, firesAt(t, rules["GPUUnderutilised"], s), "GPUUnderutilised: %s", rules["GPUUnderutilised"].Expr.StrVal)
				require.Equal(t, c.heldIdle, firesAt(t, rules["GPUHeldIdle"], s), "GPUHeldIdle: %s", rules["GPUHeldIdle"].Expr.StrVal)
			})
		}
	}
}
