package focus

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Feature levels of a FOCUS column.
const (
	Mandatory   = "Mandatory"
	Conditional = "Conditional"
	Recommended = "Recommended"
	Optional    = "Optional"
)

// Data types of FOCUS columns.
const (
	String   = "String"
	Decimal  = "Decimal"
	DateTime = "Date/Time"
	JSON     = "JSON"
)

// Column is one column of the specification.
type Column struct {
	ID            string
	FeatureLevel  string // Mandatory, Conditional, Recommended or Optional
	DataType      string // String, Decimal, Date/Time or JSON
	AllowsNulls   bool
	AllowedValues []string // nil when the column takes any value of its type
	Introduced    string   // the version that introduced it
}

func col(id, level, typ string, nulls bool, intro string, allowed ...string) Column {
	return Column{ID: id, FeatureLevel: level, DataType: typ, AllowsNulls: nulls, AllowedValues: allowed, Introduced: intro}
}

// serviceSubcategories maps each of FOCUS 1.2's ServiceSubcategory values
// to its one parent ServiceCategory, in the specification's order.
var serviceSubcategories = []struct{ Category, Subcategory string }{
	{"AI and Machine Learning", "AI Platforms"},
	{"AI and Machine Learning", "Bots"},
	{"AI and Machine Learning", "Generative AI"},
	{"AI and Machine Learning", "Machine Learning"},
	{"AI and Machine Learning", "Natural Language Processing"},
	{"AI and Machine Learning", "Other (AI and Machine Learning)"},
	{"Analytics", "Analytics Platforms"},
	{"Analytics", "Business Intelligence"},
	{"Analytics", "Data Processing"},
	{"Analytics", "Search"},
	{"Analytics", "Streaming Analytics"},
	{"Analytics", "Other (Analytics)"},
	{"Business Applications", "Productivity and Collaboration"},
	{"Business Applications", "Other (Business Applications)"},
	{"Compute", "Containers"},
	{"Compute", "End User Computing"},
	{"Compute", "Quantum Compute"},
	{"Compute", "Serverless Compute"},
	{"Compute", "Virtual Machines"},
	{"Compute", "Other (Compute)"},
	{"Databases", "Caching"},
	{"Databases", "Data Warehouses"},
	{"Databases", "Ledger Databases"},
	{"Databases", "NoSQL Databases"},
	{"Databases", "Relational Databases"},
	{"Databases", "Time Series Databases"},
	{"Databases", "Other (Databases)"},
	{"Developer Tools", "Developer Platforms"},
	{"Developer Tools", "Continuous Integration and Deployment"},
	{"Developer Tools", "Development Environments"},
	{"Developer Tools", "Source Code Management"},
	{"Developer Tools", "Quality Assurance"},
	{"Developer Tools", "Other (Developer Tools)"},
	{"Identity", "Identity and Access Management"},
	{"Identity", "Other (Identity)"},
	{"Integration", "API Management"},
	{"Integration", "Messaging"},
	{"Integration", "Workflow Orchestration"},
	{"Integration", "Other (Integration)"},
	{"Internet of Things", "IoT Analytics"},
	{"Internet of Things", "IoT Platforms"},
	{"Internet of Things", "Other (Internet of Things)"},
	{"Management and Governance", "Architecture"},
	{"Management and Governance", "Compliance"},
	{"Management and Governance", "Cost Management"},
	{"Management and Governance", "Data Governance"},
	{"Management and Governance", "Disaster Recovery"},
	{"Management and Governance", "Endpoint Management"},
	{"Management and Governance", "Observability"},
	{"Management and Governance", "Support"},
	{"Management and Governance", "Other (Management and Governance)"},
	{"Media", "Content Creation"},
	{"Media", "Gaming"},
	{"Media", "Media Streaming"},
	{"Media", "Mixed Reality"},
	{"Media", "Other (Media)"},
	{"Migration", "Data Migration"},
	{"Migration", "Resource Migration"},
	{"Migration", "Other (Migration)"},
	{"Mobile", "Other (Mobile)"},
	{"Multicloud", "Multicloud Integration"},
	{"Multicloud", "Other (Multicloud)"},
	{"Networking", "Application Networking"},
	{"Networking", "Content Delivery"},
	{"Networking", "Network Connectivity"},
	{"Networking", "Network Infrastructure"},
	{"Networking", "Network Routing"},
	{"Networking", "Network Security"},
	{"Networking", "Other (Networking)"},
	{"Security", "Secret Management"},
	{"Security", "Security Posture Management"},
	{"Security", "Threat Detection and Response"},
	{"Security", "Other (Security)"},
	{"Storage", "Backup Storage"},
	{"Storage", "Block Storage"},
	{"Storage", "File Storage"},
	{"Storage", "Object Storage"},
	{"Storage", "Storage Platforms"},
	{"Storage", "Other (Storage)"},
	{"Web", "Application Platforms"},
	{"Web", "Other (Web)"},
	{"Other", "Other (Other)"},
}

func subcategoryValues() []string {
	v := make([]string, len(serviceSubcategories))
	for i, s := range serviceSubcategories {
		v[i] = s.Subcategory
	}
	return v
}

// spec12 is every column of FOCUS 1.2, in the specification's order.
var spec12 = []Column{
	col("AvailabilityZone", Recommended, String, true, "0.5"),
	col("BilledCost", Mandatory, Decimal, false, "0.5"),
	col("BillingAccountId", Mandatory, String, false, "0.5"),
	col("BillingAccountName", Mandatory, String, true, "0.5"),
	col("BillingAccountType", Conditional, String, false, "1.2"),
	col("BillingCurrency", Mandatory, String, false, "0.5"),
	col("BillingPeriodEnd", Mandatory, DateTime, false, "0.5"),
	col("BillingPeriodStart", Mandatory, DateTime, false, "0.5"),
	col("CapacityReservationId", Conditional, String, true, "1.1"),
	col("CapacityReservationStatus", Conditional, String, true, "1.1", "Used", "Unused"),
	col("ChargeCategory", Mandatory, String, false, "0.5", "Usage", "Purchase", "Tax", "Credit", "Adjustment"),
	col("ChargeClass", Mandatory, String, true, "1.0", "Correction"),
	col("ChargeDescription", Mandatory, String, true, "1.0-preview"),
	col("ChargeFrequency", Recommended, String, false, "1.0-preview", "One-Time", "Recurring", "Usage-Based"),
	col("ChargePeriodEnd", Mandatory, DateTime, false, "0.5"),
	col("ChargePeriodStart", Mandatory, DateTime, false, "0.5"),
	col("CommitmentDiscountCategory", Conditional, String, true, "1.0-preview", "Spend", "Usage"),
	col("CommitmentDiscountId", Conditional, String, true, "1.0-preview"),
	col("CommitmentDiscountName", Conditional, String, true, "1.0-preview"),
	col("CommitmentDiscountQuantity", Conditional, Decimal, true, "1.1"),
	col("CommitmentDiscountStatus", Conditional, String, true, "1.0", "Used", "Unused"),
	col("CommitmentDiscountType", Conditional, String, true, "1.0-preview"),
	col("CommitmentDiscountUnit", Conditional, String, true, "1.1"),
	col("ConsumedQuantity", Conditional, Decimal, true, "1.0"),
	col("ConsumedUnit", Conditional, String, true, "1.0"),
	col("ContractedCost", Mandatory, Decimal, false, "1.0"),
	col("ContractedUnitPrice", Conditional, Decimal, true, "1.0"),
	col("EffectiveCost", Mandatory, Decimal, false, "0.5"),
	col("InvoiceId", Recommended, String, true, "1.2"),
	col("InvoiceIssuerName", Mandatory, String, false, "0.5"),
	col("ListCost", Mandatory, Decimal, false, "1.0-preview"),
	col("ListUnitPrice", Conditional, Decimal, true, "1.0-preview"),
	col("PricingCategory", Conditional, String, true, "1.0-preview", "Standard", "Dynamic", "Committed", "Other"),
	col("PricingCurrency", Conditional, String, true, "1.2"),
	col("PricingCurrencyContractedUnitPrice", Conditional, Decimal, true, "1.2"),
	col("PricingCurrencyEffectiveCost", Conditional, Decimal, true, "1.2"),
	col("PricingCurrencyListUnitPrice", Conditional, Decimal, true, "1.2"),
	col("PricingQuantity", Mandatory, Decimal, true, "1.0-preview"),
	col("PricingUnit", Mandatory, String, true, "1.0-preview"),
	col("ProviderName", Mandatory, String, false, "0.5"),
	col("PublisherName", Mandatory, String, false, "0.5"),
	col("RegionId", Conditional, String, true, "1.0"),
	col("RegionName", Conditional, String, true, "1.0"),
	col("ResourceId", Conditional, String, true, "0.5"),
	col("ResourceName", Conditional, String, true, "0.5"),
	col("ResourceType", Conditional, String, true, "1.0-preview"),
	col("ServiceCategory", Mandatory, String, false, "0.5",
		"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
		"Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
		"Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
		"Storage", "Web", "Other"),
	col("ServiceName", Mandatory, String, false, "0.5"),
	col("ServiceSubcategory", Recommended, String, false, "1.1", subcategoryValues()...),
	col("SkuId", Conditional, String, true, "1.0-preview"),
	col("SkuMeter", Conditional, String, true, "1.1"),
	col("SkuPriceDetails", Conditional, JSON, true, "1.1"),
	col("SkuPriceId", Conditional, String, true, "1.0-preview"),
	col("SubAccountId", Conditional, String, true, "0.5"),
	col("SubAccountName", Conditional, String, true, "0.5"),
	col("SubAccountType", Conditional, String, true, "1.2"),
	col("Tags", Conditional, JSON, true, "1.0-preview"),
}

// emitted12 is the FOCUS 1.2 columns Write writes, in the specification's
// order.
var emitted12 = []string{
	"AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName",
	"BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency",
	"ChargePeriodEnd", "ChargePeriodStart",
	"ConsumedQuantity", "ConsumedUnit", "ContractedCost", "ContractedUnitPrice",
	"EffectiveCost", "InvoiceIssuerName", "ListCost", "ListUnitPrice",
	"PricingCategory", "PricingQuantity", "PricingUnit",
	"ProviderName", "PublisherName", "RegionId", "RegionName",
	"ResourceId", "ResourceName", "ResourceType",
	"ServiceCategory", "ServiceName", "ServiceSubcategory",
	"SkuId", "SkuMeter", "SkuPriceDetails", "SkuPriceId",
	"SubAccountId", "SubAccountName", "Tags",
}

// custom is gpuplan's own columns, written after the FOCUS ones.
var custom = []string{"x_Team", "x_Job", "x_Pool", "x_GpuModel", "x_CapacityType", "x_Idle"}

var parentCategory = func() map[string]string {
	m := make(map[string]string, len(serviceSubcategories))
	for _, s := range serviceSubcategories {
		m[s.Subcategory] = s.Category
	}
	return m
}()

func clone(c Column) Column {
	c.AllowedValues = append([]string(nil), c.AllowedValues...)
	if len(c.AllowedValues) == 0 {
		c.AllowedValues = nil
	}
	return c
}

// CustomColumns returns the x_ columns Write emits after the FOCUS ones.
func CustomColumns() []string { return append([]string(nil), custom...) }

// ServiceSubcategoryParent returns the ServiceCategory a
// ServiceSubcategory value belongs to, or "" for a value FOCUS 1.2 lacks.
func ServiceSubcategoryParent(sub string) string { return parentCategory[sub] }

// Charge is one row of cost: a span of time, a resource, what it cost.
type Charge struct {
	Start, End         time.Time
	Provider           string // "AWS", "Google Cloud", "Microsoft Azure", or "" when unknown
	Region, Zone       string
	Pool, InstanceType string
	CapacityType       string // "on-demand", "spot" or "reserved"
	GPUModel           string
	Team, Job          string // empty on idle rows
	Idle               bool   // cost no pod held
	// Disk marks the OS disk billing of a pool's stopped-deallocated nodes
	// (Azure's Spot eviction policy Deallocate): a block-storage charge,
	// Quantity in disk-hours, UnitPrice the disk's $/hour.
	Disk          bool
	Cost          float64 // what was paid (BilledCost = EffectiveCost)
	ListCost      float64 // the same at on-demand list prices
	Quantity      float64 // node-hours (ConsumedQuantity / PricingQuantity)
	ListUnitPrice float64 // on-demand $/node-hour
	UnitPrice     float64 // $/node-hour paid
	// Usage is what an allocated charge's workload held on the pool's
	// nodes, resource by resource (GPU-hours, vCPU-hours, GiB-hours), and
	// what each cost; their costs add up to Cost. FOCUS 1.3 writes them
	// as the elements of AllocatedMethodDetails; with none, one element
	// of the charge's node-hours.
	Usage []ResourceUsage
	// Commitment is the commitment discount the charge belongs to (nil:
	// none): usage it covered (CommitmentStatus "Used"), the unused part
	// of its commitment ("Unused"), or its purchase (Purchase set).
	// On a commitment's Usage row Cost is the EffectiveCost (the
	// amortised commitment applied) and BilledCost is 0, the purchase
	// rows billing it; ContractedCost is UnitPrice x Quantity. On a
	// Purchase row Cost is the BilledCost and EffectiveCost is 0.
	Commitment *CommitmentDiscount
	// CommitmentStatus is "Used" or "Unused" on a commitment's Usage rows,
	// "" on its Purchase rows.
	CommitmentStatus string
	// CommitmentQuantity is CommitmentDiscountQuantity, in
	// Commitment.Unit: consumed (Used), left unused (Unused), or
	// purchased (Purchase: over the term for One-Time, over the charge
	// period for Recurring).
	CommitmentQuantity float64
	// Purchase is a commitment's purchase row's ChargeFrequency,
	// "One-Time" (its upfront payment) or "Recurring" (its fee); "" on
	// usage rows.
	Purchase string
	// Reservation is the CapacityReservationId of a charge of nodes held
	// in a capacity reservation or block ("" none); ReservationStatus
	// "Used" (node-hours pods held) or "Unused" (the rest).
	Reservation, ReservationStatus string
}

// CommitmentDiscount is a commitment discount as FOCUS names it.
type CommitmentDiscount struct {
	ID, Name string
	Type     string // CommitmentDiscountType, e.g. "Savings Plan"
	Category string // CommitmentDiscountCategory: "Spend" or "Usage"
	Unit     string // CommitmentDiscountUnit: "USD" (Spend), "Hours" (instance-hours)
}

// commitmentLevel reports whether a charge is a commitment's own row
// (its purchase, or its unused part), not usage of a pool it covered.
func commitmentLevel(c Charge) bool {
	return c.Commitment != nil && (c.Purchase != "" || c.CommitmentStatus == "Unused")
}

// Columns Write adds when a charge carries them (in the specification's
// order among the others).
var (
	commitmentColumns = []string{"CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
		"CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType", "CommitmentDiscountUnit"}
	reservationColumns = []string{"CapacityReservationId", "CapacityReservationStatus"}
)

// headerOf is the columns Write writes for the charges: the version's,
// the commitment-discount columns when a charge has a commitment, the
// capacity-reservation ones when a charge has a reservation, in the
// specification's order, then the custom ones.
func headerOf(v Version, charges []Charge) []string {
	want := map[string]bool{}
	for _, id := range v.emitted() {
		want[id] = true
	}
	for _, c := range charges {
		if c.Commitment != nil {
			for _, id := range commitmentColumns {
				want[id] = true
			}
		}
		if c.Reservation != "" {
			for _, id := range reservationColumns {
				want[id] = true
			}
		}
	}
	var out []string
	for _, col := range v.spec() {
		if want[col.ID] {
			out = append(out, col.ID)
		}
	}
	return append(out, custom...)
}

// ResourceUsage is one resource an allocated charge's workload held: its
// unit ("GPU-Hours"), how much, and what it cost.
type ResourceUsage struct {
	Unit     string
	Quantity float64
	Cost     float64
}

// Options are the dataset-wide values of a FOCUS file.
type Options struct {
	// BillingAccountID (required) and BillingAccountName (may be empty:
	// null) name the billing account.
	BillingAccountID, BillingAccountName string
	// Scenario (required) names the sub account and prefixes ResourceId.
	Scenario string
	// BillingStart and BillingEnd bound the billing period (inclusive,
	// exclusive); both zero: the span of the charges.
	BillingStart, BillingEnd time.Time
	// Version is the FOCUS version written; "": DefaultVersion.
	Version Version
}

// UnknownProvider is ProviderName, PublisherName and InvoiceIssuerName
// when a charge names no provider: the simulator priced it.
const UnknownProvider = "gpuplan"

const (
	currency    = "USD"
	unitHours   = "Hours"
	skuMeter    = "Instance Hours"
	timeLayout  = "2006-01-02T15:04:05Z"
	maxDecimals = 10
)

// diskSku names the OS disk a deallocated node keeps; diskServiceNames
// the block-storage service of a provider.
const diskSku = "OS disk"

var diskServiceNames = map[string]string{"Microsoft Azure": "Managed Disks", "": "Kubernetes node pool"}

// serviceNames are the compute services of the providers gpuplan prices.
var serviceNames = map[string]string{
	"AWS":             "Amazon Elastic Compute Cloud",
	"Google Cloud":    "Compute Engine",
	"Microsoft Azure": "Virtual Machines",
}

// FormatDecimal writes v in FOCUS's Numeric Format: at most 10 decimal
// places, no exponent, no trailing zeros, no "-0".
func FormatDecimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', maxDecimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// FormatTime writes t in FOCUS's Date/Time Format, in UTC to the second.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// consistent reports whether price x quantity matches cost, as FOCUS
// requires of ListUnitPrice and ContractedUnitPrice, to a millionth of a
// dollar or a millionth of the amount.
func consistent(price, quantity, cost float64) bool {
	d := math.Abs(price*quantity - cost)
	return d <= 1e-6 || d <= 1e-6*math.Max(math.Abs(cost), math.Abs(price*quantity))
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func validTime(t time.Time) bool {
	y := t.UTC().Year()
	return !t.IsZero() && y >= 1 && y <= 9999
}

// Write writes the charges as a FOCUS CSV file of o.Version (1.3 by
// default; see the package documentation for what each version's rows
// hold): a header, then one row per charge, in the given order. It checks every charge before
// writing anything: times set and inside the billing period, a pool, an
// instance type, capacity type on-demand or spot, finite numbers,
// non-negative unit prices, and UnitPrice x Quantity = Cost and
// ListUnitPrice x Quantity = ListCost (to 1e-6), as FOCUS requires of
// ContractedUnitPrice and ListUnitPrice.
func Write(w io.Writer, o Options, charges []Charge) error {
	v := o.Version.orDefault()
	if _, err := ParseVersion(string(v)); err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	if strings.TrimSpace(o.BillingAccountID) == "" {
		return errors.New("focus: no billing account ID (BillingAccountId must not be null)")
	}
	if strings.TrimSpace(o.Scenario) == "" {
		return errors.New("focus: no scenario (it names the sub account and the resources)")
	}
	bs, be := o.BillingStart, o.BillingEnd
	switch {
	case bs.IsZero() && be.IsZero():
		for _, c := range charges {
			if !validTime(c.Start) || !validTime(c.End) {
				continue // refused below, charge by charge
			}
			if bs.IsZero() || c.Start.Before(bs) {
				bs = c.Start
			}
			if be.IsZero() || c.End.After(be) {
				be = c.End
			}
		}
		bs, be = bs.Truncate(time.Second), be.Truncate(time.Second)
		if !bs.IsZero() && !be.After(bs) {
			be = bs.Add(time.Second) // zero-length charges: a one-second period
		}
	case bs.IsZero() || be.IsZero():
		return errors.New("focus: give both ends of the billing period, or neither")
	}
	bs, be = bs.Truncate(time.Second), be.Truncate(time.Second)
	if !bs.IsZero() || !be.IsZero() {
		if !validTime(bs) || !validTime(be) {
			return fmt.Errorf("focus: billing period %v to %v is outside years 1 to 9999", bs, be)
		}
		if !be.After(bs) {
			return fmt.Errorf("focus: billing period ends (%s) at or before it starts (%s)", FormatTime(be), FormatTime(bs))
		}
	}
	for n, c := range charges {
		if err := checkCharge(c, bs, be); err != nil {
			return fmt.Errorf("focus: charge %d: %w", n, err)
		}
	}
	billingStart, billingEnd := FormatTime(bs), FormatTime(be)
	subAccount := "gpuplan/" + o.Scenario
	var origins map[string]origin
	if v == V1_3 {
		origins = splitOrigins(charges)
	}

	cw := csv.NewWriter(w)
	header := headerOf(v, charges)
	if err := cw.Write(header); err != nil {
		return err
	}
	idx := make(map[string]int, len(header))
	for i, h := range header {
		idx[h] = i
	}
	rec := make([]string, len(header))
	for _, c := range charges {
		for i := range rec {
			rec[i] = ""
		}
		set := func(k, val string) {
			if i, ok := idx[k]; ok {
				rec[i] = val
			}
		}

		provider, service := c.Provider, serviceNames[c.Provider]
		if provider == "" {
			provider = UnknownProvider
		}
		if service == "" {
			service = "Kubernetes node pool"
		}
		pricing, capacity := "Standard", "on-demand"
		switch c.CapacityType {
		case "spot":
			pricing, capacity = "Dynamic", "spot"
		case "reserved": // a capacity reservation or block, bought ahead
			pricing, capacity = "Committed", "reserved"
		}
		if commitmentLevel(c) {
			capacity = "commitment"
		}
		if c.Commitment != nil && c.Purchase == "" {
			pricing = "Committed" // subject to a commitment, not its purchase
		}
		resourceID, resourceName := subAccount+"/"+c.Pool, c.Pool
		if c.Job != "" {
			resourceID += "/" + c.Job
			resourceName += "/" + c.Job
		}
		skuPriceID := c.InstanceType + "/"
		if c.Region != "" {
			skuPriceID += c.Region + "/"
		}
		skuPriceID += capacity

		billed, effective, contracted := c.Cost, c.Cost, c.Cost
		category, frequency := "Usage", "Usage-Based"
		if c.Commitment != nil {
			contracted = c.UnitPrice * c.Quantity
			if c.Purchase != "" {
				category, frequency, effective = "Purchase", c.Purchase, 0
			} else {
				billed = 0
			}
		}
		set("AvailabilityZone", c.Zone)
		set("BilledCost", FormatDecimal(billed))
		set("BillingAccountId", o.BillingAccountID)
		set("BillingAccountName", o.BillingAccountName)
		set("BillingCurrency", currency)
		set("BillingPeriodEnd", billingEnd)
		set("BillingPeriodStart", billingStart)
		set("ChargeCategory", category)
		set("ChargeClass", "")
		set("ChargeDescription", description(c, capacity))
		set("ChargeFrequency", frequency)
		set("ChargePeriodEnd", FormatTime(c.End))
		set("ChargePeriodStart", FormatTime(c.Start))
		set("ConsumedQuantity", FormatDecimal(c.Quantity))
		set("ConsumedUnit", unitHours)
		set("ContractedCost", FormatDecimal(contracted))
		set("ContractedUnitPrice", FormatDecimal(c.UnitPrice))
		set("EffectiveCost", FormatDecimal(effective))
		set("InvoiceIssuerName", provider)
		set("ListCost", FormatDecimal(c.ListCost))
		set("ListUnitPrice", FormatDecimal(c.ListUnitPrice))
		set("PricingCategory", pricing)
		set("PricingQuantity", FormatDecimal(c.Quantity))
		set("PricingUnit", unitHours)
		set("ProviderName", provider)
		set("PublisherName", provider)
		set("RegionId", c.Region)
		set("RegionName", c.Region)
		set("ResourceId", resourceID)
		set("ResourceName", resourceName)
		set("ResourceType", "Virtual Machine")
		set("ServiceCategory", "Compute")
		set("ServiceName", service)
		set("ServiceSubcategory", "Virtual Machines")
		set("SkuId", c.InstanceType)
		set("SkuMeter", skuMeter)
		details := map[string]string{"InstanceType": c.InstanceType}
		if c.GPUModel != "" {
			details["x_GpuModel"] = c.GPUModel
		}
		set("SkuPriceDetails", jsonObject(details))
		set("SkuPriceId", skuPriceID)
		if c.Disk {
			set("ConsumedUnit", unitHours)
			set("PricingCategory", "Standard")
			set("ResourceId", subAccount+"/"+c.Pool+"/os-disks")
			set("ResourceName", c.Pool+"/os-disks")
			set("ResourceType", "Disk")
			set("ServiceCategory", "Storage")
			set("ServiceName", diskServiceNames[c.Provider])
			set("ServiceSubcategory", "Block Storage")
			set("SkuId", diskSku)
			set("SkuMeter", "Disk Hours")
			set("SkuPriceDetails", jsonObject(map[string]string{"x_VmSize": c.InstanceType}))
			set("SkuPriceId", diskSku+"/"+c.InstanceType)
		}
		if c.Reservation != "" {
			set("CapacityReservationId", c.Reservation)
			set("CapacityReservationStatus", c.ReservationStatus)
		}
		if cd := c.Commitment; cd != nil {
			set("CommitmentDiscountCategory", cd.Category)
			set("CommitmentDiscountId", cd.ID)
			set("CommitmentDiscountName", cd.Name)
			set("CommitmentDiscountQuantity", FormatDecimal(c.CommitmentQuantity))
			set("CommitmentDiscountStatus", c.CommitmentStatus)
			set("CommitmentDiscountType", cd.Type)
			set("CommitmentDiscountUnit", cd.Unit)
			if commitmentLevel(c) {
				// The commitment's own row: no pool's usage is consumed.
				set("ConsumedQuantity", "")
				set("ConsumedUnit", "")
				set("PricingUnit", cd.Unit)
				set("ResourceId", cd.ID)
				set("ResourceName", cd.Name)
				set("ResourceType", cd.Type)
				set("SkuMeter", cd.Type)
				set("SkuPriceDetails", jsonObject(map[string]string{"x_CommitmentDiscountType": cd.Type}))
				set("SkuPriceId", cd.ID)
				set("RegionId", "")
				set("RegionName", "")
				set("AvailabilityZone", "")
			}
		}
		set("SubAccountId", subAccount)
		set("SubAccountName", o.Scenario)
		set("Tags", jsonObject(tags(c, capacity)))
		if v == V1_3 {
			set("HostProviderName", provider)
			set("ServiceProviderName", provider)
			if og, ok := origins[originKey(c)]; ok && splits(c) {
				writeSplit(set, c, og, subAccount, capacity)
			}
		}
		set("x_Team", c.Team)
		set("x_Job", c.Job)
		set("x_Pool", c.Pool)
		set("x_GpuModel", c.GPUModel)
		set("x_CapacityType", capacity)
		set("x_Idle", strconv.FormatBool(c.Idle))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func checkCharge(c Charge, bs, be time.Time) error {
	if err := checkCommitment(c); err != nil {
		return err
	}
	switch {
	case !validTime(c.Start) || !validTime(c.End):
		return errors.New("start or end unset or outside years 1 to 9999")
	case c.End.Truncate(time.Second).Before(c.Start.Truncate(time.Second)):
		return fmt.Errorf("ends (%s) before it starts (%s)", FormatTime(c.End), FormatTime(c.Start))
	case c.Start.Truncate(time.Second).Before(bs) || c.End.Truncate(time.Second).After(be):
		return fmt.Errorf("%s to %s is outside the billing period %s to %s",
			FormatTime(c.Start), FormatTime(c.End), FormatTime(bs), FormatTime(be))
	case strings.TrimSpace(c.Pool) == "" && !commitmentLevel(c):
		return errors.New("no pool (ResourceId must not be null)")
	case strings.TrimSpace(c.InstanceType) == "":
		return errors.New("no instance type (SkuId must not be null on usage)")
	case c.CapacityType != "on-demand" && c.CapacityType != "spot" && c.CapacityType != "reserved" &&
		!(commitmentLevel(c) && c.CapacityType == ""): // a commitment's own row has no capacity type
		return fmt.Errorf("capacity type %q is not on-demand, spot or reserved", c.CapacityType)
	case !finite(c.Cost, c.ListCost, c.Quantity, c.ListUnitPrice, c.UnitPrice):
		return errors.New("a money or quantity field is NaN or infinite")
	case c.ListUnitPrice < 0 || c.UnitPrice < 0:
		return errors.New("negative unit price (FOCUS unit prices are non-negative)")
	case !consistent(c.ListUnitPrice, c.Quantity, c.ListCost):
		return fmt.Errorf("ListUnitPrice %s x Quantity %s is not ListCost %s",
			FormatDecimal(c.ListUnitPrice), FormatDecimal(c.Quantity), FormatDecimal(c.ListCost))
	case !finite(c.CommitmentQuantity):
		return errors.New("the commitment quantity is NaN or infinite")
	case (c.Commitment == nil || c.CommitmentStatus != "Used") && !consistent(c.UnitPrice, c.Quantity, c.Cost):
		// A commitment's covered usage costs its amortised share, not
		// its unit price (ContractedCost is UnitPrice x Quantity).
		return fmt.Errorf("UnitPrice %s x Quantity %s is not Cost %s",
			FormatDecimal(c.UnitPrice), FormatDecimal(c.Quantity), FormatDecimal(c.Cost))
	}
	return checkUsage(c)
}

// checkCommitment checks a charge's commitment-discount and
// capacity-reservation fields.
func checkCommitment(c Charge) error {
	switch {
	case c.Reservation == "" && c.ReservationStatus != "":
		return errors.New("a capacity reservation status without a reservation")
	case c.Reservation != "" && c.ReservationStatus != "Used" && c.ReservationStatus != "Unused":
		return fmt.Errorf("capacity reservation status %q is not Used or Unused", c.ReservationStatus)
	}
	cd := c.Commitment
	if cd == nil {
		if c.CommitmentStatus != "" || c.Purchase != "" || c.CommitmentQuantity != 0 {
			return errors.New("a commitment status, purchase or quantity without a commitment")
		}
		return nil
	}
	switch {
	case strings.TrimSpace(cd.ID) == "" || strings.TrimSpace(cd.Type) == "" || strings.TrimSpace(cd.Unit) == "":
		return errors.New("a commitment needs an ID, a type and a unit")
	case cd.Category != "Spend" && cd.Category != "Usage":
		return fmt.Errorf("commitment category %q is not Spend or Usage", cd.Category)
	case c.Purchase != "" && c.Purchase != "One-Time" && c.Purchase != "Recurring":
		return fmt.Errorf("a commitment's purchase is %q, not One-Time or Recurring", c.Purchase)
	case c.Purchase != "" && c.CommitmentStatus != "":
		return errors.New("a commitment's purchase has no status (Used and Unused are usage)")
	case c.Purchase == "" && c.CommitmentStatus != "Used" && c.CommitmentStatus != "Unused":
		return fmt.Errorf("commitment status %q is not Used or Unused", c.CommitmentStatus)
	case c.CommitmentQuantity < 0:
		return errors.New("a negative commitment quantity")
	}
	return nil
}

func description(c Charge, capacity string) string {
	d := fmt.Sprintf("%s %s node-hours in pool %s", capacity, c.InstanceType, c.Pool)
	if c.GPUModel != "" {
		d = fmt.Sprintf("%s %s (%s) node-hours in pool %s", capacity, c.InstanceType, c.GPUModel, c.Pool)
	}
	if cd := c.Commitment; cd != nil {
		name := cd.Type + " " + cd.Name
		switch {
		case c.Purchase == "One-Time":
			return name + ": the upfront payment's share for the billing period (amortised over the term's hours)"
		case c.Purchase == "Recurring":
			return name + ": the recurring fee for the billing period"
		case c.CommitmentStatus == "Unused":
			return name + ": commitment applied to no usage"
		}
		d += ", covered by " + name
	}
	switch {
	case c.Disk:
		return fmt.Sprintf("OS disk-hours of stopped-deallocated %s %s nodes in pool %s (Azure Spot eviction policy Deallocate)", capacity, c.InstanceType, c.Pool)
	case c.Idle:
		return "Idle " + d + ", held by no pod"
	case c.Job != "" && c.Team != "":
		return fmt.Sprintf("%s, job %s of team %s", d, c.Job, c.Team)
	case c.Job != "":
		return fmt.Sprintf("%s, job %s", d, c.Job)
	case c.Team != "":
		return fmt.Sprintf("%s, team %s", d, c.Team)
	}
	return d
}

func tags(c Charge, capacity string) map[string]string {
	if commitmentLevel(c) {
		return map[string]string{"commitment": c.Commitment.Name}
	}
	t := map[string]string{"pool": c.Pool, "capacityType": capacity}
	if c.Team != "" {
		t["team"] = c.Team
		t["queue"] = c.Team
	}
	if c.Job != "" {
		t["job"] = c.Job
	}
	if c.GPUModel != "" {
		t["gpuModel"] = c.GPUModel
	}
	if c.Idle {
		t["gpuplan.dev/idle"] = "true"
	}
	return t
}

// jsonObject writes m as a JSON object with sorted keys, without HTML
// escaping.
func jsonObject(m map[string]string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(m); err != nil {
		// A map of strings always encodes; invalid UTF-8 is replaced.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Limits of Read.
const (
	// MaxRecordBytes caps one CSV record (a line, or the lines of one
	// record whose quoted fields hold line breaks).
	MaxRecordBytes = 1 << 20
	// MaxFields caps the columns of a file (FOCUS 1.2 has 57).
	MaxFields = 1024
)

var errRecordTooLong = fmt.Errorf("focus: a CSV record is longer than %d bytes", MaxRecordBytes)

// recordLimiter fails a read once one CSV record passes MaxRecordBytes.
// It follows quoting so that a line break inside a quoted field does not
// end the record.
type recordLimiter struct {
	r        io.Reader
	n        int
	inQuotes bool
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			l.inQuotes = !l.inQuotes
		case '\n':
			if !l.inQuotes {
				l.n = 0
				continue
			}
		}
		l.n++
		if l.n > MaxRecordBytes {
			return i, errRecordTooLong
		}
	}
	return n, err
}

// Read reads a FOCUS CSV file back: one map per row, from column name to
// value, a null being "".
func Read(r io.Reader) ([]map[string]string, error) {
	_, rows, err := ReadTable(r)
	return rows, err
}

// ReadTable reads a FOCUS CSV file: its header and one map per row. It
// refuses records over MaxRecordBytes, headers over MaxFields columns,
// empty or repeated column names, and rows whose length differs from the
// header's. A UTF-8 byte-order mark before the header is dropped.
func ReadTable(r io.Reader) ([]string, []map[string]string, error) {
	cr := csv.NewReader(&recordLimiter{r: r})
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, errors.New("focus: empty file, no header")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("focus: header: %w", err)
	}
	if len(header) > MaxFields {
		return nil, nil, fmt.Errorf("focus: %d columns, more than %d", len(header), MaxFields)
	}
	header[0] = strings.TrimPrefix(header[0], "\uFEFF")
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if h == "" {
			return nil, nil, fmt.Errorf("focus: column %d has no name", i+1)
		}
		if seen[h] {
			return nil, nil, fmt.Errorf("focus: column %s appears twice", h)
		}
		seen[h] = true
	}
	var rows []map[string]string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("focus: row %d: %w", len(rows)+1, err)
		}
		row := make(map[string]string, len(header))
		for i, h := range header {
			row[h] = rec[i]
		}
		rows = append(rows, row)
	}
	return header, rows, nil
}

var (
	numericRE  = regexp.MustCompile(`^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]-?[0-9]+)?$`)
	dateTimeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// ParseDecimal parses a value in FOCUS's Numeric Format: an integer, a
// decimal or E notation, a minus sign only for negatives, no "+" in the
// exponent, no commas, units or symbols.
func ParseDecimal(s string) (float64, error) {
	if !numericRE.MatchString(s) {
		return 0, fmt.Errorf("%q is not in the FOCUS Numeric Format", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

// ParseTime parses a value in FOCUS's Date/Time Format,
// 'YYYY-MM-DDTHH:MM:SSZ' in UTC.
func ParseTime(s string) (time.Time, error) {
	if !dateTimeRE.MatchString(s) {
		return time.Time{}, fmt.Errorf("%q is not a FOCUS date/time (YYYY-MM-DDTHH:MM:SSZ, UTC)", s)
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a FOCUS date/time: %v", s, err)
	}
	return t, nil
}

// checkKeyValue checks FOCUS's Key-Value Format: a JSON object, unique
// keys, values strings, numbers, true, false or null.
func checkKeyValue(s string) error {
	if !json.Valid([]byte(s)) {
		return fmt.Errorf("%q is not JSON", s)
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%q is not a JSON object", s)
	}
	keys := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		if keys[k] {
			return fmt.Errorf("key %q appears twice", k)
		}
		keys[k] = true
		v, err := d.Token()
		if err != nil {
			return err
		}
		if _, nested := v.(json.Delim); nested {
			return fmt.Errorf("key %q holds an object or array", k)
		}
	}
	return nil
}

// Conditional nullability of FOCUS 1.2 for the rows Check sees.
var (
	// nonNullOnUsageOrPurchase must not be null when ChargeCategory is
	// Usage or Purchase and ChargeClass is not Correction, and must be
	// null when ChargeCategory is Tax.
	nonNullOnUsageOrPurchase = []string{
		"ContractedUnitPrice", "ListUnitPrice", "PricingCategory", "PricingQuantity",
		"PricingCurrencyContractedUnitPrice", "PricingCurrencyListUnitPrice",
		"SkuId", "SkuPriceId",
	}
	// nullTogether: the first is null exactly when the second is.
	nullTogether = [][2]string{
		{"BillingAccountType", "BillingAccountId"},
		{"CommitmentDiscountCategory", "CommitmentDiscountId"},
		{"CommitmentDiscountType", "CommitmentDiscountId"},
		{"CommitmentDiscountUnit", "CommitmentDiscountQuantity"},
		{"ConsumedUnit", "ConsumedQuantity"},
		{"PricingUnit", "PricingQuantity"},
		{"RegionName", "RegionId"},
		{"ResourceType", "ResourceId"},
		{"SubAccountName", "SubAccountId"},
		{"SubAccountType", "SubAccountId"},
	}
	// nullWith: the first must be null when the second is.
	nullWith = [][2]string{
		{"CapacityReservationStatus", "CapacityReservationId"},
		{"CommitmentDiscountName", "CommitmentDiscountId"},
		{"CommitmentDiscountStatus", "CommitmentDiscountId"},
		{"ResourceName", "ResourceId"},
		{"SkuMeter", "SkuId"},
		{"SkuPriceDetails", "SkuPriceId"},
	}
	// nonNegative unit prices.
	nonNegative = []string{
		"ContractedUnitPrice", "ListUnitPrice",
		"PricingCurrencyContractedUnitPrice", "PricingCurrencyListUnitPrice",
	}
	// products: unit price x PricingQuantity = cost.
	products = [][2]string{
		{"ListUnitPrice", "ListCost"},
		{"ContractedUnitPrice", "ContractedCost"},
	}
)

const maxProblems = 20

// Check validates a file read by ReadTable against DefaultVersion (FOCUS
// 1.3); CheckVersion names the version.
func Check(header []string, rows []map[string]string) error {
	return CheckVersion(DefaultVersion, header, rows)
}

// CheckVersion validates a FOCUS file of version v read by ReadTable:
// every Mandatory column present, no column that is neither the
// version's nor an x_ custom one, values of the column's type (Decimal in
// the Numeric Format, Date/Time as 'YYYY-MM-DDTHH:MM:SSZ', JSON a
// Key-Value object, or for AllocatedMethodDetails and ContractApplied a
// JSON object), allowed values respected, and the nullability, sign and
// unit price x quantity requirements the specification sets for these
// rows. For 1.3 it adds the split cost allocation requirements: the
// Allocated* columns null on charges with no split, AllocatedResourceName
// null exactly when AllocatedResourceId is, AllocatedTags repeating no
// key of Tags, AllocatedMethodDetails's object, and per origin charge
// (the rows of one AllocatedMethodId, ResourceId and billing period)
// AllocatedRatio adding up to 1 and matching each row's share of the
// cost; HostProviderName and ServiceProviderName not null; and
// ContractedUnitPrice and CommitmentDiscountQuantity null when
// SkuPriceId is, ContractedUnitPrice not null when it is not. It reports
// up to 20 problems, joined.
func CheckVersion(v Version, header []string, rows []map[string]string) error {
	v = v.orDefault()
	if _, err := ParseVersion(string(v)); err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	c := &checker{present: make(map[string]bool, len(header)), version: v}
	cols := c.columns(header)
	for n, row := range rows {
		rn := n + 1
		nums := c.values(rn, row, cols)
		c.rules(rn, row, nums)
		c.commitmentRules(rn, row, nums)
		if v == V1_3 {
			c.rules13(rn, row)
			c.splitRules(rn, row, nums)
		}
	}
	c.commitmentTotals()
	if v == V1_3 {
		c.splitTotals()
	}
	if c.more > 0 {
		c.problems = append(c.problems, fmt.Errorf("and %d more problems", c.more))
	}
	return errors.Join(c.problems...)
}

// checker gathers Check's problems (the first maxProblems, and a count of
// the rest) over a file whose header has the columns present.
type checker struct {
	problems []error
	more     int
	present  map[string]bool
	version  Version
	// splits gathers FOCUS 1.3's split rows by origin charge, in the
	// order first seen.
	splits     map[splitKey]*splitGroup
	splitOrder []splitKey
	// commitments gathers each CommitmentDiscountId's rows, in the order
	// first seen.
	commitments     map[string]*commitmentGroup
	commitmentOrder []string
}

func (c *checker) add(format string, a ...any) {
	if len(c.problems) < maxProblems {
		c.problems = append(c.problems, fmt.Errorf(format, a...))
	} else {
		c.more++
	}
}

// get is row's value of column id, and whether the file has the column.
func (c *checker) get(row map[string]string, id string) (string, bool) {
	if !c.present[id] {
		return "", false
	}
	return row[id], true
}

func (c *checker) isNull(row map[string]string, id string) bool {
	v, _ := c.get(row, id)
	return v == ""
}

// columns checks the header: no column twice, each FOCUS's or an x_
// custom one, every Mandatory column present; it returns FOCUS's columns
// in the header's order.
func (c *checker) columns(header []string) []*Column {
	add, present := c.add, c.present
	var cols []*Column
	for _, h := range header {
		if present[h] {
			add("column %s appears twice", h)
			continue
		}
		present[h] = true
		if col, ok := c.version.byID()[h]; ok {
			cols = append(cols, col)
		} else if !strings.HasPrefix(h, "x_") {
			add("column %q is neither a FOCUS %s column nor an x_ custom column", h, c.version)
		}
	}
	for _, col := range c.version.spec() {
		if col.FeatureLevel == Mandatory && !present[col.ID] {
			add("missing Mandatory column %s", col.ID)
		}
	}
	return cols
}

// values checks each of a row's values against its column: nullability,
// data type and allowed values; it returns the row's Decimal values.
func (c *checker) values(rn int, row map[string]string, cols []*Column) map[string]float64 {
	add := c.add
	nums := map[string]float64{}
	for _, col := range cols {
		v := row[col.ID]
		if v == "" {
			if !col.AllowsNulls {
				add("row %d: %s is null, which FOCUS %s does not allow", rn, col.ID, c.version)
			}
			continue
		}
		switch col.DataType {
		case Decimal:
			f, err := ParseDecimal(v)
			if err != nil {
				add("row %d: %s: %v", rn, col.ID, err)
				continue
			}
			nums[col.ID] = f
		case DateTime:
			if _, err := ParseTime(v); err != nil {
				add("row %d: %s: %v", rn, col.ID, err)
			}
		case JSON:
			check := checkKeyValue
			if jsonObjectFormat[col.ID] {
				check = checkJSONObject
			}
			if err := check(v); err != nil {
				add("row %d: %s: %v", rn, col.ID, err)
			}
		}
		if len(col.AllowedValues) > 0 && !contains(col.AllowedValues, v) {
			if len(col.AllowedValues) <= 10 {
				add("row %d: %s %q is not one of the allowed values (%s)", rn, col.ID, v, strings.Join(col.AllowedValues, ", "))
			} else {
				add("row %d: %s %q is not one of the allowed values", rn, col.ID, v)
			}
		}
	}
	return nums
}

// rules checks the requirements FOCUS sets across a row's columns: the
// currency code, the columns null or not by charge category and class,
// the columns null together, signs, unit price x quantity = cost, and
// periods that end after they start.
func (c *checker) rules(rn int, row map[string]string, nums map[string]float64) {
	add, present := c.add, c.present
	get := func(id string) (string, bool) { return c.get(row, id) }
	isNull := func(id string) bool { return c.isNull(row, id) }
	if v, ok := get("BillingCurrency"); ok && v != "" && !currencyRE.MatchString(v) {
		add("row %d: BillingCurrency %q is not an ISO 4217 code", rn, v)
	}
	category, _ := get("ChargeCategory")
	class, _ := get("ChargeClass")
	usage := category == "Usage"
	usageOrPurchase := usage || category == "Purchase"
	correction := class == "Correction"
	for _, id := range nonNullOnUsageOrPurchase {
		v, ok := get(id)
		switch {
		case !ok:
		case usageOrPurchase && !correction && v == "":
			add("row %d: %s is null on a %s charge", rn, id, category)
		case category == "Tax" && v != "":
			add("row %d: %s must be null on a Tax charge", rn, id)
		}
	}
	if v, ok := get("ConsumedQuantity"); ok {
		status, _ := get("CommitmentDiscountStatus")
		switch {
		case !usage && v != "":
			add("row %d: ConsumedQuantity must be null when ChargeCategory is %q", rn, category)
		case usage && status == "Unused" && v != "":
			add("row %d: ConsumedQuantity must be null on unused commitment", rn)
		case usage && status != "Unused" && !correction && v == "":
			add("row %d: ConsumedQuantity is null on a Usage charge", rn)
		}
	}
	if v, ok := get("CommitmentDiscountQuantity"); ok {
		withID := !isNull("CommitmentDiscountId")
		switch {
		case usageOrPurchase && withID && !correction && v == "":
			add("row %d: CommitmentDiscountQuantity is null on a %s charge with a CommitmentDiscountId", rn, category)
		case !(usageOrPurchase && withID) && v != "":
			add("row %d: CommitmentDiscountQuantity must be null here", rn)
		}
	}
	for _, id := range []string{"CommitmentDiscountStatus", "CapacityReservationStatus"} {
		parent := strings.Replace(id, "Status", "Id", 1)
		if present[id] && present[parent] && usage && !isNull(parent) && isNull(id) {
			add("row %d: %s is null on a Usage charge with a %s", rn, id, parent)
		}
	}
	for _, p := range nullTogether {
		if present[p[0]] && present[p[1]] && isNull(p[0]) != isNull(p[1]) {
			if isNull(p[1]) {
				add("row %d: %s must be null when %s is null", rn, p[0], p[1])
			} else {
				add("row %d: %s must not be null when %s is not null", rn, p[0], p[1])
			}
		}
	}
	for _, p := range nullWith {
		if present[p[0]] && present[p[1]] && isNull(p[1]) && !isNull(p[0]) {
			add("row %d: %s must be null when %s is null", rn, p[0], p[1])
		}
	}
	if category == "Purchase" {
		if v, _ := get("ChargeFrequency"); v == "Usage-Based" {
			add("row %d: ChargeFrequency must not be Usage-Based on a Purchase", rn)
		}
	}
	if sub, _ := get("ServiceSubcategory"); sub != "" {
		if cat, ok := get("ServiceCategory"); ok && cat != "" && parentCategory[sub] != "" && parentCategory[sub] != cat {
			add("row %d: ServiceSubcategory %q belongs to ServiceCategory %q, not %q", rn, sub, parentCategory[sub], cat)
		}
	}
	for _, id := range nonNegative {
		if v, ok := nums[id]; ok && v < 0 {
			add("row %d: %s %s is negative", rn, id, row[id])
		}
	}
	if q, ok := nums["PricingQuantity"]; ok && !correction {
		for _, p := range products {
			price, ok1 := nums[p[0]]
			cost, ok2 := nums[p[1]]
			if ok1 && ok2 && !consistent(price, q, cost) {
				add("row %d: %s %s x PricingQuantity %s is not %s %s", rn, p[0], row[p[0]], row["PricingQuantity"], p[1], row[p[1]])
			}
		}
	}
	for _, p := range [][2]string{{"ChargePeriodStart", "ChargePeriodEnd"}, {"BillingPeriodStart", "BillingPeriodEnd"}} {
		s, e := row[p[0]], row[p[1]]
		if !present[p[0]] || !present[p[1]] || s == "" || e == "" {
			continue
		}
		ts, err1 := ParseTime(s)
		te, err2 := ParseTime(e)
		if err1 == nil && err2 == nil && te.Before(ts) {
			add("row %d: %s %s is before %s %s", rn, p[1], e, p[0], s)
		}
	}
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
