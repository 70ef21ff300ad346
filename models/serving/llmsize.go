package serving

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// LLMSLO is a service's latency objective: p95 TTFT and p95 TPOT, ms.
type LLMSLO struct{ TTFTP95Ms, TPOTP95Ms float64 }

// LLMSizing is how many replicas serve a rate within an SLO, and what it
// costs.
type LLMSizing struct {
	// Replicas each serve rate / Replicas (requests spread at random, as
	// a Kubernetes Service does: each replica's arrivals Poisson).
	Replicas int
	// PerReplica is one replica's steady state (the fast model).
	PerReplica LLMSteady
	// FastReplicas is the count the fast model found; the exact model
	// (a window of ConfirmRequests at each replica's rate) confirmed
	// Replicas, with its p95s ExactTTFTP95Ms and ExactTPOTP95Ms.
	FastReplicas                   int
	ExactTTFTP95Ms, ExactTPOTP95Ms float64
	// GPUs is Replicas x TP; OutputTokensPerGPUSecond what each GPU
	// serves of output tokens.
	GPUs                     int
	OutputTokensPerGPUSecond float64
	// USDPerMillionOutput and USDPerMillionTokens (prompt and output
	// together) at the GPU-hour price given.
	USDPerMillionOutput, USDPerMillionTokens float64
}

// maxSizingReplicas bounds the search.
const maxSizingReplicas = 100_000

// ConfirmRequests is the exact model's window that confirms a sizing.
const ConfirmRequests = 4000

// SizeLLM is the fewest replicas of cfg that serve rate (requests a
// second) with both p95s within slo, and their cost at usdPerGPUHour.
// The fast model (SteadyLLM) finds a count; as it is optimistic near a
// replica's capacity (held to the exact model to 63-80% of it), the
// exact model then serves ConfirmRequests requests at each replica's
// rate (drawn from seed) and adds replicas until its p95s are within
// the SLO too.
func SizeLLM(cfg LLMConfig, rate float64, in, out TokenDist, slo LLMSLO, usdPerGPUHour float64, seed uint64) (LLMSizing, error) {
	if !(rate > 0) || !(slo.TTFTP95Ms > 0) || !(slo.TPOTP95Ms > 0) || usdPerGPUHour < 0 {
		return LLMSizing{}, fmt.Errorf("rate, the SLO's p95s must be positive and the price not negative")
	}
	ok := func(n int) (LLMSteady, bool, error) {
		st, err := SteadyLLM(cfg, rate/float64(n), in, out)
		if errors.Is(err, ErrLLMOverload) {
			return st, false, nil
		}
		return st, err == nil && st.TTFTP95Ms <= slo.TTFTP95Ms && st.TPOTP95Ms <= slo.TPOTP95Ms, err
	}
	// Double to a fit, then bisect: more replicas never do worse.
	hi := 1
	for {
		_, fit, err := ok(hi)
		if err != nil {
			return LLMSizing{}, err
		}
		if fit {
			break
		}
		if hi >= maxSizingReplicas {
			return LLMSizing{}, fmt.Errorf("no count of replicas up to %d meets p95 TTFT %g ms and TPOT %g ms (one replica alone: is the SLO below an idle step?)", maxSizingReplicas, slo.TTFTP95Ms, slo.TPOTP95Ms)
		}
		hi = min(2*hi, maxSizingReplicas)
	}
	lo := hi / 2 // fails (or 0)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, fit, err := ok(mid)
		if err != nil {
			return LLMSizing{}, err
		}
		if fit {
			hi = mid
		} else {
			lo = mid
		}
	}
	fast := hi
	var ttft, tpot float64
	for n := hi; ; n++ {
		if n > 2*fast+10 {
			return LLMSizing{}, fmt.Errorf("the exact model does not confirm the fast model's %d replicas up to %d", fast, n-1)
		}
		reqs := PoissonLLMRequests(rand.New(rand.NewPCG(seed, uint64(n))), rate/float64(n), ConfirmRequests, in, out)
		ex, err := SimulateLLM(cfg, reqs)
		if err != nil {
			return LLMSizing{}, err
		}
		ttft, tpot = InterpQuantile(ex.TTFTMs, 0.95), InterpQuantile(ex.TPOTMs, 0.95)
		if ttft <= slo.TTFTP95Ms && tpot <= slo.TPOTP95Ms {
			hi = n
			break
		}
	}
	st, _, _ := ok(hi)
	tp := cfg.Engine.GPUs()
	eIn := meanOf(in.quantilePoints(16), func(x float64) float64 { return x })
	eOut := meanOf(out.quantilePoints(24), func(x float64) float64 { return x })
	s := LLMSizing{Replicas: hi, PerReplica: st, GPUs: hi * tp, FastReplicas: fast, ExactTTFTP95Ms: ttft, ExactTPOTP95Ms: tpot}
	outPerSec := rate * eOut
	s.OutputTokensPerGPUSecond = outPerSec / float64(s.GPUs)
	dollarsPerSec := float64(s.GPUs) * usdPerGPUHour / 3600
	s.USDPerMillionOutput = dollarsPerSec / outPerSec * 1e6
	s.USDPerMillionTokens = dollarsPerSec / (rate * (eIn + eOut)) * 1e6
	if math.IsNaN(s.USDPerMillionOutput) {
		return LLMSizing{}, fmt.Errorf("no output tokens")
	}
	return s, nil
}
