package models

import (
	"math"
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
