package serving

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A replica's capacity in the fast model is where its mean decoding
// requests, lambda x E[output - 1] x the mean step (Little's law), reach
// max_num_seqs: Llama-3-8B on one H100 with chat lengths fills its 256
// seats at about 37.8 requests/s (TestSteadyLLMAgainstExact's figure),
// and 0.6% above the rate found is overload.
func TestLLMCapacity(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	c, err := LLMCapacity(cfg, in, out)
	require.NoError(t, err)
	require.InDelta(t, 37.8, c, 0.4)
	st, err := SteadyLLM(cfg, c, in, out)
	require.NoError(t, err)
	require.InDelta(t, 256, st.Decoding, 256*0.02, "at capacity the seats are full (to the search's 0.5% and the step's growth with the rate)")
	_, err = SteadyLLM(cfg, c*1.006, in, out)
	require.True(t, errors.Is(err, ErrLLMOverload))
}

// The fast model's quantile points are its distributions: sorted, their
// mean the mean, and the 95th percentile between the points either side
// of p = 0.95.
func TestLLMSteadyPoints(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	st, err := SteadyLLM(cfg, 12, in, out)
	require.NoError(t, err)
	for _, c := range []struct {
		pts            []float64
		mean, p50, p95 float64
	}{{st.TTFTPoints, st.TTFTMeanMs, st.TTFTP50Ms, st.TTFTP95Ms}, {st.TPOTPoints, st.TPOTMeanMs, st.TPOTP50Ms, st.TPOTP95Ms}} {
		require.Len(t, c.pts, LLMQuantilePoints)
		require.True(t, slices.IsSorted(c.pts))
		require.InEpsilon(t, c.mean, meanOf(c.pts, func(x float64) float64 { return x }), 0.03)
		require.LessOrEqual(t, c.pts[94], c.p95*1.0001)
		require.GreaterOrEqual(t, c.pts[95], c.p95*0.9999)
		require.LessOrEqual(t, c.pts[49], c.p50*1.0001)
		require.GreaterOrEqual(t, c.pts[50], c.p50*0.9999)
	}
}
