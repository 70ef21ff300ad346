package compose

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// The composer finds a bug planted in the allocation ledger (a job's
// first placement released twice when an attempt ends with work lost)
// and shrinks it to a scenario of at most 3 pools and 3 classes that
// still fails the same way when run from the files it writes.
func TestComposerFindsPlantedDoubleRelease(t *testing.T) {
	planted := Options{Planted: &sim.PlantedBugs{DoubleReleaseOnLoss: true}}
	rep := hunt(t, HuntOptions{Seed: 7, N: 60, Run: planted})
	var found *Finding
	for _, f := range rep.Findings {
		if strings.Contains(f.Shape, "released but not fully held") || strings.Contains(f.Shape, "frees more than it holds") {
			found = f
			break
		}
	}
	if found == nil {
		t.Fatalf("no composition of %d found the planted double release; findings: %d shapes", rep.Compositions, len(rep.Findings))
	}
	// The same compositions without the planted bug do not fail this way:
	// the finding is the plant's.
	first := Run(found.Composition, t.TempDir(), Options{})
	if first.Verdict == Broken && first.Shape == found.Shape {
		t.Fatalf("composition %d fails this way without the planted bug", found.First)
	}
	scratch := t.TempDir()
	k := 0
	shrunk, tried := Shrink(found.Composition, func(c *Composition) bool {
		k++
		out := Run(c, filepath.Join(scratch, "c"+string(rune('a'+k%26))+strings.Repeat("x", k/26)), planted)
		return out.Verdict == Broken && out.Shape == found.Shape
	})
	pools, classes, _ := shrunk.Size()
	t.Logf("composition %d (%s) shrunk in %d candidates to %s", found.First, found.Composition, tried, shrunk)
	if pools > 3 || classes > 3 {
		t.Errorf("shrunk to %d pools and %d classes; want at most 3 of each", pools, classes)
	}
	if p0, c0, _ := found.Composition.Size(); pools+classes >= p0+c0 && len(found.Composition.Features()) <= len(shrunk.Features()) {
		t.Errorf("nothing was taken away: %s", shrunk)
	}
	if shrunk.Seed != found.Composition.Seed {
		t.Errorf("the seed changed from %d to %d; the shrinker keeps it", found.Composition.Seed, shrunk.Seed)
	}
	// The folder written for the user fails the same way, run as
	// `gpuplan simulate scenario.yaml --seed S` runs it.
	dir := t.TempDir()
	out := Run(shrunk, filepath.Join(scratch, "final"), planted)
	if err := WriteFinding(dir, shrunk, out); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "gpuplan simulate scenario.yaml --seed "; !bytes.Contains(readme, []byte(want)) {
		t.Errorf("README.md does not give the command %q:\n%s", want, readme)
	}
	again := classify(runFile(filepath.Join(dir, ScenarioFile), shrunk.Sensitivity, planted))
	if again.Verdict != Broken || again.Shape != found.Shape {
		t.Errorf("the written folder gives %v %q; want %q", again.Verdict, again.Shape, found.Shape)
	}
}

// Composition n of a hunt seeded s is the same files every time, and
// different n are different scenarios.
func TestGenerateIsDeterministic(t *testing.T) {
	seen := map[string]int{}
	for n := range 50 {
		a, b := Generate(3, n).Render(), Generate(3, n).Render()
		if len(a) != len(b) {
			t.Fatalf("composition %d: %d files, then %d", n, len(a), len(b))
		}
		for name := range a {
			if !bytes.Equal(a[name], b[name]) {
				t.Fatalf("composition %d: %s differs between two renderings", n, name)
			}
		}
		seen[string(a[ScenarioFile])]++
	}
	if len(seen) < 45 {
		t.Errorf("50 compositions gave only %d different scenarios", len(seen))
	}
}

// Findings of one cause share a shape whatever their numbers and names,
// and findings of different causes do not; the spot sensitivity's are
// told apart from the run's own.
func TestShapeGroupsByCause(t *testing.T) {
	a := Shape(errors.New("invariant violated (a gpuplan bug), 1 problem(s):\n  job 1710 (class2) has 2 placements for 1 bound pods of 1"))
	b := Shape(errors.New("invariant violated (a gpuplan bug), 3 problem(s):\n  job 17 (cron0-1) has 4 placements for 2 bound pods of 2\n  ..."))
	if a != b {
		t.Errorf("one cause, two shapes:\n%s\n%s", a, b)
	}
	c := Shape(errors.New("invariant violated (a gpuplan bug), 1 problem(s):\n  pool spot supplied 123 milli-GPU ms, more than its 1 node slots could"))
	d := Shape(errors.New("invariant violated: GPU device 3 of node 0 released but not fully held"))
	if c == a || d == a || d == c {
		t.Errorf("three causes, fewer shapes: %q, %q, %q", a, c, d)
	}
	e := Shape(&pipeline.BugError{Run: "spot MTBF 15m", Err: errors.New("invariant violated: GPU device 3 of node 0 released but not fully held")})
	if !strings.HasPrefix(e, "(spot sensitivity)") || e == d {
		t.Errorf("a failure in the spot sensitivity %q reads as the run's own %q", e, d)
	}
}
