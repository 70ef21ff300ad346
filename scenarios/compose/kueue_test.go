package compose

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// kueueLostNodes is whether a finding's shape is that of the defect of
// issue 33's reproduction exit4-kueue-preemption-lost-nodes: a job
// preempted by Kueue while nodes are lost keeps a placement too many, or
// a node evicted still lists it.
func kueueLostNodes(shape string) bool {
	return strings.Contains(shape, "placements for") || strings.Contains(shape, "still lists jobs after its eviction")
}

// The composer reaches what a user reached: a busy cluster whose Kueue
// queues preempt while its nodes fail, beside a service of high priority
// (issue 33's "realistic mixed cluster crashes on most seeds", which the
// first composer never found in 2,000 compositions: it never gave a
// service a priority). While the defect is in the engine, a bounded hunt
// finds it and shrinks it to at most 3 pools and 3 classes, and the
// folder it writes fails the same way. Once the defect is fixed the
// user's scenario (testdata/kueue-preemption-lost-nodes) runs clean on
// seeds 1-8 and the test says so and skips; until then, a hunt that
// finds nothing fails.
func TestComposerFindsKueuePreemptionLostNodes(t *testing.T) {
	const seed, n = 33, 400
	rep := hunt(t, HuntOptions{Seed: seed, N: n})
	var found *Finding
	for _, f := range rep.Findings {
		if kueueLostNodes(f.Shape) {
			found = f
			break
		}
	}
	if found == nil {
		file := filepath.Join("testdata", "kueue-preemption-lost-nodes", "min6-ondemand-failures.yaml")
		var still []string
		for s := uint64(1); s <= 8; s++ {
			out := classify(runFileSeed(file, s))
			if out.Verdict != OK {
				still = append(still, fmt.Sprintf("--seed %d: %s: %s", s, out.Verdict, out.Shape))
			}
		}
		if len(still) > 0 {
			t.Fatalf("%d compositions (hunt seed %d) never broke an invariant this way, but the user's scenario %s still does:\n%s",
				rep.Compositions, seed, file, strings.Join(still, "\n"))
		}
		t.Skipf("the defect is fixed: %s runs clean on seeds 1-8 and %d compositions found nothing of its shape", file, rep.Compositions)
	}
	t.Logf("composition %d of %d (%d failed this way) found it: %s", found.First, rep.Compositions, found.Count, found.Shape)
	scratch := t.TempDir()
	k := 0
	shrunk, tried := Shrink(found.Composition, func(c *Composition) bool {
		k++
		out := Run(c, filepath.Join(scratch, fmt.Sprint(k)), Options{})
		return out.Verdict == Broken && out.Shape == found.Shape
	})
	pools, classes, _ := shrunk.Size()
	t.Logf("shrunk in %d candidates to %s", tried, shrunk)
	if pools > 3 || classes > 3 {
		t.Errorf("shrunk to %d pools and %d classes; want at most 3 of each", pools, classes)
	}
	dir := t.TempDir()
	out := Run(shrunk, filepath.Join(scratch, "final"), Options{})
	if out.Verdict != Broken || out.Shape != found.Shape {
		t.Fatalf("the shrunk composition gives %v %q; want %q", out.Verdict, out.Shape, found.Shape)
	}
	if err := WriteFinding(dir, shrunk, out); err != nil {
		t.Fatal(err)
	}
	again := classify(runFile(filepath.Join(dir, ScenarioFile), shrunk.Sensitivity, Options{}))
	if again.Verdict != Broken || again.Shape != found.Shape {
		t.Errorf("the written folder gives %v %q; want %q", again.Verdict, again.Shape, found.Shape)
	}
}

// runFileSeed runs a scenario file as `gpuplan simulate FILE --seed S
// --spot-sensitivity off` does.
func runFileSeed(file string, seed uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{fmt.Sprintf("panic: %v", r)}
		}
	}()
	sc, err := scenarios.LoadFile(file)
	if err != nil {
		return err
	}
	_, err = pipeline.Scenario(sc, pipeline.Options{File: file, Workers: 1, NoSensitivity: true, Build: scenarios.Options{Seed: &seed}})
	return err
}
