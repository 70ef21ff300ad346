package scenarios

// builder turns a scenario document into its plan (Build, Cluster): it
// sizes and prices the pools, builds the workload, the services and the
// policy, checks the work budget and assembles the pricing rules. It reads
// the document and the inputs read as it loaded (the catalogs, imported
// pools) and changes neither.
type builder struct{ *Scenario }

// validator checks a scenario document's meaning (Validate) and the paths
// it names (checkPaths), each error at its file:line:field. It reads the
// document and changes nothing.
type validator struct{ *Scenario }
