package models

import (
	"fmt"
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

// Spot interruption bands of the AWS Spot Instance Advisor: the share of
// instances of a type interrupted in the trailing month.
// Each band is read as a monthly interruption probability: its upper edge
// (>20% is read as 25%).
type spotBand struct {
	label   string
	monthly float64
}

func spotBands() [5]spotBand {
	return [5]spotBand{{"<5%", 0.05}, {"5-10%", 0.10}, {"10-15%", 0.15}, {"15-20%", 0.20}, {">20%", 0.25}}
}

// SpotBandLabels lists the Spot Advisor band labels, lowest first.
func SpotBandLabels() []string {
	bands := spotBands()
	out := make([]string, len(bands))
	for i, b := range bands {
		out[i] = b.label
	}
	return out
}

// HoursPerMonth is the month the Spot Advisor's trailing window is read as.
const HoursPerMonth = 720

// SpotBandRate converts a Spot Advisor band (its label or index 0-4) into
// an exponential interruption rate per node-hour: a monthly probability p
// (the band's upper edge) gives lambda = -ln(1-p)/720 h. It also returns the
// assumption in words, for the report.
func SpotBandRate(band string) (perHour float64, assumption string, err error) {
	for i, b := range spotBands() {
		if band == b.label || band == fmt.Sprint(i) {
			rate := -math.Log1p(-b.monthly) / HoursPerMonth
			return rate, fmt.Sprintf("AWS Spot Advisor band %s read as %.0f%% of nodes interrupted per 720 h month: exponential, MTBF %.0f h", b.label, b.monthly*100, 1/rate), nil
		}
	}
	return 0, "", fmt.Errorf("spot band %q is not one of %v (or 0-4)", band, SpotBandLabels())
}
