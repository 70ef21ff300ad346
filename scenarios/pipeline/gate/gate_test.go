package gate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
)

// The gate worked by hand: the baseline's bill is $52 on every seed (an
// on-demand node at $10/h and a spot node at $3/h for 4 h), the
// candidate's $60 (the on-demand node at $12/h): the candidate's bill
// meets "at most $60", the change of $8 misses "at most $7", on both
// seeds, with no spread.
func TestGateWorkedByHand(t *testing.T) {
	seed := uint64(7)
	res, err := Run(Options{Baseline: "testdata/cost-two-nodes.yaml", Candidate: "testdata/dearer.yaml", Rules: "testdata/rules.yaml",
		Seed: &seed, Workers: 1})
	require.NoError(t, err)
	require.False(t, res.Pass)
	require.Equal(t, []uint64{7, 8}, res.Seeds)
	require.Len(t, res.Verdicts, 2)
	bill, change := res.Verdicts[0], res.Verdicts[1]
	require.Equal(t, []float64{60, 60}, bill.Samples)
	require.True(t, bill.Pass)
	require.Equal(t, []float64{8, 8}, change.Samples)
	require.Equal(t, 8.0, change.Mean)
	require.False(t, change.Pass)
	require.True(t, change.Certain)
}

// The first seed is the baseline's spec.seed (1) unless one is given; a
// run over the work budget is refused.
func TestGateSeedAndBudget(t *testing.T) {
	o := Options{Baseline: "testdata/cost-two-nodes.yaml", Candidate: "testdata/cost-two-nodes.yaml", Rules: "testdata/rules.yaml", Workers: 1}
	res, err := Run(o)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 2}, res.Seeds)
	require.True(t, res.Pass)

	o.MaxEvents = 1
	_, err = Run(o)
	var ie *scenarios.InputError
	require.ErrorAs(t, err, &ie)
	require.ErrorContains(t, err, "over the budget of 1 (--max-events)")
}
