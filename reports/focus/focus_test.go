package focus

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// specCSV reads testdata/focus-columns.csv, the column list taken from
// the FOCUS 1.2 specification's markdown. The tests of this file check the
// 1.2 writer and checker; focus13_test.go checks 1.3's.
func specCSV(t *testing.T) []Column {
	t.Helper()
	f, err := os.Open("testdata/focus-columns.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ColumnId", "FeatureLevel", "DataType", "AllowsNulls", "AllowedValues", "Introduced"}
	if !slices.Equal(recs[0], want) {
		t.Fatalf("header %v, want %v", recs[0], want)
	}
	var cols []Column
	for _, r := range recs[1:] {
		c := Column{ID: r[0], FeatureLevel: r[1], DataType: r[2], Introduced: r[5]}
		switch r[3] {
		case "True":
			c.AllowsNulls = true
		case "False":
		default:
			t.Fatalf("%s: AllowsNulls %q", r[0], r[3])
		}
		if r[4] != "" {
			c.AllowedValues = strings.Split(r[4], ";")
		}
		cols = append(cols, c)
	}
	return cols
}

func versionAtMost(v, max string) bool {
	order := []string{"0.5", "1.0-preview", "1.0", "1.1", "1.2", "1.3"}
	i, j := slices.Index(order, v), slices.Index(order, max)
	return i >= 0 && j >= 0 && i <= j
}

func TestSpecMatchesTestdata(t *testing.T) {
	want := specCSV(t)
	got := V1_2.Spec()
	if len(got) != len(want) {
		t.Errorf("V1_2.Spec() has %d columns, the specification %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.FeatureLevel != w.FeatureLevel || g.DataType != w.DataType ||
			g.AllowsNulls != w.AllowsNulls || g.Introduced != w.Introduced ||
			!slices.Equal(g.AllowedValues, w.AllowedValues) {
			t.Errorf("column %d:\n got %+v\nwant %+v", i, g, w)
		}
		if !versionAtMost(w.Introduced, string(V1_2)) {
			t.Errorf("%s introduced in %s, after %s", w.ID, w.Introduced, V1_2)
		}
	}
}

func TestColumnsAgreeWithSpec(t *testing.T) {
	byID := map[string]Column{}
	for _, c := range specCSV(t) {
		byID[c.ID] = c
	}
	emittedIDs := map[string]bool{}
	prev := ""
	for _, c := range V1_2.Columns() {
		w, ok := byID[c.ID]
		if !ok {
			t.Errorf("emitted column %s is not in FOCUS %s", c.ID, V1_2)
			continue
		}
		if c.DataType != w.DataType || c.FeatureLevel != w.FeatureLevel || c.AllowsNulls != w.AllowsNulls {
			t.Errorf("%s: got %s %s nulls=%v, spec %s %s nulls=%v", c.ID,
				c.FeatureLevel, c.DataType, c.AllowsNulls, w.FeatureLevel, w.DataType, w.AllowsNulls)
		}
		if c.ID <= prev {
			t.Errorf("%s after %s: not in the specification's alphabetical order", c.ID, prev)
		}
		prev = c.ID
		emittedIDs[c.ID] = true
	}
	for _, w := range specCSV(t) {
		if w.FeatureLevel == Mandatory && !emittedIDs[w.ID] {
			t.Errorf("Mandatory column %s is not emitted", w.ID)
		}
	}
	for _, id := range []string{
		"AvailabilityZone", "ConsumedQuantity", "ConsumedUnit", "ContractedUnitPrice", "ListUnitPrice",
		"PricingCategory", "PricingQuantity", "PricingUnit", "RegionId", "RegionName", "ResourceId",
		"ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "SkuId", "SkuPriceId",
		"SubAccountId", "SubAccountName", "Tags", "ContractedCost", "ChargeFrequency",
	} {
		if !emittedIDs[id] {
			t.Errorf("compute column %s is not emitted", id)
		}
	}
	for _, x := range CustomColumns() {
		if !strings.HasPrefix(x, "x_") {
			t.Errorf("custom column %s lacks the x_ prefix", x)
		}
	}
}

func TestServiceSubcategoriesMatchTestdata(t *testing.T) {
	f, err := os.Open("testdata/focus-service-subcategories.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[1:]
	if len(recs) != len(serviceSubcategories) {
		t.Fatalf("%d subcategories, the specification %d", len(serviceSubcategories), len(recs))
	}
	cats := specByID12["ServiceCategory"].AllowedValues
	for i, r := range recs {
		if s := serviceSubcategories[i]; s.Category != r[0] || s.Subcategory != r[1] {
			t.Errorf("subcategory %d: got %v, spec %v", i, s, r)
		}
		if !slices.Contains(cats, r[0]) {
			t.Errorf("%s: parent %s is not a ServiceCategory", r[1], r[0])
		}
	}
	if ServiceSubcategoryParent("Virtual Machines") != "Compute" {
		t.Error("Virtual Machines is not under Compute")
	}
}

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func sampleCharges() []Charge {
	h := time.Hour
	return []Charge{
		{Start: t0, End: t0.Add(2 * h), Provider: "AWS", Region: "us-east-1", Zone: "us-east-1a",
			Pool: "h100", InstanceType: "p5.48xlarge", CapacityType: "on-demand", GPUModel: "H100",
			Team: "ml", Job: "train-1", Cost: 2 * 98.32, ListCost: 2 * 98.32, Quantity: 2, ListUnitPrice: 98.32, UnitPrice: 98.32},
		{Start: t0, End: t0.Add(h), Provider: "AWS", Region: "us-east-1", Zone: "us-east-1b",
			Pool: "h100-spot", InstanceType: "p5.48xlarge", CapacityType: "spot", GPUModel: "H100",
			Idle: true, Cost: 1.0 / 3 * 40.1, ListCost: 1.0 / 3 * 98.32, Quantity: 1.0 / 3, ListUnitPrice: 98.32, UnitPrice: 40.1},
		{Start: t0.Add(30 * time.Minute), End: t0.Add(90 * time.Minute), Provider: "Google Cloud", Region: "us-central1",
			Pool: "a100", InstanceType: "a2-highgpu-8g", CapacityType: "spot", GPUModel: "A100",
			Team: "research", Job: "sweep-7", Cost: 0.0000001, ListCost: 0.0000004, Quantity: 0.000000001, ListUnitPrice: 400, UnitPrice: 100},
		{Start: t0, End: t0.Add(3 * h), Provider: "Microsoft Azure", Region: "eastus",
			Pool: "nd", InstanceType: "Standard_ND96isr_H100_v5", CapacityType: "on-demand",
			Team: "ml", Job: `eval "quoted", with comma`, Cost: 3 * 90, ListCost: 3 * 98, Quantity: 3, ListUnitPrice: 98, UnitPrice: 90},
		{Start: t0, End: t0.Add(h), Pool: "local", InstanceType: "dgx-h100", CapacityType: "on-demand",
			Idle: true, Cost: 0, ListCost: 0, Quantity: 1, ListUnitPrice: 0, UnitPrice: 0},
	}
}

var sampleOptions = Options{
	BillingAccountID: "acct-1", BillingAccountName: "Example Corp", Scenario: "demo",
	BillingStart: t0, BillingEnd: t0.AddDate(0, 1, 0), Version: V1_2,
}

func TestWriteReadCheck(t *testing.T) {
	charges := sampleCharges()
	var buf bytes.Buffer
	if err := Write(&buf, sampleOptions, charges); err != nil {
		t.Fatal(err)
	}
	header, rows, err := ReadTable(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckVersion(V1_2, header, rows); err != nil {
		t.Fatalf("Check refused Write's output:\n%v\n%s", err, buf.String())
	}
	rows2, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil || len(rows2) != len(rows) {
		t.Fatalf("Read: %d rows, %v", len(rows2), err)
	}
	var wantHeader []string
	for _, c := range V1_2.Columns() {
		wantHeader = append(wantHeader, c.ID)
	}
	wantHeader = append(wantHeader, CustomColumns()...)
	if !slices.Equal(header, wantHeader) {
		t.Errorf("header %v, want %v", header, wantHeader)
	}
	if len(rows) != len(charges) {
		t.Fatalf("%d rows for %d charges", len(rows), len(charges))
	}
	var billed, want float64
	for i, r := range rows {
		v, err := ParseDecimal(r["BilledCost"])
		if err != nil {
			t.Fatal(err)
		}
		billed += v
		want += charges[i].Cost
		for _, money := range []string{"BilledCost", "EffectiveCost", "ContractedCost", "ListCost", "ListUnitPrice", "ContractedUnitPrice", "PricingQuantity", "ConsumedQuantity"} {
			if strings.ContainsAny(r[money], "eE+") {
				t.Errorf("row %d: %s %q in scientific notation", i, money, r[money])
			}
			if j := strings.IndexByte(r[money], '.'); j >= 0 && len(r[money])-j-1 > 10 {
				t.Errorf("row %d: %s %q has more than 10 decimals", i, money, r[money])
			}
		}
		if r["BilledCost"] != r["EffectiveCost"] || r["BilledCost"] != r["ContractedCost"] {
			t.Errorf("row %d: BilledCost %s, EffectiveCost %s, ContractedCost %s", i, r["BilledCost"], r["EffectiveCost"], r["ContractedCost"])
		}
		if r["ChargeClass"] != "" || r["ChargeCategory"] != "Usage" || r["ChargeFrequency"] != "Usage-Based" ||
			r["ServiceCategory"] != "Compute" || r["ResourceType"] != "Virtual Machine" || r["BillingCurrency"] != "USD" {
			t.Errorf("row %d: constant columns wrong: %v", i, r)
		}
		var tags map[string]any
		if err := json.Unmarshal([]byte(r["Tags"]), &tags); err != nil {
			t.Fatalf("row %d: Tags %q: %v", i, r["Tags"], err)
		}
		if idle := tags["gpuplan.dev/idle"] == "true"; idle != charges[i].Idle {
			t.Errorf("row %d: Tags %s for idle=%v", i, r["Tags"], charges[i].Idle)
		}
		if charges[i].Team != "" && (tags["team"] != charges[i].Team || tags["queue"] != charges[i].Team) {
			t.Errorf("row %d: Tags %s lack team/queue %s", i, r["Tags"], charges[i].Team)
		}
	}
	if math.Abs(billed-want) > 1e-9 {
		t.Errorf("BilledCost sums to %.12f, charges to %.12f", billed, want)
	}

	for i, w := range []map[string]string{
		{"PricingCategory": "Standard", "ServiceName": "Amazon Elastic Compute Cloud", "ProviderName": "AWS",
			"ResourceId": "gpuplan/demo/h100/train-1", "SkuId": "p5.48xlarge", "SkuPriceId": "p5.48xlarge/us-east-1/on-demand",
			"RegionId": "us-east-1", "RegionName": "us-east-1", "AvailabilityZone": "us-east-1a",
			"BilledCost": "196.64", "ChargePeriodStart": "2025-03-01T00:00:00Z", "ChargePeriodEnd": "2025-03-01T02:00:00Z",
			"BillingPeriodStart": "2025-03-01T00:00:00Z", "BillingPeriodEnd": "2025-04-01T00:00:00Z",
			"SubAccountId": "gpuplan/demo", "SubAccountName": "demo", "x_Team": "ml", "x_Idle": "false"},
		{"PricingCategory": "Dynamic", "ResourceId": "gpuplan/demo/h100-spot", "ResourceName": "h100-spot",
			"PricingQuantity": "0.3333333333", "ConsumedUnit": "Hours", "x_Idle": "true", "x_Team": ""},
		{"ServiceName": "Compute Engine", "BilledCost": "0.0000001", "PricingQuantity": "0.000000001", "AvailabilityZone": ""},
		{"ServiceName": "Virtual Machines", "ProviderName": "Microsoft Azure", "x_Job": `eval "quoted", with comma`},
		{"ServiceName": "Kubernetes node pool", "ProviderName": UnknownProvider, "RegionId": "", "RegionName": "",
			"SkuPriceId": "dgx-h100/on-demand", "BilledCost": "0"},
	} {
		for k, v := range w {
			if rows[i][k] != v {
				t.Errorf("row %d: %s = %q, want %q", i, k, rows[i][k], v)
			}
		}
	}
}

func TestWriteDerivesBillingPeriod(t *testing.T) {
	o := sampleOptions
	o.BillingStart, o.BillingEnd = time.Time{}, time.Time{}
	var buf bytes.Buffer
	if err := Write(&buf, o, sampleCharges()); err != nil {
		t.Fatal(err)
	}
	h, rows, err := ReadTable(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckVersion(V1_2, h, rows); err != nil {
		t.Fatal(err)
	}
	if rows[0]["BillingPeriodStart"] != "2025-03-01T00:00:00Z" || rows[0]["BillingPeriodEnd"] != "2025-03-01T03:00:00Z" {
		t.Errorf("billing period %s to %s", rows[0]["BillingPeriodStart"], rows[0]["BillingPeriodEnd"])
	}

	buf.Reset()
	if err := Write(&buf, o, nil); err != nil {
		t.Fatal(err)
	}
	h, rows, err = ReadTable(&buf)
	if err != nil || len(rows) != 0 || len(h) != len(V1_2.Columns())+len(CustomColumns()) {
		t.Fatalf("empty file: %d columns, %d rows, %v", len(h), len(rows), err)
	}
	if err := CheckVersion(V1_2, h, rows); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func(*Options)
		ch   func(*Charge)
		want string
	}{
		{"no billing account", func(o *Options) { o.BillingAccountID = "" }, nil, "no billing account ID"},
		{"no scenario", func(o *Options) { o.Scenario = " " }, nil, "no scenario"},
		{"half a billing period", func(o *Options) { o.BillingEnd = time.Time{} }, nil, "both ends of the billing period"},
		{"reversed billing period", func(o *Options) { o.BillingEnd = o.BillingStart.Add(-time.Hour) }, nil, "billing period ends"},
		{"outside billing period", nil, func(c *Charge) { c.End = t0.AddDate(0, 2, 0) }, "outside the billing period"},
		{"reversed charge", nil, func(c *Charge) { c.End = c.Start.Add(-time.Hour) }, "before it starts"},
		{"no start", nil, func(c *Charge) { c.Start = time.Time{} }, "start or end unset"},
		{"no start, derived period", func(o *Options) { o.BillingStart, o.BillingEnd = time.Time{}, time.Time{} },
			func(c *Charge) { c.Start = time.Time{} }, "charge 0: start or end unset"},
		{"no pool", nil, func(c *Charge) { c.Pool = "" }, "no pool"},
		{"no instance type", nil, func(c *Charge) { c.InstanceType = "" }, "no instance type"},
		{"capacity type", nil, func(c *Charge) { c.CapacityType = "preemptible" }, `capacity type "preemptible" is not on-demand, spot or reserved`},
		{"NaN", nil, func(c *Charge) { c.Cost = math.NaN() }, "NaN or infinite"},
		{"negative price", nil, func(c *Charge) { c.UnitPrice = -1 }, "negative unit price"},
		{"list inconsistent", nil, func(c *Charge) { c.ListCost = 1 }, "is not ListCost"},
		{"paid inconsistent", nil, func(c *Charge) { c.Cost = 1 }, "is not Cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := sampleOptions
			ch := sampleCharges()[:1]
			if tc.opt != nil {
				tc.opt(&o)
			}
			if tc.ch != nil {
				tc.ch(&ch[0])
			}
			var buf bytes.Buffer
			err := Write(&buf, o, ch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes before refusing", buf.Len())
			}
		})
	}
}

// written returns the header and rows of the sample charges' file.
func written(t *testing.T) ([]string, []map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, sampleOptions, sampleCharges()); err != nil {
		t.Fatal(err)
	}
	h, rows, err := ReadTable(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return h, rows
}

func TestCheckRefuses(t *testing.T) {
	drop := func(col string) func([]string, []map[string]string) []string {
		return func(h []string, rows []map[string]string) []string {
			for _, r := range rows {
				delete(r, col)
			}
			return slices.DeleteFunc(h, func(s string) bool { return s == col })
		}
	}
	set := func(row int, col, v string) func([]string, []map[string]string) []string {
		return func(h []string, rows []map[string]string) []string {
			rows[row][col] = v
			return h
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]string, []map[string]string) []string
		want string
	}{
		{"missing Mandatory column", drop("BilledCost"), "missing Mandatory column BilledCost"},
		{"missing nullable Mandatory column", drop("ChargeClass"), "missing Mandatory column ChargeClass"},
		{"bad date", set(0, "ChargePeriodStart", "2025-03-01 00:00:00"),
			`row 1: ChargePeriodStart: "2025-03-01 00:00:00" is not a FOCUS date/time`},
		{"date with offset", set(1, "BillingPeriodEnd", "2025-04-01T00:00:00+02:00"),
			`row 2: BillingPeriodEnd: "2025-04-01T00:00:00+02:00" is not a FOCUS date/time`},
		{"impossible date", set(0, "ChargePeriodEnd", "2025-02-30T00:00:00Z"), "ChargePeriodEnd: \"2025-02-30T00:00:00Z\" is not a FOCUS date/time"},
		{"bad allowed value", set(0, "ChargeCategory", "Usages"),
			`row 1: ChargeCategory "Usages" is not one of the allowed values (Usage, Purchase, Tax, Credit, Adjustment)`},
		{"bad pricing category", set(1, "PricingCategory", "Spot"), `row 2: PricingCategory "Spot" is not one of the allowed values`},
		{"charge class", set(0, "ChargeClass", "Refund"), `ChargeClass "Refund" is not one of the allowed values (Correction)`},
		{"subcategory parent", set(0, "ServiceSubcategory", "Object Storage"),
			`ServiceSubcategory "Object Storage" belongs to ServiceCategory "Storage", not "Compute"`},
		{"null in a non-null column", set(0, "BillingAccountId", ""), "row 1: BillingAccountId is null"},
		{"decimal with comma", set(0, "BilledCost", "1,000"), `row 1: BilledCost: "1,000" is not in the FOCUS Numeric Format`},
		{"decimal with plus", set(0, "ListCost", "+1"), `"+1" is not in the FOCUS Numeric Format`},
		{"decimal with currency", set(0, "EffectiveCost", "$3"), `"$3" is not in the FOCUS Numeric Format`},
		{"tags not an object", set(0, "Tags", `["a"]`), "Tags: \"[\\\"a\\\"]\" is not a JSON object"},
		{"tags nested", set(0, "Tags", `{"a":{"b":1}}`), `key "a" holds an object or array`},
		{"tags duplicate key", set(0, "Tags", `{"a":"1","a":"2"}`), `key "a" appears twice`},
		{"tags not JSON", set(0, "Tags", `{team: ml}`), "is not JSON"},
		{"unknown column", func(h []string, _ []map[string]string) []string { return append(h, "Team") },
			`column "Team" is neither a FOCUS 1.2 column nor an x_ custom column`},
		{"usage without quantity", set(0, "PricingQuantity", ""), "row 1: PricingQuantity is null on a Usage charge"},
		{"unit without quantity", set(0, "ConsumedQuantity", ""), "ConsumedUnit must be null when ConsumedQuantity is null"},
		{"region name without id", set(0, "RegionId", ""), "RegionName must be null when RegionId is null"},
		{"list cost mismatch", set(0, "ListCost", "1"), "ListUnitPrice 98.32 x PricingQuantity 2 is not ListCost 1"},
		{"negative unit price", set(0, "ListUnitPrice", "-1"), "ListUnitPrice -1 is negative"},
		{"currency", set(0, "BillingCurrency", "usd"), `BillingCurrency "usd" is not an ISO 4217 code`},
		{"tax with sku", set(0, "ChargeCategory", "Tax"), "SkuId must be null on a Tax charge"},
		{"reversed period", set(0, "ChargePeriodEnd", "2025-02-28T00:00:00Z"), "ChargePeriodEnd 2025-02-28T00:00:00Z is before ChargePeriodStart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rows := written(t)
			h = tc.edit(h, rows)
			err := CheckVersion(V1_2, h, rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

func TestCheckCapsProblems(t *testing.T) {
	h, rows := written(t)
	for range 10 {
		rows = append(rows, map[string]string{})
	}
	err := CheckVersion(V1_2, h, rows)
	if err == nil || !strings.Contains(err.Error(), "more problems") {
		t.Fatalf("got %v", err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != maxProblems+1 {
		t.Errorf("%d lines of problems, want %d", n, maxProblems+1)
	}
}

func TestParseDecimal(t *testing.T) {
	for _, ok := range []string{"-100.2", "-3", "4", "35.2E-7", "1.234", "0", "0.0000000001", "1e5", ".5"} {
		if _, err := ParseDecimal(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"1 1/2", "35.2E+7", "35.24 x 10^7", "[3,5,8]", "sqrt(2)", "32 GiB", "$32", "3,432,342", "+333", "NaN", "Inf", "1e999", "", "-", "."} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {-1e-12, "0"}, {1.5, "1.5"}, {2, "2"}, {1e-11, "0"},
		{1e-10, "0.0000000001"}, {-0.25, "-0.25"}, {1e21, "1000000000000000000000"},
		{123.456789012345, "123.4567890123"},
	} {
		if got := FormatDecimal(tc.v); got != tc.want {
			t.Errorf("FormatDecimal(%g) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

func TestReadLimits(t *testing.T) {
	long := "A\n" + strings.Repeat("x", MaxRecordBytes+1) + "\n"
	if _, err := Read(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long line: %v", err)
	}
	quoted := "A\n\"" + strings.Repeat("x\n", MaxRecordBytes/2+1) + "\"\n"
	if _, err := Read(strings.NewReader(quoted)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long quoted record: %v", err)
	}
	// Many short lines are fine.
	many := "A\n" + strings.Repeat(strings.Repeat("y", 1000)+"\n", 2000)
	if rows, err := Read(strings.NewReader(many)); err != nil || len(rows) != 2000 {
		t.Errorf("many lines: %d rows, %v", len(rows), err)
	}
	wide := strings.Repeat("a,", MaxFields) + "a\n"
	if _, err := Read(strings.NewReader(wide)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("wide header: %v", err)
	}
	for in, want := range map[string]string{
		"":                  "empty file",
		"A,A\n1,2\n":        "appears twice",
		"A,,B\n":            "has no name",
		"A,B\n1\n":          "wrong number of fields",
		"A\n\"unterminated": "row 1",
	} {
		if _, err := Read(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
	h, rows, err := ReadTable(strings.NewReader("\uFEFFBilledCost,x_A\r\n1,\"a\nb\"\r\n"))
	if err != nil || h[0] != "BilledCost" || rows[0]["x_A"] != "a\nb" {
		t.Errorf("BOM and CRLF: %v %v %v", h, rows, err)
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleOptions, sampleCharges()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(""))
	f.Add([]byte("\uFEFFBilledCost\n1\n"))
	f.Add([]byte("A,B\n\"x\"\"y\",\"a\nb\"\n"))
	f.Add([]byte("A\n\"unterminated"))
	f.Add([]byte("Tags,ChargeCategory,PricingQuantity\n\"{\"\"a\"\":[1]}\",Tax,1\n"))
	f.Add([]byte("ChargePeriodStart,ChargePeriodEnd\n2025-01-01T00:00:00Z,2024-13-01T00:00:00Z\n"))
	o := sampleOptions
	o.Version = V1_3
	buf.Reset()
	if err := Write(&buf, o, sampleCharges()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("AllocatedMethodId,AllocatedMethodDetails,ResourceId,BilledCost\nm,\"{\"\"Elements\"\":[{\"\"AllocatedRatio\"\":[[1]]},null]}\",r,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, rows, err := ReadTable(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(h) == 0 || len(h) > MaxFields {
			t.Fatalf("header of %d columns accepted", len(h))
		}
		for _, r := range rows {
			if len(r) != len(h) {
				t.Fatalf("row of %d values for %d columns", len(r), len(h))
			}
		}
		_ = CheckVersion(V1_2, h, rows)
		_ = CheckVersion(V1_3, h, rows)
	})
}

// A node of a capacity reservation or block is bought ahead: FOCUS's
// Committed pricing category, and its SKU price names the capacity.
func TestReservedIsCommitted(t *testing.T) {
	ch := sampleCharges()[:1]
	ch[0].CapacityType = "reserved"
	var buf bytes.Buffer
	if err := Write(&buf, sampleOptions, ch); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, ",Committed,") || !strings.Contains(out, "/reserved") || strings.Contains(out, ",Standard,") {
		t.Errorf("a reserved node is not priced as Committed:\n%s", out)
	}
}
