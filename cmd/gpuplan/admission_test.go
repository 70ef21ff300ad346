package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// meanAdmissionWait is the mean submit-to-admission time, in hours, of the
// admitted jobs whose name starts with class.
func meanAdmissionWait(t *testing.T, jobsCSV, class string) float64 {
	t.Helper()
	f, err := os.Open(jobsCSV)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var sum float64
	n := 0
	for _, r := range rows[1:] {
		if !strings.HasPrefix(r[col["name"]], class+"-") || r[col["admission_wait_s"]] == "" {
			continue
		}
		v, err := strconv.ParseFloat(r[col["admission_wait_s"]], 64)
		require.NoError(t, err)
		sum += v
		n++
	}
	require.Positive(t, n, class)
	return sum / float64(n) / 3600
}

// The two-team example: under BestEffortFIFO one-GPU jobs pass team-b's
// two-worker jobs, which wait far longer to be admitted; StrictFIFO makes
// the one-GPU jobs wait behind them instead; a shared cohort with reclaim
// lets team-b borrow team-a's idle GPUs and team-a take them back.
func TestTwoTeamsExampleReport(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/two-teams/scenario.yaml", "--out", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "CLUSTERQUEUE")
	pair := meanAdmissionWait(t, filepath.Join(dir, "jobs.csv"), "b-pair")
	single := meanAdmissionWait(t, filepath.Join(dir, "jobs.csv"), "b-single")
	require.Greater(t, pair, 2*single, "BestEffortFIFO: pairs %.2fh, singles %.2fh", pair, single)

	strict := filepath.Join(dir, "variants", "strict-fifo", "jobs.csv")
	require.Greater(t, meanAdmissionWait(t, strict, "b-single"), 2*single, "StrictFIFO holds singles behind pairs")

	s := readSummary(t, filepath.Join(dir, "variants", "cohort-reclaim"))
	require.Len(t, s.Admission, 2)
	a, b := s.Admission[0], s.Admission[1]
	require.Equal(t, "team-a", a.Name)
	require.Positive(t, b.BorrowedGPUHours)
	require.InDelta(t, b.BorrowedGPUHours, a.LentGPUHours, 0.01, "what team-b borrowed came out of team-a's quota")
	require.Positive(t, a.Reclaims)
	require.Equal(t, a.PreemptionsCaused, b.PreemptionsSuffered)
	require.InDelta(t, 4.0/6, a.NominalShare, 1e-4)
	require.Less(t, meanAdmissionWait(t, filepath.Join(dir, "variants", "cohort-reclaim", "jobs.csv"), "b-pair"), pair)

	// The same quotas written as Volcano Queues admit every job at the
	// same times: jobs.csv differs only in the flavor's name in reasons.
	x, _ := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	y, _ := os.ReadFile(filepath.Join(dir, "variants", "volcano", "jobs.csv"))
	require.Equal(t, string(x), strings.ReplaceAll(string(y), "flavor volcano-cluster", "flavor l4"))

	// Same seed, same bytes, admission included.
	other := t.TempDir()
	code, _, errOut = gpuplan(t, "simulate", "../../scenarios/examples/two-teams/scenario.yaml", "--out", other)
	require.Equal(t, 0, code, errOut)
	for _, f := range []string{"summary.json", "jobs.csv", "variants/cohort-reclaim/jobs.csv"} {
		x, _ := os.ReadFile(filepath.Join(dir, f))
		y, _ := os.ReadFile(filepath.Join(other, f))
		require.True(t, bytes.Equal(x, y), f)
	}
}

func TestPolicyFlag(t *testing.T) {
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/two-teams/scenario.yaml", "--policy", "../../scenarios/examples/two-teams/policy-strict", "--output", "json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"strategy": "StrictFIFO"`)
	code, _, errOut = gpuplan(t, "simulate", "--policy", "no-such-dir")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "neither a placement policy")
	code, _, errOut = gpuplan(t, "simulate", "--policy", "../../scenarios/testdata/kueue/site/minimal-cq.yaml")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown field "spec.flavorFallbackStrategy"`)
}

// The preemption example: without preemption inference waits behind
// training; with kube-scheduler's preemption it never waits, training
// pays in evictions, and checkpointing every 2 hours instead of every 30
// minutes loses more of training's work to them; a grace period long
// enough for a last checkpoint write loses almost nothing.
func TestPriorityPreemptionExample(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/examples/priority-preemption.yaml", "--out", dir)
	require.Equal(t, 0, code, errOut)
	queue := func(sub, name string) (wait float64, preempted, preempting int) {
		s := readSummary(t, filepath.Join(dir, sub))
		for _, q := range s.Queues {
			if q.Name == name {
				return q.QueueWait.Mean, q.Preempted, q.Preempting
			}
		}
		t.Fatalf("no queue %s", name)
		return
	}
	off, _, _ := queue("", "inference")
	on, _, caused := queue("variants/preemption", "inference")
	_, suffered, _ := queue("variants/preemption", "research")
	require.Positive(t, off)
	require.Zero(t, on)
	require.Positive(t, caused)
	require.Equal(t, caused, suffered)
	dense := readSummary(t, filepath.Join(dir, "variants", "preemption")).Disruptions
	sparse := readSummary(t, filepath.Join(dir, "variants", "preemption-sparse-checkpoints")).Disruptions
	require.Equal(t, int64(caused), dense.ByCause["preemption"])
	require.Greater(t, sparse.LostGPUHours, 2*dense.LostGPUHours)
	// Given 3 minutes, training writes a last checkpoint when preempted:
	// it loses only its restores (3 min x 8 GPUs per eviction), and
	// inference waits at most the 2-minute write.
	graceful := readSummary(t, filepath.Join(dir, "variants", "preemption-checkpoint-on-sigterm"))
	evictions := graceful.Disruptions.ByCause["preemption"]
	require.Positive(t, evictions)
	require.LessOrEqual(t, graceful.Disruptions.LostGPUHours, float64(evictions)*3.0/60*8+1e-6)
	for _, q := range graceful.Queues {
		if q.Name == "inference" {
			require.LessOrEqual(t, q.QueueWait.Max, 120.0)
			require.Positive(t, q.QueueWait.Max)
		}
	}
}

// A policy change given as manifests goes through the CI gate like any
// other: the candidate points at the cohort policy; team-b's p95 wait
// falls and team-a keeps its one-hour p50 admission bound.
func TestValidatePolicyChange(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("../../scenarios/examples/two-teams/scenario.yaml")
	require.NoError(t, err)
	ex, err := filepath.Abs("../../scenarios/examples/two-teams")
	require.NoError(t, err)
	write := func(name, policy string) string {
		body := strings.Replace(string(base), "manifests: [policy/]", "manifests: ["+filepath.Join(ex, policy)+"]", 1)
		body = body[:strings.Index(body, "  variants:")]
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	rules := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(rules, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Assertions
replications: 3
rules:
- {name: team-b waits less, metric: queue.team-b.wait.p95, of: relativeChange, op: "<", value: 0%}
- {name: team-a still admitted within the hour at the median, metric: queue.team-a.wait.p50, op: "<=", value: 1h}
`), 0o644))
	// The scenarios name the example's policy folders outside their own,
	// which validate refuses unless told.
	code, out, errOut := gpuplan(t, "validate", "--restrict-paths=false", "--baseline", write("base.yaml", "policy"), "--candidate", write("cand.yaml", "policy-cohort"), "--assert", rules)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "team-b waits less")
}

// The fair-sharing example: with classic Kueue team-a's flood of one-GPU
// jobs holds the shared pool and team-c's four-GPU jobs, which must
// borrow, are hardly ever admitted (far below its fair share); with fair
// sharing every team-c job is admitted, team-a's borrowed jobs are
// preempted for team-b and team-c, and each of b and c uses within a few
// points of its fair share of the cohort.
func TestFairSharingExample(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/fair-sharing/scenario.yaml", "--out", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "CLUSTERQUEUE")
	md, err := os.ReadFile(filepath.Join(dir, "variants", "fair-sharing", "report.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "Fair sharing is on (preemption strategies LessThanOrEqualToFinalShare, LessThanInitialShare); weights: team-a 1, team-b 1, team-c 2.")
	classic := readSummary(t, dir)
	fair := readSummary(t, filepath.Join(dir, "variants", "fair-sharing"))
	require.Nil(t, classic.FairSharing)
	require.Equal(t, []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}, fair.FairSharing)
	byName := func(s *reports.Summary) map[string]reports.AdmissionLine {
		m := map[string]reports.AdmissionLine{}
		for _, l := range s.Admission {
			m[l.Name] = l
		}
		return m
	}
	c, f := byName(&classic), byName(&fair)
	require.Greater(t, c["team-c"].PendingAtEnd, c["team-c"].Jobs/2, "classic: team-c's borrowing jobs starve")
	require.Less(t, c["team-c"].CohortShare, c["team-c"].FairShare/4)
	require.Zero(t, f["team-c"].PendingAtEnd)
	require.Positive(t, f["team-a"].PreemptionsSuffered)
	require.Equal(t, f["team-a"].PreemptionsSuffered+f["team-b"].PreemptionsSuffered+f["team-c"].PreemptionsSuffered,
		f["team-b"].PreemptionsCaused+f["team-c"].PreemptionsCaused+f["team-a"].PreemptionsCaused)
	for _, q := range []string{"team-b", "team-c"} {
		require.InDelta(t, f[q].FairShare, f[q].CohortShare, 0.06, q)
	}
	require.NotNil(t, f["team-c"].Weight)
	require.Equal(t, 2.0, *f["team-c"].Weight)
}

// The Volcano Job example: RestartJob with maxRetry 3 fails the jobs
// reclaimed three times, maxRetry 10 fails none (and then equals no
// policy at all, which restarts the same way without counting), AbortJob
// fails every job at its first eviction.
func TestVolcanoJobsExample(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/examples/volcano-jobs.yaml", "--out", dir)
	require.Equal(t, 0, code, errOut)
	base := readSummary(t, dir)
	run := func(v string) reports.Summary { return readSummary(t, filepath.Join(dir, "variants", v)) }
	retry10, abort, none := run("max-retry-10"), run("abort-on-eviction"), run("no-policy")
	o := func(s reports.Summary, k string) int { return s.Jobs.ByOutcome[k] }
	require.Positive(t, o(base, "failed"))
	require.Zero(t, o(retry10, "failed"))
	require.Equal(t, retry10.Jobs, none.Jobs)
	require.Greater(t, o(abort, "failed"), o(base, "failed"))
	require.Less(t, o(abort, "completed"), o(base, "completed"))
}
