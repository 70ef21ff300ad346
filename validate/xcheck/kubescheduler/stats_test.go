package kubescheduler

import (
	"math"
	"slices"
	"testing"
)

// mannWhitney is the two-sided p-value of the Mann-Whitney U test of x
// against y: the normal approximation with average ranks for ties, the
// tie correction of the variance and a continuity correction of 0.5.
// When every value is equal it returns 1.
func mannWhitney(x, y []float64) float64 {
	type obs struct {
		v  float64
		in bool // from x
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	n1, n2, n := float64(len(x)), float64(len(y)), float64(len(all))
	var r1, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // ranks i+1..j, averaged
		for k := i; k < j; k++ {
			if all[k].in {
				r1 += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	u := r1 - n1*(n1+1)/2
	mean := n1 * n2 / 2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	d := math.Abs(u-mean) - 0.5
	if d < 0 {
		d = 0
	}
	return math.Erfc(d / sigma / math.Sqrt2)
}

// The test's arithmetic against hand-worked figures.
func TestMannWhitney(t *testing.T) {
	// {1,2,3} against {4,5,6}: U = 0, mean 4.5, sigma = sqrt(9/12 x 7) =
	// 2.2913, z = (4.5 - 0.5)/2.2913 = 1.7457, p = erfc(1.7457/sqrt 2) =
	// 0.0809.
	if p := mannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6}); math.Abs(p-0.0809) > 5e-4 {
		t.Errorf("separated samples: p = %.4f, want 0.0809", p)
	}
	// {1,2,2} against {2,3}: ranks 1, 3, 3 | 3, 5; R1 = 7, U = 1, mean
	// 3; ties: one group of 3 (24); sigma = sqrt(6/12 x (6 - 24/20)) =
	// sqrt(2.4) = 1.5492; z = (2 - 0.5)/1.5492 = 0.9682, p = 0.3329.
	if p := mannWhitney([]float64{1, 2, 2}, []float64{2, 3}); math.Abs(p-0.3329) > 5e-4 {
		t.Errorf("tied samples: p = %.4f, want 0.3329", p)
	}
	if p := mannWhitney([]float64{7, 7}, []float64{7, 7, 7}); p != 1 {
		t.Errorf("equal samples: p = %g, want 1", p)
	}
}
