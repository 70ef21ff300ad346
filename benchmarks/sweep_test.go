package benchmarks

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// thousandPointSweep is the shipped sweep
// (scenarios/examples/sweep/default-capacity.yaml: the default scenario's
// H100 pool size, spot share and checkpoint interval, 5 seeds a point)
// with a Latin hypercube of n points over its values in place of its
// 36-point grid, written to a temporary folder.
func thousandPointSweep(b *testing.B, n int) *sweep.Sweep {
	b.Helper()
	text, err := os.ReadFile("../scenarios/examples/sweep/default-capacity.yaml")
	if err != nil {
		b.Fatal(err)
	}
	spec := strings.Replace(string(text), "  replications: 5\n",
		"  design: {kind: latinHypercube, points: "+strconv.Itoa(n)+", seed: 1}\n  replications: 5\n", 1)
	if spec == string(text) {
		b.Fatal("the shipped sweep no longer says replications: 5")
	}
	file := filepath.Join(b.TempDir(), "thousand.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	sw, err := sweep.Load(file)
	if err != nil {
		b.Fatal(err)
	}
	return sw
}

// BenchmarkSweepThousandPoints is issue 34's sweep case: the shipped
// sweep at 1,000 points (a Latin hypercube over its values, 5 seeds each:
// 5,000 runs of the default scenario) on one worker, its point files to a
// temporary folder, as `gpuplan sweep SPEC --workers 1` runs it (the table
// is written from the point files after: not timed). It reports the CPU
// seconds (user + system) a sweep (issue 34: within 20).
func BenchmarkSweepThousandPoints(b *testing.B) {
	sw := thousandPointSweep(b, 1000)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		st, err := sw.Run(context.Background(), sweep.Options{Out: b.TempDir(), Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if st.Runs != 5000 {
			b.Fatalf("%d runs, want 5,000", st.Runs)
		}
	}
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
