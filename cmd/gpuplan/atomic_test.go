package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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

// A run killed at a random point over a folder that holds an earlier run
// leaves the folder holding either the whole earlier run or the whole new
// one, never a mix; the next run clears what the killed one left aside.
func TestKilledRunLeavesOldOrNewFolderWhole(t *testing.T) {
	scenario := "../../scenarios/examples/spot-what-if.yaml" // variants: several folders
	root := t.TempDir()
	old, fresh := filepath.Join(root, "old"), filepath.Join(root, "new")
	for dir, seed := range map[string]string{old: "2", fresh: "7"} {
		c := gpuplanProcess(t, "simulate", scenario, "--seed", seed, "--out", dir)
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	oldTree, newTree := tree(t, old), tree(t, fresh)
	require.NotEqual(t, oldTree["summary.json"], newTree["summary.json"])
	require.Contains(t, oldTree, filepath.Join("variants", "all-spot-tight", "jobs.csv"))
	// A file only the earlier run has: it must go with it.
	require.NoError(t, os.WriteFile(filepath.Join(old, "plots", "stale.png"), []byte("from another scenario"), 0o644))
	oldTree = tree(t, old)

	// How long a run takes here, to spread the kills over it.
	begin := time.Now()
	c := gpuplanProcess(t, "simulate", scenario, "--seed", "7", "--out", filepath.Join(root, "timing"))
	require.NoError(t, c.Run())
	span := time.Since(begin)

	rng := rand.New(rand.NewPCG(1, 2))
	sawOld, sawNew := 0, 0
	for i := 0; i < 16; i++ {
		target := filepath.Join(root, "target")
		require.NoError(t, os.RemoveAll(target))
		copyTree(t, old, target)
		sig := syscall.SIGKILL
		if i%4 == 3 {
			sig = syscall.SIGTERM
			for _, p := range staging(t, root) { // left by earlier SIGKILLs
				require.NoError(t, os.RemoveAll(p))
			}
		}
		c := gpuplanProcess(t, "simulate", scenario, "--seed", "7", "--out", target)
		require.NoError(t, c.Start())
		time.Sleep(span*3/10 + time.Duration(rng.Int64N(int64(span)*9/10)))
		_ = c.Process.Signal(sig)
		err := c.Wait()
		got := tree(t, target)
		switch {
		case equalTrees(got, oldTree):
			sawOld++
		case equalTrees(got, newTree):
			sawNew++
		default:
			t.Fatalf("kill %d (%v): the folder is neither the old run nor the new one: %v", i, sig, diffTrees(got, oldTree, newTree))
		}
		if sig == syscall.SIGTERM {
			// SIGTERM cleans up at once; exit 143 unless it had finished.
			// (-1: the signal came before the handler was installed, at
			// start-up, before any folder was made.)
			if err != nil {
				require.Contains(t, []int{143, -1}, c.ProcessState.ExitCode())
			}
			require.Empty(t, staging(t, root), "SIGTERM left a staging folder")
		}
	}
	t.Logf("after the kill: %d old, %d new", sawOld, sawNew)
	// The next run over the same folder removes staging folders left by
	// SIGKILL, and the stale plot.
	c = gpuplanProcess(t, "simulate", scenario, "--seed", "7", "--out", filepath.Join(root, "target"))
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Empty(t, staging(t, root))
	require.True(t, equalTrees(tree(t, filepath.Join(root, "target")), newTree))
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
