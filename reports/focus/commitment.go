package focus

import "math"

// commitmentGroup is the rows of one CommitmentDiscountId, as Check sees
// them.
type commitmentGroup struct {
	usageEffective, purchaseBilled float64
	purchases                      int
	unit                           string // the first non-null CommitmentDiscountUnit
	unitRow                        int
}

// commitmentRules checks the commitment-discount requirements of a row
// (FOCUS 1.2 and 1.3; testdata/focus-1.2 holds the column files quoted)
// and gathers it into its commitment for commitmentTotals:
//   - effectivecost.md: "EffectiveCost MUST be 0 when ChargeCategory is
//     "Purchase" and the purchase is intended to cover future eligible
//     charges" (a Purchase row with a CommitmentDiscountId);
//   - pricingcategory.md: "PricingCategory MUST be "Committed" when the
//     charge is subject to an existing commitment discount and is not the
//     purchase of the commitment discount" (a Usage row with a
//     CommitmentDiscountId);
//   - commitmentdiscountunit.md: "CommitmentDiscountUnit MUST remain
//     consistent over time for a given CommitmentDiscountId".
//
// The nullability rules of these columns (Status, Quantity, Unit,
// Category, Type and Name by CommitmentDiscountId and ChargeCategory,
// CapacityReservationStatus by CapacityReservationId, ConsumedQuantity
// null on unused commitment) are in rules.
func (c *checker) commitmentRules(rn int, row map[string]string, nums map[string]float64) {
	id, _ := c.get(row, "CommitmentDiscountId")
	if id == "" {
		return
	}
	category, _ := c.get(row, "ChargeCategory")
	if category == "Purchase" {
		if v, ok := nums["EffectiveCost"]; ok && v != 0 {
			c.add("row %d: EffectiveCost %s must be 0 on the purchase of commitment discount %s", rn, row["EffectiveCost"], id)
		}
	}
	if category == "Usage" {
		if v, ok := c.get(row, "PricingCategory"); ok && v != "" && v != "Committed" {
			c.add("row %d: PricingCategory %q must be Committed on usage subject to commitment discount %s", rn, v, id)
		}
	}
	if c.commitments == nil {
		c.commitments = map[string]*commitmentGroup{}
	}
	g := c.commitments[id]
	if g == nil {
		g = &commitmentGroup{}
		c.commitments[id] = g
		c.commitmentOrder = append(c.commitmentOrder, id)
	}
	switch category {
	case "Usage":
		g.usageEffective += nums["EffectiveCost"]
	case "Purchase":
		g.purchaseBilled += nums["BilledCost"]
		g.purchases++
	}
	if u, _ := c.get(row, "CommitmentDiscountUnit"); u != "" {
		switch {
		case g.unit == "":
			g.unit, g.unitRow = u, rn
		case u != g.unit:
			c.add("row %d: CommitmentDiscountUnit %q of commitment discount %s is not %q (row %d)", rn, u, id, g.unit, g.unitRow)
		}
	}
}

// commitmentTotals checks effectivecost.md's "The sum of EffectiveCost
// where ChargeCategory is "Usage" MUST equal the sum of BilledCost where
// ChargeCategory is "Purchase"" for each CommitmentDiscountId whose
// purchase the file holds (a file of one month may hold usage of a
// commitment bought in another), to a cent or a millionth of the amount.
func (c *checker) commitmentTotals() {
	for _, id := range c.commitmentOrder {
		g := c.commitments[id]
		if g.purchases == 0 {
			continue
		}
		d := math.Abs(g.usageEffective - g.purchaseBilled)
		if d > 0.005 && d > 1e-6*math.Abs(g.purchaseBilled) {
			c.add("commitment discount %s: its Usage rows' EffectiveCost adds up to %s, its Purchase rows' BilledCost to %s",
				id, FormatDecimal(g.usageEffective), FormatDecimal(g.purchaseBilled))
		}
	}
}
