package reports

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// cheaperDropping is servedRun (see it) on a node at $6 an hour instead
// of $8, whose service served only half its requests, 18 million, and
// dropped the rest: a variant whose bill is lower for less work.
//
// By hand: the base rates split $6 as they split $8, times 6/8: $2.25 a
// GPU-hour and $0.1875 a vCPU-hour. The job pays 4 x (2.25 + 2 x 0.1875)
// = $10.50, the replica 10 x (2.25 + 4 x 0.1875) = $30; the bill is 10 x
// $6 = $60, $19.50 idle. Showback by allocation: 1,950 idle cents over
// 10.5:30 -> 505.56 and 1444.44, floors 505 + 1444, the odd cent to the
// larger remainder (train): $5.06 and $14.44. Training's share is
// $15.56, $3.89 a useful GPU-hour (4 of them); inference's $44.44,
// $2.4689 a million over 18 million requests served.
//
// servedRun itself: training $20.74 over 4 useful GPU-hours, $5.185;
// inference $59.26 over 36 million, $1.6461 (TestServiceCostByHand).
func cheaperDropping() (*sim.Result, *Pricing) {
	res, pr := servedRun()
	pr.Pools[0].PerHour = 6
	sv := &res.Services[0]
	sv.Served, sv.Dropped = 18_000_000, 18_001_000
	return res, pr
}

// Two variants of one run with a job and a service are compared side by
// side, each on its share of the bill: the cheaper node saves training
// what its price saves it (about 25%), and the variant that dropped half
// its requests costs inference half as much again per request served,
// though its bill is 25% lower.
func TestMixedRunsCompareBySide(t *testing.T) {
	baseRes, basePr := servedRun()
	varRes, varPr := cheaperDropping()
	baseSum := Summarize(baseRes, Meta{Scenario: "served", Pricing: basePr})
	varSum := Summarize(varRes, Meta{Scenario: "served", Pricing: varPr})

	c := varSum.Cost
	require.NotNil(t, c)
	assert.Equal(t, 60.0, c.Total)
	require.Len(t, c.ByWorkload, 2)
	assert.Equal(t, 15.56, c.ByWorkload[0].Total)
	assert.Equal(t, 3.89, c.ByWorkload[0].PerUsefulGPUHour)
	assert.Equal(t, 44.44, c.ByWorkload[1].Total)
	assert.Equal(t, 18e6, c.ByWorkload[1].RequestsServed)
	assert.Equal(t, 2.4689, c.ByWorkload[1].PerMillionRequests)

	base, v := Figures("(as given)", baseSum), Figures("cheaper, dropping", varSum)
	assert.True(t, base.BySide)
	assert.True(t, v.BySide)
	assert.Equal(t, 5.185, base.CostPerUsefulGPUHour, "training's $20.74 over 4 GPU-hours, not the bill's $80 / 4 = $20")
	assert.Equal(t, 1.6461, base.CostPerMillionRequests, "inference's $59.26 over 36M, not the bill's $80 / 36M = $2.2222")
	assert.Equal(t, 3.89, v.CostPerUsefulGPUHour, "not the bill's $60 / 4 = $15")
	assert.Equal(t, 2.4689, v.CostPerMillionRequests, "not the bill's $60 / 18M = $3.3333")
	assert.Equal(t, 15.56, v.TrainingCost)
	assert.Equal(t, 44.44, v.InferenceCost)

	// Against the scenario as given: training 1 - 3.89/5.185 = 24.98%
	// saved; inference 1 - 2.4689/1.6461 = -49.98%, half as much again
	// per request served.
	PairWithBase(&v, &base, varRes, baseRes)
	assert.Equal(t, 24.98, v.SameWorkVsBasePct)
	assert.Equal(t, -49.98, v.ServedVsBasePct)
	require.NotNil(t, v.Paired)
	assert.Equal(t, 1, v.Paired.Both)

	vs := []RunFigures{base, v}
	assert.Equal(t, []string{"run", "cost", "idle", "GPU-h lost", "lost cost", "training $/useful GPU-h", "inference $/M requests", "completed"}, variantHeaderFor(vs)[:8])
	rows := variantRows(vs)
	assert.Equal(t, []string{"(as given)", "$80.00", "$26.00", "0.0", "$0.00", "$5.18", "$1.65", "1"}, rows[0][:8], "5.185 is 5.18499... in binary")
	assert.Equal(t, []string{"cheaper, dropping", "$60.00", "$19.50", "0.0", "$0.00", "$3.89", "$2.47", "1"}, rows[1][:8])
	ph := pairedHeaderFor(vs)
	assert.Equal(t, []string{"training $/useful GPU-h", "training same-work saving", "inference $/M requests", "inference same-requests saving"}, ph[8:])
	assert.Equal(t, [][]string{{"cheaper, dropping", "1", "1", "4.00h", "4.00h", "0", "0", "0", "$3.89", "+25.0%", "$2.47", "-50.0%"}}, pairedRows(vs))

	// The same runs as spot against all on-demand: the bill is 25% lower,
	// training saves 24.98% for the same work, inference costs 49.98%
	// more for the same requests.
	sc := CompareSpot(varSum, baseSum, varRes, baseRes)
	assert.Equal(t, 20.0, sc.Savings)
	assert.Equal(t, 25.0, sc.SavingsPct)
	assert.Equal(t, 24.98, sc.SameWorkSavingsPct)
	assert.Equal(t, -49.98, sc.ServedWorkSavingsPct)
	assert.Equal(t, "Each side on its share of the bill: training, for the same completed work, spot saves 25.0% ($3.89 against $5.18 a useful GPU-hour; jobs completed: 1 on spot, 1 on demand); inference, for the same requests, spot costs 50.0% ($2.47 against $1.65 a million requests served). The bills are $60.00 on spot (training $15.56, inference $44.44) against $80.00 all on-demand (training $20.74, inference $59.26), $20.00 lower, for different work. api within its SLO: 98.7% on spot, 98.7% on demand.", sameWorkText(sc))
	h := spotHeaderFor(sc)
	assert.Equal(t, "training $/useful GPU-h", h[5])
	assert.Equal(t, "inference $/M requests", h[6])

	// The reports say so: two figures, no single one.
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b, varSum))
	assert.Contains(t, b.String(), "Useful GPU-hours (completed jobs' work): 4.0, at $3.89 each on training's share of the bill ($15.56); requests served: 18.00M, at $2.47 a million on inference's share ($44.44).")
	b.Reset()
	require.NoError(t, WriteHTML(&b, varSum, nil))
	assert.Contains(t, b.String(), "training $15.56 ($3.89 a useful GPU-hour), inference $44.44 ($2.47 a million requests)")
}

// A run of jobs alone keeps its one figure, the bill over its work, and
// its comparisons keep their columns.
func TestJobsOnlyFiguresUnchanged(t *testing.T) {
	res, pr := servedRun()
	res.Services = nil
	res.Pools[0].AllocatedMilliMs = 1000 * 4 * int64(sim.Hour)
	s := Summarize(res, Meta{Scenario: "jobs", Pricing: pr})
	f := Figures("(as given)", s)
	assert.False(t, f.BySide)
	assert.Equal(t, 20.0, f.CostPerUsefulGPUHour, "$80 over 4 useful GPU-hours")
	assert.Zero(t, f.CostPerMillionRequests)
	vs := []RunFigures{f, f}
	assert.Equal(t, variantHeader(), variantHeaderFor(vs))
	assert.Equal(t, pairedHeader(), pairedHeaderFor(vs))
}

// The spot curve of a run with jobs and services names each side's
// figure and adds inference's; the break-even stays training's.
func TestSpotCurveBySide(t *testing.T) {
	c := &SpotCurve{Run: "mixed", Note: "note.", OnDemand: SpotOnDemand{CostPerUsefulGPUHour: 4, Completed: 3, CostPerMillionRequests: 2},
		Points: []SpotPoint{
			{MTBFHours: 1, Completed: 2, CostPerUsefulGPUHour: 5, SavingPct: -25, CostPerMillionRequests: 1.5, ServedSavingPct: 25},
			{MTBFHours: 4, Completed: 3, CostPerUsefulGPUHour: 3, SavingPct: 25, CostPerMillionRequests: 1, ServedSavingPct: 50},
		}}
	assert.Equal(t, []string{"MTBF per node", "interruptions", "completed", "training $/useful GPU-h", "training same-work saving",
		"inference $/M requests", "inference same-requests saving", "within SLO (worst service)", "requests dropped"}, spotCurveHeaderFor(c))
	// No service with an SLO: "-"; no request dropped: 0.
	assert.Equal(t, []string{"1.00h", "0", "2", "$5.00", "-25.0%", "$1.50", "+25.0%", "-", "0"}, spotCurveRows(c)[0])
	// Saving -25% at 1 h and +25% at 4 h: zero halfway in log MTBF, 2 h.
	assert.Equal(t, 2.0, c.BreakEven())
	c.BreakEvenHours = c.BreakEven()
	assert.Contains(t, spotCurveText(c), "the break-even is training's.")

	jobs := &SpotCurve{OnDemand: SpotOnDemand{CostPerUsefulGPUHour: 4, Completed: 3}, Points: c.Points[:1]}
	assert.Equal(t, spotCurveHeader(), spotCurveHeaderFor(jobs))
	assert.Len(t, spotCurveRows(jobs)[0], 5)
}
