package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// karpenterBase is Karpenter's general-purpose example (its NodePool and
// EC2NodeClass), which loads.
const karpenterBase = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general-purpose
spec:
  template:
    metadata:
      labels: {team: ml}
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["2"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
  disruption:
    consolidateAfter: 30s
    budgets:
      - nodes: 10%
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: "KarpenterNodeRole-demo"
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  amiSelectorTerms:
    - alias: al2023@latest
  tags: {team: ml}
`

// NodePools and EC2NodeClasses are checked against Karpenter's published
// CRD schemas and their CEL rules, as the API server does when they are
// created: each row breaks one rule that gpuplan's own checks do not
// catch, and is refused at the line and field the rule is attached to,
// with the rule's message. Before, every row loaded.
func TestKarpenterObjectsMeetTheirCRDRules(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) error {
		p := filepath.Join(dir, "p.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := LoadPolicy([]string{p})
		return err
	}
	require.NoError(t, load(karpenterBase))
	const np, nc = `NodePool: Invalid value: "object": `, `EC2NodeClass: Invalid value: "object": `
	for _, c := range []struct{ name, from, to, want string }{
		{"a label of Karpenter's domain",
			"labels: {team: ml}", "labels: {team: ml, karpenter.sh/team: ml}",
			`p.yaml:8:7: spec.template.metadata.labels: ` + np + `label domain "karpenter.sh" is restricted`},
		{"a label of the AWS provider's domain not in its list",
			"labels: {team: ml}", "labels: {karpenter.k8s.aws/team: ml}",
			`p.yaml:8:7: spec.template.metadata.labels: ` + np + `label domain "karpenter.k8s.aws" is restricted`},
		{"a requirement on the host name",
			"        - key: karpenter.k8s.aws/instance-generation\n", "        - key: kubernetes.io/hostname\n",
			`p.yaml:14:11: spec.template.spec.requirements[1].key: ` + np + `label "kubernetes.io/hostname" is restricted`},
		{"minValues above the values given",
			`          values: ["c", "m", "r"]` + "\n", `          values: ["c", "m", "r"]` + "\n          minValues: 4\n",
			`p.yaml:10:7: spec.template.spec.requirements: ` + np + `requirements with 'minValues' must have at least that many values specified in the 'values' field`},
		{"a budget's schedule without its duration",
			"      - nodes: 10%\n", "      - nodes: 10%\n        schedule: \"0 9 * * mon-fri\"\n",
			`p.yaml:23:5: spec.disruption.budgets: ` + np + `'schedule' must be set with 'duration'`},
		{"a static NodePool's weight",
			"spec:\n  template:\n    metadata:", "spec:\n  replicas: 2\n  weight: 10\n  template:\n    metadata:",
			`p.yaml:5:1: spec: ` + np + `'weight' is not supported on static NodePools`},
		{"an alias beside another AMI field",
			"    - alias: al2023@latest\n", "    - alias: al2023@latest\n      name: my-ami\n",
			`p.yaml:38:3: spec.amiSelectorTerms: ` + nc + `'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms`},
		{"a Windows alias pinned to a version",
			"    - alias: al2023@latest\n", "    - alias: windows2022@v20250101\n",
			`p.yaml:39:7: spec.amiSelectorTerms[0].alias: ` + nc + `windows families may only specify version 'latest'`},
		{"amiFamily against the alias",
			"  role: \"KarpenterNodeRole-demo\"\n", "  role: \"KarpenterNodeRole-demo\"\n  amiFamily: AL2\n",
			`p.yaml:30:1: spec: ` + nc + `if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias`},
		{"a restricted tag",
			"  tags: {team: ml}\n", "  tags: {team: ml, kubernetes.io/cluster/demo: owned}\n",
			`p.yaml:40:3: spec.tags: ` + nc + `tag contains a restricted tag matching kubernetes.io/cluster/`},
		{"an EBS volume without size or snapshot",
			"  tags: {team: ml}\n", "  tags: {team: ml}\n  blockDeviceMappings:\n    - deviceName: /dev/xvda\n      ebs: {volumeType: gp3}\n",
			`p.yaml:43:7: spec.blockDeviceMappings[0].ebs: ` + nc + `snapshotID or volumeSize must be defined`},
		{"image GC thresholds",
			"  tags: {team: ml}\n", "  tags: {team: ml}\n  kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}\n",
			`p.yaml:41:3: spec.kubelet: ` + nc + `imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent`},
		{"a security group by id and name",
			"  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: demo\n", "  securityGroupSelectorTerms:\n    - {id: sg-0123, name: default}\n",
			`p.yaml:35:3: spec.securityGroupSelectorTerms: ` + nc + `'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term`},
	} {
		body := strings.Replace(karpenterBase, c.from, c.to, 1)
		require.NotEqual(t, karpenterBase, body, c.name)
		err := load(body)
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}
