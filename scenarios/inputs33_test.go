package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 33: scenario input that loaded though wrong is refused with its
// file, line and field (exit 2).
func TestAcceptedThoughWrongRefused(t *testing.T) {
	variant := "\n  variants:\n  - name: v\n    patch:\n      cluster:\n        pools:\n        - {name: nope, $patch: delete}\n"
	for _, c := range []struct{ name, from, to, want string }{
		{"count-null", "      count: 2", "      count: null",
			`:10:14: spec.cluster.pools[0].count: is null; give a whole number or leave the field out`},
		{"gpu-model", "gpuModel: A100-80GB", "gpuModel: A100-80G",
			`:11:17: spec.cluster.pools[0].gpuModel: "A100-80G" is not a GPU model gpuplan knows (known: A10, A100, A100-40GB, A100-80GB, A10G, B200, B300, G1, G2, G3, GB200, GB300, H100, H100-80GB, H200-141GB, L4, L40S, M60, MI25, MI300X, P100, P4, T4, V100, V100-32GB, V100M16, V100M32); for another model give gpuMemory too`},
		// An instance type fills in a cpu left out; a cpu of 0 written is 0.
		{"cpu-0", "      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"", "      instanceType: p4d.24xlarge\n      cpu: \"0\"",
			`:12:12: spec.cluster.pools[0].cpu: must be positive`},
		{"start", "ratePerHour: 2}", "ratePerHour: 2, start: -1h}",
			`:19:58: spec.workload.synthetic.classes[0].arrival.start: -1h0m0s is negative; the first arrival is at or after the start of the run`},
		{"patch-delete", "        duration: 30m\n", "        duration: 30m\n" + variant,
			`:29:11: spec.variants[0].patch.cluster.pools[0]: $patch: delete names "nope", which the list does not have; a delete names an item of the scenario`},
	} {
		err, p := loadBad(t, c.from, c.to)
		requireInputErrorText(t, err, p+c.want)
	}
	// The same with a count, a known model, a start of 0 and a delete of
	// a pool the scenario has load.
	for _, c := range []struct{ from, to string }{
		{"gpuModel: A100-80GB", "gpuModel: V100M16"},
		{"gpuModel: A100-80GB", "gpuModel: RTX-9000\n      gpuMemory: 48Gi"},
		{"      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"", "      instanceType: p4d.24xlarge"},
		{"ratePerHour: 2}", "ratePerHour: 2, start: 0s}"},
		{"    - name: gpu\n", "    - name: gpu\n" + "      count: 1\n      gpuModel: A100-80GB\n      gpusPerNode: 8\n      cpu: \"96\"\n      memory: 1152Gi\n    - name: gone\n"},
	} {
		err, _ := loadBad(t, c.from, c.to)
		require.NoError(t, err, c.to)
	}
}

// A Volcano Queue hierarchy whose parents come back to a queue is
// refused at the spec.parent that closes the cycle.
func TestVolcanoParentCycleRefused(t *testing.T) {
	dir := t.TempDir()
	q := func(name, parent string) string {
		return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name + "}\nspec:\n  weight: 1\n  parent: " + parent + "\n"
	}
	p := filepath.Join(dir, "queues.yaml")
	require.NoError(t, os.WriteFile(p, []byte(q("a", "b")+"---\n"+q("b", "c")+"---\n"+q("c", "a")), 0o644))
	_, err := LoadPolicy([]string{p})
	requireInputErrorText(t, err, p+`:6:11: spec.parent: Queue "a" is in a cycle of parents (a -> b -> c -> a); a Queue's parents lead up to root`)
	require.NoError(t, os.WriteFile(p, []byte(q("a", "b")+"---\n"+q("b", "root")), 0o644))
	_, err = LoadPolicy([]string{p})
	require.NoError(t, err)
}

// A LocalQueue named no (YAML 1.1's false) is the queue a class named no
// asks for: the policy reader and the scenario reader read the name
// alike, as Kubernetes does. So is a label value yes.
func TestYAML11BooleanNamesAgreeAcrossReaders(t *testing.T) {
	dir := t.TempDir()
	kueue := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec: {nodeLabels: {spot: yes}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: no}
spec: {clusterQueue: q}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kueue.yaml"), []byte(kueue), 0o644))
	body := strings.Replace(minimal, "      memory: 1152Gi\n", "      memory: 1152Gi\n      labels: {spot: yes}\n", 1)
	body = strings.Replace(body, "      - name: train\n", "      - name: train\n        queue: no\n", 1)
	body = strings.Replace(body, "  workload:", "  policy: {manifests: [kueue.yaml]}\n  workload:", 1)
	p := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	s, err := LoadFile(p)
	require.NoError(t, err)
	require.Equal(t, "yes", s.Spec.Cluster.Pools[0].Labels["spot"])
	require.Equal(t, "no", s.Spec.Workload.Synthetic.Classes[0].Queue)
	pol, err := LoadPolicy([]string{filepath.Join(dir, "kueue.yaml")})
	require.NoError(t, err)
	require.Equal(t, "no", pol.Spec.LocalQueues[0].Name)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	b.Close()
}

// The same document in UTF-16 with a byte-order mark loads as it does in
// UTF-8; without the mark it is refused as not text, not read as empty.
func TestUTF16Scenario(t *testing.T) {
	enc := func(s string, mark bool) []byte {
		var out []byte
		if mark {
			out = []byte{0xff, 0xfe}
		}
		for _, r := range s {
			out = append(out, byte(r), byte(r>>8))
		}
		return out
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "u16.yaml")
	require.NoError(t, os.WriteFile(p, enc(minimal, true), 0o644))
	s, err := LoadFile(p)
	require.NoError(t, err)
	require.Equal(t, "tiny", s.Metadata.Name)
	require.Equal(t, 2, s.Spec.Cluster.Pools[0].Count)
	require.NoError(t, os.WriteFile(p, enc(minimal, false), 0o644))
	_, err = LoadFile(p)
	requireInputErrorText(t, err, p+": is not a text file: it has a NUL byte at byte 1 (a binary file, or UTF-16 without a byte-order mark: save it as UTF-8); nothing of it is quoted")
}
