package reports

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Two teams, the bill of cmd/gpuplan/testdata/cost-two-nodes.yaml: $52
// in all, train's pods paid $10 and web's $0.75, so $41.25 is idle.
//
// By allocation share: train gets 41.25 x 10/10.75 = $38.372 -> $38.37,
// web 41.25 x 0.75/10.75 = $2.878 -> $2.88 (4,125 cents apportioned by
// largest remainder: 3837 + 288). Showback $48.37 and $3.63: $52.00.
//
// Even: 4,125 cents / 2 = 2,062.5 each; the odd cent goes to the first
// team by name: train $20.63, web $20.62. Showback $30.63 and $21.37.
func TestShowbackTwoTeamsByHand(t *testing.T) {
	c := &CostSummary{Total: 52, Allocated: 10.75, Idle: 41.25, ByQueue: []CostLine{
		{Name: "train", Cost: 10, Allocated: 10}, {Name: "web", Cost: 0.75, Allocated: 0.75},
	}}
	sb, err := ShowbackOf(c, IdleByAllocation, nil)
	require.NoError(t, err)
	require.Equal(t, []TeamCost{
		{Team: "train", Allocated: 10, IdleShare: 38.37, Total: 48.37},
		{Team: "web", Allocated: 0.75, IdleShare: 2.88, Total: 3.63},
	}, sb.Teams)
	require.Equal(t, 52.0, sb.Total)

	sb, err = ShowbackOf(c, IdleEven, map[string]float64{"web": 20, "ops": 5})
	require.NoError(t, err)
	require.Equal(t, []TeamCost{
		{Team: "ops", Budget: 5},
		{Team: "train", Allocated: 10, IdleShare: 20.63, Total: 30.63},
		{Team: "web", Allocated: 0.75, IdleShare: 20.62, Total: 21.37, Budget: 20, BudgetUsed: 1.0685},
	}, sb.Teams)
	var total float64
	for _, tc := range sb.Teams {
		total += tc.Total
	}
	require.InDelta(t, 52.0, total, 1e-9)

	_, err = ShowbackOf(c, "weighted", nil)
	require.EqualError(t, err, `idle distribution "weighted" is not one of allocation, even`)
}

// Cents apportioned by largest remainder always add up.
func TestApportionAddsUp(t *testing.T) {
	for _, c := range []struct {
		n int64
		w []float64
	}{{100, []float64{1, 1, 1}}, {7, []float64{0.1, 0.2, 0.7}}, {1, []float64{0, 0}}, {99999, []float64{3, 1e-9, 7.5, 0}}} {
		got := apportion(c.n, c.w)
		require.Equal(t, c.n, sum(got), "%v", c)
	}
	require.Equal(t, []int64{34, 33, 33}, apportion(100, []float64{1, 1, 1}))
}
