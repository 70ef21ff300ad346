package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/reports/focus"
)

// Every line of the FinOps report of testdata/cost-two-nodes.yaml, by hand.
//
// od ($10/h, split exactly by the base rates: $2/GPU-h, $0.0625/vCPU-h,
// $0.015625/GiB-h): 4 h = $40. train holds 2 GPUs, 8 vCPUs, 32 GiB for 2 h:
// 2 x (2x2 + 8x0.0625 + 32x0.015625) = 2 x 5 = $10. Idle $30, of which GPUs
// (16 - 4 GPU-h) x $2 = $24.
//
// spot ($3/h, the same ratios scaled by 0.3: $0.6/GPU-h, $0.01875/vCPU-h,
// $0.0046875/GiB-h): 4 h = $12. web holds 1 GPU, 4 vCPUs, 16 GiB for 1 h:
// 0.6 + 0.075 + 0.075 = $0.75. Idle $11.25, GPUs (16 - 1) x 0.6 = $9.
//
// Total $52, allocated $10.75, idle $41.25 (GPU $33); useful GPU-hours
// 2x2 + 1x1 = 5, so $10.40 each. All on-demand the spot node costs $10/h:
// $80 in all, so spot saves $28 (35%).
func TestCostReportByHand(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "testdata/cost-two-nodes.yaml", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	c := s.Cost
	require.NotNil(t, c)
	require.Equal(t, 52.0, c.Total)
	require.Equal(t, 10.75, c.Allocated)
	require.Equal(t, 41.25, c.Idle)
	require.Equal(t, 33.0, c.IdleGPU)
	require.Equal(t, 5.0, c.UsefulGPUHours)
	require.Equal(t, 10.4, c.CostPerUsefulGPUHour)
	require.Equal(t, 0.0, c.LostCost)
	line := func(name string, l reports.CostLine, cost, alloc, idle, idleGPU, nodeH, gpuH float64) {
		t.Helper()
		require.Equal(t, name, l.Name)
		require.Equal(t, [6]float64{cost, alloc, idle, idleGPU, nodeH, gpuH}, [6]float64{l.Cost, l.Allocated, l.Idle, l.IdleGPU, l.NodeHours, l.GPUHours}, name)
	}
	require.Len(t, c.ByPool, 2)
	line("od", c.ByPool[0], 40, 10, 30, 24, 4, 16)
	line("spot", c.ByPool[1], 12, 0.75, 11.25, 9, 4, 16)
	require.Equal(t, "scenario price", c.ByPool[0].PriceBasis)
	line("on-demand", c.ByCapacityType[0], 40, 10, 30, 24, 4, 16)
	line("spot", c.ByCapacityType[1], 12, 0.75, 11.25, 9, 4, 16)
	line("(none)", c.ByInstanceType[0], 52, 10.75, 41.25, 33, 8, 32)
	require.Len(t, c.ByQueue, 2)
	line("train", c.ByQueue[0], 10, 10, 0, 0, 0, 4)
	line("web", c.ByQueue[1], 0.75, 0.75, 0, 0, 0, 1)

	sv := s.SpotVsOnDemand
	require.NotNil(t, sv)
	require.Equal(t, 52.0, sv.Spot.Cost)
	require.Equal(t, 80.0, sv.OnDemand.Cost)
	require.Equal(t, 28.0, sv.Savings)
	require.Equal(t, 35.0, sv.SavingsPct)
	// Each team's showback with spot and all on-demand. All on-demand both
	// nodes cost $10/h ($80): train still pays $10; web holds 1 GPU, 4
	// vCPUs and 16 GiB of a $10 node for 1 h: 2 + 0.25 + 0.25 = $2.50.
	// Idle $80 - $12.50 = $67.50, shared 10 : 2.5: train $54, web $13.50;
	// showback train $64, web $16.
	// The waterfall: the spot node's 4 h at its $10 on-demand price, so
	// the same node-hours as all on-demand ($80); the spot discount 4 x
	// ($10 - $3) = $28; the spot bill $52; nothing lost, no checkpoints.
	require.Equal(t, []reports.WaterfallStep{
		{Name: "all on-demand bill", Total: 80},
		{Name: "node-hours bought differ (at on-demand prices)", Delta: 0, Total: 80},
		{Name: "spot discount", Delta: -28, Total: 52},
		{Name: "spot bill", Total: 52},
		{Name: "of which work lost to interruptions", Delta: 0, Of: true},
		{Name: "of which checkpoint writes", Delta: 0, Of: true},
	}, sv.Waterfall)
	require.Equal(t, []reports.TeamSpot{{Team: "train", Spot: 48.37, OnDemand: 64}, {Team: "web", Spot: 3.63, OnDemand: 16}}, sv.ByTeam)

	// jobs.csv carries each job's cost.
	rows := readCSV(t, dir, "jobs.csv")
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	require.Contains(t, col, "cost_usd")
	require.Equal(t, "10.0000", rows[1][col["cost_usd"]])
	require.Equal(t, "0.7500", rows[2][col["cost_usd"]])

	// The showback: idle cost by allocation share (reports' showback test
	// works it out): train $48.37, web $3.63, the whole $52 bill; each
	// job's row carries its team's.
	sb := c.Showback
	require.NotNil(t, sb)
	require.Equal(t, "allocation", sb.IdleDistribution)
	require.Equal(t, []reports.TeamCost{
		{Team: "train", Allocated: 10, IdleShare: 38.37, Total: 48.37},
		{Team: "web", Allocated: 0.75, IdleShare: 2.88, Total: 3.63},
	}, sb.Teams)
	require.Equal(t, "48.3700", rows[1][col["showback_usd"]])
	require.Equal(t, "3.6300", rows[2][col["showback_usd"]])
}

func readCSV(t *testing.T, dir, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

// The FinOps what-if example: the same week of jobs all on-demand, all
// spot (a tight market, and the Spot Advisor's rate) and half and half.
// Nodes are present all week (a reclaimed spot node's replacement is paid
// for from its launch), so each run's cost is its node-hours times the
// catalog prices: 4 x 168 h x 21.957642 = $14,755.54 on-demand, x 6.7915 =
// $4,563.89 spot, 2 x 168 x (21.957642 + 6.7915) = $9,659.71 mixed.
func TestSpotWhatIfExample(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "../../scenarios/examples/spot-what-if.yaml", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	s := readSummary(t, dir)
	require.Len(t, s.Variants, 4)
	byName := map[string]reports.RunFigures{}
	for _, v := range s.Variants {
		byName[v.Name] = v
	}
	od, tight, advisor, mix := byName["(as given)"], byName["all-spot-tight"], byName["all-spot-advisor"], byName["mix-tight"]
	require.InDelta(t, 4*168*21.957642, od.Cost, 0.01)
	require.InDelta(t, 4*168*6.7915, tight.Cost, 0.01)
	require.InDelta(t, 4*168*6.7915, advisor.Cost, 0.01)
	require.InDelta(t, 2*168*(21.957642+6.7915), mix.Cost, 0.01)
	// A tight market costs work and time; the Spot Advisor's band (an
	// MTBF of thousands of node-hours) hardly any.
	require.Zero(t, od.LostGPUHours)
	require.Greater(t, tight.LostGPUHours, 50.0)
	require.Greater(t, tight.Disruptions, int64(20))
	require.Less(t, advisor.LostGPUHours, tight.LostGPUHours/10)
	require.Greater(t, mix.LostGPUHours, 0.0)
	require.Less(t, mix.LostGPUHours, tight.LostGPUHours)
	require.Greater(t, tight.JCTP95, od.JCTP95, "lost work shows in completion times")
	// Each variant's own files.
	for _, v := range []string{"all-spot-tight", "all-spot-advisor", "mix-tight"} {
		vs := readSummary(t, dir+"/variants/"+v)
		require.Equal(t, "spot-what-if/"+v, vs.Scenario.Name)
		require.NotNil(t, vs.Cost)
	}
}

// The FOCUS export of the default scenario reads back against the
// specification's columns and types (reports/focus checks every
// Mandatory column, the types, the allowed values) and adds up to the
// report's total; spot nodes are Dynamic pricing.
func TestFOCUSExportReadsBackAndAddsUp(t *testing.T) {
	for _, c := range []struct{ args []string }{
		{[]string{"simulate"}},
		{[]string{"simulate", "../../scenarios/examples/spot-what-if.yaml", "--variant", "mix-tight"}},
	} {
		dir := t.TempDir()
		code, _, errOut := gpuplan(t, append(c.args, "--out", dir)...)
		require.Equal(t, 0, code, errOut)
		f, err := os.Open(filepath.Join(dir, "focus.csv"))
		require.NoError(t, err)
		header, rows, err := focus.ReadTable(f)
		f.Close()
		require.NoError(t, err)
		require.NoError(t, focus.Check(header, rows))
		for _, col := range focus.Spec() {
			if col.FeatureLevel == "Mandatory" {
				require.Contains(t, header, col.ID)
			}
		}
		var billed float64
		categories := map[string]int{}
		for _, r := range rows {
			v, err := focus.ParseDecimal(r["BilledCost"])
			require.NoError(t, err)
			billed += v
			categories[r["PricingCategory"]]++
		}
		s := readSummary(t, dir)
		require.InDelta(t, s.Cost.Total, billed, 0.01, "the FOCUS rows add up to the report's total")
		require.Greater(t, categories["Standard"], 0)
		if len(c.args) > 1 {
			require.Greater(t, categories["Dynamic"], 0, "spot nodes are Dynamic pricing")
			// FOCUS 1.2: a regional resource's rows carry its region
			// (spot-what-if's pools are AWS instances in us-east-1).
			for _, r := range rows {
				if r["ProviderName"] == "AWS" {
					require.Equal(t, "us-east-1", r["RegionId"], r["ResourceId"])
					require.Equal(t, "us-east-1", r["RegionName"], r["ResourceId"])
				}
			}
		}
	}
}

// --spot-sensitivity off skips the replay of a run that buys spot (no
// break-even printed, none in summary.json); on, or no flag, runs it; any
// other value is a usage error (exit 2).
func TestSpotSensitivityFlag(t *testing.T) {
	code, out, errOut := gpuplan(t, "simulate", "testdata/cost-two-nodes.yaml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Spot break-even:")
	code, on, errOut := gpuplan(t, "simulate", "testdata/cost-two-nodes.yaml", "--spot-sensitivity", "on")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, out, on)

	dir := filepath.Join(t.TempDir(), "off")
	code, off, errOut := gpuplan(t, "simulate", "testdata/cost-two-nodes.yaml", "--spot-sensitivity", "off", "--out", dir)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, off, "Spot break-even")
	require.Contains(t, off, "all on-demand", "the all-on-demand twin still runs")
	require.Empty(t, readSummary(t, dir).SpotSensitivity)

	code, _, errOut = gpuplan(t, "simulate", "testdata/cost-two-nodes.yaml", "--spot-sensitivity", "maybe")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--spot-sensitivity is "maybe"; want off or on`)
}
