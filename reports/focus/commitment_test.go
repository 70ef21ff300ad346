package focus

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spec12Dir holds FOCUS 1.2's column files of the commitment-discount
// and capacity-reservation columns and of the cost columns whose rules
// tie to them, copied from the v1.2 tag (see testdata/PROVENANCE.md).
const spec12Dir = "testdata/focus-1.2"

// commitmentCharges is an hour of a reserved pool (a job on one node, the
// other idle: $15 each), an on-demand job of 2 node-hours at $10, one
// covered by the Savings Plan sp ($7 of its $8, 30% off) and one not, the
// plan's unused $1 and its $8 fee.
func commitmentCharges() []Charge {
	h := time.Hour
	sp := &CommitmentDiscount{ID: "gpuplan/demo/commitments/sp", Name: "sp", Type: "Savings Plan", Category: "Spend", Unit: "USD"}
	block := Charge{Start: t0, End: t0.Add(h), Provider: "AWS", Region: "us-east-1", Pool: "block", InstanceType: "p4d.24xlarge",
		CapacityType: "reserved", Cost: 15, ListCost: 15, Quantity: 1, UnitPrice: 15, ListUnitPrice: 15, Reservation: "gpuplan/demo/block/capacity-reservation"}
	job, idle := block, block
	job.Team, job.Job, job.ReservationStatus = "ml", "train", "Used"
	idle.Idle, idle.ReservationStatus = true, "Unused"
	od := Charge{Start: t0, End: t0.Add(2 * h), Provider: "AWS", Region: "us-east-1", Pool: "od", InstanceType: "g5.12xlarge",
		CapacityType: "on-demand", Team: "ml", Job: "eval", Cost: 10, ListCost: 10, Quantity: 1, UnitPrice: 10, ListUnitPrice: 10}
	covered := od
	covered.Cost, covered.Commitment, covered.CommitmentStatus, covered.CommitmentQuantity = 7, sp, "Used", 7
	own := Charge{Start: t0, End: t0.Add(h), Provider: "AWS", InstanceType: "Savings Plan", Commitment: sp}
	unused := own
	unused.CommitmentStatus, unused.CommitmentQuantity, unused.Quantity, unused.UnitPrice, unused.ListUnitPrice, unused.Cost, unused.ListCost = "Unused", 1, 1, 1, 1, 1, 1
	fee := own
	fee.Purchase, fee.CommitmentQuantity, fee.Quantity, fee.UnitPrice, fee.ListUnitPrice, fee.Cost, fee.ListCost = "Recurring", 8, 8, 1, 1, 8, 8
	return []Charge{job, idle, covered, od, unused, fee}
}

func writeVersion(t *testing.T, v Version, charges []Charge) ([]string, []map[string]string) {
	t.Helper()
	o := sampleOptions
	o.Version = v
	var buf bytes.Buffer
	if err := Write(&buf, o, charges); err != nil {
		t.Fatal(err)
	}
	h, rows, err := ReadTable(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return h, rows
}

// The rows as FOCUS wants them: covered usage billed 0 and costing its
// share of the commitment, the unused part and the fee its own rows, the
// purchase billed and not effective; totals agree.
func TestWriteCommitmentRows(t *testing.T) {
	for _, v := range Versions() {
		h, rows := writeVersion(t, v, commitmentCharges())
		if err := CheckVersion(v, h, rows); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		var billed, effective int64
		for _, r := range rows {
			billed += cents(t, r["BilledCost"])
			effective += cents(t, r["EffectiveCost"])
		}
		// 15 + 15 + 10 + 8 billed; 15 + 15 + 7 + 10 + 1 effective.
		if billed != 4800 || effective != 4800 {
			t.Errorf("%s: billed %d, effective %d cents; want 4800 each", v, billed, effective)
		}
		want := []struct{ cat, freq, pricing, status, consumed, resource, reservation string }{
			{"Usage", "Usage-Based", "Committed", "", "1", "gpuplan/demo/block", "Used"},
			{"Usage", "Usage-Based", "Committed", "", "1", "gpuplan/demo/block", "Unused"},
			{"Usage", "Usage-Based", "Committed", "Used", "1", "gpuplan/demo/od", ""},
			{"Usage", "Usage-Based", "Standard", "", "1", "gpuplan/demo/od", ""},
			{"Usage", "Usage-Based", "Committed", "Unused", "", "gpuplan/demo/commitments/sp", ""},
			{"Purchase", "Recurring", "Standard", "", "", "gpuplan/demo/commitments/sp", ""},
		}
		for i, w := range want {
			r := rows[i]
			res := strings.TrimSuffix(strings.TrimSuffix(r["ResourceId"], "/train"), "/eval")
			got := struct{ cat, freq, pricing, status, consumed, resource, reservation string }{r["ChargeCategory"], r["ChargeFrequency"],
				r["PricingCategory"], r["CommitmentDiscountStatus"], r["ConsumedQuantity"], res, r["CapacityReservationStatus"]}
			if got != w {
				t.Errorf("%s row %d: %+v, want %+v", v, i+1, got, w)
			}
		}
		if rows[2]["BilledCost"] != "0" || rows[2]["EffectiveCost"] != "7" || rows[2]["ContractedCost"] != "10" || rows[2]["ListCost"] != "10" {
			t.Errorf("%s: covered row billed %s, effective %s, contracted %s, list %s; want 0, 7, 10, 10", v,
				rows[2]["BilledCost"], rows[2]["EffectiveCost"], rows[2]["ContractedCost"], rows[2]["ListCost"])
		}
		if rows[5]["BilledCost"] != "8" || rows[5]["EffectiveCost"] != "0" || rows[5]["CommitmentDiscountQuantity"] != "8" {
			t.Errorf("%s: purchase billed %s, effective %s, quantity %s; want 8, 0, 8", v, rows[5]["BilledCost"], rows[5]["EffectiveCost"], rows[5]["CommitmentDiscountQuantity"])
		}
	}
}

// Without commitments or reservations the file has none of their columns
// (a run without them writes what it wrote before); with them, all.
func TestCommitmentColumnsOnlyWhenUsed(t *testing.T) {
	for _, v := range Versions() {
		h, _ := writeVersion(t, v, sampleCharges())
		if strings.Join(h, ",") != strings.Join(append(v.emitted(), custom...), ",") {
			t.Errorf("%s: header %v", v, h)
		}
		h, _ = writeVersion(t, v, commitmentCharges())
		for _, id := range append(append([]string(nil), commitmentColumns...), reservationColumns...) {
			if !strings.Contains(","+strings.Join(h, ",")+",", ","+id+",") {
				t.Errorf("%s: no column %s", v, id)
			}
		}
	}
}

// Each commitment-discount and capacity-reservation rule CheckVersion
// applies, with the sentence of the column file it comes from (FOCUS
// 1.2's, and 1.3's where testdata/focus-1.3 has the file; see
// PROVENANCE.md): each version's file must say it, Write's rows must
// pass, and the rows edited to break it must not.
func TestCheckCommitmentRulesQuoteSpec(t *testing.T) {
	set := func(row int, kv ...string) func([]map[string]string) {
		return func(rows []map[string]string) {
			for i := 0; i < len(kv); i += 2 {
				rows[row][kv[i]] = kv[i+1]
			}
		}
	}
	for _, tc := range []struct {
		file, sentence string
		edit           func([]map[string]string)
		want           string
	}{
		{"effectivecost.md", `EffectiveCost MUST be 0 when [ChargeCategory](#chargecategory) is "Purchase" and the purchase is intended to cover future eligible *charges*.`,
			set(5, "EffectiveCost", "8"), "row 6: EffectiveCost 8 must be 0 on the purchase of commitment discount gpuplan/demo/commitments/sp"},
		{"effectivecost.md", `The sum of EffectiveCost where ChargeCategory is "Usage" MUST equal the sum of BilledCost where ChargeCategory is "Purchase".`,
			set(4, "EffectiveCost", "2"), "commitment discount gpuplan/demo/commitments/sp: its Usage rows' EffectiveCost adds up to 9, its Purchase rows' BilledCost to 8"},
		{"pricingcategory.md", `PricingCategory MUST be "Committed" when the *charge* is subject to an existing *commitment discount* and is not the purchase of the *commitment discount*.`,
			set(2, "PricingCategory", "Standard"), `row 3: PricingCategory "Standard" must be Committed`},
		{"commitmentdiscountunit.md", "CommitmentDiscountUnit MUST remain consistent over time for a given CommitmentDiscountId.",
			set(4, "CommitmentDiscountUnit", "Hours", "PricingUnit", "Hours"), `row 5: CommitmentDiscountUnit "Hours" of commitment discount gpuplan/demo/commitments/sp is not "USD" (row 3)`},
		{"commitmentdiscountstatus.md", `CommitmentDiscountStatus MUST NOT be null when CommitmentDiscountId is not null and [Charge Category](#chargecategory) is "Usage".`,
			set(2, "CommitmentDiscountStatus", ""), "row 3: CommitmentDiscountStatus is null on a Usage charge with a CommitmentDiscountId"},
		{"commitmentdiscountstatus.md", "CommitmentDiscountStatus MUST be null when [CommitmentDiscountId](#commitmentdiscountid) is null.",
			set(3, "CommitmentDiscountStatus", "Used"), "row 4: CommitmentDiscountStatus must be null when CommitmentDiscountId is null"},
		{"commitmentdiscountstatus.md", "CommitmentDiscountStatus MUST be one of the allowed values.",
			set(2, "CommitmentDiscountStatus", "Partial"), `row 3: CommitmentDiscountStatus "Partial" is not one of the allowed values`},
		{"consumedquantity.md", `ConsumedQuantity MUST be null when [ChargeCategory](#chargecategory) is not "Usage", or when ChargeCategory is "Usage" and [CommitmentDiscountStatus](#commitmentdiscountstatus) is "Unused".`,
			set(4, "ConsumedQuantity", "1", "ConsumedUnit", "USD"), "row 5: ConsumedQuantity must be null on unused commitment"},
		{"consumedquantity.md", `ConsumedQuantity MUST be null when [ChargeCategory](#chargecategory) is not "Usage"`,
			set(5, "ConsumedQuantity", "8", "ConsumedUnit", "USD"), `row 6: ConsumedQuantity must be null when ChargeCategory is "Purchase"`},
		{"commitmentdiscountquantity.md", `CommitmentDiscountQuantity MUST NOT be null when [ChargeClass](#chargeclass) is not "Correction".`,
			set(5, "CommitmentDiscountQuantity", "", "CommitmentDiscountUnit", ""), "row 6: CommitmentDiscountQuantity is null on a Purchase charge with a CommitmentDiscountId"},
		{"commitmentdiscountquantity.md", "CommitmentDiscountQuantity MUST be null in all other cases.",
			set(3, "CommitmentDiscountQuantity", "1", "CommitmentDiscountUnit", "USD"), "row 4: CommitmentDiscountQuantity must be null here"},
		{"commitmentdiscountunit.md", "CommitmentDiscountUnit MUST NOT be null when CommitmentDiscountQuantity is not null.",
			set(2, "CommitmentDiscountUnit", ""), "row 3: CommitmentDiscountUnit must not be null when CommitmentDiscountQuantity is not null"},
		{"commitmentdiscountcategory.md", "CommitmentDiscountCategory MUST be one of the allowed values.",
			set(2, "CommitmentDiscountCategory", "Dollars"), `row 3: CommitmentDiscountCategory "Dollars" is not one of the allowed values`},
		{"commitmentdiscountcategory.md", "CommitmentDiscountCategory MUST NOT be null when CommitmentDiscountId is not null.",
			set(5, "CommitmentDiscountCategory", ""), "row 6: CommitmentDiscountCategory must not be null when CommitmentDiscountId is not null"},
		{"commitmentdiscounttype.md", "CommitmentDiscountType MUST NOT be null when CommitmentDiscountId is not null.",
			set(4, "CommitmentDiscountType", ""), "row 5: CommitmentDiscountType must not be null when CommitmentDiscountId is not null"},
		{"commitmentdiscountname.md", "CommitmentDiscountName MUST be null when [CommitmentDiscountId](#commitmentdiscountid) is null.",
			set(3, "CommitmentDiscountName", "sp"), "row 4: CommitmentDiscountName must be null when CommitmentDiscountId is null"},
		{"capacityreservationstatus.md", `CapacityReservationStatus MUST NOT be null when CapacityReservationId is not null and [ChargeCategory](#chargecategory) is "Usage".`,
			set(1, "CapacityReservationStatus", ""), "row 2: CapacityReservationStatus is null on a Usage charge with a CapacityReservationId"},
		{"capacityreservationstatus.md", "CapacityReservationStatus MUST be null when CapacityReservationId is null.",
			set(3, "CapacityReservationStatus", "Used"), "row 4: CapacityReservationStatus must be null when CapacityReservationId is null"},
		{"capacityreservationstatus.md", "CapacityReservationStatus MUST be one of the allowed values.",
			set(0, "CapacityReservationStatus", "Reserved"), `row 1: CapacityReservationStatus "Reserved" is not one of the allowed values`},
	} {
		for _, v := range Versions() {
			// 1.3's copy of the file where testdata/focus-1.3 has one,
			// else 1.2's (PROVENANCE.md: 1.3 kept those rules).
			b, err := os.ReadFile(filepath.Join(spec13Dir, tc.file))
			if v == V1_2 || os.IsNotExist(err) {
				b, err = os.ReadFile(filepath.Join(spec12Dir, tc.file))
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.sentence) {
				t.Errorf("%s %s does not say %q", v, tc.file, tc.sentence)
				continue
			}
			h, rows := writeVersion(t, v, commitmentCharges())
			if err := CheckVersion(v, h, rows); err != nil {
				t.Fatalf("%s before the edit: %v", v, err)
			}
			tc.edit(rows)
			err = CheckVersion(v, h, rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: got %v\nwant an error with %q", v, tc.file, err, tc.want)
			}
		}
	}
}

// Write refuses commitment and reservation fields that do not hold
// together.
func TestWriteRefusesCommitments(t *testing.T) {
	for _, tc := range []struct {
		row  int
		edit func(*Charge)
		want string
	}{
		{0, func(c *Charge) { c.ReservationStatus = "Partly" }, `capacity reservation status "Partly" is not Used or Unused`},
		{3, func(c *Charge) { c.ReservationStatus = "Used" }, "a capacity reservation status without a reservation"},
		{3, func(c *Charge) { c.CommitmentStatus = "Used" }, "a commitment status, purchase or quantity without a commitment"},
		{2, func(c *Charge) { c.CommitmentStatus = "" }, `commitment status "" is not Used or Unused`},
		{5, func(c *Charge) { c.Purchase = "Monthly" }, `a commitment's purchase is "Monthly", not One-Time or Recurring`},
		{5, func(c *Charge) { c.CommitmentStatus = "Used" }, "a commitment's purchase has no status"},
		{2, func(c *Charge) { cd := *c.Commitment; cd.Category = "Dollars"; c.Commitment = &cd }, `commitment category "Dollars" is not Spend or Usage`},
		{2, func(c *Charge) { cd := *c.Commitment; cd.ID = ""; c.Commitment = &cd }, "a commitment needs an ID, a type and a unit"},
		{4, func(c *Charge) { c.Cost = 2 }, "UnitPrice 1 x Quantity 1 is not Cost 2"},
		{4, func(c *Charge) { c.CommitmentQuantity = -1 }, "a negative commitment quantity"},
	} {
		ch := commitmentCharges()
		tc.edit(&ch[tc.row])
		err := Write(&bytes.Buffer{}, sampleOptions, ch)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
