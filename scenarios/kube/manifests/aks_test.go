package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

// aksScenario: an AKS cluster given as pools of Azure VM sizes in eastus:
// two A100 nodes on demand in zone 1, three H100 spot nodes in zone 2
// (the measured spot preset, Azure's 30 s notice), an autoscaled A100
// pool of 0 to 2 nodes, with a taint the jobs tolerate; one GPU a job.
const aksScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: aks}
spec:
  horizon: 12h
  pricing: {region: eastus}
  cluster:
    pools:
    - {name: gpunp, count: 2, instanceType: Standard_NC24ads_A100_v4, zone: eastus-1, labels: {team: ml}}
    - {name: spotnp, count: 3, instanceType: Standard_NC40ads_H100_v5, capacityType: spot, zone: eastus-2,
       taints: [{key: kubernetes.azure.com/scalesetpriority, value: spot, effect: NoSchedule}]}
    - {name: burst, count: 0, instanceType: Standard_NC24ads_A100_v4, autoscaling: {minNodes: 0, maxNodes: 2}}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 3}
        pod: {cpu: "8", memory: 64Gi, gpus: 1}
        duration: 90m
        tolerations: [{key: kubernetes.azure.com/scalesetpriority, operator: Exists, effect: NoSchedule}]
`

// TestAKSAgentPoolsRoundTrip: --provider aks writes the pools as AKS
// agent pools in an ARM template (VM size, count, Spot with eviction
// policy Delete, zone number, labels, taints, the autoscaler's bounds),
// and the scenario with its pools replaced by spec.cluster.agentPools
// reading that file gives the same summary, byte for byte. The written
// template holds what a hand check of the scenario gives.
func TestAKSAgentPoolsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sf := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sf, []byte(aksScenario), 0o644))
	s, err := scenarios.LoadFile(sf)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{Provider: ProviderAKS})
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	require.NoError(t, WriteDir(out, files))
	for _, f := range files {
		require.False(t, strings.Contains(f.Path, "karpenter"), "no Karpenter objects for AKS: %s", f.Path)
	}
	arm, err := os.ReadFile(filepath.Join(out, PathAKSAgentPools))
	require.NoError(t, err)
	for _, want := range []string{
		`"vmSize": "Standard_NC40ads_H100_v5"`, `"scaleSetPriority": "Spot"`, `"scaleSetEvictionPolicy": "Delete"`,
		`"availabilityZones": [` + "\n" + `          "2"`, `"kubernetes.azure.com/scalesetpriority=spot:NoSchedule"`,
		`"enableAutoScaling": true`, `"maxCount": 2`, `"team": "ml"`, `"gpuplan.dev/pool": "burst"`,
		`"name": "[format('{0}/{1}', parameters('clusterName'), 'gpunp')]"`, `"defaultValue": "eastus"`,
	} {
		require.Contains(t, string(arm), want)
	}

	back := strings.Replace(aksScenario, aksScenario[strings.Index(aksScenario, "    pools:\n"):strings.Index(aksScenario, "  workload:\n")],
		"    agentPools: {path: out/"+PathAKSAgentPools+"}\n", 1)
	bf := filepath.Join(dir, "back.yaml")
	require.NoError(t, os.WriteFile(bf, []byte(back), 0o644))
	sb, err := scenarios.LoadFile(bf)
	require.NoError(t, err)
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, sb, pipeline.Options{})
	delete(want, "scenario")
	delete(got, "scenario")
	require.Equal(t, want, got)

	// A pool that cannot be an agent pool is refused, naming it.
	bad := strings.Replace(aksScenario, "name: spotnp", "name: spot-h100-pool", 1)
	require.NoError(t, os.WriteFile(sf, []byte(bad), 0o644))
	s, err = scenarios.LoadFile(sf)
	require.NoError(t, err)
	m, err = s.Cluster()
	require.NoError(t, err)
	_, _, err = Generate(s, m, Options{Provider: ProviderAKS})
	require.ErrorContains(t, err, `"spot-h100-pool" is not an AKS agent pool name`)
}

// dumpScenario is an AKS cluster as `kubectl get nodes -o yaml` gives it
// (the hand-made dump with AKS's labels and no GPU feature discovery:
// system, gpunp with 2 A100 nodes, spotnp with 3 spot H100 nodes),
// priced in eastus, running 1-GPU jobs that tolerate the GPU and spot
// taints.
const dumpScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: aks-dump}
spec:
  horizon: 12h
  pricing: {region: eastus}
  cluster:
    nodes: {path: nodes.yaml}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: poisson, ratePerHour: 3}
        pod: {cpu: "8", memory: 64Gi, gpus: 1}
        duration: 90m
        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}, {key: kubernetes.azure.com/scalesetpriority, operator: Exists, effect: NoSchedule}]
      - name: on-spot
        arrival: {process: poisson, ratePerHour: 2}
        pod: {cpu: "8", memory: 64Gi, gpus: 1}
        duration: 1h
        nodeSelector: {kubernetes.azure.com/agentpool: spotnp}
        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}, {key: kubernetes.azure.com/scalesetpriority, operator: Exists, effect: NoSchedule}]
`

// TestAKSNodeDumpRoundTrip is the AKS journey end to end: the
// node dump is simulated and priced, written back with --provider aks as
// agent pools in an ARM template, and the scenario reading that template
// in place of the dump gives the same summary (pools, prices, spot
// eviction model, jobs and cost), byte for byte. A class that selects the
// spot agent pool by AKS's own label lands there after the round trip
// too: reading gives back the labels AKS sets.
func TestAKSNodeDumpRoundTrip(t *testing.T) {
	dir := t.TempDir()
	nodes, err := os.ReadFile("../nodes/testdata/aks-cluster.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes.yaml"), nodes, 0o644))
	sf := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sf, []byte(dumpScenario), 0o644))
	s, err := scenarios.LoadFile(sf)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{Provider: ProviderAKS})
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	require.NoError(t, WriteDir(out, files))
	arm, err := os.ReadFile(filepath.Join(out, PathAKSAgentPools))
	require.NoError(t, err)
	// The system pool's Standard_D4s_v5 is no GPU VM (not in the
	// catalog): its shape from the dump (allocatable 3000m CPU and
	// 8388608Ki, 8 GiB) travels as tags.
	for _, want := range []string{`"vmSize": "Standard_NC40ads_H100_v5"`, `"scaleSetPriority": "Spot"`, `'gpunp')]"`, `'spotnp')]"`,
		`"vmSize": "Standard_D4s_v5"`, `"gpuplan.dev/cpu": "3"`, `"gpuplan.dev/memory": "8Gi"`} {
		require.Contains(t, string(arm), want)
	}
	// AKS refuses its own labels in nodeLabels (the dump's nodes carry
	// them all); the system pool stays a System pool.
	require.NotContains(t, string(arm), `"kubernetes.azure.com/agentpool"`)
	require.NotContains(t, string(arm), `"beta.kubernetes.io/instance-type"`)
	require.Contains(t, string(arm), `"mode": "System"`)
	back := strings.Replace(dumpScenario, "    nodes: {path: nodes.yaml}\n", "    agentPools: {path: out/"+PathAKSAgentPools+"}\n", 1)
	bf := filepath.Join(dir, "back.yaml")
	require.NoError(t, os.WriteFile(bf, []byte(back), 0o644))
	sb, err := scenarios.LoadFile(bf)
	require.NoError(t, err)
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, sb, pipeline.Options{})
	delete(want, "scenario")
	delete(got, "scenario")
	require.NotEmpty(t, want["cost"], "the dump is priced")
	jobs := want["jobs"].(map[string]any)
	require.Zero(t, jobs["byOutcome"].(map[string]any)["unschedulable"], "the class on spotnp finds its nodes by AKS's label")
	require.Equal(t, want, got)
}

// TestAKSDeallocateRoundTrip: a spot pool with evictionPolicy Deallocate
// and maxPrice 5 (above its $2.19 spot price) is written with
// scaleSetEvictionPolicy Deallocate and spotMaxPrice 5 and reads back to the
// same summary, its deallocated node-hours and their disk billing
// included (the measured preset reclaims the spot nodes within 12 h).
func TestAKSDeallocateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	scen := strings.Replace(aksScenario, "capacityType: spot, zone: eastus-2,", "capacityType: spot, zone: eastus-2, evictionPolicy: Deallocate, maxPrice: 5,", 1)
	sf := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(sf, []byte(scen), 0o644))
	s, err := scenarios.LoadFile(sf)
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{Provider: ProviderAKS})
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	require.NoError(t, WriteDir(out, files))
	arm, err := os.ReadFile(filepath.Join(out, PathAKSAgentPools))
	require.NoError(t, err)
	require.Contains(t, string(arm), `"scaleSetEvictionPolicy": "Deallocate"`)
	require.Contains(t, string(arm), `"spotMaxPrice": 5`)

	back := strings.Replace(scen, scen[strings.Index(scen, "    pools:\n"):strings.Index(scen, "  workload:\n")],
		"    agentPools: {path: out/"+PathAKSAgentPools+"}\n", 1)
	bf := filepath.Join(dir, "back.yaml")
	require.NoError(t, os.WriteFile(bf, []byte(back), 0o644))
	sb, err := scenarios.LoadFile(bf)
	require.NoError(t, err)
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, sb, pipeline.Options{})
	delete(want, "scenario")
	delete(got, "scenario")
	require.Equal(t, want, got)
	var spot map[string]any
	for _, l := range want["cost"].(map[string]any)["byPool"].([]any) {
		if l.(map[string]any)["name"] == "spotnp" {
			spot = l.(map[string]any)
		}
	}
	require.NotNil(t, spot)
	require.Greater(t, spot["deallocatedHours"], 0.0)
	require.InDelta(t, spot["deallocatedHours"].(float64)*19.71/730, spot["diskCost"], 1e-4)
}
