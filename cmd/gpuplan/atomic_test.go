package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary stand in for gpuplan: with
// GPUPLAN_TEST_MAIN set it runs main() on its arguments, so tests can
// kill a real gpuplan process at any point.
func TestMain(m *testing.M) {
	if os.Getenv("GPUPLAN_TEST_MAIN") == "1" {
		if p := os.Getenv("GPUPLAN_TEST_PEAK_RSS"); p != "" {
			os.Exit(mainWritingPeakRSS(p))
		}
		main()
		return
	}
	os.Exit(m.Run())
}

func gpuplanProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	c := exec.Command(exe, args...)
	c.Env = append(os.Environ(), "GPUPLAN_TEST_MAIN=1")
	return c
}

// tree is every file under dir with the SHA-256 of its bytes.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	}))
}

func staging(t *testing.T, parent string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(parent, ".*gpuplan-tmp-*"))
	require.NoError(t, err)
	return m
}

// A run killed while it writes its output folder over a folder that
// holds an earlier run leaves the folder holding either the whole earlier
// run or the whole new one, never a mix; the next run clears what the
// killed one left aside. Each kill is timed to land while the run's
// staging folder exists (it is watched for), and the test counts the
// kills that did (killing again, up to 20 runs, until 6 have): a SIGKILL
// that leaves the staging folder behind, with files of the new run in it,
// and the old run in place, landed mid-write; so did a SIGTERM sent while
// the staging folder existed that stopped the run (exit 143) with the old
// run in place.
func TestKilledRunLeavesOldOrNewFolderWhole(t *testing.T) {
	scenario := "../../scenarios/examples/spot-what-if.yaml" // variants: several folders
	root := t.TempDir()
	args := func(seed, out string) []string {
		// One writer and no spot replay: the same folders, written
		// longer, reached sooner.
		return []string{"simulate", scenario, "--seed", seed, "--workers", "1", "--spot-sensitivity", "off", "--out", out}
	}
	old, fresh := filepath.Join(root, "old"), filepath.Join(root, "new")
	out, err := gpuplanProcess(t, args("2", old)...).CombinedOutput()
	require.NoError(t, err, string(out))
	// The new run, timed: how long its staging folder exists (the
	// write), to spread the kills over it.
	c := gpuplanProcess(t, args("7", fresh)...)
	var stdout bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stdout
	require.NoError(t, c.Start())
	seen := waitStaging(t, root, nil)
	require.NotZero(t, seen, "the run wrote no staging folder")
	for len(staging(t, root)) > 0 {
		time.Sleep(200 * time.Microsecond)
	}
	write := time.Since(seen)
	require.NoError(t, c.Wait(), stdout.String())
	t.Logf("the write takes %v", write)
	oldTree, newTree := tree(t, old), tree(t, fresh)
	require.NotEqual(t, oldTree["summary.json"], newTree["summary.json"])
	require.Contains(t, oldTree, filepath.Join("variants", "all-spot-tight", "jobs.csv"))
	// A file only the earlier run has: it must go with it.
	require.NoError(t, os.WriteFile(filepath.Join(old, "plots", "stale.png"), []byte("from another scenario"), 0o644))
	oldTree = tree(t, old)

	target := filepath.Join(root, "target")

	rng := rand.New(rand.NewPCG(1, 2))
	// Kill until 6 kills have landed mid-write, at most 20 runs: on a
	// loaded machine the write's length varies, and a kill after the swap
	// proves nothing (though its folder must still be whole).
	const want, maxKills = 6, 20
	landed, kills := 0, 0
	for i := 0; i < maxKills && landed < want; i++ {
		kills++
		require.NoError(t, os.RemoveAll(target))
		copyTree(t, old, target)
		sig := syscall.SIGKILL
		if i%4 == 3 {
			sig = syscall.SIGTERM
		}
		before := staging(t, root) // left by earlier SIGKILLs
		c := gpuplanProcess(t, args("7", target)...)
		require.NoError(t, c.Start())
		seen := waitStaging(t, root, before)
		require.NotZero(t, seen, "kill %d: the run ended before it wrote a staging folder", i)
		time.Sleep(time.Duration(rng.Int64N(int64(write)/2 + 1)))
		writing := len(newPaths(staging(t, root), before)) > 0
		_ = c.Process.Signal(sig)
		err := c.Wait()
		got := tree(t, target)
		isOld := equalTrees(got, oldTree)
		if !isOld && !equalTrees(got, newTree) {
			t.Fatalf("kill %d (%v): the folder is neither the old run nor the new one: %v", i, sig, diffTrees(got, oldTree, newTree))
		}
		left := newPaths(staging(t, root), before)
		if sig == syscall.SIGTERM {
			// SIGTERM cleans up at once; exit 143 unless it had finished.
			if err != nil {
				require.Equal(t, 143, c.ProcessState.ExitCode())
			}
			require.Empty(t, left, "SIGTERM left a staging folder")
			if writing && err != nil && isOld {
				landed++
			}
			continue
		}
		// A SIGKILL before the swap leaves its staging folder, partly
		// filled with the new run's files, and the old run in place.
		if len(left) == 1 && isOld && sharesAFile(tree(t, left[0]), newTree) {
			landed++
		}
	}
	t.Logf("%d of %d kills landed while the run was writing its folder", landed, kills)
	require.GreaterOrEqual(t, landed, want, "too few kills landed mid-write for the test to mean anything")
	// The next run over the same folder removes staging folders left by
	// SIGKILL, and the stale plot.
	out, err = gpuplanProcess(t, args("7", target)...).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Empty(t, staging(t, root))
	require.True(t, equalTrees(tree(t, target), newTree))
}

// waitStaging waits until a staging folder of the run appears in parent
// (one not in before, those there when it started), and returns when it
// was seen (zero after half a minute without one).
func waitStaging(t *testing.T, parent string, before []string) time.Time {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		if len(newPaths(staging(t, parent), before)) > 0 {
			return time.Now()
		}
	}
	return time.Time{}
}

// newPaths is the paths of now not in before.
func newPaths(now, before []string) []string {
	var out []string
	for _, p := range now {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}

// sharesAFile reports whether part holds a file with the same path and
// bytes as one of whole's.
func sharesAFile(part, whole map[string]string) bool {
	for k, v := range part {
		if whole[k] == v {
			return true
		}
	}
	return false
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func diffTrees(got, old, fresh map[string]string) string {
	var b strings.Builder
	for k, v := range got {
		switch v {
		case old[k]:
			b.WriteString(k + "=old ")
		case fresh[k]:
			b.WriteString(k + "=new ")
		default:
			b.WriteString(k + "=other ")
		}
	}
	return b.String()
}

// A folder that holds something other than a gpuplan run is not replaced;
// a folder that cannot be written is an environment failure (exit 3).
func TestOutputFolderRefusals(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("mine"), 0o644))
	code, _, errOut := gpuplan(t, "simulate", "--out", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "exists and is not a gpuplan output folder")
	b, err := os.ReadFile(filepath.Join(dir, "thesis.tex"))
	require.NoError(t, err)
	require.Equal(t, "mine", string(b))

	file := filepath.Join(dir, "thesis.tex")
	code, _, errOut = gpuplan(t, "simulate", "--out", filepath.Join(file, "out"))
	require.Equal(t, 3, code, errOut)
	require.Contains(t, errOut, "not a directory")
}
