package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Calibration recovers a roofline it is not told: requests served by an
// H100 whose kernels take 12 us (not the default 24) and whose prefill
// runs at 600 TFLOPS (not 750) give a mean TTFT and ITL; fitted from the
// default H100 roofline, the calibration finds 12 us and 600 TFLOPS.
func TestCalibrateLLMRecoversTheRoofline(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	reqs := PoissonLLMRequests(rand.New(rand.NewPCG(5, 7)), 8, 300,
		TokenDist{Kind: Normal, Mean: 1500, StdDev: 600, Min: 100, Max: 4000}, TokenDist{Kind: Normal, Mean: 200, StdDev: 80, Min: 2, Max: 600})
	truth := cfg
	truth.Engine.GPU.KernelUS, truth.Engine.GPU.TFLOPS = 12, 600
	want, err := measure(truth, reqs)
	require.NoError(t, err)
	fit, err := CalibrateLLM(cfg, reqs, want)
	require.NoError(t, err)
	t.Logf("fitted kernel %.3f us, %.1f TFLOPS in %d rounds; before TTFT %.2f ITL %.3f, after %.2f %.3f, measured %.2f %.3f",
		fit.Roofline.KernelUS, fit.Roofline.TFLOPS, fit.Iterations, fit.Before.TTFTMeanMs, fit.Before.ITLMeanMs, fit.After.TTFTMeanMs, fit.After.ITLMeanMs, want.TTFTMeanMs, want.ITLMeanMs)
	require.InEpsilon(t, 12, fit.Roofline.KernelUS, 0.02)
	require.InEpsilon(t, 600, fit.Roofline.TFLOPS, 0.02)
	require.Greater(t, fit.Before.ITLMeanMs, 1.1*want.ITLMeanMs, "the default roofline was off before")
}

// Measured means no roofline can give are refused with the closest.
func TestCalibrateLLMRefusesTheImpossible(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	reqs := []LLMRequest{{Input: 100, Output: 10}}
	_, err := CalibrateLLM(cfg, reqs, LLMMeasured{TTFTMeanMs: 1e-6, ITLMeanMs: 5})
	require.ErrorContains(t, err, "no roofline gives the measured means")
	_, err = CalibrateLLM(cfg, reqs, LLMMeasured{TTFTMeanMs: 0, ITLMeanMs: 5})
	require.ErrorContains(t, err, "must be positive")
}
