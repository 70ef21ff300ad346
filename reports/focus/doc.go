// Package focus writes gpuplan's cost as a FOCUS dataset: a CSV file in
// the columns of the FinOps Open Cost and Usage Specification, version
// 1.2 (the v1.2 tag of FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec; see
// testdata/PROVENANCE.md), so that FinOps tools that read cloud
// providers' FOCUS exports can read a simulated cluster's bill too.
//
// The package owns the FOCUS 1.2 column table (Spec: the 57 columns of
// that version with feature level, data type, nullability and allowed
// values; Columns: the 41 this writer emits), the writer (Write), a
// bounded reader (Read, ReadTable) and a validator (Check) that applies
// the column requirements that can be checked row by row: Mandatory
// columns present, types (Decimal in the Numeric Format, Date/Time as
// 'YYYY-MM-DDTHH:MM:SSZ' in UTC, JSON in the Key-Value Format), allowed
// values, nullability (including the conditional rules tied to
// ChargeCategory, ChargeClass and paired columns such as
// PricingQuantity/PricingUnit), non-negative unit prices, and
// unit price x PricingQuantity = cost.
//
// A null is an empty CSV field, as in the specification's own example
// files. Columns are in the specification's (alphabetical) order, FOCUS
// columns first, then gpuplan's custom x_ columns.
//
// Mapping of gpuplan's concepts to FOCUS columns, one row per Charge (a
// span of node-hours of one pool, held by one job, or idle):
//
//	Charge.Start, End          ChargePeriodStart, ChargePeriodEnd (seconds, UTC)
//	Options.BillingStart, End  BillingPeriodStart, BillingPeriodEnd (default:
//	                           the span of the charges)
//	Options.BillingAccountID   BillingAccountId; BillingAccountName
//	Options.Scenario           SubAccountId "gpuplan/<scenario>", SubAccountName
//	Charge.Provider            ProviderName, PublisherName, InvoiceIssuerName
//	                           ("gpuplan" when unknown); ServiceName
//	                           (Amazon Elastic Compute Cloud, Compute Engine,
//	                           Virtual Machines, else Kubernetes node pool)
//	Charge.Region, Zone        RegionId and RegionName (the region code for
//	                           both), AvailabilityZone
//	Charge.Pool, Job           ResourceId "gpuplan/<scenario>/<pool>[/<job>]",
//	                           ResourceName "<pool>[/<job>]",
//	                           ResourceType "Virtual Machine"
//	Charge.InstanceType        SkuId; SkuPriceId "<type>/<region>/<capacity>";
//	                           SkuPriceDetails {"InstanceType", "x_GpuModel"};
//	                           SkuMeter "Instance Hours"
//	Charge.CapacityType        PricingCategory: on-demand "Standard", spot
//	                           "Dynamic" (interruptible, provider-set price)
//	Charge.Cost                BilledCost = EffectiveCost = ContractedCost
//	Charge.ListCost            ListCost (on-demand list price)
//	Charge.Quantity            ConsumedQuantity = PricingQuantity, node-hours;
//	                           ConsumedUnit = PricingUnit "Hours"
//	Charge.UnitPrice           ContractedUnitPrice
//	Charge.ListUnitPrice       ListUnitPrice
//	Team, Job, Pool, ...       Tags {"team", "queue" (the team's queue),
//	                           "pool", "job", "capacityType", "gpuModel",
//	                           "gpuplan.dev/idle": "true" on idle rows}, and
//	                           x_Team, x_Job, x_Pool, x_GpuModel,
//	                           x_CapacityType, x_Idle
//	(constants)                ChargeCategory "Usage", ChargeClass null,
//	                           ChargeFrequency "Usage-Based", BillingCurrency
//	                           "USD", ServiceCategory "Compute",
//	                           ServiceSubcategory "Virtual Machines"
//
// Not emitted, as they do not apply to a simulated on-demand/spot bill:
// the commitment-discount and capacity-reservation columns, the
// PricingCurrency columns (pricing and billing are both in USD),
// BillingAccountType and SubAccountType (one type only), InvoiceId (no
// invoice exists).
package focus
