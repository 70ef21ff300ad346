package recommend

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// One commitment level for a setting's seeds, by hand (the three demands
// of models' TestCommonSpendLevelByHand, at 50% off, with $1, $2 and $3 of
// spot beside them): each seed's own level would be $5, $1 and $1; the
// one level is $1 an hour for all three (mean bill $17.33 against $20
// at $5 and $20.67 with none), so commitment.level is $1 at every seed
// (its interval the level itself); the bills are 36, 12 and 4, the mix
// bills 37, 14 and 7 (mean $19.33); the savings 4, 4 and 2: mean $3.33,
// sd sqrt(4/3), 95% interval 3.33 -+ t(0.975, 2) x sd / sqrt(3) =
// 3.33 -+ 4.3027 x 2/3 = [$0.46, $6.20]; the break-evens 10, 3 and 1.5
// (mean $4.83); the falls survived 90%, 66.7% and 33.3%.
func TestOneCommitmentLevelByHand(t *testing.T) {
	base, err := scenarios.Parse("mix.yaml", ".", []byte(mixScenario))
	require.NoError(t, err)
	p, err := ParseVary("spot:gpu=0..1/0.25")
	require.NoError(t, err)
	obj, err := sweep.ParseMetric("commitment.mixBill")
	require.NoError(t, err)
	sw, err := Space(base, []byte(mixScenario), []sweep.Parameter{p}, obj, nil, 3)
	require.NoError(t, err)
	require.Equal(t, []string{"commitment.mixBill", "commitment.level", "commitment.spotBill", "commitment.bill", "commitment.saving", "commitment.breakEven", "commitment.breakEvenFall"}, metricNames(sw))

	h := []float64{1, 1, 1, 1}
	rates := [][]float64{{10, 10, 10, 10}, {10, 2, 2, 2}, {2, 2, 2, 0}}
	var advice []*reports.CommitmentAdvice
	metrics := make([][]float64, len(sw.Metrics))
	for i, r := range rates {
		a := models.AdviseSpendCommitment(r, h, 0.5)
		spot := float64(i + 1)
		advice = append(advice, &reports.CommitmentAdvice{CommitmentAdvice: a, SpotBill: spot, MixBill: a.Bill + spot, Rates: r, Hours: h})
		for m := range metrics {
			metrics[m] = append(metrics[m], -1) // each seed's own figures: overwritten
		}
	}
	require.Equal(t, []float64{5, 1, 1}, []float64{advice[0].Level, advice[1].Level, advice[2].Level}, "each seed's own level")
	require.NoError(t, sw.OneCommitmentLevel(metrics, advice))
	require.Equal(t, []float64{1, 1, 1}, metrics[1])
	require.Equal(t, []float64{1, 2, 3}, metrics[2])
	require.Equal(t, []float64{36, 12, 4}, metrics[3])
	require.Equal(t, []float64{37, 14, 7}, metrics[0])
	require.Equal(t, []float64{4, 4, 2}, metrics[4])
	require.Equal(t, []float64{10, 3, 1.5}, metrics[5])
	require.InDeltaSlice(t, []float64{0.9, 0.6667, 0.3333}, metrics[6], 1e-9)

	level := sweep.Summarize(metrics[1])
	require.Equal(t, 1.0, level.Mean)
	require.Equal(t, 1.0, level.Lo)
	require.Equal(t, 1.0, level.Hi)
	require.InDelta(t, 58.0/3, sweep.Summarize(metrics[0]).Mean, 1e-12)
	saving := sweep.Summarize(metrics[4])
	half := 4.302653 * math.Sqrt(4.0/3) / math.Sqrt(3)
	require.InDelta(t, 10.0/3, saving.Mean, 1e-12)
	require.InDelta(t, 10.0/3-half, saving.Lo, 1e-5)
	require.InDelta(t, 10.0/3+half, saving.Hi, 1e-5)
	require.InDelta(t, 0.4649, saving.Lo, 1e-4)
	require.InDelta(t, 6.2018, saving.Hi, 1e-4)
	require.InDelta(t, 29.0/6, sweep.Summarize(metrics[5]).Mean, 1e-12)

	// Seeds that differ in their discount cannot share one level.
	advice[2].Discount = 0.3
	require.ErrorContains(t, sw.OneCommitmentLevel(metrics, advice), "differs in its discount")
}

func metricNames(sw *sweep.Sweep) []string {
	var out []string
	for _, m := range sw.Metrics {
		out = append(out, m.Name)
	}
	return out
}
