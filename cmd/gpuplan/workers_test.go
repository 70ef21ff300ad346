package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// readTree reads every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	}))
	return files
}

// The spot what-if (three variants, the all-on-demand twin, three spot
// sensitivity curves: 56 runs) writes the same bytes on one worker as on
// four.
func TestSimulateSameBytesWhateverTheWorkers(t *testing.T) {
	var trees []map[string]string
	var stdouts []string
	for _, w := range []string{"1", "4"} {
		dir := filepath.Join(t.TempDir(), "out")
		code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/spot-what-if.yaml", "--out", dir, "--workers", w, "--output", "json")
		require.Equal(t, 0, code, errOut)
		trees, stdouts = append(trees, readTree(t, dir)), append(stdouts, out)
	}
	require.Contains(t, trees[0], "variants/all-spot-tight/jobs.csv")
	require.Equal(t, len(trees[0]), len(trees[1]))
	for name, b := range trees[0] {
		require.True(t, b == trees[1][name], "%s differs between 1 and 4 workers", name)
	}
	require.Equal(t, stdouts[0], stdouts[1])
}

func TestValidateSameVerdictsWhateverTheWorkers(t *testing.T) {
	var outs []string
	for _, w := range []string{"1", "3"} {
		js := filepath.Join(t.TempDir(), "v.json")
		code, out, errOut := gpuplan(t, "validate", "--baseline", "../../scenarios/examples/validate/baseline.yaml",
			"--candidate", "../../scenarios/examples/validate/candidate.yaml", "--assert", "../../scenarios/examples/validate/rules.yaml",
			"--replications", "3", "--workers", w, "--json", js)
		require.Equal(t, 1, code, "the example's rules fail two of five: %s", errOut)
		b, err := os.ReadFile(js)
		require.NoError(t, err)
		outs = append(outs, out+string(b))
	}
	require.Equal(t, outs[0], outs[1])
}

func TestWorkersNegativeIsUsage(t *testing.T) {
	code, _, errOut := gpuplan(t, "simulate", "--workers", "-1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--workers -1")
}
