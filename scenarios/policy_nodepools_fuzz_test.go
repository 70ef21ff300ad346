package scenarios

import (
	"path/filepath"
	"testing"
)

// FuzzNodePool feeds Karpenter NodePools (the AWS provider's 22 examples,
// gpuplan's own, and broken ones) to the policy reader: an error is an
// InputError naming the file, never a panic, and a NodePool read is one
// the simulation can bound.
func FuzzNodePool(f *testing.F) {
	examples, err := filepath.Glob("testdata/karpenter/examples-v1/*.yaml")
	if err != nil || len(examples) == 0 {
		f.Fatal("no Karpenter examples", err)
	}
	seed(f, append(examples, "kube/manifests/testdata/golden/elastic/kubernetes/10-karpenter/nodepools.yaml")...)
	head := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec:\n"
	for _, s := range []string{
		"  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"x\"]}]}}\n",
		"  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: karpenter.k8s.aws/instance-family, operator: Exists, minValues: 60}]}}\n",
		"  replicas: 99999999999\n  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}]}}\n",
		"  limits: {cpu: 1e30}\n  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: topology.kubernetes.io/zone, operator: DoesNotExist}]}}\n",
		"  weight: 10\n  template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: d}, requirements: [{key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [h100]}, {key: karpenter.sh/capacity-type, operator: NotIn, values: [on-demand]}]}}\n",
	} {
		f.Add([]byte(head + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, err := ParsePolicy("fuzz.yaml", data)
		requireInputError(t, err)
		if err != nil {
			if n := len(err.Error()); n > 4096 {
				t.Fatalf("a %d-byte error message", n)
			}
			return
		}
		for _, np := range pol.NodePools {
			if len(np.InstanceTypes) == 0 {
				t.Fatalf("NodePool %s read with no instance type", np.Name)
			}
			if np.Limits.GPUs <= 0 && np.Limits.Nodes <= 0 && np.Limits.CPU == nil && np.Limits.Memory == nil {
				t.Fatalf("NodePool %s read without a bound", np.Name)
			}
		}
		for _, p := range pol.StaticPools {
			if p.Count < 0 || p.Count > MaxNodes || p.InstanceType == "" {
				t.Fatalf("static NodePool %s read as %d nodes of %q", p.Name, p.Count, p.InstanceType)
			}
		}
	})
}
