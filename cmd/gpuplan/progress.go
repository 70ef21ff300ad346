package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
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
