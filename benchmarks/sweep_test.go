package benchmarks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// thousandPointSweep is the shipped sweep
// (scenarios/examples/sweep/default-capacity.yaml: the default scenario's
// H100 pool size, spot share and checkpoint interval, 5 seeds a point)
// at 1,000 points, written to a temporary folder: with grid, ten values of
// each parameter (4 to 13 nodes, spot shares 0 to 0.9, checkpoints every
// 20 to 200 min: 1,000 settings); otherwise a Latin hypercube of 1,000
// points over its own values (4 x 3 x 3: 36 settings, each drawn about 28
// times).
func thousandPointSweep(b *testing.B, grid bool) *sweep.Sweep {
	b.Helper()
	text, err := os.ReadFile("../scenarios/examples/sweep/default-capacity.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var r *strings.Replacer
	if grid {
		r = strings.NewReplacer("    values: [4, 6, 8, 10]\n", "    range: {from: 4, to: 13, step: 1}\n",
			"    values: [0, 0.5, 1]\n", "    values: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]\n",
			"    values: [30m, 1h, 2h]\n", "    range: {from: 20m, to: 200m, step: 20m}\n")
	} else {
		r = strings.NewReplacer("  replications: 5\n", "  design: {kind: latinHypercube, points: 1000, seed: 1}\n  replications: 5\n")
	}
	file := filepath.Join(b.TempDir(), "thousand.yaml")
	if err := os.WriteFile(file, []byte(r.Replace(string(text))), 0o644); err != nil {
		b.Fatal(err)
	}
	sw, err := sweep.Load(file)
	if err != nil {
		b.Fatal(err)
	}
	if sw.NumPoints() != 1000 {
		b.Fatalf("%d points, want 1,000 (has the shipped sweep changed?)", sw.NumPoints())
	}
	return sw
}

// BenchmarkSweepThousandPoints is issue 34's sweep case: the shipped
// sweep at 1,000 points, 5 seeds each, on one worker, its point files to
// a temporary folder, as `gpuplan sweep SPEC --workers 1` runs it (the
// table written from the point files after is not timed). It reports the
// CPU seconds (user + system) a sweep takes (issue 34: within 20) and the
// simulations run: points that make the same scenario run once. The
// grid's 1,000 settings make 810 scenarios: a spot share s of c nodes
// is round(s x c) spot nodes, and the ten shares 0 to 0.9 give c - 3 to
// 10 distinct counts for c = 4 to 13 (5, 6, 6, 7, 8, 9, 10, 10, 10, 10:
// 81 pool splits; 0.1 of 4 nodes is none, as 0 is), each with the ten
// checkpoint intervals, 5 seeds each: 4,050 runs. The Latin hypercube's
// 1,000 points are 36 settings: 180 runs.
func BenchmarkSweepThousandPoints(b *testing.B) {
	for _, c := range []struct {
		name string
		grid bool
		runs int
	}{{"grid", true, 4050}, {"latinHypercube", false, 180}} {
		b.Run(c.name, func(b *testing.B) {
			sw := thousandPointSweep(b, c.grid)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				st, err := sw.Run(context.Background(), sweep.Options{Out: b.TempDir(), Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				if st.Ran != 1000 || st.Runs != c.runs {
					b.Fatalf("%d points, %d runs; want 1,000 and %d", st.Ran, st.Runs, c.runs)
				}
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
