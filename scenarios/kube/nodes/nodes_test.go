package nodes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// The hand-written dump of a mixed cluster becomes the pools worked out
// from it by hand: nodes grouped by instance type, capacity type, zone,
// GPU and MIG layout, allocatable resources and taints, the cordoned node
// left out; allocatable memory kept as written (in Ki).
func TestMixedClusterPools(t *testing.T) {
	res, err := Read("testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	type want struct {
		name         string
		nodes        int
		instance, ct string
		zone, model  string
		gpus         int32
		gpuMemMiB    int64
		strategy     string
		layout       int // instances per GPU
		milliCPU, ki int64
		taints       int
	}
	wants := []want{
		// Two whole-GPU p4d nodes: 95690m, 1119575716Ki = 1093335 MiB.
		{"p4d.24xlarge-on-demand-us-east-1a", 2, "p4d.24xlarge", OnDemand, "us-east-1a", "A100-40GB", 8, 40960, "", 0, 95690, 1119575716, 1},
		// The same machine under MIG: 56 1g.5gb devices over 8 GPUs = 7 each.
		{"p4d.24xlarge-on-demand-us-east-1a-2", 1, "p4d.24xlarge", OnDemand, "us-east-1a", "A100-40GB", 8, 0, "mixed", 7, 95690, 1119575716, 1},
		// Three spot p5 (EKS SPOT); the node controller's not-ready taint is not the machine's.
		{"p5.48xlarge-spot-us-east-1b", 3, "p5.48xlarge", Spot, "us-east-1b", "H100-80GB", 8, 81559, "", 0, 191450, 2045339036, 1},
		// Five g5.xlarge, one cordoned: four.
		{"g5.xlarge-on-demand-us-east-1a", 4, "g5.xlarge", OnDemand, "us-east-1a", "A10G", 1, 23028, "", 0, 3920, 15147064, 0},
		{"g5.12xlarge-spot-us-east-1c", 2, "g5.12xlarge", Spot, "us-east-1c", "A10G", 4, 23028, "", 0, 47810, 192727580, 1},
		{"m6i.2xlarge-on-demand-us-east-1a", 1, "m6i.2xlarge", OnDemand, "us-east-1a", "", 0, 0, "", 0, 7910, 31482684, 0},
	}
	require.Len(t, res.Pools, len(wants))
	for i, w := range wants {
		p := res.Pools[i]
		require.Equal(t, w.name, p.Name, i)
		require.Equal(t, w.nodes, p.Nodes, w.name)
		require.Equal(t, w.instance, p.InstanceType, w.name)
		require.Equal(t, w.ct, p.CapacityType, w.name)
		require.Equal(t, "us-east-1", p.Region, w.name)
		require.Equal(t, w.zone, p.Zone, w.name)
		require.Equal(t, w.model, p.GPUModel, w.name)
		require.Equal(t, w.gpus, p.GPUs, w.name)
		require.Equal(t, w.gpuMemMiB, p.GPUMemoryMiB, w.name)
		require.Equal(t, w.strategy, p.MIGStrategy, w.name)
		require.Len(t, p.MIGLayout, w.layout, w.name)
		require.Equal(t, w.milliCPU, p.CPU.MilliValue(), w.name)
		require.Equal(t, w.ki<<10, p.Memory.Value(), w.name)
		require.Len(t, p.Taints, w.taints, w.name)
		require.NotContains(t, p.Labels, corev1.LabelHostname, w.name)
	}
	require.Equal(t, []string{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"}, res.Pools[1].MIGLayout)
	require.Equal(t, corev1.Taint{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}, res.Pools[0].Taints[0])
	// A pool keeps the labels all its nodes share: the first p4d carries
	// labels the second lacks (the beta zone labels); they are dropped.
	require.Equal(t, "NVIDIA-A100-SXM4-40GB", res.Pools[0].Labels[LabelGPUProduct])
	require.Equal(t, "gpu-a100", res.Pools[0].Labels["karpenter.sh/nodepool"])
	require.NotContains(t, res.Pools[0].Labels, "failure-domain.beta.kubernetes.io/zone")
	require.NotContains(t, res.Pools[0].Labels, "nvidia.com/gfd.timestamp")
	require.Equal(t, []string{"testdata/mixed-cluster.yaml: 1 cordoned nodes (spec.unschedulable) left out"}, res.Notes)
	// The first node of each group is where the file says.
	require.Equal(t, 11, res.Pools[0].Line)
	require.Equal(t, "ip-10-0-4-41.ec2.internal", res.Pools[4].FirstNode)
}

// kubectl -o json reads the same as -o yaml.
func TestJSONNodeList(t *testing.T) {
	data := `{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"node.kubernetes.io/instance-type": "g5.xlarge", "nvidia.com/gpu.product": "NVIDIA-A10G"}},
  "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}}},
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "labels": {"node.kubernetes.io/instance-type": "g5.xlarge", "nvidia.com/gpu.product": "NVIDIA-A10G"}},
  "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}}}]}`
	res, err := Parse("nodes.json", []byte(data))
	require.NoError(t, err)
	require.Len(t, res.Pools, 1)
	require.Equal(t, "g5.xlarge-on-demand", res.Pools[0].Name)
	require.Equal(t, 2, res.Pools[0].Nodes)
	require.Equal(t, "A10G", res.Pools[0].GPUModel)
}

// One Node, as `kubectl get node NAME -o yaml` prints it, is a one-node
// pool; its errors point into the Node's own fields.
func TestSingleNode(t *testing.T) {
	node := `apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels:
    node.kubernetes.io/instance-type: p5.48xlarge
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
status:
  allocatable: {cpu: 191450m, memory: 2045339036Ki, nvidia.com/gpu: "8"}
`
	res, err := Parse("node.yaml", []byte(node))
	require.NoError(t, err)
	require.Len(t, res.Pools, 1)
	require.Equal(t, "p5.48xlarge-on-demand", res.Pools[0].Name)
	require.Equal(t, "H100-80GB", res.Pools[0].GPUModel)
	require.Equal(t, int32(8), res.Pools[0].GPUs)
	_, err = Parse("node.yaml", []byte(strings.Replace(node, "cpu: 191450m", "cpu: many", 1)))
	require.ErrorContains(t, err, `node.yaml:9:22: status.allocatable["cpu"]: "many" is not a quantity`)
	_, err = Parse("node.yaml", []byte(strings.Replace(node, "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "nvidia.com/mig.strategy: sliced", 1)))
	require.ErrorContains(t, err, `node.yaml:7:30: metadata.labels["nvidia.com/mig.strategy"]: is "sliced"`)
}

func TestGPUModelNames(t *testing.T) {
	for product, want := range map[string]string{
		"NVIDIA-A100-SXM4-40GB": "A100-40GB", "NVIDIA-A100-SXM4-80GB": "A100-80GB", "NVIDIA-A100-PCIE-40GB": "A100-40GB",
		"NVIDIA-H100-80GB-HBM3": "H100-80GB", "NVIDIA-H200": "H200-141GB", "NVIDIA-A10G": "A10G", "Tesla-T4": "T4",
		"NVIDIA-L4": "L4", "NVIDIA-L40S": "L40S", "Tesla-V100-SXM2-16GB": "V100", "Tesla-V100-SXM2-32GB": "V100-32GB",
		"NVIDIA-GeForce-RTX-4090": "",
		// Blackwell: GPU feature discovery writes NVML's name with dashes
		// (a B300 reports "NVIDIA B300 SXM6 AC").
		"NVIDIA-B200": "B200", "NVIDIA-GB200": "GB200", "NVIDIA-B300-SXM6-AC": "B300", "NVIDIA-GB300": "GB300",
	} {
		require.Equal(t, want, GPUModel(product, 0), product)
	}
	require.Equal(t, "A100-80GB", GPUModel("NVIDIA-A100-SXM4", 81920), "memory tells the variant")
}

// Bad input is an InputError at the file, line, column and field, quoting
// little of it.
func TestBadNodeLists(t *testing.T) {
	base, err := os.ReadFile("testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	for _, c := range []struct{ name, from, to, want string }{
		{"kind", "kind: List", "kind: PodList", `x.yaml:7:7: kind: is "PodList"; gpuplan reads the List`},
		{"unknown-field", "    providerID: aws:///us-east-1a/i-0a1b2c3d4e5f60011", "    providerId: x", `x.yaml:56:5: items[0].spec.providerId: unknown field "providerId" (did you mean "providerID"?)`},
		{"cpu", "      cpu: 95690m\n      ephemeral-storage", "      cpu: lots\n      ephemeral-storage", `x.yaml:63:12: items[0].status.allocatable["cpu"]: "lots" is not a quantity`},
		{"capacity-type", "karpenter.sh/capacity-type: spot", "karpenter.sh/capacity-type: cheap", `x.yaml:446:35: items[11].metadata.labels["karpenter.sh/capacity-type"]: karpenter.sh/capacity-type is "cheap"; Karpenter's capacity types are on-demand, spot and reserved`},
		{"gpu-count", `nvidia.com/gpu.count: "4"`, `nvidia.com/gpu.count: "four"`, `x.yaml:452:29: items[11].metadata.labels["nvidia.com/gpu.count"]: "four" is not a whole number from 0 to 512`},
	} {
		body := strings.Replace(string(base), c.from, c.to, 1)
		require.NotEqual(t, string(base), body, c.name)
		_, err := Parse("x.yaml", []byte(body))
		require.Error(t, err, c.name)
		var ie *strict.InputError
		require.ErrorAs(t, err, &ie, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
		require.Less(t, len(err.Error()), 400, c.name)
	}
	_, err = Parse("e.yaml", []byte("apiVersion: v1\nkind: List\nitems: []\n"))
	require.EqualError(t, err, "e.yaml:3:8: items: the node list has no nodes")
	_, err = Read(filepath.Join(t.TempDir(), "missing.yaml"))
	require.Error(t, err)
}

func FuzzNodes(f *testing.F) {
	base, err := os.ReadFile("testdata/mixed-cluster.yaml")
	require.NoError(f, err)
	f.Add(base)
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n  status: {allocatable: {cpu: '1', memory: 1Gi}}\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"labels":{"nvidia.com/mig.strategy":"mixed","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"8"}},"status":{"allocatable":{"cpu":"1","memory":"1Gi","nvidia.com/mig-1g.10gb":"56"}}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/mig.strategy: single, nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, nvidia.com/gpu: '56'}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse("f.yaml", data)
		if err != nil {
			var ie *strict.InputError
			require.ErrorAs(t, err, &ie)
			require.Less(t, len(err.Error()), 2000)
			return
		}
		total := 0
		for _, p := range res.Pools {
			require.Positive(t, p.Nodes)
			require.NotEmpty(t, p.Name)
			total += p.Nodes
		}
		require.LessOrEqual(t, total, strict.MaxNodes)
	})
}

// A node labelled with a configuration of the cluster's own mig-parted
// config (the AKS guide's hptuning-1g10gb) is read from the MIG devices it
// advertises (mixed) or its MIG product (single); only where the node
// says neither is the name it cannot resolve refused.
func TestCustomMIGConfigReadFromWhatTheNodeAdvertises(t *testing.T) {
	base, err := os.ReadFile("testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	res, err := Parse("x.yaml", []byte(strings.Replace(string(base), "nvidia.com/mig.config: all-1g.5gb", "nvidia.com/mig.config: hptuning-1g5gb", 1)))
	require.NoError(t, err)
	var got *Pool
	for i, p := range res.Pools {
		if p.FirstNode == "ip-10-0-1-13.ec2.internal" {
			got = &res.Pools[i]
		}
	}
	require.NotNil(t, got)
	// 56 nvidia.com/mig-1g.5gb over the 8 GPUs nvidia.com/gpu.count gives.
	require.Equal(t, "mixed", got.MIGStrategy)
	require.Equal(t, []string{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"}, got.MIGLayout)
	require.Equal(t, int32(8), got.GPUs)
	require.Equal(t, "hptuning-1g5gb", got.MIGConfig)

	single := `apiVersion: v1
kind: Node
metadata:
  name: a
  labels: {nvidia.com/mig.strategy: single, nvidia.com/mig.config: hptuning, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb}
status:
  allocatable: {cpu: "24", memory: 220Gi, nvidia.com/gpu: "7"}
`
	res, err = Parse("n.yaml", []byte(single))
	require.NoError(t, err)
	require.Equal(t, []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, res.Pools[0].MIGLayout)
	require.Equal(t, int32(1), res.Pools[0].GPUs)
	// Mixed, but no MIG device advertised (MIG manager not done yet): the
	// name is all there is, and gpuplan cannot read it.
	mixed := strings.NewReplacer("single", "mixed", "-MIG-1g.10gb", "", `nvidia.com/gpu: "7"`, `nvidia.com/gpu: "0"`).Replace(single)
	_, err = Parse("n.yaml", []byte(strings.Replace(mixed, "nvidia.com/gpu.product", `nvidia.com/gpu.count: "1", nvidia.com/gpu.product`, 1)))
	require.ErrorContains(t, err, `n.yaml:5:`)
	require.ErrorContains(t, err, `metadata.labels["nvidia.com/mig.config"]: node "a": nvidia.com/mig.config is "hptuning"`)
}
