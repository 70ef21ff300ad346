package gpuop

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func read(t *testing.T, files ...string) *Configs {
	t.Helper()
	c := New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, c.Add(f, data))
	}
	return c
}

// The first article's time-slicing ConfigMap (s0-04): one config, key
// "any", 4 replicas of nvidia.com/gpu, MIG strategy none. A node with no
// nvidia.com/device-plugin.config label runs it (the only config); one
// labelled with another key is an error naming the keys there are.
func TestTimeSlicingConfigMap(t *testing.T) {
	c := read(t, "../seeds/testdata/s0-04-time-slicing-configmap.yaml")
	ps, key, ok, err := c.PluginFor(nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "any", key)
	require.Equal(t, int32(4), ps.Replicas)
	require.Equal(t, "", ps.MIGStrategy)
	require.False(t, ps.MPS)
	require.Equal(t, "../seeds/testdata/s0-04-time-slicing-configmap.yaml:7", ps.Where)
	_, _, _, err = c.PluginFor(map[string]string{LabelDevicePluginConfig: "a100"})
	require.EqualError(t, err, `nvidia.com/device-plugin.config is "a100", which no device plugin config read names (any)`)
}

// mig-parted's ConfigMap of the AKS guide (s2-04): hptuning-1g10gb is
// seven 1g.10gb instances on each GPU (7 compute slices of an A100 80GB,
// the most it holds); all-disabled is MIG off; the GPU Operator's default
// names still resolve (all-3g.40gb: two 3g.40gb, 8 memory slices of 8);
// on an A100 40GB seven 1g.10gb (two memory slices each) do not fit.
func TestMigPartedConfigMap(t *testing.T) {
	c := read(t, "../seeds/testdata/s2-04-mig-parted-configmap-job-mig-trial.yaml")
	require.Len(t, c.Notes, 3, "two Namespaces and the Job skipped")
	l, err := c.MIGLayout("A100-80GB", 1, "hptuning-1g10gb")
	require.NoError(t, err)
	require.Equal(t, strings.Fields(strings.Repeat("1g.10gb ", 7)), l)
	l, err = c.MIGLayout("A100-80GB", 8, "all-disabled")
	require.NoError(t, err)
	require.Nil(t, l)
	l, err = c.MIGLayout("A100-80GB", 8, "all-3g.40gb")
	require.NoError(t, err)
	require.Equal(t, []string{"3g.40gb", "3g.40gb"}, l)
	_, err = c.MIGLayout("A100-40GB", 1, "hptuning-1g10gb")
	require.ErrorContains(t, err, "do not fit on one GPU")
	_, err = c.MIGLayout("A100-80GB", 1, "hptuning")
	require.EqualError(t, err, `nvidia.com/mig.config is "hptuning", which is neither a configuration of the mig-parted configs read (all-disabled, hptuning-1g10gb) nor one of the GPU Operator's default ones (all-disabled, all-<profile>, all-balanced)`)
}

// A custom configuration by GPU indices: the same layout on GPUs 0-1 and
// 2-3 of a 4-GPU node is one layout; covering two of four GPUs, or
// partitioning them differently, is refused (a pool's GPUs are alike).
func TestMigPartedDeviceLists(t *testing.T) {
	cfg := `version: v1
mig-configs:
  halves:
  - devices: [0, 1]
    mig-enabled: true
    mig-devices: {"3g.40gb": 1, "4g.40gb": 1}
  - devices: [2, 3]
    mig-enabled: true
    mig-devices: {"4g.40gb": 1, "3g.40gb": 1}
  uneven:
  - devices: [0, 1]
    mig-enabled: true
    mig-devices: {"7g.80gb": 1}
  - devices: [2, 3]
    mig-enabled: true
    mig-devices: {"1g.10gb": 7}
`
	c := New()
	require.NoError(t, c.Add("mig.yaml", []byte(cfg)))
	l, err := c.MIGLayout("A100-80GB", 4, "halves")
	require.NoError(t, err)
	require.Equal(t, []string{"3g.40gb", "4g.40gb"}, l)
	_, err = c.MIGLayout("A100-80GB", 8, "halves")
	require.ErrorContains(t, err, "configures 4 of a node's 8 GPUs")
	_, err = c.MIGLayout("A100-80GB", 4, "uneven")
	require.ErrorContains(t, err, "partitions the GPUs of a node differently")
}

// Errors in a config inside a ConfigMap are at the file's own line (the
// data key's line plus the line in the block) and the full path.
func TestConfigErrorsAtTheirLine(t *testing.T) {
	data, err := os.ReadFile("../seeds/testdata/s0-04-time-slicing-configmap.yaml")
	require.NoError(t, err)
	for _, c := range []struct{ from, to, want string }{
		// line 17 of the file: "            replicas: 4".
		{"replicas: 4", "replica: 4", `t.yaml:17:13: data["any"].sharing.timeSlicing.resources[0].replica: unknown field "replica"`},
		{"replicas: 4", "replicas: 1", `t.yaml: data["any"].sharing.timeSlicing.resources[0].replicas: is 1; the device plugin wants at least 2 replicas`},
		{"renameByDefault: false", "renameByDefault: true", `data["any"].sharing.timeSlicing.renameByDefault: renames the shared GPUs nvidia.com/gpu.shared`},
		{"migStrategy: none", "migStrategy: mix", `data["any"].flags.migStrategy: is "mix"`},
	} {
		body := strings.Replace(string(data), c.from, c.to, 1)
		err := New().Add("t.yaml", []byte(body))
		require.ErrorContains(t, err, c.want)
	}
	err = New().Add("t.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"))
	require.EqualError(t, err, "t.yaml: no ConfigMap of the device plugin's or mig-parted's config in the file")
}

// An MPS config (the device plugin's sharing.mps) is read as its replicas,
// marked MPS.
func TestMPSConfig(t *testing.T) {
	c := New()
	require.NoError(t, c.Add("mps.yaml", []byte("version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n")))
	ps, key, ok, err := c.PluginFor(map[string]string{})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "mps.yaml", key)
	require.Equal(t, PluginSharing{Replicas: 10, MPS: true, Where: "mps.yaml:1"}, ps)
}

// What gpuplan writes reads back: the GPU Operator file `gpuplan
// manifests` writes for the gpu-sharing example (its golden copy) gives
// the H100 pool's labels (nvidia.com/device-plugin.config: h100-mig,
// nvidia.com/mig.config: gpuplan-h100-mig) the mixed strategy and the
// example's all-balanced layout on an H100 (2 x 1g.10gb, 2g.20gb,
// 3g.40gb), and the L4 pool's (l4-timesliced) 4 time-slicing replicas,
// as the example's scenario gives them.
func TestReadsWhatGpuplanWrites(t *testing.T) {
	c := read(t, "../manifests/testdata/golden/gpu-sharing/kubernetes/03-gpu-operator.yaml")
	ps, _, ok, err := c.PluginFor(map[string]string{LabelDevicePluginConfig: "h100-mig", LabelMIGConfig: "gpuplan-h100-mig"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "mixed", ps.MIGStrategy)
	require.Zero(t, ps.Replicas)
	l, err := c.MIGLayout("H100-80GB", 8, "gpuplan-h100-mig")
	require.NoError(t, err)
	require.Equal(t, []string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"}, l)
	ps, _, ok, err = c.PluginFor(map[string]string{LabelDevicePluginConfig: "l4-timesliced"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int32(4), ps.Replicas)
	require.Equal(t, "", ps.MIGStrategy)
	// A node with no label, with two configs in the map, takes neither.
	_, _, ok, err = c.PluginFor(nil)
	require.NoError(t, err)
	require.False(t, ok)
}
