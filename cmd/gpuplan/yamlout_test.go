package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// Every command that prints -o json prints -o yaml too, the same document:
// read back, the YAML is the JSON value for value.
func TestOutputYAMLWhereverJSON(t *testing.T) {
	openb := "../../testdata/openb/"
	cmp := filepath.Join("testdata", "compare")
	for _, args := range [][]string{
		{"advise", "checkpoint", "--mtbf", "4h", "--checkpoint-cost", "5m"},
		{"compare", filepath.Join(cmp, "two-teams.json"), filepath.Join(cmp, "spot-what-if.json")},
		{"simulate", "../../scenarios/examples/two-teams/scenario.yaml"},
		{"trace", "stats", openb + "openb_pod_list_default.csv", "--format", "openb"},
		{"inflate", "--nodes", openb + "openb_node_list_gpu_node.csv", "--pods", openb + "openb_pod_list_default.csv", "--policy", "bestfit", "--target", "1.1"},
		{"version"},
	} {
		code, j, errOut := gpuplan(t, append(args, "--output", "json")...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		code, y, errOut := gpuplan(t, append(args, "--output", "yaml")...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.NotContains(t, y, "{\n", args)
		back, err := yaml.YAMLToJSON([]byte(y))
		require.NoError(t, err, args)
		var fromJSON, fromYAML any
		require.NoError(t, json.Unmarshal([]byte(j), &fromJSON))
		require.NoError(t, json.Unmarshal(back, &fromYAML))
		require.Equal(t, fromJSON, fromYAML, args)
	}
}
