package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPodMixKeepsTheCommonShapes(t *testing.T) {
	a := PodShape{MilliCPU: 8000, GPUs: 1, GPUMilli: 1000}
	b := PodShape{MilliCPU: 4000, GPUs: 1, GPUMilli: 500}
	c := PodShape{MilliCPU: 2000}
	d := PodShape{MilliCPU: 1000, GPUs: 8, GPUMilli: 1000}
	// 60 + 25 + 10 = 95 of 100 pods: d (5) is left out, shares renormalised over 95.
	m, err := NewPodMix(map[PodShape]int{a: 60, b: 25, c: 10, d: 5}, 0.95)
	require.NoError(t, err)
	require.Equal(t, []PodShape{a, b, c}, m.Shapes)
	require.InDeltaSlice(t, []float64{60.0 / 95, 25.0 / 95, 10.0 / 95}, m.Weights, 1e-12)
	m, err = NewPodMix(map[PodShape]int{a: 60, b: 25, c: 10, d: 5}, 1)
	require.NoError(t, err)
	require.Len(t, m.Shapes, 4)
	_, err = NewPodMix(nil, 0.95)
	require.Error(t, err)
}

// Worked by hand. A node with 8 CPUs and GPUs free [1000, 500, 200, 0]:
// idle = 1700 milli.
//   - whole 1-GPU pod, 4 CPUs: fits (GPU 0); GPUs below 1000 free: 500+200+0 = 700.
//   - 2 whole GPUs: only one GPU is whole: all 1700 is fragment.
//   - a 600-milli share, 16 CPUs: not enough CPU: 1700.
//   - a 300-milli share, 1 CPU: fits; GPUs below 300 free: 200 + 0 = 200.
//   - CPU-only pod: uses no GPU: 1700.
//
// With shares 0.4, 0.1, 0.1, 0.3, 0.1:
//
//	0.4*700 + 0.1*1700 + 0.1*1700 + 0.3*200 + 0.1*1700 = 280+170+170+60+170 = 850.
func TestFragmentationByHand(t *testing.T) {
	mix := &PodMix{
		Shapes: []PodShape{
			{MilliCPU: 4000, GPUs: 1, GPUMilli: 1000},
			{MilliCPU: 4000, GPUs: 2, GPUMilli: 1000},
			{MilliCPU: 16000, GPUs: 1, GPUMilli: 600},
			{MilliCPU: 1000, GPUs: 1, GPUMilli: 300},
			{MilliCPU: 1000},
		},
		Weights: []float64{0.4, 0.1, 0.1, 0.3, 0.1},
	}
	n := NodeState{MilliCPU: 8000, GPUFree: []int32{1000, 500, 200, 0}, Model: "T4"}
	require.InDelta(t, 850, Fragmentation(n, mix), 1e-9)

	// A model the shapes may not use fragments everything.
	only := &PodMix{Shapes: []PodShape{{MilliCPU: 1, GPUs: 1, GPUMilli: 1000, Models: "V100M16|V100M32"}}, Weights: []float64{1}}
	require.InDelta(t, 1700, Fragmentation(n, only), 1e-9)
	n.Model = "V100M32"
	require.InDelta(t, 700, Fragmentation(n, only), 1e-9)
	require.Zero(t, Fragmentation(NodeState{MilliCPU: 8000, GPUFree: []int32{0, 0}}, mix))
	require.InDelta(t, 0.5, Sigmoid(0), 1e-12)
}
