package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
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

// zonedServices: one-node pools in zones z1 (4 GPUs), z2 and z3 (2 each),
// and a service of 8 one-GPU replicas, maxSkew 1 over the zones.
const zonedService = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: zoned}
spec:
  horizon: 1h
  cluster:
    pools:
    - {name: a, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi, topology: {zones: [z1]}}
    - {name: b, count: 1, gpuModel: A100-80GB, gpusPerNode: 2, cpu: "64", memory: 512Gi, topology: {zones: [z2]}}
    - {name: c, count: 1, gpuModel: A100-80GB, gpusPerNode: 2, cpu: "64", memory: 512Gi, topology: {zones: [z3]}}
  workload:
    services:
    - name: web
      pod: {cpu: "4", memory: 16Gi, gpus: 1}
      gpuModel: A100-80GB
      replicas: {min: 8, max: 8, initial: 8}
      load: {constant: 10}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: %s, labelSelector: {matchLabels: {app: web}}}
`

// The service's own constraints, by hand as for a Job: under
// DoNotSchedule z2 and z3 fill at 2 replicas and z1 stops at 3 (a fourth
// there would be 4 against 2): 7 replicas hold GPUs, z1:z2:z3 = 3:2:2.
// ScheduleAnyway places the eighth in z1: 4:2:2. The replicas' labels
// default to app: NAME, which the selector matches.
func TestServiceSpreadOwnSpec(t *testing.T) {
	for _, c := range []struct {
		when string
		want [3]int64
	}{{"DoNotSchedule", [3]int64{3, 2, 2}}, {"ScheduleAnyway", [3]int64{4, 2, 2}}} {
		b, err := buildSvc(t, strings.Replace(zonedService, "%s", c.when, 1))
		require.NoError(t, err)
		sv := b.Config.Services[0]
		require.Equal(t, map[string]string{"app": "web"}, sv.Pod.Labels.Labels)
		res, err := sim.Run(b.Config)
		require.NoError(t, err)
		var held [3]int64
		for _, u := range res.Services[0].Usage {
			held[u.Pool] += u.Held[0]
		}
		// Every replica holds its GPU from the start to the end: held
		// milli-GPU ms per pool is GPUs x 1000 x horizon.
		var got [3]int64
		for i, h := range held {
			require.Zero(t, h%(1000*3_600_000), "pool %d held %d", i, h)
			got[i] = h / (1000 * 3_600_000)
		}
		require.Equal(t, c.want, got, c.when)
	}
	_, err := buildSvc(t, strings.NewReplacer("%s", "DoNotSchedule", "maxSkew: 1", "maxSkew: -1").Replace(zonedService))
	require.Error(t, err)
	require.Regexp(t, `^svc\.yaml:\d+:\d+: spec\.workload\.services\[0\]\.topologySpreadConstraints\[0\]\.maxSkew: -1: must be greater than zero`, err.Error())
}

// Required pod anti-affinity from a Deployment: one replica per node.
// Three one-node pools of 4 GPUs, 4 one-GPU replicas: MostAllocated alone
// packs all 4 on the first node; with the anti-affinity to app=web on
// kubernetes.io/hostname each node takes one (1/1/1 GPUs held for the
// hour) and the fourth replica waits. The preferred term is noted.
func TestServiceAntiAffinityFromDeployment(t *testing.T) {
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: anti}
spec:
  horizon: 1h
  cluster:
    pools:
    - {name: a, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi}
    - {name: b, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi}
    - {name: c, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi}
  workload:
    services:
    - name: web
      manifests: [antiaffinity-deployment.yaml]
      gpuModel: A100-80GB
      replicas: {min: 4, max: 4, initial: 4}
      load: {constant: 10}
`
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	require.Contains(t, b.Config.Plugins, scheduler.PluginConfig{Name: "InterPodAffinity"})
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "preferredDuringSchedulingIgnoredDuringExecution: preferences are not modelled")
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	var held [3]int64
	for _, u := range res.Services[0].Usage {
		held[u.Pool] += u.Held[0]
	}
	require.Equal(t, [3]int64{1000 * 3_600_000, 1000 * 3_600_000, 1000 * 3_600_000}, held)
}

// A Deployment's required node affinity reaches its replicas (it was
// dropped without a word): of three 4-GPU pools only b carries
// tier=serve, so the four one-GPU replicas all run there, 4 x 1 h = 4
// GPU-hours held on b and none on a or c; the preference is noted as not
// modelled. An operator the API server refuses is an error at its line.
func TestServiceNodeAffinityFromDeployment(t *testing.T) {
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: pinned}
spec:
  horizon: 1h
  cluster:
    pools:
    - {name: a, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi}
    - {name: b, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi, labels: {tier: serve}}
    - {name: c, count: 1, gpuModel: A100-80GB, gpusPerNode: 4, cpu: "64", memory: 512Gi}
  workload:
    services:
    - name: web
      manifests: [nodeaffinity-deployment.yaml]
      gpuModel: A100-80GB
      replicas: {min: 4, max: 4, initial: 4}
      load: {constant: 10}
`
	b, err := buildSvc(t, body)
	require.NoError(t, err)
	require.Equal(t, []cluster.NodeSelectorTerm{{{Key: "tier", Op: cluster.OpIn, Values: []string{"serve"}}}}, b.Config.Services[0].Constraints.Affinity)
	require.Contains(t, strings.Join(b.Assumptions, "\n"), "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: preferences are not modelled")
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	var held [3]int64
	for _, u := range res.Services[0].Usage {
		held[u.Pool] += u.Held[0]
	}
	require.Equal(t, [3]int64{0, 4 * 1000 * 3_600_000, 0}, held)
}
