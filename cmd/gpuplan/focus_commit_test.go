package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports/focus"
)

// testdata/focus-commitments.yaml by hand, over its 4 hours (every node
// present throughout, each job holding a whole node):
//
//   - block, a capacity reservation of 1 p4d at $15/h: $60 paid. res-job
//     holds it 0-2h: $30, CapacityReservationStatus Used; the idle rest
//     $30, Unused. PricingCategory Committed, no commitment discount.
//   - od, 2 on-demand p4d at $32/h: $256 at list. The reserved instance
//     ri (1 p4d at $20/h, half upfront, 1-year term) covers one node-hour
//     an hour: 4 of od's 8 node-hours, $128 of on-demand, for $80 of the
//     commitment. od's rows split in half: od-job (one node, 0-4h, $128)
//     into 2 node-hours covered by ri (EffectiveCost 128/2 x 80/128 =
//     $40, BilledCost 0, ListCost $64, ContractedCost $64, quantity 2
//     Hours) and 2 at on-demand ($64 billed); od's idle row alike ($40
//     covered, $64 on-demand).
//   - g5, 2 on-demand g5 at $5/h: $40 at list, no job. The Savings Plan sp
//     ($8/h at 30% off, g5 only) charges a g5 node-hour $3.50: both nodes
//     each hour, $7 used, $10 of on-demand covered, $1 unused. g5's idle
//     row is all covered: EffectiveCost $28, BilledCost 0, ListCost $40,
//     CommitmentDiscountQuantity 28 USD; four Unused rows of $1, one an
//     hour (ConsumedQuantity null).
//   - spot, 1 p4d at $10/h: $40, Dynamic, no commitment.
//   - purchases: ri's recurring fee, half of 4 x $20 = $40, and its upfront
//     payment's share for the 4 hours, $40 (CommitmentDiscountQuantity:
//     the term's 8,760 instance-hours); sp's recurring fee 4 x $8 = $32.
//     BilledCost the amount, EffectiveCost 0, PricingCategory Standard.
//
// List bill 60 + 256 + 40 + 40 = $396. SUM(BilledCost) = 60 (block) + 64
// + 64 (od uncovered) + 40 (spot) + 40 + 40 + 32 (purchases) = $340.00,
// the bill the report prints after the commitments (396 - 128 - 40 +
// 80 + 32). SUM(EffectiveCost) = 60 + 64 + 64 + 40 + 40 + 40 (ri used) +
// 28 (sp used) + 4 (sp unused) = $340.00 as well: gpuplan's bill is
// amortised, and the purchases it bills in the run are the commitments'
// cost over the run. Per commitment, usage EffectiveCost = purchase
// BilledCost: ri 40 + 40 = 80 = 40 + 40; sp 28 + 4 = 32.
func TestFOCUSCommitmentsByHand(t *testing.T) {
	for _, v := range []string{"1.3", "1.2"} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := gpuplan(t, "simulate", "testdata/focus-commitments.yaml", "--out", dir, "--focus-version", v)
			require.Equal(t, 0, code, errOut)
			require.Contains(t, out, "bill $340.00 after them against $396.00 at list prices")
			h, rows := readFOCUS(t, dir)
			fv, err := focus.ParseVersion(v)
			require.NoError(t, err)
			require.NoError(t, focus.CheckVersion(fv, h, rows))
			type line struct {
				category, frequency, pool, job      string
				billed, effective, list, contracted int64 // cents
				quantity, unit, pricing             string
				commitment, status, commitQuantity  string
				reservation                         string
			}
			var got []line
			var billed, effective int64
			for _, r := range rows {
				l := line{r["ChargeCategory"], r["ChargeFrequency"], r["x_Pool"], r["x_Job"],
					centsOf(t, r["BilledCost"]), centsOf(t, r["EffectiveCost"]), centsOf(t, r["ListCost"]), centsOf(t, r["ContractedCost"]),
					r["PricingQuantity"], r["PricingUnit"], r["PricingCategory"],
					r["CommitmentDiscountName"], r["CommitmentDiscountStatus"], r["CommitmentDiscountQuantity"], r["CapacityReservationStatus"]}
				if l.pool == "spot" {
					l.list = 0 // spot's list price is the catalog's on-demand price, not worked here
				}
				got = append(got, l)
				billed += l.billed
				effective += l.effective
			}
			require.Equal(t, []line{
				{"Usage", "Usage-Based", "block", "res-job", 3000, 3000, 3000, 3000, "2", "Hours", "Committed", "", "", "", "Used"},
				{"Usage", "Usage-Based", "od", "od-job", 0, 4000, 6400, 6400, "2", "Hours", "Committed", "ri", "Used", "2", ""},
				{"Usage", "Usage-Based", "od", "od-job", 6400, 6400, 6400, 6400, "2", "Hours", "Standard", "", "", "", ""},
				{"Usage", "Usage-Based", "block", "", 3000, 3000, 3000, 3000, "2", "Hours", "Committed", "", "", "", "Unused"},
				{"Usage", "Usage-Based", "od", "", 0, 4000, 6400, 6400, "2", "Hours", "Committed", "ri", "Used", "2", ""},
				{"Usage", "Usage-Based", "od", "", 6400, 6400, 6400, 6400, "2", "Hours", "Standard", "", "", "", ""},
				{"Usage", "Usage-Based", "g5", "", 0, 2800, 4000, 4000, "8", "Hours", "Committed", "sp", "Used", "28", ""},
				{"Usage", "Usage-Based", "spot", "", 4000, 4000, 0, 4000, "4", "Hours", "Dynamic", "", "", "", ""},
				{"Usage", "Usage-Based", "", "", 0, 100, 100, 100, "1", "USD", "Committed", "sp", "Unused", "1", ""},
				{"Usage", "Usage-Based", "", "", 0, 100, 100, 100, "1", "USD", "Committed", "sp", "Unused", "1", ""},
				{"Usage", "Usage-Based", "", "", 0, 100, 100, 100, "1", "USD", "Committed", "sp", "Unused", "1", ""},
				{"Usage", "Usage-Based", "", "", 0, 100, 100, 100, "1", "USD", "Committed", "sp", "Unused", "1", ""},
				{"Purchase", "Recurring", "", "", 4000, 0, 4000, 4000, "4", "Hours", "Standard", "ri", "", "4", ""},
				{"Purchase", "One-Time", "", "", 4000, 0, 4000, 4000, "4", "Hours", "Standard", "ri", "", "8760", ""},
				{"Purchase", "Recurring", "", "", 3200, 0, 3200, 3200, "32", "USD", "Standard", "sp", "", "32", ""},
			}, got)
			require.Equal(t, int64(34000), billed, "SUM(BilledCost) is the bill after the commitments")
			require.Equal(t, int64(34000), effective, "SUM(EffectiveCost) is the amortised bill")
			s := readSummary(t, dir)
			require.Equal(t, 340.0, s.Cost.Commitments.Bill)
			for _, r := range rows {
				if r["CommitmentDiscountId"] != "" {
					require.Equal(t, "gpuplan/focus-commitments/commitments/"+r["CommitmentDiscountName"], r["CommitmentDiscountId"])
				}
				if r["CapacityReservationStatus"] != "" {
					require.Equal(t, "gpuplan/focus-commitments/block/capacity-reservation", r["CapacityReservationId"])
				}
				if r["x_Pool"] == "" {
					require.Empty(t, r["ConsumedQuantity"], "no pool's usage on a commitment's own row")
				}
			}
			// The 1.3 split: od's covered rows are one origin charge, its
			// on-demand rows another, each adding up to 1.
			if v == "1.3" {
				ratio := func(r map[string]string) float64 {
					var d struct {
						Elements []struct{ AllocatedRatio float64 }
					}
					require.NoError(t, json.Unmarshal([]byte(r["AllocatedMethodDetails"]), &d))
					sum := 0.0
					for _, e := range d.Elements {
						sum += e.AllocatedRatio
					}
					return sum
				}
				// od-job's covered part: $40 of od's covered $80; its
				// on-demand part $64 of $128; the same halves for od's idle rows.
				for _, k := range []int{1, 2, 4, 5} {
					require.InDelta(t, 0.5, ratio(rows[k]), 1e-9, "row %d", k+1)
					require.Equal(t, "gpuplan/focus-commitments/od", rows[k]["ResourceId"])
				}
				require.InDelta(t, 1, ratio(rows[6]), 1e-9, "g5's idle row is all of g5's covered charge")
			}
		})
	}
}

// The Savings Plan of testdata/focus-commitments.yaml at $40 an hour on
// od and g5: each hour the reserved instance covers one od node ($20 for
// $32), the plan, taking the pools in order, the other od node at $22.40
// ($32 covered) and both g5 at $3.50 ($10 covered), $10.60 unused. So od's
// rows split into halves covered by ri and by sp, none left at
// on-demand; over 4 hours sp's usage rows come to 4 x 29.40 = $117.60 and
// its unused rows 4 x 10.60 = $42.40, its fee 4 x 40 = $160.00. Bill: 396
// - 4 x (32 + 32 + 10) + 4 x (20 + 40) = $340.00 again.
func TestFOCUSSpendCommitmentOverTwoPools(t *testing.T) {
	src, err := os.ReadFile("testdata/focus-commitments.yaml")
	require.NoError(t, err)
	body := strings.Replace(strings.Replace(string(src), "hourly: 8", "hourly: 40", 1), "pools: [g5]", "pools: [od, g5]", 1)
	require.NotEqual(t, string(src), body)
	in := t.TempDir()
	trace, err := os.ReadFile("testdata/focus-commitments.csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in, "focus-commitments.csv"), trace, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in, "s.yaml"), []byte(body), 0o644))
	dir := t.TempDir()
	code, out, errOut := gpuplan(t, "simulate", filepath.Join(in, "s.yaml"), "--out", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "bill $340.00 after them against $396.00 at list prices")
	h, rows := readFOCUS(t, dir)
	require.NoError(t, focus.Check(h, rows))
	var billed, effective int64
	spUsed, spUnused, spFee := int64(0), int64(0), int64(0)
	odAtOnDemand := 0
	for _, r := range rows {
		billed += centsOf(t, r["BilledCost"])
		effective += centsOf(t, r["EffectiveCost"])
		if r["x_Pool"] == "od" && r["CommitmentDiscountId"] == "" {
			odAtOnDemand++
		}
		if r["CommitmentDiscountName"] != "sp" {
			continue
		}
		switch {
		case r["ChargeCategory"] == "Purchase":
			spFee += centsOf(t, r["BilledCost"])
		case r["CommitmentDiscountStatus"] == "Used":
			spUsed += centsOf(t, r["EffectiveCost"])
		default:
			spUnused += centsOf(t, r["EffectiveCost"])
		}
	}
	require.Equal(t, int64(34000), billed)
	require.Equal(t, int64(34000), effective)
	require.Equal(t, int64(11760), spUsed)
	require.Equal(t, int64(4240), spUnused)
	require.Equal(t, int64(16000), spFee)
	require.Zero(t, odAtOnDemand, "od is all covered")
}
