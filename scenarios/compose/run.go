package compose

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// Verdict is how a composition's run ended.
type Verdict int

// The verdicts, as `gpuplan simulate`'s exit status would say them.
const (
	// OK: exit 0.
	OK Verdict = iota
	// Refused: exit 2 or 3, the input refused. The composer means to write
	// valid input: a refusal is a composer bug unless the input is truly
	// invalid.
	Refused
	// Broken: exit 4 or a panic, a broken invariant: a finding.
	Broken
)

func (v Verdict) String() string {
	return [...]string{"ok", "input refused", "invariant broken"}[v]
}

// Options are how compositions run.
type Options struct {
	// Planted plants known bugs in every run (tests of the composer).
	Planted *sim.PlantedBugs
}

// Outcome is one composition's run.
type Outcome struct {
	Verdict Verdict
	// Err is the error that stopped the run (nil when OK).
	Err error
	// Shape is Err's message with its numbers, names and paths taken out:
	// findings of one cause share it.
	Shape string
}

// Run writes the composition into dir (a folder of its own, created) and
// runs it as `gpuplan simulate dir/scenario.yaml` does: the scenario, the
// all-on-demand twin of a run that buys spot, and, when the composition
// asks, the spot sensitivity's replays, every run's invariants checked.
func Run(c *Composition, dir string, o Options) Outcome {
	if err := WriteFiles(dir, c.Render()); err != nil {
		return classify(err)
	}
	return classify(runFile(filepath.Join(dir, ScenarioFile), c.Sensitivity, o))
}

func runFile(file string, sensitivity bool, o Options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	sc, err := scenarios.LoadFile(file)
	if err != nil {
		return err
	}
	_, err = pipeline.Scenario(sc, pipeline.Options{File: file, Workers: 1, NoSensitivity: !sensitivity,
		Build: scenarios.Options{Planted: o.Planted}})
	return err
}

type panicError struct{ msg string }

func (e *panicError) Error() string { return e.msg }

func classify(err error) Outcome {
	if err == nil {
		return Outcome{Verdict: OK}
	}
	o := Outcome{Verdict: Refused, Err: err, Shape: Shape(err)}
	var bug *pipeline.BugError
	var inv *sim.InvariantError
	var pe *panicError
	switch {
	case errors.As(err, &bug), errors.As(err, &inv), errors.As(err, &pe):
		o.Verdict = Broken
	case strings.Contains(err.Error(), " panicked: "):
		// A run of the pipeline's worker pool panicked: the pool returns
		// it as a plain error.
		o.Verdict = Broken
	}
	return o
}

// Shape is an error's message with what varies between findings of one
// cause taken out: numbers, quoted names, paths, the rerun advice.
func Shape(err error) string {
	var bug *pipeline.BugError
	msg := err.Error()
	if errors.As(err, &bug) {
		msg = bug.Err.Error()
		if bug.Run != "" {
			msg = "(" + runKind(bug.Run) + ") " + msg
		}
	}
	// The first problem of a list of them ("N problem(s):" and a line
	// each).
	lines := strings.Split(msg, "\n")
	msg = lines[0]
	if strings.HasSuffix(msg, ":") && len(lines) > 1 {
		msg += " " + strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[1]), "-*"))
	}
	msg = pathRE.ReplaceAllString(msg, "FILE")
	msg = quotedRE.ReplaceAllString(msg, `"X"`)
	msg = nameRE.ReplaceAllString(msg, "$1 X")
	msg = parenRE.ReplaceAllString(msg, "(X)")
	msg = numberRE.ReplaceAllString(msg, "N")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}

// runKind names a pipeline run without what varies: the spot
// sensitivity's points by their kind.
func runKind(run string) string {
	if strings.Contains(run, "MTBF") || strings.Contains(run, "mtbf") {
		return "spot sensitivity"
	}
	return run
}

var (
	pathRE   = regexp.MustCompile(`(/[^\s:]+)+(\.ya?ml|\.csv|\.json)?(:\d+)*`)
	quotedRE = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	nameRE   = regexp.MustCompile(`\b(pool|class|service|queue|node pool|nodePool|ClusterQueue|LocalQueue|variant) [A-Za-z][\w.-]*`)
	parenRE  = regexp.MustCompile(`\([A-Za-z][\w.-]+\)`)
	numberRE = regexp.MustCompile(`-?\d+(\.\d+)?([eE][-+]?\d+)?`)
)

// WriteFinding writes a (shrunk) failing composition into dir as a folder
// a user can run, with a README line of the command and seed.
func WriteFinding(dir string, c *Composition, out Outcome) error {
	if err := WriteFiles(dir, c.Render()); err != nil {
		return err
	}
	sens := ""
	if strings.HasPrefix(out.Shape, "(spot sensitivity)") {
		sens = " It fails in the spot sensitivity's replays, which `gpuplan simulate` runs for a scenario that buys spot."
	}
	readme := fmt.Sprintf("# A composed scenario that breaks an invariant\n\n"+
		"Found by the scenario composer (scenarios/compose) and shrunk.%s Rerun:\n\n"+
		"    gpuplan simulate %s --seed %d\n\n"+
		"It stopped with:\n\n    %s\n\nShape: %s\n\nComposition: %s\n",
		sens, ScenarioFile, c.Seed, strings.ReplaceAll(out.Err.Error(), "\n", "\n    "), out.Shape, c)
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644)
}
