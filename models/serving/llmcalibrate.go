package serving

import (
	"errors"
	"fmt"
	"math"
)

// Calibrating the engine model to a measured vLLM server: given what a
// benchmark run measured (vLLM's `vllm bench serve` mean TTFT and mean
// inter-token latency at its request rate and lengths), find the roofline
// whose exact model (SimulateLLM over the same requests) gives the same
// two means. Two figures fit two knobs: the decode step is mostly a fixed
// time per kernel plus the weights read at the memory bandwidth, and the
// measured ITL sets the kernel time (KernelUS) with the bandwidth kept at
// its published efficiency (or the bandwidth, where even no kernel time
// is too slow); the prefill is compute-bound, and the measured TTFT sets
// the TFLOPS. Each is monotone in its knob, so each is a bisection, and
// the two alternate until neither moves (the TTFT holds a step of
// decodes, the ITL a share of prefills).

// LLMMeasured is what a benchmark measured: the mean time to first token
// and the mean inter-token latency (every gap between two tokens of a
// request, over all requests: vLLM's mean_itl_ms), in ms.
type LLMMeasured struct{ TTFTMeanMs, ITLMeanMs float64 }

// LLMFit is a calibration's outcome: the roofline found, and the exact
// model's means with the roofline it started from and with the one found.
type LLMFit struct {
	Roofline      Roofline
	Before, After LLMMeasured
	Iterations    int
}

// ITLMean is the mean inter-token latency of a result: the time from
// each request's first token to its last over the gaps between them,
// summed over the requests (vLLM's mean_itl_ms, token-weighted).
func ITLMean(reqs []LLMRequest, r LLMResult) float64 {
	var gaps, span float64
	for i, q := range reqs {
		if q.Output > 1 {
			gaps += float64(q.Output - 1)
			span += r.TPOTMs[i] * float64(q.Output-1)
		}
	}
	if gaps == 0 {
		return 0
	}
	return span / gaps
}

// measure is the exact model's means over reqs with cfg.
func measure(cfg LLMConfig, reqs []LLMRequest) (LLMMeasured, error) {
	r, err := SimulateLLM(cfg, reqs)
	if err != nil {
		return LLMMeasured{}, err
	}
	return LLMMeasured{TTFTMeanMs: Mean(r.TTFTMs), ITLMeanMs: ITLMean(reqs, r)}, nil
}

// CalibrateLLM fits cfg's roofline (KernelUS, or GBps, to the ITL; TFLOPS
// to the TTFT) so that the exact model over reqs gives want's means
// within 1%. The step model must be the per-kernel roofline.
func CalibrateLLM(cfg LLMConfig, reqs []LLMRequest, want LLMMeasured) (LLMFit, error) {
	cfg = cfg.WithDefaults()
	if cfg.Engine.StepModel != PerKernel {
		return LLMFit{}, errors.New("calibration fits the per-kernel roofline; the step model is another")
	}
	if !(want.TTFTMeanMs > 0) || !(want.ITLMeanMs > 0) || math.IsInf(want.TTFTMeanMs+want.ITLMeanMs, 0) {
		return LLMFit{}, fmt.Errorf("measured means: TTFT %g ms and ITL %g ms must be positive", want.TTFTMeanMs, want.ITLMeanMs)
	}
	before, err := measure(cfg, reqs)
	if err != nil {
		return LLMFit{}, err
	}
	if before.ITLMeanMs == 0 {
		return LLMFit{}, errors.New("no request has more than one output token: no inter-token latency to fit")
	}
	g := &cfg.Engine.GPU
	// bisect sets *knob in [lo, hi] so that f (increasing in the knob
	// when up, else decreasing) meets target.
	bisect := func(knob *float64, lo, hi float64, up bool, f func(LLMMeasured) float64, target float64) error {
		for range 60 {
			*knob = (lo + hi) / 2
			m, err := measure(cfg, reqs)
			if err != nil {
				return err
			}
			if (f(m) < target) == up {
				lo = *knob
			} else {
				hi = *knob
			}
			if hi-lo <= 2e-4*math.Max(hi, 1e-9) {
				break
			}
		}
		*knob = (lo + hi) / 2
		return nil
	}
	itl := func(m LLMMeasured) float64 { return m.ITLMeanMs }
	ttft := func(m LLMMeasured) float64 { return m.TTFTMeanMs }
	// The knobs stay physical: the compute rate and the bandwidth at most
	// 1.5 times the starting roofline's (a published peak times an
	// efficiency), the compute rate at least a twentieth of it.
	tLo, tHi, bHi := g.TFLOPS/20, 1.5*g.TFLOPS, 1.5*g.GBps
	fit := LLMFit{Before: before}
	close := func(m LLMMeasured, tol float64) bool {
		return math.Abs(m.TTFTMeanMs-want.TTFTMeanMs) <= tol*want.TTFTMeanMs && math.Abs(m.ITLMeanMs-want.ITLMeanMs) <= tol*want.ITLMeanMs
	}
	for it := 1; it <= 40; it++ {
		fit.Iterations = it
		// The decode: kernel time first; if even none is too slow, the
		// bandwidth (with no kernel time).
		g.KernelUS = 0
		m, err := measure(cfg, reqs)
		if err != nil {
			return fit, err
		}
		if m.ITLMeanMs <= want.ITLMeanMs {
			if err := bisect(&g.KernelUS, 0, 1000, true, itl, want.ITLMeanMs); err != nil {
				return fit, err
			}
		} else if err := bisect(&g.GBps, g.GBps, bHi, false, itl, want.ITLMeanMs); err != nil {
			return fit, err
		}
		// The prefill: the compute rate (decodes keep theirs).
		if g.DecodeTFLOPS == 0 {
			g.DecodeTFLOPS = g.TFLOPS
		}
		if err := bisect(&g.TFLOPS, tLo, tHi, false, ttft, want.TTFTMeanMs); err != nil {
			return fit, err
		}
		m, err = measure(cfg, reqs)
		if err != nil {
			return fit, err
		}
		if close(m, 0.002) {
			break
		}
	}
	if fit.After, err = measure(cfg, reqs); err != nil {
		return fit, err
	}
	fit.Roofline = *g
	fit.Roofline.Source = fmt.Sprintf("calibrated to a measured vLLM benchmark (mean TTFT %.3g ms, mean ITL %.3g ms) from %s", want.TTFTMeanMs, want.ITLMeanMs, g.Source)
	if !close(fit.After, 0.01) {
		return fit, fmt.Errorf("%w: the closest gives TTFT %.3f ms (measured %.3f) and ITL %.3f ms (measured %.3f)",
			ErrLLMFitResidual, fit.After.TTFTMeanMs, want.TTFTMeanMs, fit.After.ITLMeanMs, want.ITLMeanMs)
	}
	return fit, nil
}

// ErrLLMFitResidual is a calibration whose closest roofline still misses
// a measured mean by more than 1%: the fit it returns is that closest
// one, for a caller that takes it with the gap said.
var ErrLLMFitResidual = errors.New("no roofline gives the measured means")
