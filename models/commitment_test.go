package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// By hand: type A at $32 an on-demand hour, type B at $10. One reserved
// A at $20 an hour and a $25-an-hour spend commitment at 30% off, both
// types eligible for it, the reservation for A only.
//
// An hour of 3 A and 2 B: the reservation covers one A ($20 used, $32 of
// on-demand covered); the spend commitment covers A at $22.40 an hour:
// 25 / 22.4 = 1.116071 A-hours ($35.714286 covered), nothing of B; left at
// on-demand: 0.883929 A ($28.285714) and 2 B ($20). Bill: 20 + 25 +
// 48.285714 = $93.285714 against $116 on demand.
//
// An hour of half an A: the reservation covers it ($10 used, $10
// unused, $16 covered), the spend commitment nothing ($25 unused). Bill
// $45 against $16.
func TestApplyCommitmentsByHand(t *testing.T) {
	cs := []Commitment{
		{Name: "sp", Kind: CommitSpend, Hourly: 25, Discount: 0.3, TermHours: 8760},
		{Name: "ri", Kind: CommitInstances, Count: 1, PerHour: 20, TermHours: 8760, Upfront: 1},
	}
	for _, c := range cs {
		require.NoError(t, c.Validate())
	}
	elig := [][]bool{{true, true}, {true, false}}
	od := []float64{32, 10}

	uses, left := ApplyCommitments(cs, elig, []float64{3, 2}, od, 1)
	require.InDelta(t, 25, uses[0].Used, 1e-9)
	require.InDelta(t, 0, uses[0].Unused, 1e-9)
	require.InDelta(t, 35.714286, uses[0].CoveredOnDemand, 1e-6)
	require.Equal(t, CommitmentUse{Cost: 20, Used: 20, Unused: 0, CoveredOnDemand: 32}, uses[1])
	require.InDelta(t, 48.285714, left, 1e-6)
	require.InDelta(t, 93.285714, uses[0].Cost+uses[1].Cost+left, 1e-6)

	uses, left = ApplyCommitments(cs, elig, []float64{0.5, 0}, od, 1)
	require.Equal(t, CommitmentUse{Cost: 25, Unused: 25}, uses[0])
	require.Equal(t, CommitmentUse{Cost: 20, Used: 10, Unused: 10, CoveredOnDemand: 16}, uses[1])
	require.Zero(t, left)

	// All upfront: the whole year's 20 x 8,760 at purchase.
	require.Equal(t, 175200.0, cs[1].UpfrontPayment())
}

func TestCommitmentValidate(t *testing.T) {
	for _, c := range []struct {
		c    Commitment
		want string
	}{
		{Commitment{Kind: CommitSpend, Hourly: 0, Discount: 0.3, TermHours: 1}, "positive hourly"},
		{Commitment{Kind: CommitSpend, Hourly: 1, Discount: 1, TermHours: 1}, "discount 1"},
		{Commitment{Kind: CommitInstances, Count: 1.5, PerHour: 1, TermHours: 1}, "whole positive count"},
		{Commitment{Kind: CommitInstances, Count: 1, PerHour: 1, TermHours: 1, Upfront: 2}, "upfront 2"},
		{Commitment{Kind: "lease", TermHours: 1}, `kind "lease"`},
	} {
		require.ErrorContains(t, c.c.Validate(), c.want)
	}
}
