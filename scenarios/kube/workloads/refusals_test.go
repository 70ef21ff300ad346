package workloads

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/validate/strict"
)

// A Job the API server refuses, accepted before issue 33: a MIG resource
// that names no profile (mig-9g.99gb is on no GPU), and node affinity Gt
// with a value that is not an integer. Each names its line and field.
func TestJobsRefusedAsTheAPIServerWould(t *testing.T) {
	gt := "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n" +
		"      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n" +
		"            - matchExpressions:\n              - {key: nvidia.com/gpu.memory, operator: Gt, values: [\"%s\"]}\n"
	for _, c := range []struct{ name, from, to, want string }{
		{"mig", "nvidia.com/mig-3g.40gb: 1}", "nvidia.com/mig-9g.99gb: 1}",
			`j.yaml:29:44: spec.template.spec.containers[0].resources.limits["nvidia.com/mig-9g.99gb"]: resource "nvidia.com/mig-9g.99gb" names no MIG profile (profiles: 1g.10gb, 1g.18gb, 1g.20gb, 1g.23gb, 1g.34gb, 1g.35gb, 1g.45gb, 1g.47gb, 1g.5gb, 1g.67gb, 1g.70gb, 2g.10gb, 2g.20gb, 2g.35gb, 2g.45gb, 2g.47gb, 2g.67gb, 2g.70gb, 3g.135gb, 3g.139gb, 3g.20gb, 3g.40gb, 3g.71gb, 3g.90gb, 3g.93gb, 4g.135gb, 4g.139gb, 4g.20gb, 4g.40gb, 4g.71gb, 4g.90gb, 4g.93gb, 7g.141gb, 7g.180gb, 7g.186gb, 7g.269gb, 7g.278gb, 7g.40gb, 7g.80gb)`},
		{"gt", "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n", strings.Replace(gt, "%s", "40GB", 1),
			`j.yaml:26:69: spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]: Gt "40GB" is not an integer; Gt and Lt compare a label as a whole number`},
		{"gt-two", "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n", strings.Replace(gt, `"%s"`, `"1", "2"`, 1),
			`j.yaml:26:68: spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Gt takes one value, got 2`},
	} {
		bad := strings.Replace(job, c.from, c.to, 1)
		require.NotEqual(t, job, bad, c.name)
		_, _, err := Parse("j.yaml", []byte(bad))
		var ie *strict.InputError
		require.True(t, errors.As(err, &ie), "%s: %v", c.name, err)
		require.Equal(t, 2, ie.ExitCode())
		require.Equal(t, c.want, err.Error(), c.name)
	}
	// Gt with an integer reads.
	_, _, err := Parse("j.yaml", []byte(strings.Replace(job, "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n", strings.Replace(gt, "%s", "40000", 1), 1)))
	require.NoError(t, err)
}

// A KAITO Workspace is refused where KAITO's webhook would refuse it, or
// where it is not a job (an inference Workspace), at the field's line.
func TestKAITOWorkspaceRefusals(t *testing.T) {
	base := `apiVersion: kaito.sh/v1alpha1
kind: Workspace
metadata:
  name: ws
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels:
      apps: tuning
tuning:
  preset:
    name: phi-3-mini-4k-instruct
  method: qlora
  input:
    urls: [https://example.com/data.json]
`
	objs, _, err := Parse("ws.yaml", []byte(base))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	require.Equal(t, &Workspace{InstanceType: "Standard_NC24ads_A100_v4", Count: 1, Labels: map[string]string{"apps": "tuning"}}, objs[0].Workspace)
	require.Equal(t, map[string]string{"apps": "tuning", "node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4"}, objs[0].Groups[0].Constraints.NodeSelector)
	for _, c := range []struct{ from, to, want string }{
		{"  method: qlora", "  method: full", `ws.yaml:13:11: tuning.method: is "full"; KAITO tunes by lora or qlora`},
		{"  labelSelector:\n    matchLabels:\n      apps: tuning\n", "  labelSelector: {}\n", `ws.yaml:7:18: resource.labelSelector: is required`},
		{"tuning:\n  preset:\n    name: phi-3-mini-4k-instruct\n  method: qlora\n  input:\n    urls: [https://example.com/data.json]\n", "inference:\n  preset:\n    name: phi-3-mini-4k-instruct\n", `ws.yaml:11:3: inference: an inference Workspace is a service`},
		{"  instanceType: Standard_NC24ads_A100_v4\n", "  count: 0\n  instanceType: Standard_NC24ads_A100_v4\n", `ws.yaml:6:10: resource.count: is 0`},
		{"  method: qlora", "  methods: qlora", `ws.yaml:13:3: tuning.methods: unknown field "methods"`},
	} {
		body := strings.Replace(base, c.from, c.to, 1)
		require.NotEqual(t, base, body)
		_, _, err := Parse("ws.yaml", []byte(body))
		require.ErrorContains(t, err, c.want)
	}
}
