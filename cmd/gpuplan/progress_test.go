package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --progress always draws on stderr; auto draws only on a terminal (a
// buffer is not one) and never not at all; what goes to stdout is the
// same whatever it says.
func TestProgressOnlyWhereAsked(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		desc string
	}{
		// A run this short is over before the bar's first redraw: always
		// draws nothing either (as at 8c91a01).
		{[]string{"simulate", "testdata/cost-two-nodes.yaml", "--spot-sensitivity", "off"}, ""},
		{[]string{"trace", "generate", "--jobs", "50", "--out", filepath.Join(tmp, "g.csv")}, ""},
		// The spinner counts the jobs read, 4096 at a time.
		{[]string{"trace", "stats", "../../testdata/openb/openb_pod_list_default.csv", "--format", "openb"}, "4096 jobs"},
	} {
		var stdout string
		for _, mode := range []string{"always", "auto", "never"} {
			code, out, errOut := gpuplan(t, append(c.args, "--progress", mode)...)
			require.Equal(t, 0, code, errOut)
			if mode == "always" {
				if c.desc != "" {
					require.Contains(t, errOut, c.desc, c.args[0])
				}
				stdout = out
				continue
			}
			require.Empty(t, errOut, "%s --progress %s", c.args[0], mode)
			require.Equal(t, stdout, out)
		}
	}
}

func TestProgressHelper(t *testing.T) {
	var buf bytes.Buffer
	require.True(t, progress{"always", &buf}.shown())
	require.False(t, progress{"auto", &buf}.shown(), "a buffer is not a terminal")
	require.False(t, progress{"never", &buf}.shown())
	require.Nil(t, progress{"auto", &buf}.bar(10, "x"))
	tick, done := progress{"never", &buf}.ticks("reading")
	require.Nil(t, tick)
	done()
	require.Zero(t, buf.Len())

	tick, done = progress{"always", &buf}.ticks("reading")
	tick(progressEvery)
	done()
	require.NotZero(t, buf.Len())
}
