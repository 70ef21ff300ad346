package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// DirPoints is the folder under a sweep's output holding one file per
// finished point.
const DirPoints = "points"

// Options says how to run a sweep.
type Options struct {
	// Out is the output folder; points go to Out/points.
	Out string
	// Workers is how many runs go at once (0: one per core).
	Workers int
	// Shard and Shards pick the points of shard Shard of Shards: those
	// whose index is Shard modulo Shards (Shards 0 or 1: every point).
	Shard, Shards int
	// Progress, when set, is called after each point with how many of
	// the shard's points are done (skipped ones included) and the total.
	Progress func(done, total int)
}

// Stats says what a Run did.
type Stats struct {
	// Points is how many points the shard has; Skipped were found
	// finished in Out/points; Ran ran now; Runs is simulations run
	// (points that make the same scenario run once).
	Points, Skipped, Ran, Runs int
}

// PointFile is one finished point as written to Out/points: enough to
// build the table and to refuse points of another sweep.
type PointFile struct {
	Sweep       string   `json:"sweep"`
	Digest      string   `json:"digest"`
	Total       int      `json:"total"`
	Parameters  []string `json:"parameters"`
	MetricNames []string `json:"metricNames"`
	Constraints []string `json:"constraints,omitempty"`
	Result
}

// Digest identifies the sweep's work: the base scenario's bytes, the
// points, the seeds and the metrics. Point files of another digest are
// not this sweep's.
func (sw *Sweep) Digest() string {
	h := sha256.New()
	h.Write(sw.baseBytes)
	plan := struct {
		Name    string
		Params  []string
		Points  []Point
		Seeds   []uint64
		Metrics []string
		Cons    []string
	}{sw.Doc.Metadata.Name, sw.paramNames(), sw.Points(), sw.Seeds, sw.Doc.Spec.Metrics, sw.Doc.Spec.Constraints}
	b, _ := json.Marshal(plan)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func (sw *Sweep) paramNames() []string {
	var out []string
	for _, p := range sw.Params {
		out = append(out, p.Name)
	}
	return out
}

func pointFileName(i int) string { return fmt.Sprintf("%06d.json", i) }

// ParseShard reads "i/N".
func ParseShard(s string) (shard, shards int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		_, err = fmt.Sscanf(a+" "+b, "%d %d", &shard, &shards)
	}
	if !ok || err != nil || shards < 1 || shard < 0 || shard >= shards || shards > MaxPoints {
		return 0, 0, fmt.Errorf("--shard %s: want INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 3/8", scenarios.Quote(s))
	}
	return shard, shards, nil
}

// Run runs the shard's points that Out/points has no file for, on a
// worker pool, writing each point's file atomically as it finishes.
func (sw *Sweep) Run(ctx context.Context, o Options) (Stats, error) {
	var st Stats
	if o.Shards <= 1 {
		o.Shard, o.Shards = 0, 1
	}
	dir := filepath.Join(o.Out, DirPoints)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, &IOError{err}
	}
	// A kill between creating a temporary file and renaming it leaves the
	// temporary file: it is not a point, remove it.
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmp) > 0 {
		for _, f := range tmp {
			os.Remove(f)
		}
	}
	digest := sw.Digest()
	var todo []Point
	for _, pt := range sw.Points() {
		if pt.Index%o.Shards != o.Shard {
			continue
		}
		st.Points++
		done, err := finished(filepath.Join(dir, pointFileName(pt.Index)), digest)
		if err != nil {
			return st, err
		}
		if done {
			st.Skipped++
			continue
		}
		todo = append(todo, pt)
	}
	var mu sync.Mutex
	count := st.Skipped
	if o.Progress != nil {
		o.Progress(count, st.Points)
	}
	// The points differ in their settings, seldom in their workload: a
	// synthetic one is drawn once a seed and replayed at every point.
	jobs := pipeline.NewJobStreams(sharedJobs)
	// Runs are deterministic, so points that make the same scenario run
	// once, at the first of them, and its figures go to each: a setting
	// a random or Latin hypercube design draws more than once, and
	// settings that differ only where the scenario does not (spot shares
	// that round to the same number of spot nodes: 0 and 0.1 of 4 nodes
	// are both none).
	same := make([]*samePoint, len(todo))
	byPatch := map[string]*samePoint{}
	for i, pt := range todo {
		patch, err := sw.patch(pt, -1)
		k := string(patch)
		if err != nil {
			k = "\x00" + pointKey(pt) // runs alone, to fail with its error
		}
		sp := byPatch[k]
		if sp == nil {
			sp = &samePoint{first: pt, patch: patch}
			byPatch[k] = sp
			st.Runs += len(sw.Seeds)
		}
		same[i] = sp
	}
	_, err := pipeline.Pool(ctx, len(todo), o.Workers, func(ctx context.Context, i int) (struct{}, error) {
		pt := todo[i]
		sp := same[i]
		sp.once.Do(func() { sp.res, sp.err = sw.runSame(sp, jobs) })
		if sp.err != nil {
			return struct{}{}, sp.err
		}
		res := *sp.res
		res.Index, res.Values = pt.Index, pt.Values
		pf := PointFile{Sweep: sw.Doc.Metadata.Name, Digest: digest, Total: sw.NumPoints(),
			Parameters: sw.paramNames(), MetricNames: sw.Doc.Spec.Metrics, Constraints: sw.Doc.Spec.Constraints, Result: res}
		if err := writeAtomic(dir, pointFileName(pt.Index), pf); err != nil {
			return struct{}{}, err
		}
		if o.Progress != nil {
			mu.Lock()
			count++
			o.Progress(count, st.Points)
			mu.Unlock()
		}
		return struct{}{}, nil
	})
	st.Ran = len(todo)
	return st, err
}

// samePoint is the run of the points with one scenario: first's, made
// by patch (nil: the point's values do not make one).
type samePoint struct {
	first Point
	patch []byte
	once  sync.Once
	res   *Result
	err   error
}

// runSame runs the scenario of sp's points.
func (sw *Sweep) runSame(sp *samePoint, jobs *pipeline.JobStreams) (*Result, error) {
	if sp.patch == nil {
		return sw.runPoint(sp.first, sw.Seeds, jobs)
	}
	sc, err := sw.patched(sp.first, sp.patch)
	if err != nil {
		return nil, fmt.Errorf("point %d: %w", sp.first.Index, err)
	}
	return sw.runScenario(sp.first, sc, sw.Seeds, jobs)
}

// pointKey is a point's setting: its values.
func pointKey(pt Point) string {
	b, _ := json.Marshal(pt.Values)
	return string(b)
}

// finished says whether file holds this sweep's point; a file of another
// sweep is an error (the folder is someone else's work).
func finished(file, digest string) (bool, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &IOError{err}
	}
	var pf PointFile
	if err := json.Unmarshal(data, &pf); err != nil {
		return false, &scenarios.InputError{File: file, Msg: "not a sweep point file: " + err.Error()}
	}
	if pf.Digest != digest {
		return false, &scenarios.InputError{File: file, Field: "digest", Msg: fmt.Sprintf("is a point of another sweep (digest %s, this sweep's %s): give an empty --out folder, or the one this sweep wrote", scenarios.Quote(pf.Digest), digest)}
	}
	return true, nil
}

// writeAtomic writes v as JSON to dir/name whole or not at all.
func writeAtomic(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return writeBytesAtomic(dir, name, append(b, '\n'))
}

// IOError is a file that could not be read or written: exit 3.
type IOError struct{ Err error }

func (e *IOError) Error() string { return e.Err.Error() }
func (e *IOError) Unwrap() error { return e.Err }

// ExitCode is 3: an I/O failure.
func (e *IOError) ExitCode() int { return 3 }
