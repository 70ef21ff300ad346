package focus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// spec13Dir holds FOCUS 1.3's column list (columns.mdpp) and the column
// files of the columns 1.3 adds or changes, copied from the specification
// (see testdata/PROVENANCE.md).
const spec13Dir = "testdata/focus-1.3"

// specFile is what a copied column file says: its content constraints,
// the version that introduced it, and whether it is deprecated.
type specFile struct {
	featureLevel, allowsNulls, dataType, introduced string
	deprecated                                      bool
	text                                            string
}

func readSpecFile(t *testing.T, name string) (specFile, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(spec13Dir, name))
	if os.IsNotExist(err) {
		return specFile{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	f := specFile{text: string(b)}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "## "):
			section = strings.ToLower(strings.TrimPrefix(line, "## "))
			if section == "deprecated (version)" {
				f.deprecated = true
			}
		case strings.HasPrefix(section, "content constraints") && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 2 {
				continue
			}
			k, v := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])
			switch k {
			case "Feature level":
				f.featureLevel = v
			case "Allows nulls":
				f.allowsNulls = v
			case "Data type":
				f.dataType = v
			}
		case section == "introduced (version)" && line != "" && f.introduced == "":
			f.introduced = strings.Fields(line)[0]
		}
	}
	return f, true
}

// FOCUS 1.3's columns are columns.mdpp's, in its order; each column whose
// file is copied has that file's feature level, nullability, data type and
// version; the others are 1.2's columns with 1.2's constraints.
func TestSpec13MatchesSpecFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(spec13Dir, "columns.mdpp"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, ok := strings.CutPrefix(line, `!INCLUDE "`)
		if !ok {
			t.Fatalf("columns.mdpp: %q", line)
		}
		files = append(files, name[:strings.IndexByte(name, '"')])
	}
	got := V1_3.Spec()
	if len(got) != len(files) || len(files) != 65 {
		t.Fatalf("Spec has %d columns, columns.mdpp %d (want 65)", len(got), len(files))
	}
	v12 := map[string]Column{}
	for _, c := range specCSV(t) {
		v12[c.ID] = c
	}
	copied := 0
	for i, c := range got {
		if want := strings.ToLower(c.ID) + ".md"; files[i] != want {
			t.Errorf("column %d: %s, columns.mdpp has %s", i, c.ID, files[i])
			continue
		}
		if sf, ok := readSpecFile(t, files[i]); ok {
			copied++
			if !strings.Contains(sf.text, "\n"+c.ID+"\n") {
				t.Errorf("%s: the file's Column ID is not %s", files[i], c.ID)
			}
			nulls := map[bool]string{true: "True", false: "False"}[c.AllowsNulls]
			if c.FeatureLevel != sf.featureLevel || nulls != sf.allowsNulls || c.DataType != sf.dataType || c.Introduced != sf.introduced {
				t.Errorf("%s: got %s nulls=%s %s %s; the file: %s nulls=%s %s %s", c.ID,
					c.FeatureLevel, nulls, c.DataType, c.Introduced, sf.featureLevel, sf.allowsNulls, sf.dataType, sf.introduced)
			}
			if (V1_3.Deprecated(c.ID) != "") != sf.deprecated {
				t.Errorf("%s: deprecated %q, the file says deprecated=%v", c.ID, V1_3.Deprecated(c.ID), sf.deprecated)
			}
			continue
		}
		w, ok := v12[c.ID]
		if !ok {
			t.Errorf("%s: new in 1.3 but its file is not in %s", c.ID, spec13Dir)
			continue
		}
		if c.FeatureLevel != w.FeatureLevel || c.DataType != w.DataType || c.AllowsNulls != w.AllowsNulls ||
			c.Introduced != w.Introduced || !slices.Equal(c.AllowedValues, w.AllowedValues) {
			t.Errorf("%s: got %+v, 1.2 has %+v", c.ID, c, w)
		}
	}
	if copied != 17 {
		t.Errorf("%d column files compared, want the 17 copied", copied)
	}
	// Every Mandatory column is emitted, and the split columns.
	emitted := map[string]bool{}
	for _, c := range V1_3.Columns() {
		emitted[c.ID] = true
	}
	for _, c := range got {
		if c.FeatureLevel == Mandatory && !emitted[c.ID] {
			t.Errorf("Mandatory column %s is not emitted", c.ID)
		}
	}
	for _, id := range []string{"AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags"} {
		if !emitted[id] {
			t.Errorf("%s is not emitted", id)
		}
	}
}

// split13Charges are the hand-worked case: one 8-GPU node for 8 hours at
// $24/h, its price split into $2.50 per GPU-hour, $0.0625 per vCPU-hour
// and $0.0078125 per GiB-hour (20 + 2 + 2 = 24).
//
// vision's train-a holds 4 GPUs, 8 vCPUs and 64 GiB for 3 h: 12 GPU-h x
// 2.5 = $30, 24 vCPU-h x 0.0625 = $1.50, 192 GiB-h x 0.0078125 = $1.50:
// $33.00. nlp's train-b holds 2 GPUs, 4 vCPUs, 32 GiB for 5 h: 10 x 2.5 +
// 20 x 0.0625 + 160 x 0.0078125 = 25 + 1.25 + 1.25 = $27.50. The node
// bills 8 x 24 = $192.00; no pod held $192 - 33 - 27.50 = $131.50.
// AllocatedRatio: 33/192 = 0.171875, 27.5/192 = 0.14322916..., 131.5/192
// = 0.68489583...
func split13Charges() []Charge {
	h := time.Hour
	base := Charge{Provider: "AWS", Region: "us-east-1", Zone: "us-east-1a", Pool: "node",
		InstanceType: "p4d.24xlarge", CapacityType: "on-demand", GPUModel: "A100", UnitPrice: 24, ListUnitPrice: 24}
	job := func(team, name string, hours, gpus, vcpus, gib float64) Charge {
		c := base
		c.Start, c.End, c.Team, c.Job = t0, t0.Add(time.Duration(hours)*h), team, name
		c.Usage = []ResourceUsage{
			{"GPU-Hours", hours * gpus, hours * gpus * 2.5},
			{"vCPU-Hours", hours * vcpus, hours * vcpus * 0.0625},
			{"GiB-Hours", hours * gib, hours * gib * 0.0078125},
		}
		for _, u := range c.Usage {
			c.Cost += u.Cost
		}
		c.Quantity = c.Cost / 24
		c.ListCost = c.Cost
		return c
	}
	idle := base
	idle.Start, idle.End, idle.Idle = t0, t0.Add(8*h), true
	idle.Cost = 192 - 33 - 27.5
	idle.Quantity, idle.ListCost = idle.Cost/24, idle.Cost
	return []Charge{job("vision", "train-a", 3, 4, 8, 64), job("nlp", "train-b", 5, 2, 4, 32), idle}
}

func write13(t *testing.T, charges []Charge) ([]string, []map[string]string) {
	t.Helper()
	o := sampleOptions
	o.Version = V1_3
	o.BillingEnd = t0.Add(8 * time.Hour)
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

func cents(t *testing.T, s string) int64 {
	t.Helper()
	v, err := ParseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return int64(math.Round(v * 100))
}

// A showback reviewer sums allocated cost per team (AllocatedTags) and
// the unallocated rows (AllocatedResourceId null) of the node's origin
// charge (its ResourceId): the teams' figures and the idle add up to the
// node's bill, to the cent.
func TestSplitByHand13(t *testing.T) {
	h, rows := write13(t, split13Charges())
	if err := CheckVersion(V1_3, h, rows); err != nil {
		t.Fatal(err)
	}
	byTeam, unallocated, billed := map[string]int64{}, int64(0), int64(0)
	for _, r := range rows {
		if r["ResourceId"] != "gpuplan/demo/node" || r["AllocatedMethodId"] != AllocationMethod {
			t.Errorf("row of origin %q, method %q", r["ResourceId"], r["AllocatedMethodId"])
		}
		c := cents(t, r["BilledCost"])
		billed += c
		if r["AllocatedResourceId"] == "" {
			unallocated += c
			continue
		}
		var tags map[string]string
		if err := json.Unmarshal([]byte(r["AllocatedTags"]), &tags); err != nil {
			t.Fatal(err)
		}
		byTeam[tags["team"]] += c
	}
	if want := map[string]int64{"vision": 3300, "nlp": 2750}; !equalMaps(byTeam, want) {
		t.Errorf("allocated by team %v, want %v", byTeam, want)
	}
	if unallocated != 13150 || billed != 19200 {
		t.Errorf("unallocated %d cents, billed %d; want 13150 and 19200", unallocated, billed)
	}
	for i, want := range []string{
		`{"Elements":[{"AllocatedRatio":0.15625,"UsageUnit":"GPU-Hours","UsageQuantity":12},{"AllocatedRatio":0.0078125,"UsageUnit":"vCPU-Hours","UsageQuantity":24},{"AllocatedRatio":0.0078125,"UsageUnit":"GiB-Hours","UsageQuantity":192}]}`,
		`{"Elements":[{"AllocatedRatio":0.1302083333,"UsageUnit":"GPU-Hours","UsageQuantity":10},{"AllocatedRatio":0.0065104167,"UsageUnit":"vCPU-Hours","UsageQuantity":20},{"AllocatedRatio":0.0065104167,"UsageUnit":"GiB-Hours","UsageQuantity":160}]}`,
		`{"Elements":[{"AllocatedRatio":0.6848958333,"UsageUnit":"Hours","UsageQuantity":5.4791666667}]}`,
	} {
		if rows[i]["AllocatedMethodDetails"] != want {
			t.Errorf("row %d: AllocatedMethodDetails\n%s\nwant\n%s", i, rows[i]["AllocatedMethodDetails"], want)
		}
	}
	for i, w := range []map[string]string{
		{"AllocatedResourceId": "gpuplan/demo/node/train-a", "AllocatedResourceName": "train-a",
			"AllocatedTags": `{"job":"train-a","queue":"vision","team":"vision"}`, "BilledCost": "33",
			"Tags": `{"capacityType":"on-demand","gpuModel":"A100","pool":"node"}`, "ResourceName": "node",
			"ServiceProviderName": "AWS", "HostProviderName": "AWS", "ProviderName": "AWS", "PublisherName": "AWS",
			"ChargePeriodEnd": "2025-03-01T03:00:00Z"},
		{"AllocatedResourceName": "train-b", "BilledCost": "27.5", "ChargePeriodEnd": "2025-03-01T05:00:00Z"},
		{"AllocatedResourceName": "", "AllocatedTags": "", "BilledCost": "131.5", "x_Idle": "true"},
	} {
		for k, v := range w {
			if rows[i][k] != v {
				t.Errorf("row %d: %s = %q, want %q", i, k, rows[i][k], v)
			}
		}
	}
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The sample charges written as 1.3 pass 1.3's checks; the 1.2 file does
// not (no ServiceProviderName, HostProviderName), nor does 1.3 pass 1.2's
// (columns 1.2 lacks). The zero-cost pool's origin charge is split evenly.
func TestWrite13ChecksAndVersionsDiffer(t *testing.T) {
	h, rows := write13(t, sampleCharges()[:4])
	if err := CheckVersion(V1_3, h, rows); err != nil {
		t.Fatal(err)
	}
	if err := CheckVersion(V1_2, h, rows); err == nil || !strings.Contains(err.Error(), `column "AllocatedMethodId" is neither a FOCUS 1.2 column`) {
		t.Errorf("1.3 file against 1.2: %v", err)
	}
	h12, rows12 := written(t)
	err := CheckVersion(V1_3, h12, rows12)
	if err == nil || !strings.Contains(err.Error(), "missing Mandatory column HostProviderName") ||
		!strings.Contains(err.Error(), "missing Mandatory column ServiceProviderName") {
		t.Errorf("1.2 file against 1.3: %v", err)
	}
	var wantHeader []string
	for _, c := range V1_3.Columns() {
		wantHeader = append(wantHeader, c.ID)
	}
	if !slices.Equal(h, append(wantHeader, CustomColumns()...)) {
		t.Errorf("header %v", h)
	}
	// A pool that cost nothing: two workloads and the idle, a third each.
	free := []Charge{sampleCharges()[4], sampleCharges()[4], sampleCharges()[4]}
	free[0].Idle, free[0].Job, free[1].Idle, free[1].Job = false, "a", false, "b"
	h, rows = write13(t, free)
	if err := CheckVersion(V1_3, h, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rows[0]["AllocatedMethodDetails"], `"AllocatedRatio":0.3333333333`) {
		t.Errorf("free pool: %s", rows[0]["AllocatedMethodDetails"])
	}
}

// Each 1.3 requirement Check applies, with the sentence of the copied
// specification file it comes from: the sentence is there, and a file
// that breaks it is refused.
func TestCheck13RulesQuoteSpec(t *testing.T) {
	set := func(row int, col, v string) func([]string, []map[string]string) []string {
		return func(h []string, rows []map[string]string) []string {
			rows[row][col] = v
			return h
		}
	}
	for _, tc := range []struct {
		file, sentence string
		edit           func([]string, []map[string]string) []string
		want           string
	}{
		{"hostprovidername.md", "HostProviderName MUST NOT be null.", set(0, "HostProviderName", ""),
			"row 1: HostProviderName is null"},
		{"serviceprovidername.md", "ServiceProviderName MUST NOT be null.", set(1, "ServiceProviderName", ""),
			"row 2: ServiceProviderName is null"},
		{"serviceprovidername.md", "ServiceProviderName MUST be present in a [*FOCUS dataset*]",
			func(h []string, _ []map[string]string) []string {
				return slices.DeleteFunc(h, func(s string) bool { return s == "ServiceProviderName" })
			}, "missing Mandatory column ServiceProviderName"},
		{"allocatedresourcename.md", "AllocatedResourceName MUST NOT be null when AllocatedResourceId is not null.",
			set(0, "AllocatedResourceName", ""), "row 1: AllocatedResourceName must not be null when AllocatedResourceId is not null"},
		{"allocatedresourcename.md", "AllocatedResourceName MUST be null when [AllocatedResourceId](#AllocatedResourceId) is null.",
			set(2, "AllocatedResourceName", "x"), "row 3: AllocatedResourceName must be null when AllocatedResourceId is null"},
		{"allocatedresourceid.md", "AllocatedResourceId MUST be null when a *charge* is not related to a data generator-calculated split cost allocation.",
			func(h []string, rows []map[string]string) []string {
				rows[0]["AllocatedMethodId"], rows[0]["AllocatedMethodDetails"] = "", ""
				return h
			}, "row 1: AllocatedResourceId must be null on a charge with no split cost allocation"},
		{"allocatedtags.md", "AllocatedTags MUST be null when a *charge* is not related to a data generator-calculated split cost allocation.",
			func(h []string, rows []map[string]string) []string {
				rows[0]["AllocatedMethodId"], rows[0]["AllocatedMethodDetails"], rows[0]["AllocatedResourceId"], rows[0]["AllocatedResourceName"] = "", "", "", ""
				return h
			}, "row 1: AllocatedTags must be null on a charge with no split cost allocation"},
		{"allocatedmethoddetails.md", "AllocatedMethodDetails MUST be null when a charge is not related to a data generator-calculated split cost allocation.",
			set(2, "AllocatedMethodId", ""), "row 3: AllocatedMethodDetails must be null on a charge with no split cost allocation"},
		{"allocatedtags.md", "AllocatedTags MUST NOT include resource tags already present in [Tags](#tags).",
			set(0, "AllocatedTags", `{"pool":"node","team":"vision"}`), `row 1: AllocatedTags repeats tag "pool" of Tags`},
		{"allocatedtags.md", "AllocatedTags MUST conform to [KeyValueFormat](#key-valueformat) requirements.",
			set(0, "AllocatedTags", `{"team":{"name":"vision"}}`), `key "team" holds an object or array`},
		{"allocatedmethoddetails.md", `AllocatedMethodDetails MUST have a top-level key "Elements" which contains an array.`,
			set(0, "AllocatedMethodDetails", `{"Items":[{"AllocatedRatio":0.171875}]}`), `key "Items" is neither Elements nor an x_ custom key`},
		{"allocatedmethoddetails.md", `"AllocatedRatio" MUST be included inside each "Elements" object.`,
			set(0, "AllocatedMethodDetails", `{"Elements":[{"UsageUnit":"GPU-Hours"}]}`), "Elements[0].AllocatedRatio: missing"},
		{"allocatedmethoddetails.md", `"UsageUnit" MUST be included inside an "Elements" object if "UsageQuantity" allocation property is included in that "Elements" object`,
			set(0, "AllocatedMethodDetails", `{"Elements":[{"AllocatedRatio":0.171875,"UsageQuantity":12}]}`), "Elements[0] has UsageQuantity without UsageUnit"},
		{"allocatedmethoddetails.md", `Allocation property keys MUST begin with the string "x_" unless it is a FOCUS-defined allocation property.`,
			set(0, "AllocatedMethodDetails", `{"Elements":[{"AllocatedRatio":0.171875,"Team":"vision"}]}`), `Elements[0]: key "Team" is neither a FOCUS property nor an x_ custom key`},
		{"allocatedmethoddetails.md", `Values for all "AllocatedRatio" properties across all allocated charges related to a single origin charge MUST sum up to 1 (100%).`,
			set(2, "AllocatedMethodDetails", `{"Elements":[{"AllocatedRatio":0.5}]}`), "AllocatedRatio adds up to 0.8151041667 over rows [1 2 3], not 1"},
		{"allocatedmethoddetails.md", `representing the allocated charge's percentage of the origin charge.`,
			func(h []string, rows []map[string]string) []string {
				rows[0]["AllocatedMethodDetails"] = `{"Elements":[{"AllocatedRatio":0.14322916666666666}]}`
				rows[1]["AllocatedMethodDetails"] = `{"Elements":[{"AllocatedRatio":0.171875}]}`
				return h
			}, "row 1: AllocatedRatio 0.1432291667 is not its share 0.171875 of origin charge gpuplan/demo/node's cost 192"},
		{"allocatedmethoddetails.md", "AllocatedMethodDetails MUST conform to [JsonObjectFormat](#jsonobjectformat) requirements.",
			set(0, "AllocatedMethodDetails", `{"Elements":[{"AllocatedRatio":1,"AllocatedRatio":2}]}`), `key "AllocatedRatio" appears twice`},
		{"contractapplied.md", "ContractApplied MUST conform to [JsonObjectFormat](#jsonobjectformat) requirements.",
			func(h []string, rows []map[string]string) []string {
				for _, r := range rows {
					r["ContractApplied"] = `["not an object"]`
				}
				return append(h, "ContractApplied")
			}, "ContractApplied: \"[\\\"not an object\\\"]\" is not a JSON object"},
		{"contractedunitprice.md", "ContractedUnitPrice MUST NOT be null when [SkuPriceId](#skupriceid) is not null.",
			set(0, "ContractedUnitPrice", ""), "row 1: ContractedUnitPrice must not be null when SkuPriceId is not null"},
		{"contractedunitprice.md", "ContractedUnitPrice MUST be null when [SkuPriceId](#skupriceid) is null.",
			func(h []string, rows []map[string]string) []string {
				rows[0]["SkuPriceId"], rows[0]["SkuPriceDetails"] = "", ""
				return h
			}, "row 1: ContractedUnitPrice must be null when SkuPriceId is null"},
		{"commitmentdiscountquantity.md", "CommitmentDiscountQuantity MUST be null when [SkuPriceId](#skupriceid) is null.",
			func(h []string, rows []map[string]string) []string {
				for _, r := range rows {
					r["CommitmentDiscountQuantity"] = ""
				}
				rows[0]["SkuPriceId"], rows[0]["SkuPriceDetails"], rows[0]["ContractedUnitPrice"] = "", "", ""
				rows[0]["CommitmentDiscountQuantity"] = "1"
				return append(h, "CommitmentDiscountQuantity")
			}, "row 1: CommitmentDiscountQuantity must be null when SkuPriceId is null"},
	} {
		t.Run(tc.file+": "+tc.want, func(t *testing.T) {
			sf, ok := readSpecFile(t, tc.file)
			if !ok || !strings.Contains(sf.text, tc.sentence) {
				t.Fatalf("%s does not say %q", tc.file, tc.sentence)
			}
			h, rows := write13(t, split13Charges())
			if err := CheckVersion(V1_3, h, rows); err != nil {
				t.Fatalf("before the edit: %v", err)
			}
			h = tc.edit(h, rows)
			err := CheckVersion(V1_3, h, rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

// Write refuses resource usage that is not the charge's cost.
func TestWriteRefusesUsage(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Charge)
		want string
	}{
		{func(c *Charge) { c.Usage[0].Cost++ }, "resource usage costs add up to 34, not Cost 33"},
		{func(c *Charge) { c.Usage[1].Unit = " " }, "a resource usage has no unit"},
		{func(c *Charge) { c.Usage[2].Quantity = -1 }, "resource usage GiB-Hours: quantity -1"},
	} {
		ch := split13Charges()
		tc.edit(&ch[0])
		o := sampleOptions
		o.Version = V1_3
		var buf bytes.Buffer
		if err := Write(&buf, o, ch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
	if _, err := ParseVersion("1.4"); err == nil || err.Error() != `FOCUS version "1.4" is not one of 1.2, 1.3` {
		t.Errorf("ParseVersion(1.4): %v", err)
	}
}
