package main

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every file a run writes is readable by all (0644) and every folder
// 0755, as other tools write them: a sweep's points and tables, a
// recommendation, a simulation with its variants. Under the usual umask
// (022, set here) a file created 0600 would show.
func TestOutputFilesAre0644(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	vol := sweepVolume(t)
	dirs := map[string][]string{
		"sweep":     {"sweep", filepath.Join(vol, "small-sweep.yaml"), "--workers", "2", "--progress", "never"},
		"simulate":  {"simulate", "../../scenarios/examples/two-teams/scenario.yaml", "--output", "json"},
		"recommend": {"recommend", "../../scenarios/examples/two-teams/scenario.yaml", "--vary", "cluster.pools[l4].count=5..6", "--workers", "2"},
	}
	for _, name := range []string{"sweep", "simulate", "recommend"} {
		out := filepath.Join(t.TempDir(), name)
		code, _, errOut := gpuplan(t, append(dirs[name], "--out", out)...)
		require.Equal(t, 0, code, errOut)
		n := 0
		require.NoError(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o644)
			if d.IsDir() {
				want = 0o755
			}
			require.Equal(t, want, info.Mode().Perm(), "%s: %s", name, p)
			n++
			return nil
		}))
		require.Greater(t, n, 3, name)
	}
}
