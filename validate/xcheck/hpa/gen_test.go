package hpa

import (
	"fmt"
	"math/rand/v2"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// randomCase is case i of the random check: a metric kind and target,
// replica bounds, a behavior (none, or random scaling rules for either
// direction) and a noisy metric series with steps and spikes, every pod
// ready and reporting.
func randomCase(i int) *hpaCase {
	r := rand.New(rand.NewPCG(26, uint64(i)))
	c := &hpaCase{name: fmt.Sprintf("random-%03d", i), kind: metricKind(r.IntN(4))}
	c.min = int32(1 + r.IntN(3))
	c.max = c.min + int32(2+r.IntN(28))
	c.initial = c.min + int32(r.IntN(int(c.max-c.min)+1))
	if r.IntN(10) == 0 {
		// Outside the bounds (a hand edit, or bounds changed): the
		// controller brings it back first.
		c.initial = c.max + int32(1+r.IntN(5))
	}
	if c.kind == cpuUtilization {
		c.target = int64(30 + r.IntN(61)) // percent
	} else {
		c.target = int64(50 * (2 + r.IntN(39))) // 100m .. 2000m
	}
	if r.IntN(4) > 0 {
		c.behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: randomRules(r), ScaleDown: randomRules(r)}
	}
	c.series = randomSeries(r, c)
	return c
}

func randomRules(r *rand.Rand) *autoscalingv2.HPAScalingRules {
	if r.IntN(4) == 0 {
		return nil // the API server's defaults for this direction
	}
	x := &autoscalingv2.HPAScalingRules{}
	switch r.IntN(4) {
	case 0:
	case 1:
		s := int32(0)
		x.StabilizationWindowSeconds = &s
	case 2:
		s := int32(15 * (1 + r.IntN(24)))
		x.StabilizationWindowSeconds = &s
	default:
		s := int32(5 * (1 + r.IntN(120)))
		x.StabilizationWindowSeconds = &s
	}
	if r.IntN(5) > 0 {
		for range 1 + r.IntN(3) {
			p := autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: int32(1 + r.IntN(8))}
			if r.IntN(2) == 0 {
				p = autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: int32(10 * (1 + r.IntN(20)))}
			}
			if r.IntN(2) == 0 {
				p.PeriodSeconds = int32(15 * (1 + r.IntN(20)))
			} else {
				p.PeriodSeconds = int32(1 + r.IntN(600))
			}
			x.Policies = append(x.Policies, p)
		}
	}
	if n := r.IntN(5); n < 3 {
		s := []autoscalingv2.ScalingPolicySelect{autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect}[n]
		x.SelectPolicy = &s
	}
	if r.IntN(3) == 0 {
		q := resource.MustParse([]string{"0", "20m", "50m", "100m", "150m", "250m"}[r.IntN(6)])
		x.Tolerance = &q
	}
	return x
}

// randomSeries: 40 to 120 syncs of a level around the target (per pod, or
// for the whole load), noise up to 15%, a few steps and spikes.
func randomSeries(r *rand.Rand, c *hpaCase) []int64 {
	n := 40 + r.IntN(81)
	level := func() float64 {
		ratio := 0.2 + 2.3*r.Float64()
		switch c.kind {
		case podsLoad:
			// The whole load: ratio x target x some replicas.
			return ratio * float64(c.target) * float64(c.min+int32(r.IntN(int(c.max-c.min)+1)))
		case objectValue:
			return ratio * float64(c.target) * float64(c.min+int32(r.IntN(int(c.max-c.min)+1))) / 2
		}
		return ratio * float64(c.target)
	}
	cur := level()
	out := make([]int64, n)
	for k := range out {
		if r.IntN(12) == 0 {
			cur = level() // a step
		}
		v := cur * (1 + 0.15*(2*r.Float64()-1))
		if r.IntN(25) == 0 {
			v *= 2 + 3*r.Float64() // a spike
		}
		if c.kind == podsLoad && r.IntN(30) == 0 {
			v = 0 // no load at all
		}
		out[k] = int64(v)
	}
	return out
}
