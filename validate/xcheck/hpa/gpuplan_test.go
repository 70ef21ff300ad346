package hpa

import (
	"fmt"

	"gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/sim/autoscale"
	"sigs.k8s.io/yaml"
)

// gpuplanSpec is the spec gpuplan's manifest importer reads from the
// case's HorizontalPodAutoscaler, written as a user writes it.
func gpuplanSpec(c *hpaCase) (autoscale.HPASpec, error) {
	doc, err := yaml.Marshal(c.manifest())
	if err != nil {
		return autoscale.HPASpec{}, err
	}
	set, err := services.Read(c.name+".yaml", doc)
	if err != nil {
		return autoscale.HPASpec{}, err
	}
	if len(set.HPAs) != 1 {
		return autoscale.HPASpec{}, fmt.Errorf("gpuplan read %d HorizontalPodAutoscalers, want 1", len(set.HPAs))
	}
	return set.HPAs[0].Spec, nil
}

// runGpuplan syncs gpuplan's HPA every 15 s on the case's observations
// (every pod ready and reporting) and returns the replicas after each
// sync; edit, if given, changes the spec first.
func runGpuplan(c *hpaCase, edit func(*autoscale.HPASpec)) ([]int32, error) {
	spec, err := gpuplanSpec(c)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(&spec)
	}
	h, err := autoscale.NewHPA(spec)
	if err != nil {
		return nil, err
	}
	cur := int(c.initial)
	out := make([]int32, len(c.series))
	for k := range c.series {
		o := autoscale.Observation{Replicas: cur, Ready: cur, Metric: c.observed(k, int32(cur))}
		cur = h.Sync(int64(k)*syncSeconds*1000, o)
		out[k] = int32(cur)
	}
	return out, nil
}

// observed is the metric gpuplan's HPA is given, in the units of the
// target gpuplan read: percent for utilization, the metric's own units
// (milli-units / 1000) otherwise.
func (c *hpaCase) observed(k int, n int32) float64 {
	v := c.perPod(k, n)
	if c.kind == cpuUtilization {
		return float64(v)
	}
	return float64(v) / 1000
}
