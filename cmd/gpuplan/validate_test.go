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
	// What 8c91a01 printed for the example, byte for byte.
	want, err := os.ReadFile("testdata/validate/example.md")
	require.NoError(t, err)
	require.Equal(t, string(want), out)
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
			Rule    string
			Samples []float64
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "v.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	assert.False(t, v.Pass)
	require.Len(t, v.Verdicts, 5)
	for _, s := range v.Verdicts[2].Samples {
		assert.InDelta(t, -2*5.672*72, s, 0.01, "each seed saves two nodes' price")
	}

	// Same seeds, same verdicts, byte for byte.
	code2, out2, _ := gpuplan(t, "validate", "--baseline", exDir+"baseline.yaml", "--candidate", exDir+"candidate.yaml", "--assert", exDir+"rules.yaml")
	assert.Equal(t, 1, code2)
	assert.Equal(t, out, out2)
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
