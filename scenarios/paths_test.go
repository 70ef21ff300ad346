package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// With RestrictPaths a scenario reads only files in its own folder: a
// path that resolves outside it (../, absolute, a symbolic link, a link
// inside a folder it names, a path a variant patches in) is refused at
// its line and field before anything is read. Without it, the same
// scenario loads.
func TestRestrictPaths(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "jobs.csv")
	require.NoError(t, os.WriteFile(secret, []byte("name,submit,duration\nx,0,10\n"), 0o644))
	policy := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
	require.NoError(t, os.WriteFile(filepath.Join(outside, "kueue.yaml"), []byte(policy), 0o644))

	root := t.TempDir()
	dir := filepath.Join(root, "scn")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "policy"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte("name,submit,duration\nx,0,10\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "policy", "kueue.yaml"), []byte(policy), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.csv")))
	rel, err := filepath.Rel(dir, secret)
	require.NoError(t, err)
	realOut, err := filepath.EvalSymlinks(secret)
	require.NoError(t, err)
	realDir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)

	trace := func(p string) string {
		return strings.Replace(minimal, classes, "    trace: {path: "+p+", format: csv}\n    xsynthetic:\n      classes:", 1)
	}
	outsideMsg := func(p string) string {
		return "path " + Quote(p) + " resolves to " + Quote(realOut) + ", outside the scenario's folder " + Quote(realDir) + "; with --restrict-paths (the default of validate) a scenario reads only files in its own folder"
	}
	load := func(body string, restrict bool) error {
		// The synthetic block is renamed away where a trace replaces it.
		body = strings.Replace(body, "    xsynthetic:\n      classes:\n      - name: train\n        arrival: {process: fixed, ratePerHour: 2}\n        replicas: 2\n        pod: {cpu: \"8\", memory: 64Gi, gpus: 4}\n        duration: 30m\n", "", 1)
		p := filepath.Join(dir, "s.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := LoadFileWith(p, LoadOptions{RestrictPaths: restrict})
		return err
	}
	p := filepath.Join(dir, "s.yaml")
	for _, c := range []struct{ name, body, want string }{
		{"dotdot", trace(rel), p + ":16:19: spec.workload.trace.path: " + outsideMsg(rel)},
		{"absolute", trace(secret), p + ":16:19: spec.workload.trace.path: " + outsideMsg(secret)},
		{"symlink", trace("link.csv"), p + ":16:19: spec.workload.trace.path: " + outsideMsg("link.csv")},
		{"variant", minimal + "  variants:\n  - name: v\n    patch:\n      calibration: " + rel + "\n",
			p + ":24:5: spec.calibration: variant v: " + outsideMsg(rel)},
	} {
		err := load(c.body, true)
		requireInputErrorText(t, err, c.want)
		// Unrestricted, nothing is refused for where it is.
		if err := load(c.body, false); err != nil {
			require.NotContains(t, err.Error(), "outside the scenario's folder", c.name)
		}
	}
	// A folder whose file links outside.
	require.NoError(t, os.Symlink(filepath.Join(outside, "kueue.yaml"), filepath.Join(dir, "policy", "more.yaml")))
	withPolicy := strings.Replace(minimal, "  workload:", "  policy: {manifests: [policy/]}\n  workload:", 1)
	err = load(withPolicy, true)
	require.Error(t, err)
	require.Contains(t, err.Error(), p+`:15:24: spec.policy.manifests[0]: folder's file "more.yaml" in "policy/" resolves to `)
	require.NoError(t, os.Remove(filepath.Join(dir, "policy", "more.yaml")))
	// Inside the folder, everything loads restricted.
	require.NoError(t, load(trace("jobs.csv"), true))
	// (The one-flavor policy is then refused for what it holds, not for
	// where it is.)
	err = load(withPolicy, true)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "outside")
	require.Contains(t, err.Error(), "the policy has no ClusterQueue")
}

// RebasePaths reaches every file a scenario names, so a scenario written
// to another folder (recommend's winner) reads the same files: before,
// recommend rebased the policy, the job trace, the calibration and the
// catalogs only, and the scenario it wrote for an LLM service with a
// request trace and a KEDA ScaledObject, or a service on a rate file,
// named files that were not there ("azure-llm-conv-10m.csv: no such
// file").
func TestRebasePathsWritesAScenarioThatLoads(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "base")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "data"), 0o755))
	trace, err := os.ReadFile(azureSample)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "data", "t.csv"), trace, 0o644))
	so, err := os.ReadFile("examples/llm-serving/chat/scaledobject.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "so.yaml"), so, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "rates.csv"), []byte("time,requests_per_second\n0,5\n30m,10\n"), 0o644))
	body := strings.Replace(traceScenario, "      replicas: {min: REPLICAS, max: REPLICAS}\n", "      autoscaler: {manifests: [so.yaml]}\n", 1)
	body = strings.NewReplacer("HORIZON", "1h", "TRACE", "{path: data/t.csv}").Replace(body) + `    - name: bert
      pod: {cpu: "4", memory: 16Gi, gpus: 1}
      load: {csv: {path: rates.csv}}
`
	require.NoError(t, os.WriteFile(filepath.Join(src, "s.yaml"), []byte(body), 0o644))
	s, err := LoadFile(filepath.Join(src, "s.yaml"))
	require.NoError(t, err)

	out := filepath.Join(root, "elsewhere", "winner")
	require.NoError(t, os.MkdirAll(out, 0o755))
	var seen []string
	s.RebasePaths(func(p string) string {
		seen = append(seen, p)
		r, err := filepath.Rel(out, filepath.Join(src, p))
		require.NoError(t, err)
		return filepath.ToSlash(r)
	})
	require.ElementsMatch(t, []string{"data/t.csv", "so.yaml", "rates.csv"}, seen)
	require.Equal(t, "../../base/data/t.csv", s.Spec.Workload.Services[0].LLM.RequestTrace.Path)
	y, err := yaml.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "s.yaml"), y, 0o644))
	w, err := LoadFile(filepath.Join(out, "s.yaml"))
	require.NoError(t, err)
	b, err := w.Build(Options{})
	require.NoError(t, err)
	b.Close()
}
