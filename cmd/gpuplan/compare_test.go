package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// compare prints the same figures in each of its formats as it did when
// it built its result itself (golden files of 8c91a01's output).
func TestCompareGolden(t *testing.T) {
	for _, pair := range [][2]string{{"two-teams", "spot-what-if"}, {"priority-training", "torchserve-bert"}} {
		a := filepath.Join("testdata", "compare", pair[0]+".json")
		b := filepath.Join("testdata", "compare", pair[1]+".json")
		for output, ext := range map[string]string{"table": "txt", "markdown": "md", "json": "json"} {
			code, out, errOut := gpuplan(t, "compare", a, b, "--output", output)
			require.Equal(t, 0, code, errOut)
			golden(t, filepath.Join("compare", pair[0]+"-vs-"+pair[1]+"."+ext), out)
		}
	}
}
