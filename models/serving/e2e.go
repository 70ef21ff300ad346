package serving

import (
	"math"
	"slices"
)

// End-to-end latency in the fast model. A request's E2E is its TTFT,
// then its other output tokens at its own TPOT, then the API server's
// finishing time: E2E = TTFT + (o - 1) x TPOT_o + finish. The spread is
// mostly the output length's (a 256 +- 128-token output at 14 ms a token
// spans seconds, where TTFT and a request's TPOT spread by tens of ms),
// so E2E is a mixture over a fine grid of output lengths
// (e2eOutputPoints quantiles, to reach p99 of the length), each length's
// TPOT a normal about the mean with its deviation (tpotSD: the steps'
// variance averaged over its o - 1 steps, and the drift), and TTFT
// independent of both (e2eTTFTPoints of its quantile points). The
// mixture's equally weighted points, sorted, give the quantiles.

// Grid sizes of the E2E mixture: output lengths, TPOT nodes (equal
// probability quantiles of a normal, rescaled to unit variance) and
// TTFT points (every fifth of LLMQuantilePoints).
const (
	e2eOutputPoints = 100
	e2eTPOTNodes    = 5
	e2eTTFTStride   = 5
)

// e2eNodes are e2eTPOTNodes standard normal quantiles at (j + 0.5) / n,
// scaled so their variance is 1.
var e2eNodes = func() [e2eTPOTNodes]float64 {
	var z [e2eTPOTNodes]float64
	v := 0.0
	for j := range z {
		z[j] = math.Sqrt2 * math.Erfinv(2*(float64(j)+0.5)/e2eTPOTNodes-1)
		v += z[j] * z[j] / e2eTPOTNodes
	}
	for j := range z {
		z[j] /= math.Sqrt(v)
	}
	return z
}()

// e2e sets s's E2E figures from its TTFT points and TPOT mean (both with
// the API server's per-token times already in), the output lengths out,
// the TPOT deviation sd of an output of o tokens, and the finishing time.
func (s *LLMSteady) e2e(out TokenDist, sd func(o float64) float64, finishMs float64) {
	outs := out.quantilePoints(e2eOutputPoints)
	var ttft []float64
	for i := e2eTTFTStride / 2; i < len(s.TTFTPoints); i += e2eTTFTStride {
		ttft = append(ttft, s.TTFTPoints[i])
	}
	if len(ttft) == 0 {
		return // no steady state (rate 0)
	}
	pts := make([]float64, 0, len(outs)*e2eTPOTNodes*len(ttft))
	sum := 0.0
	for _, o := range outs {
		dev := 0.0
		if o > 1 {
			dev = sd(o)
		}
		for _, z := range e2eNodes {
			dec := (o - 1) * math.Max(s.TPOTMeanMs+z*dev, 0)
			for _, t := range ttft {
				x := t + dec + finishMs
				pts = append(pts, x)
				sum += x
			}
		}
	}
	slices.Sort(pts)
	n := len(pts)
	at := func(p float64) float64 { return pts[min(int(p*float64(n)), n-1)] }
	s.E2EMeanMs = sum / float64(n)
	s.E2EP50Ms, s.E2EP95Ms, s.E2EP99Ms = at(0.50), at(0.95), at(0.99)
	s.E2EPoints = make([]float64, LLMQuantilePoints)
	for i := range s.E2EPoints {
		s.E2EPoints[i] = at((float64(i) + 0.5) / LLMQuantilePoints)
	}
}
