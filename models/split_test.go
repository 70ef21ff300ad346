package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The rates of a vCPU and a GiB from three GPU-less instances with the
// same vCPUs and 2, 4 and 8 GiB a vCPU (c7i, m7i, r7i .large in
// us-east-1: $0.08925, $0.1008, $0.1323): no two rates fit all three
// exactly, and the fit stays within 5% of each; two rows that are exactly
// linear are fitted exactly.
func TestFitCPUMemoryRatesThreeRows(t *testing.T) {
	r, ok := FitCPUMemoryRates([]InstancePrice{
		{VCPUs: 2, GiB: 4, PerHour: 0.08925},
		{VCPUs: 2, GiB: 8, PerHour: 0.1008},
		{VCPUs: 2, GiB: 16, PerHour: 0.1323},
	})
	require.True(t, ok)
	// Residuals are within 5% of every price.
	for _, row := range [][3]float64{{2, 4, 0.08925}, {2, 8, 0.1008}, {2, 16, 0.1323}} {
		require.InEpsilon(t, row[2], r.VCPU*row[0]+r.GiB*row[1], 0.05)
	}
	// Two rows that are exactly linear are fitted exactly: $0.04 a vCPU,
	// $0.005 a GiB.
	r, ok = FitCPUMemoryRates([]InstancePrice{{VCPUs: 2, GiB: 4, PerHour: 0.1}, {VCPUs: 4, GiB: 32, PerHour: 0.32}})
	require.True(t, ok)
	require.InDelta(t, 0.04, r.VCPU, 1e-12)
	require.InDelta(t, 0.005, r.GiB, 1e-12)
}

// The GPU split by hand, with the rates fitted over the embedded c7i, m7i
// and r7i prices (vCPU $0.036990451, GiB $0.0035796845 an hour; the fit is
// checked in scenarios):
//
//	p5.48xlarge, $55.04, 8 H100, 192 vCPU, 2048 GiB:
//	  host = 192 x 0.036990451 + 2048 x 0.0035796845 = 7.10217 + 7.33119 = 14.43336
//	  per H100-hour = (55.04 - 14.43336) / 8 = 5.07583; GPUs carry 73.78%
//	g5.12xlarge, $5.672, 4 A10G, 48 vCPU, 192 GiB:
//	  host = 1.775542 + 0.687299 = 2.462841
//	  per A10G-hour = (5.672 - 2.462841) / 4 = 0.802290
//
// OpenCost's default base rates: 0.95 x 8 + 0.031611 x 192 + 0.004237 x
// 2048 = 22.346688, scaled to $55.04 by 2.463005: $2.33985 on each H100
// (34%).
func TestSplitGPUResidualByHand(t *testing.T) {
	r := CPUMemoryRates{VCPU: 0.036990451, GiB: 0.0035796845}
	p5 := SplitGPUResidual(r, DefaultBaseRates(), 55.04, 55.04, 8, 192, 2048)
	require.InDelta(t, 5.07583, p5.PerGPU, 1e-5)
	require.InDelta(t, 0.036990451, p5.PerVCPU, 1e-12)
	require.InDelta(t, 55.04, 8*p5.PerGPU+192*p5.PerVCPU+2048*p5.PerGiB, 1e-9, "the parts add up to the price")
	require.InDelta(t, 0.7378, 8*p5.PerGPU/55.04, 1e-4)
	g5 := SplitGPUResidual(r, DefaultBaseRates(), 5.672, 5.672, 4, 48, 192)
	require.InDelta(t, 0.802290, g5.PerGPU, 1e-5)

	// A spot p5 at $16.512 (70% off): every part at the node's discount.
	spot := SplitGPUResidual(r, DefaultBaseRates(), 16.512, 55.04, 8, 192, 2048)
	require.InDelta(t, 0.3*5.07583, spot.PerGPU, 1e-5)
	require.InDelta(t, 16.512, 8*spot.PerGPU+192*spot.PerVCPU+2048*spot.PerGiB, 1e-9)

	oc := DefaultBaseRates().Split(55.04, 8, 192, 2048)
	require.InDelta(t, 2.33985, oc.PerGPU, 1e-5)
	require.InDelta(t, 0.3401, 8*oc.PerGPU/55.04, 1e-4)

	// No GPUs, or a host dearer than the node: the base rates' ratio.
	require.Equal(t, DefaultBaseRates().Split(1, 0, 4, 16), SplitGPUResidual(r, DefaultBaseRates(), 1, 1, 0, 4, 16))
	require.Equal(t, DefaultBaseRates().Split(0.5, 1, 48, 192), SplitGPUResidual(r, DefaultBaseRates(), 0.5, 0.5, 1, 48, 192))
}

// The published-measurements preset: a preemption every 1.5 to 4 hours,
// an MTBF of sqrt(1.5 x 4) = 2.449 h.
func TestPublishedGPUSpotPreset(t *testing.T) {
	rate, why, err := SpotBandRate(PublishedGPUPreset)
	require.NoError(t, err)
	require.InDelta(t, 1/2.449490, rate, 1e-6)
	require.Contains(t, why, "NSDI '24")
	_, _, err = SpotBandRate("published")
	require.ErrorContains(t, err, `nor "published-gpu-2023"`)
}
