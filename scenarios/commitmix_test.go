package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/sim"
)

// A mix of on-demand and spot for the commitment advice, by hand: an
// on-demand node of 2 GPUs at $10 an hour holds a 2-GPU job for the first
// half of each of 4 hours (1 GPU-hour an hour at $5 a GPU-hour: $5 an
// hour of demand), a spot node of 2 GPUs at $4 holds a 1-GPU job all the
// time (4 GPU-hours at $2). At 30% off, every hour's demand is $5, so the
// commitment is $5 x 0.7 = $3.50 an hour and the on-demand side bills
// 4 x $3.50 = $14.00 against $20.00; the spot side bills 4 x $2 = $8.00;
// the mix $22.00.
func TestCommitmentAdviceMixByHand(t *testing.T) {
	const src = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: mix
spec:
  horizon: 4h
  pricing:
    commitmentAdvice: {discount: 0.3}
  cluster:
    pools:
    - name: od
      count: 1
      gpusPerNode: 2
      gpuModel: A10G
      cpu: "16"
      memory: 128Gi
      pricePerHour: 10
      labels: {tier: od}
    - name: spot
      count: 1
      gpusPerNode: 2
      gpuModel: A10G
      cpu: "16"
      memory: 128Gi
      capacityType: spot
      pricePerHour: 4
      interruptions: {times: [100h]}
      labels: {tier: spot}
  workload:
    synthetic:
      classes:
      - name: od
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 2}
        duration: 30m
        nodeSelector: {tier: od}
      - name: spot
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: 1h
        nodeSelector: {tier: spot}
`
	s, err := Parse("mix.yaml", ".", []byte(src))
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	a := reports.Cost(res, b.Pricing).CommitmentAdvice
	require.NotNil(t, a)
	require.InDelta(t, 3.5, a.Level, 1e-9)
	require.InDelta(t, 14.0, a.Bill, 1e-9)
	require.InDelta(t, 20.0, a.BillNone, 1e-9)
	require.InDelta(t, 8.0, a.SpotBill, 1e-9)
	require.InDelta(t, 22.0, a.MixBill, 1e-9)
}
