package compose

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The composer's run in `make test`: GPUPLAN_COMPOSE_N compositions
// (default 800; make soak hunts for 8 minutes more), GPUPLAN_COMPOSE_SEED (default 1), at most
// GPUPLAN_COMPOSE_TIME (a Go duration; default none); shrunk findings
// are written under GPUPLAN_COMPOSE_OUT when it is set. `make soak` runs
// the same hunt longer (soak_test.go).
func TestComposer(t *testing.T) {
	o := HuntOptions{Seed: uint64(envInt(t, "GPUPLAN_COMPOSE_SEED", 1)), N: envInt(t, "GPUPLAN_COMPOSE_N", 800),
		Duration: envDuration(t, "GPUPLAN_COMPOSE_TIME", 0), Shrink: true, FindingsDir: os.Getenv("GPUPLAN_COMPOSE_OUT")}
	if testing.Short() {
		o.N = min(o.N, 200)
	}
	rep := hunt(t, o)
	check(t, rep)
}

// check fails the test on any finding or refusal: the report above lists
// them all first.
func check(t *testing.T, rep *Report) {
	t.Helper()
	for _, f := range rep.Findings {
		t.Errorf("%d compositions broke an invariant: %s", f.Count, f.Shape)
	}
	for _, f := range rep.Refusals {
		t.Errorf("%d valid compositions were refused (a composer bug, or a valid input gpuplan refuses): %s", f.Count, firstLine(f.Err.Error()))
	}
}

// envInt reads a count from the environment (def when unset).
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// envDuration reads a Go duration from the environment (def when unset).
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q: want a duration such as 10m", name, v)
	}
	return d
}

// hunt runs a hunt in a scratch folder and logs its report.
func hunt(t *testing.T, o HuntOptions) *Report {
	t.Helper()
	o.Dir = t.TempDir()
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	rep, err := Hunt(o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	return rep
}
