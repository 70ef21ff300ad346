package sweep

import (
	"math/rand/v2"
)

// Point is one setting of every parameter: Values[i] is parameter i's.
type Point struct {
	Index  int
	Values []any
}

// streamDesign is the random stream the designs draw from (with the
// design's seed).
const streamDesign = 0x5eed

// Points lists the design's points in index order. The grid varies the
// last parameter fastest; random draws each parameter's value uniformly;
// the Latin hypercube splits each parameter's values into as many equal
// strata as there are points and puts one point in each stratum, the
// strata of different parameters paired by independent permutations.
func (sw *Sweep) Points() []Point {
	d := sw.Doc.Spec.Design
	n := sw.NumPoints()
	pts := make([]Point, n)
	idx := make([][]int, n)
	switch d.Kind {
	case Random:
		r := rand.New(rand.NewPCG(d.Seed, streamDesign))
		for i := range idx {
			idx[i] = make([]int, len(sw.Params))
			for j, p := range sw.Params {
				idx[i][j] = r.IntN(len(p.Values))
			}
		}
	case LatinHypercube:
		r := rand.New(rand.NewPCG(d.Seed, streamDesign))
		for i := range idx {
			idx[i] = make([]int, len(sw.Params))
		}
		for j, p := range sw.Params {
			perm := r.Perm(n)
			for i := range n {
				u := r.Float64()
				k := int((float64(perm[i]) + u) / float64(n) * float64(len(p.Values)))
				idx[i][j] = min(k, len(p.Values)-1)
			}
		}
	default:
		for i := range idx {
			idx[i] = make([]int, len(sw.Params))
			rest := i
			for j := len(sw.Params) - 1; j >= 0; j-- {
				m := len(sw.Params[j].Values)
				idx[i][j] = rest % m
				rest /= m
			}
		}
	}
	for i := range pts {
		pts[i] = Point{Index: i, Values: make([]any, len(sw.Params))}
		for j, k := range idx[i] {
			pts[i].Values[j] = sw.Params[j].Values[k]
		}
	}
	return pts
}
