package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/podtopologyspread"
)

// A Deployment's topology spread constraints and pod labels reach the
// service's replicas, and the default profile gains PodTopologySpread
// (weight 2, kube-scheduler's); a profile the scenario names without it
// is kept, with an assumption saying the constraints are not honoured.
func TestServiceSpreadFromDeployment(t *testing.T) {
	body := svcCluster + `    services:
    - name: web
      manifests: [spread-deployment.yaml]
      gpuModel: A100-80GB
      load: {constant: 50}
`
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	c := b.Config.Services[0]
	require.Equal(t, map[string]string{"app": "web"}, c.Pod.Labels.Labels)
	require.Equal(t, []cluster.SpreadConstraint{
		{MaxSkew: 1, TopologyKey: cluster.LabelZone, DoNotSchedule: true, MinDomains: 3,
			Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}}},
		{MaxSkew: 2, TopologyKey: cluster.LabelHostname, HonorTaints: true,
			Selector: []cluster.Requirement{{Key: "app", Op: cluster.OpIn, Values: []string{"web"}}}},
	}, c.Constraints.Spread)
	require.Contains(t, b.Config.Plugins, scheduler.PluginConfig{Name: podtopologyspread.Name, Weight: 2})
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "runs with PodTopologySpread")

	named := strings.Replace(body, "  workload:\n", "  scheduler:\n    plugins: [{name: NodeResourcesFit}]\n  workload:\n", 1)
	b, err = buildSvc(t, named)
	require.NoError(t, err)
	require.Equal(t, []scheduler.PluginConfig{{Name: "NodeResourcesFit"}}, b.Config.Plugins)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "topology spread constraints are NOT honoured")

	// Without spread constraints the profile stays the default one.
	b, err = buildSvc(t, strings.Replace(strings.Replace(body, "spread-deployment.yaml", "scaledobject.yaml", 1), "name: web", "name: bert-classifier", 1))
	require.NoError(t, err)
	require.Empty(t, b.Config.Plugins)
}
