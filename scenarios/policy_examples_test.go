package scenarios

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Karpenter's own example NodePools (the AWS provider's examples/v1, as
// written): 18 of 22 load; the four Windows ones are refused at the
// kubernetes.io/os requirement's line, since Karpenter's instance-type
// reference, the catalog gpuplan resolves against, lists Linux only.
func TestKarpenterExamplesLoad(t *testing.T) {
	dir := filepath.Join("testdata", "karpenter", "examples-v1")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 22)
	refused := map[string]string{}
	loaded := map[string]*Policy{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		pol, err := ParsePolicy(filepath.Base(f), b)
		if err != nil {
			refused[filepath.Base(f)] = err.Error()
			continue
		}
		loaded[filepath.Base(f)] = pol
	}
	require.Len(t, loaded, 18)
	var names []string
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	require.Equal(t, []string{"windows-2019.yaml", "windows-2022.yaml", "windows-2025.yaml", "windows-custom-userdata.yaml"}, names)
	// windows-2022.yaml: the requirement starts at line 13, column 11.
	require.Equal(t, `windows-2022.yaml:13:11: spec.template.spec.requirements[0]: NodePool windows2022: kubernetes.io/os In [windows] leaves no instance type: the 1363 types left before it have kubernetes.io/os linux`, refused["windows-2022.yaml"])

	// general-purpose: c, m and r of generation 3 and later, amd64,
	// on-demand; no GPU type among them, which a note says, with the line
	// of the instance-category requirement (22).
	gp := loaded["general-purpose.yaml"]
	require.Len(t, gp.NodePools, 1)
	np := gp.NodePools[0]
	require.Equal(t, []string{"on-demand"}, np.CapacityTypes)
	require.Equal(t, DefaultNodePoolNodes, np.Limits.Nodes, "no limits: bounded")
	require.Equal(t, []string{"default"}, gp.NodeClasses)
	notes := strings.Join(gp.Notes, "\n")
	require.Contains(t, notes, "general-purpose.yaml:22: NodePool general-purpose: resolves to 714 instance types")
	require.Contains(t, notes, "none with an NVIDIA GPU (karpenter.k8s.aws/instance-category In [c, m, r] leaves no type with an NVIDIA GPU")
	require.Contains(t, notes, "general-purpose.yaml:10: NodePool general-purpose: no spec.limits: the simulation bounds it at 100 nodes")
	require.Contains(t, notes, "EC2NodeClass default: read")

	// spot: spot only.
	require.Equal(t, []string{"spot"}, loaded["spot.yaml"].NodePools[0].CapacityTypes)
	// 100-cpu-limit: 100 CPUs.
	require.Equal(t, "100", loaded["100-cpu-limit.yaml"].NodePools[0].Limits.CPU.String())
	// multiple-arch: two NodePools, one amd64 and one arm64.
	ma := loaded["multiple-arch.yaml"].NodePools
	require.Len(t, ma, 2)
	// max-node-lifetime: expireAfter modelled, noted at its line (34).
	require.Contains(t, strings.Join(loaded["max-node-lifetime.yaml"].Notes, "\n"), "max-node-lifetime.yaml:34: NodePool default: expireAfter 168h0m0s: each node is drained that long after its launch")
	// large-instances has GPU types among its 4+ CPU, 8+ GiB types: no note.
	require.NotContains(t, strings.Join(loaded["large-instances.yaml"].Notes, "\n"), "none with an NVIDIA GPU")
}
