package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// shippedRuns lists every shipped example scenario and each of its
// variants ("" is the scenario as given).
func shippedRuns(t *testing.T) [][2]string {
	t.Helper()
	var files []string
	for _, pat := range []string{"../../scenarios/examples/*.yaml", "../../scenarios/examples/*/scenario.yaml"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	require.NotEmpty(t, files)
	var out [][2]string
	for _, f := range files {
		s, err := scenarios.LoadFile(f)
		require.NoError(t, err, f)
		out = append(out, [2]string{f, ""})
		for _, v := range s.VariantNames() {
			out = append(out, [2]string{f, v})
		}
	}
	return out
}

// simulationOnly names what a summary holds that no Kubernetes object
// carries, so the round trip leaves it out of the comparison:
// assumptions name the manifest files the policy was read from (the
// originals, then the written copies).
var simulationOnly = []string{"assumptions"}

func summaryJSON(t *testing.T, sc *scenarios.Scenario, o pipeline.Options) map[string]any {
	t.Helper()
	o.NoSpotTwin, o.NoSensitivity, o.NoVariants = true, true, true
	run, err := pipeline.One(sc, o, "", false)
	require.NoError(t, err)
	b, err := json.Marshal(run.Summary)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range simulationOnly {
		delete(m, k)
	}
	return m
}

// TestRoundTrip: for every shipped scenario and variant, the manifests
// gpuplan writes, read back as the run's admission policy with the same
// workload and cluster, give the summary the original run gave.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every shipped scenario twice")
	}
	for _, r := range shippedRuns(t) {
		name := filepath.Base(filepath.Dir(r[0])) + "/" + filepath.Base(r[0])
		if r[1] != "" {
			name += "@" + r[1]
		}
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.LoadFile(r[0])
			require.NoError(t, err)
			if r[1] != "" {
				s, err = s.Variant(r[1])
				require.NoError(t, err)
			}
			m, err := s.Cluster()
			require.NoError(t, err)
			files, _, err := Generate(s, m, Options{})
			if s.Spec.Cluster.NodeList != nil {
				// A node list (openb's) names no instance types to
				// provision: manifests refuse it, saying so.
				require.ErrorContains(t, err, "spec.cluster.nodeList")
				return
			}
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, WriteDir(dir, files))
			var policy []string
			if s.Spec.Policy != nil && len(s.Spec.Policy.Manifests) > 0 {
				for _, f := range []string{"kueue.yaml", "kueue-config.yaml", "volcano-queues.yaml", "priorityclasses.yaml"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
						policy = append(policy, filepath.Join(dir, f))
					}
				}
			}
			want := summaryJSON(t, s, pipeline.Options{})
			got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: policy}})
			require.Equal(t, want, got)
		})
	}
}
