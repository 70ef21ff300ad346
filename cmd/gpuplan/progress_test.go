package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// --progress always draws on stderr; auto draws only on a terminal (a
// buffer is not one) and never not at all; what goes to stdout is the
// same whatever it says.
func TestProgressOnlyWhereAsked(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		desc string
	}{
		// A run this short is over before the bar's first redraw: always
		// draws nothing either (as at 8c91a01).
		{[]string{"simulate", "testdata/cost-two-nodes.yaml", "--spot-sensitivity", "off"}, ""},
		{[]string{"trace", "generate", "--jobs", "50", "--out", filepath.Join(tmp, "g.csv")}, ""},
		// The spinner counts the jobs read, 4096 at a time.
		{[]string{"trace", "stats", "../../testdata/openb/openb_pod_list_default.csv", "--format", "openb"}, "4096 jobs"},
	} {
		var stdout string
		for _, mode := range []string{"always", "auto", "never"} {
			code, out, errOut := gpuplan(t, append(c.args, "--progress", mode)...)
			require.Equal(t, 0, code, errOut)
			if mode == "always" {
				if c.desc != "" {
					require.Contains(t, errOut, c.desc, c.args[0])
				}
				stdout = out
				continue
			}
			require.Empty(t, errOut, "%s --progress %s", c.args[0], mode)
			require.Equal(t, stdout, out)
		}
	}
}

func TestProgressHelper(t *testing.T) {
	var buf bytes.Buffer
	require.True(t, progress{"always", &buf}.shown())
	require.False(t, progress{"auto", &buf}.shown(), "a buffer is not a terminal")
	require.False(t, progress{"never", &buf}.shown())
	require.Nil(t, progress{"auto", &buf}.bar(10, "x"))
	tick, done := progress{"never", &buf}.ticks("reading")
	require.Nil(t, tick)
	done()
	require.Zero(t, buf.Len())

	tick, done = progress{"always", &buf}.ticks("reading")
	tick(progressEvery)
	done()
	require.NotZero(t, buf.Len())
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// The ETA is the time spent so far scaled by what remains: 4 units
// planned, one done after 30 s is 25%, and 30 s x 0.75 / 0.25 = 90 s
// remain (1m30s); at 3 of 4 after 60 s, 60 x 0.25 / 0.75 = 20 s.
func TestProgressMeterETAFromAFakeClock(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := progress{"always", &buf}.meter(clock.now)
	m.plan(4)
	step := func(d time.Duration) {
		require.NoError(t, m.step("work", func() error { clock.t = clock.t.Add(d); return nil }))
	}
	step(30 * time.Second)
	require.Contains(t, buf.String(), "1/4 runs done,  25%, ETA 1m30s")
	step(20 * time.Second)
	step(10 * time.Second)
	require.Contains(t, buf.String(), "3/4 runs done,  75%, ETA 20s")
	step(0)
	m.finish()
	require.Contains(t, buf.String(), "done: 4/4 runs done, 100%")
	require.True(t, strings.HasSuffix(buf.String(), "\r\033[K"), "the line is cleared at the end")
	require.Equal(t, 2*time.Second, eta(6*time.Second, 0.75), "6 x 0.25 / 0.75")
	require.Zero(t, eta(time.Minute, 0), "no ETA before any work is done")
}

// A services-only run (torchserve-bert: no jobs, two variants, no spot)
// shows one line over every run the command makes, measured in
// simulated time, never "0 jobs in": the scenario, hpa-throughput and
// shared-queue (3 runs), then writing the folder: 4 units. Each
// variant's spot-sensitivity slots (16 MTBFs x 5 seeds and the
// all-on-demand point: 81) are planned until the variant is built and
// proves to buy no spot (166 units at first, 85 after one, 4 after
// both: which the first redraw shows depends on the workers); none of them is drawn as a run, and the line ends at 4 of 4.
func TestProgressCoversEveryRunOfAServicesOnlyScenario(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/examples/inference/torchserve-bert/scenario.yaml", "--progress", "always", "--out", out, "--workers", "2")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, errOut, "jobs in")
	require.NotContains(t, errOut, " 0%\n")
	require.Contains(t, errOut, " 3/4 runs done", "the three runs, before the writing")
	require.NotContains(t, errOut, "spot sensitivity", "no slot of a variant without spot is a run")
	require.Contains(t, errOut, "writing "+out)
	require.Contains(t, errOut, "done: 4/4 runs done, 100%")
	require.NotContains(t, errOut, "jobs", "progress is runs and simulated time, never jobs")
	// Piped (auto, stderr a buffer): nothing.
	code, _, errOut = gpuplan(t, "simulate", "../../scenarios/examples/inference/torchserve-bert/scenario.yaml", "--progress", "auto")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
}

// validate's line covers both sides on every seed: rules.yaml says
// replications: 5, so 2 x 5 = 10 runs, each counted.
func TestProgressCoversEveryRunOfValidate(t *testing.T) {
	code, _, errOut := gpuplan(t, "validate", "--baseline", "../../scenarios/examples/validate/baseline.yaml",
		"--candidate", "../../scenarios/examples/validate/candidate.yaml", "--assert", "../../scenarios/examples/validate/rules.yaml", "--progress", "always")
	require.Contains(t, []int{0, 1}, code, errOut)
	for k := 1; k <= 10; k++ {
		require.Contains(t, errOut, fmt.Sprintf(" %d/10 runs done", k))
	}
	require.Contains(t, errOut, "done: 10/10 runs done, 100%")
}

// A run with variants and the spot sensitivity: spot-what-if as given
// buys no spot (train-spot count 0: no all-on-demand twin, no curve of
// its own); its three variants (all-spot-tight, all-spot-advisor,
// mix-tight) buy spot, each with a curve of 16 MTBFs, 5 seeds of node
// supply each (the default of spec.output.spotSensitivitySeeds), and its
// all-on-demand point. 1 + 3 + 3 x (16 x 5 + 1) = 247 runs, every one
// counted.
func TestProgressCoversVariantsAndSpotSensitivity(t *testing.T) {
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/examples/spot-what-if.yaml", "--progress", "always")
	require.Equal(t, 0, code, errOut)
	for k := 1; k <= 247; k++ {
		require.Contains(t, errOut, fmt.Sprintf(" %d/247 runs done", k))
	}
	require.Contains(t, errOut, "mix-tight spot sensitivity")
	require.Contains(t, errOut, "done: 247/247 runs done, 100%")
}

// recommend plans its runs a batch at a time: the line names each stage
// and counts the runs planned so far, and ends at the number of
// simulations the answer reports. Three settings fit in the coarse grid
// (4 values a parameter), each at --min-seeds 3: 9 runs; with no
// constraint nothing is undecided, so no second stage.
func TestProgressCoversEveryRunOfRecommend(t *testing.T) {
	code, stdout, errOut := gpuplan(t, "recommend", "testdata/cost-two-nodes.yaml", "--vary", "cluster.pools[0].count=1..3",
		"--progress", "always", "--workers", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Searched 3 of the 3 settings with 9 simulations")
	require.Contains(t, errOut, "the coarse grid: 3 settings, 3 seeds each: 0/9 runs done")
	require.Contains(t, errOut, "done: 9/9 runs done, 100%")
	// A search with a constraint that leaves settings undecided plans a
	// second batch; the final count still matches the answer's.
	code, stdout, errOut = gpuplan(t, "recommend", "../../scenarios/examples/two-teams/scenario.yaml",
		"--vary", "cluster.pools[l4].count=3..10", "--subject-to", "completed >= 0.8", "--progress", "always", "--workers", "2")
	require.Equal(t, 0, code, errOut)
	m := regexp.MustCompile(`with (\d+) simulations`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	require.Contains(t, errOut, fmt.Sprintf("done: %s/%s runs done, 100%%", m[1], m[1]))
	// Piped (auto): nothing.
	code, _, errOut = gpuplan(t, "recommend", "testdata/cost-two-nodes.yaml", "--vary", "cluster.pools[0].count=1..3")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
}
