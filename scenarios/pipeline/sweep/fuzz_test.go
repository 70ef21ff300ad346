package sweep

import (
	"errors"
	"os"
	"testing"

	"gpuplan.dev/gpuplan/scenarios"
)

// FuzzSweepSpec: any bytes as a sweep spec give a sweep or an InputError
// with a bounded message, never a panic.
func FuzzSweepSpec(f *testing.F) {
	for _, file := range []string{"testdata/small-sweep.yaml", "testdata/slow-sweep.yaml", "../../examples/sweep/default-capacity.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		head + "  - {path: \"cluster.pools[t4].count\", range: {from: 5, to: 2, step: 1}}\n",
		head + "  - {path: \"cluster.pools[t4\", values: [1]}\n",
		head + "  - {path: \"a..b\", values: [1]}\n",
		head + "  - {path: \"cluster.pools[0].count\", logRange: {from: 1, to: 1e300, points: 100000000}}\n",
		head + "  - {spotShareOf: t4, values: [.nan]}\n",
		head + "  - {path: horizon, range: {from: 1h, to: 9999999h, step: 1ms}}\n",
		"kind: Sweep\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sw, err := Parse("testdata/fuzz.yaml", data)
		if err != nil {
			var ie *scenarios.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %T %v", err, err)
			}
			if len(err.Error()) > 2000 {
				t.Fatalf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		if n := sw.NumPoints(); n < 1 || n > MaxPoints {
			t.Fatalf("%d points", n)
		}
	})
}
