package pipeline

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// readTree reads every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	}))
	return files
}

// The pieces of every folder (charts, files) go to one pool: on one
// worker or four, the folder holds the same files with the same bytes as
// each run's folder written alone, one file after another
// (reports.WriteDir), the variants' under variants/NAME. The scenario has
// variants and inference services (charts of two heights).
func TestWriteDirSameBytesAsOneFolderAtATime(t *testing.T) {
	sc := load(t, "../examples/inference/priority-training/scenario.yaml")
	out, err := Scenario(sc, Options{File: "scenario.yaml", NoSensitivity: true})
	require.NoError(t, err)
	require.NotEmpty(t, out.Variants)
	require.NotEmpty(t, out.Main.Result.Services)

	ref := t.TempDir()
	require.NoError(t, reports.WriteDir(ref, out.Main.Result, out.Main.Summary))
	for _, v := range out.Variants {
		require.NoError(t, reports.WriteDir(filepath.Join(ref, DirVariants, v.Name), v.Result, v.Summary))
	}
	want := readTree(t, ref)
	require.Contains(t, want, filepath.Join(reports.DirPlots, "wait-cdf.png"))
	require.Contains(t, want, filepath.Join(DirVariants, out.Variants[0].Name, reports.FileJobs))

	for _, w := range []int{1, 4} {
		dir := filepath.Join(t.TempDir(), "out")
		out.workers = w
		require.NoError(t, out.WriteDir(dir, nil))
		got := readTree(t, dir)
		require.Equal(t, len(want), len(got), "%d workers", w)
		for name, b := range want {
			require.True(t, string(b) == string(got[name]), "%s differs on %d workers", name, w)
		}
	}
}
