package compose

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// HuntOptions say how many compositions a hunt runs and where.
type HuntOptions struct {
	// Seed and N: compositions Generate(Seed, 0) ... Generate(Seed, N-1),
	// unless Duration stops the hunt first.
	Seed uint64
	N    int
	// Duration, when positive, stops starting compositions after it.
	Duration time.Duration
	// Workers run compositions side by side (at least 1).
	Workers int
	// Dir is the scratch folder each composition is written into (one
	// sub-folder each, removed after a run that is not a finding).
	Dir string
	// FindingsDir, when set, receives each shrunk finding as a folder a
	// user can run.
	FindingsDir string
	// Shrink shrinks the first finding of each shape (the others are
	// counted under it).
	Shrink bool
	// ShrinkBudget, when positive, bounds the time all shrinking takes:
	// past it, the findings are reported as far as they were shrunk.
	ShrinkBudget time.Duration
	// Run is how each composition runs.
	Run Options
}

// Finding is one shape of failure and the compositions that had it.
type Finding struct {
	Shape   string
	Verdict Verdict
	// Count compositions failed this way; First is the first of them (its
	// index in the hunt) and Err its error.
	Count int
	First int
	Err   error
	// Composition is the first failing composition; Shrunk, when shrunk,
	// the minimal one that still fails this way (Tried candidates run).
	Composition *Composition
	Shrunk      *Composition
	Tried       int
	// Dir is where the shrunk case was written ("" when it was not).
	Dir string
}

// Report is a hunt's result.
type Report struct {
	Compositions int
	OK           int
	// Coverage counts the compositions that had each feature.
	Coverage map[string]int
	// Findings are the broken invariants, by shape; Refusals the inputs
	// refused, by shape.
	Findings []*Finding
	Refusals []*Finding
	Elapsed  time.Duration
	// Slowest are the three slowest compositions, with their times.
	Slowest []string
}

// Hunt runs compositions, classifies them and shrinks the findings.
func Hunt(o HuntOptions) (*Report, error) {
	start := time.Now()
	workers := max(o.Workers, 1)
	type result struct {
		n   int
		c   *Composition
		out Outcome
		d   time.Duration
	}
	var (
		mu      sync.Mutex
		next    int
		results []result
		wg      sync.WaitGroup
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= o.N || (o.Duration > 0 && time.Since(start) > o.Duration) {
			return -1
		}
		next++
		return next - 1
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := take(); n >= 0; n = take() {
				c := Generate(o.Seed, n)
				dir := filepath.Join(o.Dir, fmt.Sprint(n))
				t0 := time.Now()
				out := Run(c, dir, o.Run)
				d := time.Since(t0)
				_ = os.RemoveAll(dir)
				mu.Lock()
				results = append(results, result{n, c, out, d})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].n < results[j].n })
	rep := &Report{Compositions: len(results), Coverage: map[string]int{}}
	byShape := map[string]*Finding{}
	for _, r := range results {
		for _, f := range r.c.Features() {
			rep.Coverage[f]++
		}
		if r.out.Verdict == OK {
			rep.OK++
			continue
		}
		key := r.out.Verdict.String() + "\x00" + r.out.Shape
		f := byShape[key]
		if f == nil {
			f = &Finding{Shape: r.out.Shape, Verdict: r.out.Verdict, First: r.n, Err: r.out.Err, Composition: r.c}
			byShape[key] = f
			if r.out.Verdict == Broken {
				rep.Findings = append(rep.Findings, f)
			} else {
				rep.Refusals = append(rep.Refusals, f)
			}
		}
		f.Count++
	}
	if o.Shrink {
		shrinkStart := time.Now()
		spent := func() bool { return o.ShrinkBudget > 0 && time.Since(shrinkStart) > o.ShrinkBudget }
		for i, f := range rep.Findings {
			shape := f.Shape
			k := 0
			if spent() {
				break
			}
			f.Shrunk, f.Tried = Shrink(f.Composition, func(c *Composition) bool {
				if spent() {
					return false
				}
				k++
				dir := filepath.Join(o.Dir, fmt.Sprintf("shrink-%d-%d", i, k))
				out := Run(c, dir, o.Run)
				_ = os.RemoveAll(dir)
				return out.Verdict == Broken && out.Shape == shape
			})
			if o.FindingsDir != "" {
				dir := filepath.Join(o.FindingsDir, fmt.Sprintf("finding-%02d", i+1))
				if err := os.RemoveAll(dir); err != nil {
					return rep, err
				}
				// Written from a run of the shrunk case, so that its README
				// quotes the error it gives.
				out := Run(f.Shrunk, filepath.Join(o.Dir, fmt.Sprintf("final-%d", i)), o.Run)
				if out.Verdict != Broken {
					out = Outcome{Verdict: Broken, Err: f.Err, Shape: f.Shape}
				}
				if err := WriteFinding(dir, f.Shrunk, out); err != nil {
					return rep, err
				}
				f.Dir = dir
			}
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].d > results[j].d })
	for _, r := range results[:min(3, len(results))] {
		rep.Slowest = append(rep.Slowest, fmt.Sprintf("%s composition %d: %s", r.d.Round(time.Millisecond), r.n, r.c))
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// Print writes the report: the count, the coverage table, the findings
// and the refusals.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%d compositions in %s: %d ok, %d broke an invariant, %d refused\n",
		r.Compositions, r.Elapsed.Round(time.Millisecond), r.OK, count(r.Findings), count(r.Refusals))
	fmt.Fprintf(w, "\n%-34s %s\n", "feature", "compositions")
	names := make([]string, 0, len(r.Coverage))
	for f := range r.Coverage {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		fmt.Fprintf(w, "%-34s %d\n", f, r.Coverage[f])
	}
	fmt.Fprintf(w, "\nslowest:\n")
	for _, s := range r.Slowest {
		fmt.Fprintf(w, "- %s\n", s)
	}
	for _, group := range []struct {
		title string
		fs    []*Finding
	}{{"invariant failures", r.Findings}, {"inputs refused", r.Refusals}} {
		fmt.Fprintf(w, "\n%s: %d shapes\n", group.title, len(group.fs))
		for _, f := range group.fs {
			fmt.Fprintf(w, "- %d x %s\n  first: composition %d: %s\n", f.Count, f.Shape, f.First, f.Composition)
			if f.Shrunk != nil {
				fmt.Fprintf(w, "  shrunk (%d candidates run): %s\n", f.Tried, f.Shrunk)
			}
			if f.Dir != "" {
				fmt.Fprintf(w, "  written to %s\n", f.Dir)
			}
			if f.Verdict == Refused {
				fmt.Fprintf(w, "  error: %s\n", firstLine(f.Err.Error()))
			}
		}
	}
}

func count(fs []*Finding) int {
	n := 0
	for _, f := range fs {
		n += f.Count
	}
	return n
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
