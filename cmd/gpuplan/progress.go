package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// progress is the commands' one progress helper: --progress's mode and
// where the bars go (stderr). auto shows them only when that is a
// terminal, so a piped or redirected run writes nothing of them.
type progress struct {
	mode string // auto, always or never (checkProgress)
	w    io.Writer
}

// checkProgress refuses a --progress that is not auto, always or never.
func checkProgress(mode string) error {
	return progressModes().check("progress", mode)
}

// shown reports whether bars are shown.
func (p progress) shown() bool {
	switch p.mode {
	case "always":
		return true
	case "auto":
		f, ok := p.w.(*os.File)
		return ok && term.IsTerminal(int(f.Fd()))
	}
	return false
}

// bar is a progress bar up to max (-1: a spinner, the length unknown),
// redrawn at most every 100 ms and cleared when finished; nil when bars
// are not shown. extra adds to (or overrides) those options.
func (p progress) bar(max int64, desc string, extra ...progressbar.Option) *progressbar.ProgressBar {
	if !p.shown() {
		return nil
	}
	opts := append([]progressbar.Option{progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionClearOnFinish()}, extra...)
	return progressbar.NewOptions64(max, opts...)
}

// spinner is a bar of unknown length, drawn as a spinner.
func (p progress) spinner(desc string, extra ...progressbar.Option) *progressbar.ProgressBar {
	return p.bar(-1, desc, append([]progressbar.Option{progressbar.OptionSpinnerType(14)}, extra...)...)
}

// finish finishes and clears a bar (nil: nothing shown).
func finish(bar *progressbar.ProgressBar) {
	if bar != nil {
		_ = bar.Finish()
		_ = bar.Clear()
	}
}

// progressEvery is how many jobs a progress tick counts.
const progressEvery = 4096

// ticks is a spinner with the jobs read so far: tick takes the count
// every progressEvery jobs (nil when bars are not shown), done clears it.
func (p progress) ticks(what string) (tick func(n int), done func()) {
	bar := p.spinner(what)
	if bar == nil {
		return nil, func() {}
	}
	return func(n int) {
		bar.Describe(fmt.Sprintf("%d jobs", n))
		_ = bar.Add(progressEvery)
	}, func() { finish(bar) }
}

// meter is one progress line over a whole command: a total of work units
// (each run the command makes, and writing the outputs), each run's share
// measured in simulated time against its horizon (jobs are not counted: a
// services-only run submits none), and an ETA from the time spent so far.
// It is safe for the pipeline's workers to call at once; nil when bars
// are not shown (every method of a nil meter does nothing).
type meter struct {
	w     io.Writer
	now   func() time.Time
	mu    sync.Mutex
	start time.Time
	last  time.Time // the last redraw
	total int       // units planned
	done  int       // units finished
	part  map[int]float64
	next  int    // the next run's key in part
	stage string // what is being done now
	drawn bool
	// open is true when more work may be planned later (recommend's
	// search): the ETA is then of the runs planned so far.
	open bool
}

// meter returns the command's progress line (nil when not shown).
func (p progress) meter(now func() time.Time) *meter {
	if !p.shown() {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &meter{w: p.w, now: now, start: now(), part: map[int]float64{}}
}

// plan adds n units of work to the total.
func (m *meter) plan(n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.total += n
	m.mu.Unlock()
}

// fraction is the share of the planned work done (finished units and the
// running runs' shares); the caller holds mu.
func (m *meter) fraction() float64 {
	if m.total == 0 {
		return 0
	}
	f := float64(m.done)
	for _, p := range m.part {
		f += p
	}
	return min(f/float64(m.total), 1)
}

// eta is the time left at fraction f after elapsed: elapsed x (1-f)/f,
// the work done so far taken as the rate of what remains; 0 until some
// work is done.
func eta(elapsed time.Duration, f float64) time.Duration {
	if f <= 0 {
		return 0
	}
	return time.Duration(float64(elapsed) * (1 - f) / f).Round(time.Second)
}

// line is the progress line; the caller holds mu.
func (m *meter) line() string {
	f := m.fraction()
	s := fmt.Sprintf("%s: %d/%d runs done, %3.0f%%", m.stage, m.done, m.total, 100*f)
	if f > 0 && f < 1 {
		s += ", ETA " + eta(m.now().Sub(m.start), f).String()
		if m.open {
			s += " for the runs planned so far"
		}
	}
	return s
}

// draw redraws the line when forced or 100 ms after the last redraw; the
// caller holds mu.
func (m *meter) draw(force bool) {
	t := m.now()
	if !force && m.drawn && t.Sub(m.last) < 100*time.Millisecond {
		return
	}
	m.last, m.drawn = t, true
	fmt.Fprintf(m.w, "\r\033[K%s", m.line())
}

// run starts a run of the pipeline: its share follows its simulated time
// against its horizon (a run without one counts when it ends); done
// counts it finished.
func (m *meter) run(name string, w *pipeline.Watch) (done func()) {
	if m == nil {
		return func() {}
	}
	m.mu.Lock()
	k := m.next
	m.next++
	m.part[k] = 0
	m.stage = "simulating " + nameOrGiven(name)
	m.draw(true)
	m.mu.Unlock()
	if w.HorizonMs > 0 {
		h := w.HorizonMs
		w.Each(func(now int64, _, _ int) {
			m.mu.Lock()
			m.part[k] = min(float64(now)/float64(h), 1)
			m.stage = fmt.Sprintf("simulating %s (%s of %s simulated)", nameOrGiven(name), reports.Human(float64(now)/1000), reports.Human(float64(h)/1000))
			m.draw(false)
			m.mu.Unlock()
		})
	}
	return func() {
		m.mu.Lock()
		delete(m.part, k)
		m.done++
		m.draw(true)
		m.mu.Unlock()
	}
}

// step does one unit of work that is not a run (writing the outputs),
// named on the line while it runs.
func (m *meter) step(what string, f func() error) error {
	if m == nil {
		return f()
	}
	m.mu.Lock()
	m.stage = what
	m.draw(true)
	m.mu.Unlock()
	err := f()
	m.mu.Lock()
	m.done++
	m.draw(true)
	m.mu.Unlock()
	return err
}

// finish draws the line at its end and clears it.
func (m *meter) finish() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stage = "done"
	m.draw(true)
	fmt.Fprint(m.w, "\r\033[K")
}

func nameOrGiven(name string) string {
	if name == "" {
		return "the scenario"
	}
	return name
}

// searchMeter is the line over recommend's search, which plans its runs a
// batch at a time (recommend.Progress).
type searchMeter struct{ m *meter }

// Plan adds a batch of runs and names it on the line.
func (s searchMeter) Plan(stage string, runs int) {
	s.m.mu.Lock()
	s.m.open = true
	s.m.total += runs
	s.m.stage = stage
	s.m.draw(true)
	s.m.mu.Unlock()
}

// Done counts one run finished.
func (s searchMeter) Done() {
	s.m.mu.Lock()
	s.m.done++
	s.m.draw(false)
	s.m.mu.Unlock()
}
