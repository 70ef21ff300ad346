package scenarios

// builder turns a scenario document into its plan (Build, Cluster): it
// sizes and prices the pools and builds the workload and the policy; the
// services, the work budget and the pricing rules it hands to
// serviceBuilder, budgeter and pricer. It reads the document and the
// inputs read as it loaded (the catalogs, imported pools) and changes
// neither.
type builder struct{ *Scenario }

// validator checks a scenario document's meaning (Validate) and the paths
// it names (checkPaths), each error at its file:line:field. It reads the
// document and changes nothing.
type validator struct{ *Scenario }

// serviceBuilder builds spec.workload.services into the plan's service
// configs: each service's replica pod, load, queue, priority, scaler and
// serving model, reading the files they name. It reads the document and
// changes nothing.
type serviceBuilder struct {
	*Scenario
	cache *BuildCache // what other builds of the same command share (nil: none)
}

// budgeter checks a built plan against the work budget before the clock
// starts: the terms (jobs, node supply, services) a run's event count
// grows with, each named at its field.
type budgeter struct{ *Scenario }

// pricer settles every rule a run's costs are read with (pricingPlan): the
// base rates and split, CPU/memory rates, on-demand twins of spot pools,
// the showback's idle rule and budgets.
type pricer struct{ *Scenario }

// interrupter builds a pool's disruption processes for the capacity model:
// spot interruptions (a band, a rate, lifetime and outage distributions,
// reclaim waves, a SkyPilot trace) and what they are taken from. It reads
// the document and the catalogs and changes neither.
type interrupter struct{ *Scenario }
