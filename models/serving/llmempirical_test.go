package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// An empirical distribution (a request trace's lengths): sorted, its mean,
// shortest and longest; its equally weighted points the means of equal
// shares of the sorted lengths, so their mean is the lengths' own.
// By hand, 1..6 in four shares of 1.5 values each: (1 + 2/2)/1.5 = 4/3,
// (2/2 + 3)/1.5 = 8/3, (4 + 5/2)/1.5 = 13/3, (5/2 + 6)/1.5 = 17/3.
func TestEmpiricalTokens(t *testing.T) {
	d := EmpiricalTokens([]int{5, 1, 3, 3})
	require.Equal(t, TokenDist{Kind: Empirical, Mean: 3, Min: 1, Max: 5, Values: []int{1, 3, 3, 5}}, d)
	require.NoError(t, d.Check())
	require.Equal(t, 5, d.Longest())
	require.Equal(t, []float64{1, 3, 3, 5}, d.quantilePoints(16), "fewer lengths than points: the lengths")
	six := EmpiricalTokens([]int{6, 5, 4, 3, 2, 1})
	pts := six.quantilePoints(4)
	for i, want := range []float64{4.0 / 3, 8.0 / 3, 13.0 / 3, 17.0 / 3} {
		require.InDelta(t, want, pts[i], 1e-12, i)
	}
	require.InDelta(t, 3.5, meanOf(pts, func(x float64) float64 { return x }), 1e-12)
	// Draws are the lengths, each as likely (1/4 for 1 and 5, 1/2 for 3).
	r := rand.New(rand.NewPCG(1, 2))
	n := map[int]int{}
	for range 40_000 {
		n[d.Sample(r)]++
	}
	require.Len(t, n, 3)
	require.InDelta(t, 10_000, n[1], 300)
	require.InDelta(t, 20_000, n[3], 400)
	for _, bad := range []TokenDist{{Kind: Empirical}, {Kind: Empirical, Values: []int{3, 1}}, {Kind: Empirical, Values: []int{0, 1}}, {Kind: Empirical, Values: []int{1, MaxTokens + 1}}} {
		require.Error(t, bad.Check(), bad.Values)
	}
}

// The fast model takes an empirical distribution as it takes any other:
// the lengths of one value are the fixed length, and the 16 points the
// model takes of a normal's prompts, as a trace of 16 prompts, give the
// same steady state to the last bit.
func TestSteadyLLMEmpirical(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	fixed, err := SteadyLLM(cfg, 10, TokenDist{Kind: Fixed, Mean: 512}, TokenDist{Kind: Fixed, Mean: 256})
	require.NoError(t, err)
	emp, err := SteadyLLM(cfg, 10, EmpiricalTokens([]int{512}), EmpiricalTokens([]int{256}))
	require.NoError(t, err)
	require.Equal(t, fixed, emp)
	normal := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	var prompts []int
	for _, x := range normal.quantilePoints(16) {
		prompts = append(prompts, int(x))
	}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	a, err := SteadyLLM(cfg, 20, normal, out)
	require.NoError(t, err)
	b, err := SteadyLLM(cfg, 20, EmpiricalTokens(prompts), out)
	require.NoError(t, err)
	require.Equal(t, a, b)
}
