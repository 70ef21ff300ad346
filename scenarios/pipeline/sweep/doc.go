// Package sweep runs a scenario over a space of settings: a Sweep spec
// (kind: Sweep) names a base scenario, parameters as paths into its spec
// with the values each takes, a design that picks the points of the space
// (a full grid, random points or a Latin hypercube, seeded), how many seeds
// each point runs and the metrics to keep.
//
// Each point's runs go through the run pipeline (invariants checked in
// every run) on a worker pool of whole runs; each finished point is one
// file written atomically under OUT/points, so a sweep killed at any moment
// and started again runs only the points it has no file for. A shard
// (--shard i/N, one pod of a Kubernetes Indexed Job) runs the points whose
// index is i modulo N; Merge joins the points of any set of folders into
// one table, refusing a point missing or present twice. The table (CSV and
// JSON, one row per point: mean and 95% interval of each metric over the
// seeds) depends only on the spec, never on the number of workers or
// shards.
//
// The layers, in the order data flows:
//
//	spec.go    the Sweep document: strict decoding, paths, values, metrics
//	design.go  the points: grid, random, Latin hypercube
//	point.go   a point applied to the base scenario and run over its seeds
//	run.go     the points of a shard on a worker pool, one file per point
//	table.go   point files merged into the table, CSV and JSON
//	job.go     the Kubernetes Indexed Job that runs the shards
package sweep
