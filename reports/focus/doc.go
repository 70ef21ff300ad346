// Package focus writes gpuplan's cost as a FOCUS dataset: a CSV file in
// the columns of the FinOps Open Cost and Usage Specification, version
// 1.3 by default or 1.2 (Version; the FinOps-Open-Cost-and-Usage-Spec/
// FOCUS_Spec files named in testdata/PROVENANCE.md), so that FinOps tools
// that read cloud providers' FOCUS exports can read a simulated cluster's
// bill too.
//
// The package owns each version's column table (Version.Spec: the 57
// columns of 1.2, the 65 of 1.3, with feature level, data type,
// nullability and allowed values; Version.Columns: the 41 (1.2) or 48
// (1.3) this writer emits), the writer (Write), a bounded reader (Read,
// ReadTable) and a validator (CheckVersion; Check for 1.3) that applies
// the column requirements that can be checked row by row: Mandatory
// columns present, types (Decimal in the Numeric Format, Date/Time as
// 'YYYY-MM-DDTHH:MM:SSZ' in UTC, JSON in the Key-Value Format, or the
// JSON Object Format for 1.3's AllocatedMethodDetails and
// ContractApplied), allowed values, nullability (including the
// conditional rules tied to ChargeCategory, ChargeClass and paired
// columns such as PricingQuantity/PricingUnit), non-negative unit prices,
// and unit price x PricingQuantity = cost; for 1.3 also the split cost
// allocation rules across rows (AllocatedRatio adding up to 1 per origin
// charge; see CheckVersion).
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
//	                           "Dynamic" (interruptible, provider-set price),
//	                           reserved "Committed"
//	Charge.Cost                BilledCost = EffectiveCost = ContractedCost
//	                           (but see commitment discounts below)
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
//	(constants)                ChargeCategory "Usage" (but purchases),
//	                           ChargeClass null, ChargeFrequency
//	                           "Usage-Based", BillingCurrency
//	                           "USD", ServiceCategory "Compute",
//	                           ServiceSubcategory "Virtual Machines"
//
// FOCUS 1.3 adds, for the split cost allocation of a shared pool
// (AllocationMethod says the rule): a charge with a Job, and an idle
// charge, are portions of their pool's origin charge, ResourceId
// "gpuplan/<scenario>/<pool>" and ResourceName "<pool>";
//
//	(every split row)         AllocatedMethodId AllocationMethod;
//	                          AllocatedMethodDetails {"Elements": [{
//	                          "AllocatedRatio", "UsageUnit",
//	                          "UsageQuantity"}, ...]}, one element per
//	                          Charge.Usage (GPU-Hours, vCPU-Hours,
//	                          GiB-Hours), or one of node Hours;
//	                          Tags {"pool", "capacityType", "gpuModel"}
//	Charge.Job (allocated)    AllocatedResourceId
//	                          "gpuplan/<scenario>/<pool>/<job>",
//	                          AllocatedResourceName "<job>", AllocatedTags
//	                          {"team", "queue", "job"}
//	Charge.Idle (unallocated) AllocatedResourceId, AllocatedResourceName,
//	                          AllocatedTags null
//	Charge.Provider           ServiceProviderName, HostProviderName (as
//	                          ProviderName; ProviderName and PublisherName
//	                          are deprecated in 1.3 but still Mandatory)
//
// Commitment discounts and capacity reservations (both versions; the
// columns are written only when a charge has them, so that files without
// them keep their columns):
//
//	Charge.Commitment          CommitmentDiscountId, Name, Type, Category
//	                           (Spend or Usage), Unit
//	Charge.CommitmentStatus    CommitmentDiscountStatus: "Used" on usage a
//	                           commitment covered (PricingCategory
//	                           Committed; Cost is the EffectiveCost, the
//	                           amortised commitment applied; BilledCost 0;
//	                           ContractedCost UnitPrice x Quantity),
//	                           "Unused" on the commitment's unused part
//	                           (ConsumedQuantity null)
//	Charge.Purchase            ChargeCategory Purchase, ChargeFrequency
//	                           One-Time or Recurring (BilledCost Cost,
//	                           EffectiveCost 0, PricingCategory Standard)
//	Charge.CommitmentQuantity  CommitmentDiscountQuantity
//	Charge.Reservation,        CapacityReservationId,
//	ReservationStatus          CapacityReservationStatus (Used, Unused)
//
// A commitment's own rows (unused, purchase) have no pool: ResourceId,
// ResourceName and ResourceType are the commitment's, SkuPriceId its ID,
// PricingUnit its unit. In 1.3 a pool's usage a commitment covered is an
// origin charge apart from its usage at on-demand (CheckVersion keys
// origin charges by CommitmentDiscountId too, and AllocatedRatio is each
// row's share of the origin charge's EffectiveCost). CheckVersion applies
// their rules (testdata/focus-1.2 and focus-1.3 hold the column files):
// EffectiveCost 0 on a commitment's purchase, PricingCategory Committed on
// its usage, one CommitmentDiscountUnit per commitment, and a
// commitment's usage EffectiveCost adding up to its purchases'
// BilledCost when the file holds its purchase.
//
// Not emitted, as they do not apply to a simulated bill: the
// PricingCurrency columns (pricing and billing are both in USD),
// BillingAccountType and SubAccountType (one type only), InvoiceId (no
// invoice exists), and 1.3's ContractApplied (no contracts).
package focus
