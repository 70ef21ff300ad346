// Package outdir writes an output folder whole or not at all.
//
// A run's files are written into a hidden sibling of the folder
// (".NAME.gpuplan-tmp-*"), then put in its place with one rename: on Linux
// renameat2(RENAME_EXCHANGE) swaps the new folder with the old one
// atomically, so at every instant the path holds either the whole old run
// or the whole new one, and the old one is then removed. Elsewhere (or on a
// file system without the exchange) the old folder is renamed aside first,
// which leaves a moment with no folder at the path, never a mix.
//
// Why a staging folder and not a completion marker: a marker needs every
// reader (a spreadsheet, a browser opening report.html, a CI step) to
// check it, and it does not remove the files of an earlier run that the
// new one no longer writes. A swapped folder needs no cooperation.
//
// Staging folders left by a run killed with SIGKILL are removed by the
// next write to the same folder; SIGINT and SIGTERM remove them at once
// through a Tracker.
package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Tracker holds the output folders being written, so that a signal
// handler can remove their staging folders before the process exits.
type Tracker struct {
	mu      sync.Mutex
	targets map[string]int
	// closing is set by RemoveAll: no staging folder is made after it.
	closing bool
}

// mkdirTemp makes a staging folder unless the process is being stopped.
func (t *Tracker) mkdirTemp(parent, pattern string) (string, error) {
	if t == nil {
		return os.MkdirTemp(parent, pattern)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return "", errors.New("stopped by a signal")
	}
	return os.MkdirTemp(parent, pattern)
}

// Stopping reports whether RemoveAll has begun: the process is being
// stopped by a signal.
func (t *Tracker) Stopping() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// swap puts staging in place of dir unless the process is being stopped,
// holding the lock so that a signal's RemoveAll cannot interleave: a
// writer still filling a staging folder that the signal removed (and that
// the writer may have made again for its last files) must never put it in
// place.
func (t *Tracker) swap(staging, dir string) error {
	if t == nil {
		return swap(staging, dir)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return errors.New("stopped by a signal")
	}
	return swap(staging, dir)
}

func (t *Tracker) add(dir string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.targets == nil {
		t.targets = map[string]int{}
	}
	t.targets[dir]++
}

func (t *Tracker) done(dir string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.targets[dir]--; t.targets[dir] <= 0 {
		delete(t.targets, dir)
	}
}

// RemoveAll removes the staging folders of every output folder being
// written; a signal handler calls it before exiting. The writer may still
// be adding files while it runs (and may make its staging folder again for
// its last files), so RemoveAll removes them, then waits a moment for the
// writers to stop (they refuse to put anything in place once it has
// begun, and remove their own staging folder), and removes what is left.
func (t *Tracker) RemoveAll() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closing = true
	dirs := make([]string, 0, len(t.targets))
	for dir := range t.targets {
		dirs = append(dirs, dir)
	}
	t.mu.Unlock()
	clean := func() {
		for _, dir := range dirs {
			for try := 0; try < 20; try++ {
				if removeStale(filepath.Dir(dir), filepath.Base(dir)) {
					break
				}
			}
		}
	}
	clean()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		t.mu.Lock()
		n := len(t.targets)
		t.mu.Unlock()
		if n == 0 {
			break
		}
	}
	clean()
}

// Error is a failure to write the folder: the environment's (disk full,
// no permission), exit status 3.
type Error struct {
	Dir string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("writing %s: %v", e.Dir, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is 3: an I/O or environment failure.
func (e *Error) ExitCode() int { return 3 }

// NotOursError is a folder that exists and holds something other than a
// gpuplan output: replacing it whole would delete the user's files.
type NotOursError struct {
	Dir  string
	Kind string
}

func (e *NotOursError) Error() string {
	return fmt.Sprintf("%s exists and is not a gpuplan %s folder (gpuplan replaces its output folder whole): choose another folder, or empty or remove this one", e.Dir, e.Kind)
}

// ExitCode is 2: a usage mistake.
func (e *NotOursError) ExitCode() int { return 2 }

// Options says what a folder of this kind holds.
type Options struct {
	// Kind names the folder in messages ("output", "manifests").
	Kind string
	// Ours reports whether an existing, non-empty folder is one gpuplan
	// wrote (and so may be replaced), from its top-level names.
	Ours func(names []string) bool
	// Tracker, when set, records the staging folder while it exists.
	Tracker *Tracker
}

const stagingInfix = ".gpuplan-tmp-"

// Write builds the folder dir by calling fill with a fresh staging folder,
// then puts it in place of dir whole. When fill fails nothing at dir
// changes and the staging folder is removed.
func Write(dir string, o Options, fill func(staging string) error) error {
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return &NotOursError{Dir: dir, Kind: o.Kind}
	}
	if st, err := os.Lstat(dir); err == nil {
		if !st.IsDir() {
			return &NotOursError{Dir: dir, Kind: o.Kind}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return &Error{dir, err}
		}
		if len(entries) > 0 {
			names := make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.Name()
			}
			if o.Ours == nil || !o.Ours(names) {
				return &NotOursError{Dir: dir, Kind: o.Kind}
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return &Error{dir, err}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return &Error{dir, err}
	}
	removeStale(parent, base)
	// Tracked before the staging folder exists, so that a signal at any
	// point finds it.
	o.Tracker.add(dir)
	defer o.Tracker.done(dir)
	staging, err := o.Tracker.mkdirTemp(parent, "."+base+stagingInfix)
	if err != nil {
		return &Error{dir, err}
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		os.RemoveAll(staging)
		return &Error{dir, err}
	}
	if err := fill(staging); err != nil {
		os.RemoveAll(staging)
		var pe *os.PathError
		if errors.As(err, &pe) {
			return &Error{dir, err}
		}
		return err
	}
	if err := o.Tracker.swap(staging, dir); err != nil {
		os.RemoveAll(staging)
		return &Error{dir, err}
	}
	// staging now holds the old run (or nothing): remove it.
	os.RemoveAll(staging)
	return nil
}

// swap puts staging at dir; afterwards staging holds the old folder, if
// there was one.
func swap(staging, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return os.Rename(staging, dir)
	}
	if err := exchange(staging, dir); err == nil {
		return nil
	}
	// No atomic exchange: move the old folder aside, the new one in.
	aside := staging + ".old"
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	if err := os.Rename(staging, dir); err != nil {
		os.Rename(aside, dir)
		return err
	}
	return os.Rename(aside, staging)
}

// removeStale removes staging folders of base left in parent by runs that
// were killed before they could clean up; it reports whether none is
// left.
func removeStale(parent, base string) bool {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return true
	}
	var stale []string
	prefix := "." + base + stagingInfix
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			stale = append(stale, filepath.Join(parent, e.Name()))
		}
	}
	sort.Strings(stale)
	clean := true
	for _, p := range stale {
		if os.RemoveAll(p) != nil {
			clean = false
		}
	}
	return clean
}
