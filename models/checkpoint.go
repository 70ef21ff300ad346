package models

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// YoungInterval is Young's (1974) first-order optimum checkpoint interval
// sqrt(2 delta M) for checkpoint cost delta and mean time between
// interruptions M (any one time unit).
func YoungInterval(delta, mtbf float64) float64 { return math.Sqrt(2 * delta * mtbf) }

// DalyInterval is Daly's (2006, eq. 37) higher-order optimum: for delta <
// 2M, sqrt(2 delta M) [1 + (1/3) sqrt(delta/2M) + (1/9) (delta/2M)] - delta;
// otherwise M.
func DalyInterval(delta, mtbf float64) float64 {
	if delta >= 2*mtbf {
		return mtbf
	}
	x := delta / (2 * mtbf)
	return math.Sqrt(2*delta*mtbf)*(1+math.Sqrt(x)/3+x/9) - delta
}

// DalyExpectedTime is the expected wall time to complete work w with
// checkpoints every tau of work, each costing delta, a restart costing r,
// and interruptions exponential with mean M, in Daly's (2006) model:
// M e^(r/M) (e^((tau+delta)/M) - 1) w/tau.
func DalyExpectedTime(w, tau, delta, r, mtbf float64) float64 {
	return mtbf * math.Exp(r/mtbf) * math.Expm1((tau+delta)/mtbf) * w / tau
}

// ParabolaVertex fits y = a + b x + c x^2 to the points by least squares
// and returns the x of its vertex; ok is false when the fit does not open
// upwards (no minimum) or the points are too few.
func ParabolaVertex(x, y []float64) (vertex float64, ok bool) {
	if len(x) < 3 || len(x) != len(y) {
		return 0, false
	}
	a := mat.NewDense(len(x), 3, nil)
	for i, v := range x {
		a.Set(i, 0, 1)
		a.Set(i, 1, v)
		a.Set(i, 2, v*v)
	}
	var coef mat.VecDense
	if err := coef.SolveVec(a, mat.NewVecDense(len(y), append([]float64(nil), y...))); err != nil {
		return 0, false
	}
	b, c := coef.AtVec(1), coef.AtVec(2)
	if !(c > 0) {
		return 0, false
	}
	return -b / (2 * c), true
}
