package models

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
)

func sampleMean(t *testing.T, s Sampler, n int) float64 {
	t.Helper()
	r := NewStream(7, 1)
	x := make([]float64, n)
	for i := range x {
		x[i] = s.Sample(r)
	}
	return stat.Mean(x, nil)
}

func TestSampleMeansMatchTheory(t *testing.T) {
	const n = 200000
	// Relative standard error of a mean of n draws is cv/sqrt(n); tolerances are ~5 standard errors.
	require.InEpsilon(t, 3.0, sampleMean(t, Exponential{MeanValue: 3}, n), 5/math.Sqrt(n))
	ln := LogNormal{Median: 2, Sigma: 0.5}
	require.InDelta(t, 2*math.Exp(0.125), ln.Mean(), 1e-12)
	cv := math.Sqrt(math.Exp(0.25) - 1)
	require.InEpsilon(t, ln.Mean(), sampleMean(t, ln, n), 5*cv/math.Sqrt(n))
	require.InEpsilon(t, 5.0, sampleMean(t, Uniform{Min: 0, Max: 10}, n), 0.01)
}

func TestChoiceFrequencies(t *testing.T) {
	c, err := NewChoice([]float64{1, 2, 8}, []float64{0.5, 0, 1.5})
	require.NoError(t, err)
	require.InDelta(t, 0.25*1+0.75*8, c.Mean(), 1e-12)
	r := NewStream(1, 1)
	counts := map[float64]int{}
	const n = 100000
	for i := 0; i < n; i++ {
		counts[c.Sample(r)]++
	}
	require.Zero(t, counts[2], "a zero-weight value is never drawn")
	require.InDelta(t, 0.25, float64(counts[1])/n, 0.01)

	_, err = NewChoice(nil, nil)
	require.Error(t, err)
	_, err = NewChoice([]float64{1}, []float64{1, 2})
	require.Error(t, err)
	_, err = NewChoice([]float64{1}, []float64{0})
	require.Error(t, err)
}

func TestStreamsAreReproducible(t *testing.T) {
	a, b := NewStream(42, 3), NewStream(42, 3)
	for i := 0; i < 10; i++ {
		require.Equal(t, a.Uint64(), b.Uint64())
	}
	require.NotEqual(t, NewStream(42, 3).Uint64(), NewStream(42, 4).Uint64())
}
