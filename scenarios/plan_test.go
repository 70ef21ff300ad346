package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
)

// planScenario has one spot pool with its on-demand price given (12.5/h),
// one on-demand pool at 8/h, and every pricing rule set in the document.
const planScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: plan
  description: the pricing rules travel in the plan
spec:
  horizon: 2h
  cluster:
    pools:
    - name: spotty
      count: 2
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      capacityType: spot
      pricePerHour: 4
      onDemandPricePerHour: 12.5
      interruptions: {mtbf: 48h}
    - name: steady
      count: 1
      gpuModel: A100-80GB
      gpusPerNode: 8
      cpu: "96"
      memory: 1152Gi
      pricePerHour: 8
  pricing:
    idleDistribution: even
    budgets: {train: 300}
    cpuMemoryRates: {cpu: 0.04, memory: 0.005}
    baseRates: {gpu: 0.9, cpu: 0.05, memory: 0.01}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 2}
        pod: {cpu: "4", memory: 16Gi, gpus: 1}
        duration: 30m
`

// Build settles every pricing rule before the run: the plan carries the
// pools' prices with the spot pool's on-demand twin price, the base
// rates, the gpu-residual split's CPU and memory rates, the showback's
// idle rule and budgets, and what the reports name the run. The reports
// read these from the plan, never from the document.
func TestBuildPlanCarriesPricingRules(t *testing.T) {
	s, err := Parse("plan.yaml", "", []byte(planScenario))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	pr := b.Pricing
	require.NotNil(t, pr)
	require.Len(t, pr.Pools, 2)
	assert.Equal(t, 4.0, pr.Pools[0].PerHour)
	assert.Equal(t, "spot", pr.Pools[0].CapacityType)
	assert.Equal(t, 12.5, pr.Pools[0].OnDemandPerHour, "a spot pool's on-demand twin price")
	assert.Equal(t, 8.0, pr.Pools[1].PerHour)
	assert.Equal(t, 0.0, pr.Pools[1].OnDemandPerHour, "an on-demand pool has no twin price")
	assert.Equal(t, 0.9, pr.BaseRates.GPU)
	assert.Equal(t, 0.05, pr.BaseRates.VCPU)
	assert.Equal(t, 0.01, pr.BaseRates.GiB)
	assert.Equal(t, 0.04, pr.CPUMemory.VCPU)
	assert.Equal(t, 0.005, pr.CPUMemory.GiB)
	assert.Equal(t, reports.IdleEven, pr.IdleDistribution)
	assert.Equal(t, map[string]float64{"train": 300}, pr.Budgets)

	m := b.Meta("given/plan.yaml")
	assert.Equal(t, "plan", m.Scenario)
	assert.Equal(t, "given/plan.yaml", m.File)
	assert.Equal(t, "the pricing rules travel in the plan", m.Description)
	assert.Same(t, pr, m.Pricing)
	assert.Equal(t, s.Spec.Output.Start(), m.Start)
}

// Under the opencost split the plan has no CPU and memory rates: the base
// rates alone split a node's price.
func TestBuildPlanOpenCostSplitHasNoCPUMemoryRates(t *testing.T) {
	s, err := Parse("plan.yaml", "", []byte(planScenario))
	require.NoError(t, err)
	s.Spec.Pricing.Split = SplitOpenCost
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	assert.Zero(t, b.Pricing.CPUMemory.VCPU)
	assert.Zero(t, b.Pricing.CPUMemory.GiB)
}

// A pricing rule the document gets wrong fails the build, before any run.
func TestBuildRefusesBadPricingRule(t *testing.T) {
	s, err := Parse("plan.yaml", "", []byte(planScenario))
	require.NoError(t, err)
	s.Spec.Pricing.IdleDistribution = "weighted"
	_, err = s.Build(Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.pricing.idleDistribution")
}

// A loaded scenario is read-only: everything building it reads (the price
// catalog, Karpenter's catalog for NodePools) was read as it loaded, so
// building it, as every worker of a run does at once, changes nothing in
// it; and a copy (the all-on-demand twin) shares what was read.
func TestLoadedScenarioIsReadOnly(t *testing.T) {
	s, err := Parse("s.yaml", "", []byte(spotPriceScenario))
	require.NoError(t, err)
	require.NotNil(t, s.cat, "the price catalog is read as the scenario loads")
	require.NotNil(t, s.karp, "Karpenter's catalog is read as a scenario with NodePools loads")
	before := *s
	for range 2 {
		b, err := s.Build(Options{})
		require.NoError(t, err)
		require.NoError(t, b.Close())
	}
	assert.Equal(t, before, *s, "Build changed the scenario")
	od, err := s.OnDemandOnly()
	require.NoError(t, err)
	assert.Same(t, s.cat, od.cat)
	assert.Same(t, s.karp, od.karp)
	assert.Equal(t, s.pos, od.pos)
}
