package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"gpuplan.dev/gpuplan/reports"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exDir = "../../scenarios/examples/validate/"

// validateAt runs gpuplan validate with its clock stopped at one instant
// (the JUnit report's elapsed time is 0), as run does otherwise.
func validateAt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	at := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	c := newValidateCmd(&out, func() time.Time { return at })
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SilenceErrors, c.SilenceUsage = true, true
	if err := c.Execute(); err != nil {
		fmt.Fprintln(&errOut, "gpuplan: "+err.Error())
		return exitCode(err), out.String(), errOut.String()
	}
	return 0, out.String(), errOut.String()
}

// The example gate: cutting the A10G pool from 8 nodes to 6 saves 3% (two
// g5.12xlarge at $5.672/h for 72 h is $816.77 of $27044) but makes
// fine-tunes and notebooks wait past their bounds, so it fails.
func TestValidateExampleFails(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	md := filepath.Join(dir, "pr.md")
	code, out, errOut := validateAt(t, "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"candidate.yaml",
		"--assert", exDir+"rules.yaml", "--junit", junit, "--markdown", md, "--json", filepath.Join(dir, "v.json"))
	require.Equal(t, 1, code, errOut)
	// The example's Markdown, byte for byte (testdata/validate/PROVENANCE.md).
	golden(t, "validate/example.md", out)
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	golden(t, "validate/example.junit.xml", string(b))
	assert.Contains(t, errOut, "2 of 5 rules failed")
	assert.Contains(t, out, "### gpuplan validate: FAILED")
	assert.Contains(t, out, "5 replications (seeds 42-46)")
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, "fine-tunes start within an hour"):
			assert.True(t, strings.HasPrefix(line, "| **FAIL**"), line)
		case strings.Contains(line, "the change saves money"):
			assert.Contains(t, line, "| pass |")
			assert.Contains(t, line, "-3.02%", "816.77/27044.35")
		case strings.Contains(line, "no more than 2% more jobs unfinished"):
			assert.True(t, strings.HasPrefix(line, "| pass"), line)
		}
	}
	b, err = os.ReadFile(md)
	require.NoError(t, err)
	assert.Equal(t, out, string(b))

	b, err = os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		Suite []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites))
	require.Len(t, suites.Suite, 1)
	assert.Equal(t, 5, suites.Suite[0].Tests)
	assert.Equal(t, 2, suites.Suite[0].Failures)

	var v struct {
		Pass     bool
		Verdicts []struct {
			Rule         string
			Unit         string
			Samples      []float64
			BaselineMean float64
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "v.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	assert.False(t, v.Pass)
	require.Len(t, v.Verdicts, 5)
	// A relative change's samples are in its unit, a fraction of the
	// baseline's mean bill, like its mean.
	rel := v.Verdicts[2]
	assert.Equal(t, "fraction", rel.Unit)
	for _, s := range rel.Samples {
		assert.InDelta(t, -2*5.672*72, s*rel.BaselineMean, 0.01, "each seed saves two nodes' price")
	}

	// Same seeds, same verdicts, byte for byte.
	code2, out2, _ := gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"candidate.yaml", "--assert", exDir+"rules.yaml")
	assert.Equal(t, 1, code2)
	assert.Equal(t, out, out2)
}

// The inference gate example (scenarios/examples/validate/inference): the
// candidate raises the HPA's target from 900 to 1,150 requests/s per
// replica. It saves money and keeps its p95 under the 100 ms SLO, but
// fails on the share of requests within the SLO and on drops. Every
// figure of the verdicts is the one simulate writes to each side's
// summary.json, and the bill's change is the node-hours' at g5.4xlarge's
// $1.624/h.
func TestValidateGatesOnInferenceSLO(t *testing.T) {
	inf := exDir + "inference/"
	dir := t.TempDir()
	code, out, errOut := validateAt(t, "--baseline", inf+"baseline.yaml", "--candidate", inf+"candidate.yaml",
		"--assert", inf+"rules.yaml", "--json", filepath.Join(dir, "v.json"))
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "2 of 4 rules failed")

	sides := map[string]reports.Summary{}
	for _, side := range []string{"baseline", "candidate"} {
		o := filepath.Join(dir, side)
		code, _, errOut := gpuplan(t, "simulate", inf+side+".yaml", "--out", o, "--output", "json")
		require.Equal(t, 0, code, errOut)
		sides[side] = readSummary(t, o)
	}
	base, cand := sides["baseline"], sides["candidate"]
	require.Len(t, base.Services, 1)
	bs, cs := base.Services[0], cand.Services[0]

	var v struct {
		Pass     bool
		Verdicts []struct {
			Rule, Unit                  string
			Mean, CILow, CIHigh         float64
			BaselineMean, CandidateMean float64
			Change                      float64
			Pass                        bool
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "v.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	require.Len(t, v.Verdicts, 4)
	slo, p95, drops, cost := v.Verdicts[0], v.Verdicts[1], v.Verdicts[2], v.Verdicts[3]

	// SLO attainment: the candidate's own, below 99%: fails.
	assert.Equal(t, "ratio", slo.Unit)
	assert.InDelta(t, cs.SLOAttainment, slo.Mean, 1e-12)
	assert.InDelta(t, bs.SLOAttainment, slo.BaselineMean, 1e-12)
	assert.Less(t, cs.SLOAttainment, 0.99)
	assert.False(t, slo.Pass)
	// p95 latency in milliseconds, under 100: passes.
	assert.Equal(t, "milliseconds", p95.Unit)
	assert.InDelta(t, cs.P95Ms, p95.Mean, 1e-12)
	assert.Less(t, cs.P95Ms, 100.0)
	assert.True(t, p95.Pass)
	// Drops: the paired change, more on the candidate: fails.
	assert.InDelta(t, cs.RequestsDropped-bs.RequestsDropped, drops.Mean, 1e-6)
	assert.False(t, drops.Pass)
	// The bill: node-hours x $1.624 on each side; the change relative.
	var bh, ch float64
	for _, c := range base.Cost.ByPool {
		bh += c.NodeHours
	}
	for _, c := range cand.Cost.ByPool {
		ch += c.NodeHours
	}
	assert.InDelta(t, 1.624*bh, base.Cost.Total, 0.01)
	assert.InDelta(t, 1.624*ch, cand.Cost.Total, 0.01)
	assert.Equal(t, "fraction", cost.Unit)
	assert.InDelta(t, (ch-bh)/bh, cost.Mean, 1e-6)
	assert.True(t, cost.Pass)

	// The Markdown gives baseline, candidate, difference and interval.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "99% of requests within the 100 ms SLO") {
			assert.Contains(t, line, fmt.Sprintf("| **FAIL** | 99%% of requests within the 100 ms SLO (service.recommender.sloAttainment) | %.2f%% | %.2f%% | %+.2f pp",
				100*bs.SLOAttainment, 100*cs.SLOAttainment, 100*(cs.SLOAttainment-bs.SLOAttainment)))
		}
	}
	assert.Contains(t, out, "Headline figures, first seed (inference services only)")
	assert.NotContains(t, out, "$/useful GPU-h")
}

func TestValidatePassesAndBadInput(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Assertions
replications: 2
rules:
- {metric: cost.total, of: change, op: "==", value: 0}
- {metric: queue.interactive.wait.p95, of: change, op: "==", value: 0}
`), 0o644))
	code, out, errOut := gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"baseline.yaml", "--assert", rules)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "### gpuplan validate: passed")

	require.NoError(t, os.WriteFile(rules, []byte("apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\nrules:\n- {metric: wait.p95, op: '<=', value: 5%}\n"), 0o644))
	code, _, errOut = gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"candidate.yaml", "--assert", rules)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "rules.yaml:4:")
	assert.Contains(t, errOut, "rules[0].value")

	code, _, _ = gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml")
	assert.Equal(t, 2, code)

	// A rule on a queue the scenario lacks is bad input, not a failure.
	require.NoError(t, os.WriteFile(rules, []byte("apiVersion: gpuplan.dev/v1alpha1\nkind: Assertions\nreplications: 1\nrules:\n- {metric: queue.team-z.wait.p95, op: '<=', value: 5m}\n"), 0o644))
	code, _, errOut = gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"candidate.yaml", "--assert", rules)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, `no queue "team-z"`)
}

func TestCompareSummaries(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for dir, sc := range map[string]string{a: "baseline.yaml", b: "candidate.yaml"} {
		code, _, errOut := gpuplan(t, "simulate", exDir+sc, "--out", dir, "--output", "json")
		require.Equal(t, 0, code, errOut)
	}
	sa, sb := readSummary(t, a), readSummary(t, b)
	code, out, errOut := gpuplan(t, "compare", filepath.Join(a, "summary.json"), filepath.Join(b, "summary.json"), "-o", "json")
	require.Equal(t, 0, code, errOut)
	var rows []struct {
		Metric         string
		A, B, Change   float64
		RelativeChange float64
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	found := false
	for _, r := range rows {
		if r.Metric == "cost (USD)" {
			found = true
			assert.InDelta(t, sa.Cost.Total, r.A, 1e-9)
			assert.InDelta(t, sb.Cost.Total, r.B, 1e-9)
			assert.InDelta(t, -2*5.672*72, r.Change, 0.01)
		}
	}
	assert.True(t, found)
	code, out, _ = gpuplan(t, "compare", filepath.Join(a, "summary.json"), filepath.Join(b, "summary.json"))
	require.Equal(t, 0, code)
	assert.Contains(t, out, "A: baseline-8-a10g")
	assert.Contains(t, out, "-3.0%")
	// Money as money, and a share's change in percentage points.
	assert.Contains(t, out, reports.Money(sa.Cost.Total))
	assert.NotContains(t, out, "e+0")
	assert.Regexp(t, `GPU allocation\s+\d+\.\d%\s+\d+\.\d%\s+[+-]\d+\.\d pp`, out)
	code, _, errOut = gpuplan(t, "compare", filepath.Join(a, "summary.json"), exDir+"rules.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "not a gpuplan summary.json")
}
