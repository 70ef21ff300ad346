package sweep

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSweepWorkers runs the small sweep (16 points x 3 seeds) on 1
// and 2 workers: with 2 cores free, 2 workers should take about half the
// time (go test -run '^$' -bench SweepWorkers -cpu 2 ./scenarios/pipeline/sweep/).
func BenchmarkSweepWorkers(b *testing.B) {
	sw, err := Load("testdata/small-sweep.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for b.Loop() {
				if _, err := sw.Run(context.Background(), Options{Out: b.TempDir(), Workers: w}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
