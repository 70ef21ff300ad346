package focus

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// AllocationMethod is the AllocatedMethodId of gpuplan's split cost
// allocation (FOCUS 1.3). The origin charge is a pool's nodes over the
// billing period: what they billed, from launch to end or the end of the
// run (gpuplan accounts usage per pool, not per node, so for a one-node
// pool it is the node). Each workload (a job, or an inference service's
// replicas) that held the pool's nodes gets an allocated charge: the GPU,
// vCPU and memory time its pods held, each at the node price's split into
// per-GPU, per-vCPU and per-GiB hourly rates (the rule of jobs.csv's
// cost_usd and the report's showback, so that the FOCUS file and the
// showback agree to the cent). For pods that ask for GPUs alone this is a
// share by GPU-time. What no pod held (idle nodes, idle GPUs on busy
// nodes) is the unallocated portion: a row with AllocatedResourceId null.
// AllocatedRatio is each row's cost over the origin charge's, so the
// ratios of one origin charge add up to 1. Each row keeps its own charge
// period (a job's, from its start to its end; the unallocated row's, the
// whole run), inside the billing period.
const AllocationMethod = "gpuplan-held-resource-time"

// origin is a split origin charge: the summed cost of its rows, and how
// many there are.
type origin struct {
	cost float64
	rows int
}

// splits reports whether a charge is a portion of its pool's split: a
// workload's (a job is set) or the unallocated rest (idle), not the OS
// disks of deallocated nodes.
func splits(c Charge) bool { return !c.Disk && !commitmentLevel(c) && (c.Job != "" || c.Idle) }

// originKey names a split row's origin charge: its pool, and the
// commitment that covered it (a pool's usage a commitment covered is a
// charge of its own, apart from the pool's uncovered usage).
func originKey(c Charge) string {
	if c.Commitment != nil {
		return c.Pool + "\x00" + c.Commitment.ID
	}
	return c.Pool
}

// splitOrigins sums each origin charge's split rows' cost (EffectiveCost).
func splitOrigins(charges []Charge) map[string]origin {
	out := map[string]origin{}
	for _, c := range charges {
		if splits(c) {
			o := out[originKey(c)]
			o.cost += c.Cost
			o.rows++
			out[originKey(c)] = o
		}
	}
	return out
}

// checkUsage checks a charge's resource usage: named units, finite
// non-negative figures whose costs add up to the charge's.
func checkUsage(c Charge) error {
	if len(c.Usage) == 0 {
		return nil
	}
	var sum float64
	for _, u := range c.Usage {
		switch {
		case strings.TrimSpace(u.Unit) == "":
			return errors.New("a resource usage has no unit")
		case !finite(u.Quantity, u.Cost) || u.Quantity < 0 || u.Cost < 0:
			return fmt.Errorf("resource usage %s: quantity %v, cost %v (want finite, non-negative)", u.Unit, u.Quantity, u.Cost)
		}
		sum += u.Cost
	}
	if !consistent(1, sum, c.Cost) {
		return fmt.Errorf("resource usage costs add up to %s, not Cost %s", FormatDecimal(sum), FormatDecimal(c.Cost))
	}
	return nil
}

// writeSplit sets a split row's FOCUS 1.3 columns: the origin resource
// (the pool) as ResourceId, the method and its details, and for a
// workload's row the workload as AllocatedResourceId with its tags.
func writeSplit(set func(k, v string), c Charge, o origin, subAccount, capacity string) {
	set("ResourceId", subAccount+"/"+c.Pool)
	set("ResourceName", c.Pool)
	set("AllocatedMethodId", AllocationMethod)
	set("AllocatedMethodDetails", methodDetails(c, o))
	resource := map[string]string{"pool": c.Pool, "capacityType": capacity}
	if c.GPUModel != "" {
		resource["gpuModel"] = c.GPUModel
	}
	set("Tags", jsonObject(resource))
	if c.Job == "" {
		return // the unallocated portion
	}
	set("AllocatedResourceId", subAccount+"/"+c.Pool+"/"+c.Job)
	set("AllocatedResourceName", c.Job)
	workload := map[string]string{"job": c.Job}
	if c.Team != "" {
		workload["team"] = c.Team
		workload["queue"] = c.Team
	}
	set("AllocatedTags", jsonObject(workload))
}

// methodDetails is a split row's AllocatedMethodDetails: an object whose
// Elements are the resources its workload held, each with its share of
// the origin charge (AllocatedRatio), unit and quantity; one element of
// node-hours when the charge lists no usage (the unallocated portion). An
// origin charge of no cost is split evenly over its rows.
func methodDetails(c Charge, o origin) string {
	type element struct {
		ratio    float64
		unit     string
		quantity float64
	}
	var els []element
	switch {
	case o.cost <= 0:
		els = []element{{1 / float64(o.rows), unitHours, c.Quantity}}
	case len(c.Usage) == 0:
		els = []element{{c.Cost / o.cost, unitHours, c.Quantity}}
	default:
		for _, u := range c.Usage {
			els = append(els, element{u.Cost / o.cost, u.Unit, u.Quantity})
		}
	}
	var b strings.Builder
	b.WriteString(`{"Elements":[`)
	for i, e := range els {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"AllocatedRatio":%s,"UsageUnit":%s,"UsageQuantity":%s}`,
			FormatDecimal(e.ratio), strconv.Quote(e.unit), FormatDecimal(e.quantity))
	}
	b.WriteString("]}")
	return b.String()
}

// checkJSONObject checks FOCUS 1.3's JSON Object Format: a JSON object
// (nesting allowed), no key twice at any level.
func checkJSONObject(s string) error {
	if !json.Valid([]byte(s)) {
		return fmt.Errorf("%q is not JSON", s)
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%q is not a JSON object", s)
	}
	return uniqueKeys(d, '{')
}

// uniqueKeys reads the rest of an object or array whose opening delim
// was read, refusing a key repeated in one object.
func uniqueKeys(d *json.Decoder, open json.Delim) error {
	keys := map[string]bool{}
	for d.More() {
		if open == '{' {
			tok, err := d.Token()
			if err != nil {
				return err
			}
			k, _ := tok.(string)
			if keys[k] {
				return fmt.Errorf("key %q appears twice", k)
			}
			keys[k] = true
		}
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if delim, ok := tok.(json.Delim); ok {
			if err := uniqueKeys(d, delim); err != nil {
				return err
			}
		}
	}
	_, err := d.Token() // the closing delim
	return err
}

// allocationDetails is AllocatedMethodDetails read for Check.
type allocationDetails struct {
	Elements []map[string]json.RawMessage `json:"Elements"`
}

// parseMethodDetails checks AllocatedMethodDetails against FOCUS 1.3's
// object requirements (a top-level Elements array of objects, each with a
// numeric AllocatedRatio; UsageUnit a string, present when UsageQuantity
// is; UsageQuantity a number; any other key, in an element or beside
// Elements, x_-prefixed) and returns the sum of the elements' ratios.
func parseMethodDetails(s string) (float64, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &root); err != nil {
		return 0, fmt.Errorf("not a JSON object: %v", err)
	}
	for k := range root {
		if k != "Elements" && !strings.HasPrefix(k, "x_") {
			return 0, fmt.Errorf("key %q is neither Elements nor an x_ custom key", k)
		}
	}
	raw, ok := root["Elements"]
	if !ok {
		return 0, errors.New("no Elements array")
	}
	var d allocationDetails
	if err := json.Unmarshal([]byte(`{"Elements":`+string(raw)+`}`), &d); err != nil || d.Elements == nil {
		return 0, errors.New("Elements is not an array of objects")
	}
	if len(d.Elements) == 0 {
		return 0, errors.New("Elements is empty")
	}
	var sum float64
	for i, e := range d.Elements {
		if e == nil {
			return 0, fmt.Errorf("Elements[%d] is not an object", i)
		}
		for k := range e {
			switch k {
			case "AllocatedRatio", "UsageUnit", "UsageQuantity":
			default:
				if !strings.HasPrefix(k, "x_") {
					return 0, fmt.Errorf("Elements[%d]: key %q is neither a FOCUS property nor an x_ custom key", i, k)
				}
			}
		}
		r, err := jsonNumber(e["AllocatedRatio"])
		if err != nil {
			return 0, fmt.Errorf("Elements[%d].AllocatedRatio: %v", i, err)
		}
		sum += r
		if q, ok := e["UsageQuantity"]; ok {
			if _, err := jsonNumber(q); err != nil {
				return 0, fmt.Errorf("Elements[%d].UsageQuantity: %v", i, err)
			}
			if _, ok := e["UsageUnit"]; !ok {
				return 0, fmt.Errorf("Elements[%d] has UsageQuantity without UsageUnit", i)
			}
		}
		if u, ok := e["UsageUnit"]; ok {
			var unit string
			if err := json.Unmarshal(u, &unit); err != nil || unit == "" {
				return 0, fmt.Errorf("Elements[%d].UsageUnit is not a string", i)
			}
		}
	}
	return sum, nil
}

func jsonNumber(raw json.RawMessage) (float64, error) {
	if raw == nil {
		return 0, errors.New("missing")
	}
	var n json.Number
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return 0, errors.New("not a number")
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return 0, errors.New("not a finite number")
	}
	return f, nil
}

// splitGroup is the rows of one origin charge, as Check sees them: rows
// with the same AllocatedMethodId, ResourceId and billing period.
type splitGroup struct {
	rows   []int     // row numbers
	ratios []float64 // the rows' AllocatedRatio sums
	costs  []float64 // the rows' EffectiveCost
}

type splitKey struct{ method, resource, commitment, start, end string }

// splitRules checks the FOCUS 1.3 requirements of a row's split cost
// allocation columns and gathers it into its origin charge for
// splitTotals.
func (c *checker) splitRules(rn int, row map[string]string, nums map[string]float64) {
	add, present := c.add, c.present
	isNull := func(id string) bool { return c.isNull(row, id) }
	method := !isNull("AllocatedMethodId")
	if present["AllocatedMethodId"] {
		for _, id := range []string{"AllocatedMethodDetails", "AllocatedResourceId", "AllocatedTags"} {
			if present[id] && !method && !isNull(id) {
				add("row %d: %s must be null on a charge with no split cost allocation (AllocatedMethodId null)", rn, id)
			}
		}
	}
	if !isNull("AllocatedTags") && !isNull("Tags") {
		var alloc, tags map[string]json.RawMessage
		if json.Unmarshal([]byte(row["AllocatedTags"]), &alloc) == nil && json.Unmarshal([]byte(row["Tags"]), &tags) == nil {
			for k := range alloc {
				if _, dup := tags[k]; dup {
					add("row %d: AllocatedTags repeats tag %q of Tags", rn, k)
				}
			}
		}
	}
	if !present["AllocatedMethodDetails"] || isNull("AllocatedMethodDetails") {
		return
	}
	ratio, err := parseMethodDetails(row["AllocatedMethodDetails"])
	if err != nil {
		add("row %d: AllocatedMethodDetails: %v", rn, err)
		return
	}
	cost, ok := nums["EffectiveCost"]
	if !ok || !method {
		return
	}
	k := splitKey{row["AllocatedMethodId"], row["ResourceId"], row["CommitmentDiscountId"], row["BillingPeriodStart"], row["BillingPeriodEnd"]}
	if c.splits == nil {
		c.splits = map[splitKey]*splitGroup{}
	}
	g := c.splits[k]
	if g == nil {
		g = &splitGroup{}
		c.splits[k] = g
		c.splitOrder = append(c.splitOrder, k)
	}
	g.rows = append(g.rows, rn)
	g.ratios = append(g.ratios, ratio)
	g.costs = append(g.costs, cost)
}

// splitTotals checks each origin charge: its rows' AllocatedRatio add up
// to 1, and each row's ratio is its share of the origin charge's cost
// (the sum of its rows' EffectiveCost: BilledCost on a charge no
// commitment covered, the amortised commitment on one it covered), to a
// millionth.
func (c *checker) splitTotals() {
	const tol = 1e-6
	for _, k := range c.splitOrder {
		g := c.splits[k]
		var ratios, cost float64
		for i := range g.rows {
			ratios += g.ratios[i]
			cost += g.costs[i]
		}
		if math.Abs(ratios-1) > tol {
			c.add("origin charge %s (%s): AllocatedRatio adds up to %s over rows %v, not 1", k.resource, k.method, FormatDecimal(ratios), g.rows)
		}
		if cost <= 0 {
			continue
		}
		for i, rn := range g.rows {
			if share := g.costs[i] / cost; math.Abs(share-g.ratios[i]) > tol {
				c.add("row %d: AllocatedRatio %s is not its share %s of origin charge %s's cost %s",
					rn, FormatDecimal(g.ratios[i]), FormatDecimal(share), k.resource, FormatDecimal(cost))
			}
		}
	}
}

// jsonObjectFormat is the JSON columns of FOCUS 1.3 in the JSON Object
// Format (nested values allowed), not the Key-Value Format.
var jsonObjectFormat = map[string]bool{"AllocatedMethodDetails": true, "ContractApplied": true}

// rules13 checks the requirements FOCUS 1.3 adds across a row's columns
// other than the split's.
func (c *checker) rules13(rn int, row map[string]string) {
	add, present := c.add, c.present
	isNull := func(id string) bool { return c.isNull(row, id) }
	for _, id := range []string{"HostProviderName", "ServiceProviderName"} {
		if present[id] && isNull(id) {
			add("row %d: %s is null, which FOCUS 1.3 does not allow", rn, id)
		}
	}
	if present["AllocatedResourceId"] && present["AllocatedResourceName"] && isNull("AllocatedResourceId") != isNull("AllocatedResourceName") {
		if isNull("AllocatedResourceId") {
			add("row %d: AllocatedResourceName must be null when AllocatedResourceId is null", rn)
		} else {
			add("row %d: AllocatedResourceName must not be null when AllocatedResourceId is not null", rn)
		}
	}
	if present["SkuPriceId"] {
		noPrice := isNull("SkuPriceId")
		for _, id := range []string{"ContractedUnitPrice", "CommitmentDiscountQuantity"} {
			if present[id] && noPrice && !isNull(id) {
				add("row %d: %s must be null when SkuPriceId is null", rn, id)
			}
		}
		if present["ContractedUnitPrice"] && !noPrice && isNull("ContractedUnitPrice") {
			add("row %d: ContractedUnitPrice must not be null when SkuPriceId is not null", rn)
		}
	}
}
