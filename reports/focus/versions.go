package focus

import (
	"fmt"
	"slices"
	"strings"
)

// Version is a version of FOCUS this package writes and checks.
type Version string

// The versions of FOCUS this package writes and checks.
const (
	// V1_2 is FOCUS 1.2 (the v1.2 tag): charges of a shared pool are one
	// row per job, ResourceId naming the pool and the job.
	V1_2 Version = "1.2"
	// V1_3 is FOCUS 1.3 (the v1.3 tag): a pool's cost is an origin
	// charge split to the workloads that held it (the Allocated*
	// columns), ServiceProviderName and HostProviderName beside the
	// deprecated ProviderName and PublisherName.
	V1_3 Version = "1.3"
	// DefaultVersion is what Write writes and Check checks when no
	// version is given.
	DefaultVersion = V1_3
)

// Versions lists the versions this package writes, oldest first.
func Versions() []Version { return []Version{V1_2, V1_3} }

// ParseVersion reads a version name ("1.2" or "1.3").
func ParseVersion(s string) (Version, error) {
	for _, v := range Versions() {
		if s == string(v) {
			return v, nil
		}
	}
	names := make([]string, 0, 2)
	for _, v := range Versions() {
		names = append(names, string(v))
	}
	return "", fmt.Errorf("FOCUS version %q is not one of %s", s, strings.Join(names, ", "))
}

func (v Version) orDefault() Version {
	if v == "" {
		return DefaultVersion
	}
	return v
}

// Columns FOCUS 1.3 adds to 1.2 (from the column files at the commits
// testdata/PROVENANCE.md names).
var added13 = []Column{
	col("AllocatedMethodId", Conditional, String, true, "1.3"),
	col("AllocatedMethodDetails", Recommended, JSON, true, "1.3"),
	col("AllocatedResourceId", Conditional, String, true, "1.3"),
	col("AllocatedResourceName", Conditional, String, true, "1.3"),
	col("AllocatedTags", Conditional, JSON, true, "1.3"),
	col("ContractApplied", Conditional, JSON, true, "1.3"),
	// The table says "Allows nulls: True"; the requirements say "MUST NOT
	// be null", which Check applies.
	col("HostProviderName", Mandatory, String, true, "1.3"),
	col("ServiceProviderName", Mandatory, String, false, "1.3"),
}

// order13 is the columns of FOCUS 1.3 in the order of the specification's
// columns.mdpp (alphabetical but for ServiceProviderName, listed before
// ServiceCategory).
var order13 = []string{
	"AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName",
	"AllocatedTags", "AvailabilityZone", "BilledCost", "BillingAccountId", "BillingAccountName",
	"BillingAccountType", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"CapacityReservationId", "CapacityReservationStatus", "ChargeCategory", "ChargeClass",
	"ChargeDescription", "ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart",
	"CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
	"CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
	"CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractApplied",
	"ContractedCost", "ContractedUnitPrice", "EffectiveCost", "HostProviderName", "InvoiceId",
	"InvoiceIssuerName", "ListCost", "ListUnitPrice", "PricingCategory", "PricingCurrency",
	"PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost",
	"PricingCurrencyListUnitPrice", "PricingQuantity", "PricingUnit", "ProviderName",
	"PublisherName", "RegionId", "RegionName", "ResourceId", "ResourceName", "ResourceType",
	"ServiceProviderName", "ServiceCategory", "ServiceName", "ServiceSubcategory", "SkuId",
	"SkuMeter", "SkuPriceDetails", "SkuPriceId", "SubAccountId", "SubAccountName",
	"SubAccountType", "Tags",
}

// deprecated13 is the columns FOCUS 1.3 keeps but deprecates (still
// Mandatory in 1.3), and what replaces them.
var deprecated13 = map[string]string{"ProviderName": "ServiceProviderName", "PublisherName": "ServiceProviderName"}

// spec13 is every column of FOCUS 1.3, in the specification's order: 1.2's
// columns, whose content constraints 1.3 leaves as they were, and the
// added ones.
var spec13 = func() []Column {
	byID := map[string]Column{}
	for _, c := range append(slices.Clone(spec12), added13...) {
		byID[c.ID] = c
	}
	out := make([]Column, len(order13))
	for i, id := range order13 {
		c, ok := byID[id]
		if !ok {
			panic("focus: no column " + id)
		}
		out[i] = c
	}
	return out
}()

// emitted13 is the FOCUS 1.3 columns Write writes, in the specification's
// order: 1.2's, and the split cost allocation and provider columns.
var emitted13 = func() []string {
	want := map[string]bool{
		"AllocatedMethodId": true, "AllocatedMethodDetails": true, "AllocatedResourceId": true,
		"AllocatedResourceName": true, "AllocatedTags": true, "HostProviderName": true, "ServiceProviderName": true,
	}
	for _, id := range emitted12 {
		want[id] = true
	}
	var out []string
	for _, id := range order13 {
		if want[id] {
			out = append(out, id)
		}
	}
	return out
}()

func index(cols []Column) map[string]*Column {
	m := make(map[string]*Column, len(cols))
	for i := range cols {
		m[cols[i].ID] = &cols[i]
	}
	return m
}

var (
	specByID12 = index(spec12)
	specByID13 = index(spec13)
)

func (v Version) spec() []Column {
	if v.orDefault() == V1_2 {
		return spec12
	}
	return spec13
}

func (v Version) byID() map[string]*Column {
	if v.orDefault() == V1_2 {
		return specByID12
	}
	return specByID13
}

func (v Version) emitted() []string {
	if v.orDefault() == V1_2 {
		return emitted12
	}
	return emitted13
}

// Spec returns every column of the version, in the specification's order.
func (v Version) Spec() []Column {
	s := v.spec()
	out := make([]Column, len(s))
	for i, c := range s {
		out[i] = clone(c)
	}
	return out
}

// Columns returns the version's columns Write emits, in the order it
// writes them, with their type and feature level.
func (v Version) Columns() []Column {
	ids, byID := v.emitted(), v.byID()
	out := make([]Column, len(ids))
	for i, id := range ids {
		out[i] = clone(*byID[id])
	}
	return out
}

// Deprecated names the column that replaces a column the version
// deprecates, or "" when it does not deprecate it.
func (v Version) Deprecated(id string) string {
	if v.orDefault() == V1_2 {
		return ""
	}
	return deprecated13[id]
}

// Spec returns every column of DefaultVersion, in the specification's
// order.
func Spec() []Column { return DefaultVersion.Spec() }

// Columns returns the DefaultVersion columns Write emits.
func Columns() []Column { return DefaultVersion.Columns() }
