package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// The commitments' lines as the text report prints them (the figures of
// scenarios' TestCommitmentsBillByHand).
func TestWriteCommitments(t *testing.T) {
	var b bytes.Buffer
	writeCommitments(&b, &CommitmentSummary{Buckets: "1.0h", ListBill: 840, Bill: 700, Saving: 140, EligibleOnDemand: 740, Coverage: 0.5676,
		Committed: 280, Used: 270, Unused: 10, Utilisation: 0.9643, Lines: []CommitmentLine{
			{Name: "ri-p4d", Kind: "instances", Committed: 200, Used: 200, CoveredOnDemand: 320, Utilisation: 1, UpfrontPayment: 175200},
			{Name: "sp", Kind: "spend", Committed: 80, Used: 70, Unused: 10, CoveredOnDemand: 100, Utilisation: 0.875}}})
	require.Equal(t, `Commitments (amortised, applied per 1.0h): bill $700.00 after them against $840.00 at list prices (saving $140.00); coverage 56.8% of the $740.00 of eligible on-demand usage; utilisation 96.4%, $10.00 of $280.00 committed unused.
  - ri-p4d (instances): $200.00 committed, $200.00 used (100.0%), $0.00 unused, covering $320.00 of on-demand usage; $175,200 paid upfront for the term
  - sp (spend): $80.00 committed, $70.00 used (87.5%), $10.00 unused, covering $100.00 of on-demand usage
`, b.String())
}

// The advice as the text report prints it (the first hand-worked case
// of models' TestAdviseSpendCommitmentByHand).
func TestWriteCommitmentAdvice(t *testing.T) {
	var b bytes.Buffer
	a := &CommitmentAdvice{Demand: "d", CommitmentAdvice: models.AdviseSpendCommitment([]float64{10, 10, 0, 10}, []float64{1, 1, 1, 1}, 0.3)}
	writeCommitmentAdvice(&b, a)
	require.Equal(t, "Commitment advice (a spend commitment at 30% off, on the run's demand: d): commit $7.00 an hour; the demand's bill $28.00 against $30.00 all on demand (saving $2.00), utilisation 75.0%, coverage 100.0%. Any commitment above $7.50 an hour costs more than none; $7.00 an hour stops paying if demand falls by more than 6.7%; demand 10% down: $28.00 with it, $27.00 without; demand 25% down: $28.00 with it, $22.50 without; demand 50% down: $28.00 with it, $15.00 without.\n", b.String())
}

// With spot pools the advice adds the mix: the spot GPU-hours at their
// spot price beside the commitment's bill (scenarios'
// TestCommitmentAdviceMixByHand: $14.00 + $8.00).
func TestWriteCommitmentAdviceWithSpot(t *testing.T) {
	var b bytes.Buffer
	a := &CommitmentAdvice{Demand: "d", SpotBill: 8, MixBill: 22, CommitmentAdvice: models.AdviseSpendCommitment([]float64{5, 5, 5, 5}, []float64{1, 1, 1, 1}, 0.3)}
	writeCommitmentAdvice(&b, a)
	require.Contains(t, b.String(), "commit $3.50 an hour; the demand's bill $14.00 against $20.00 all on demand (saving $6.00)")
	require.True(t, strings.HasSuffix(b.String(), "; with the spot pools' GPU-hours at their spot price ($8.00), the mix of spot, the commitment and on-demand bills $22.00.\n"), b.String())
}
