// Package validate checks results. Invariants are the books every run must
// balance, checked from the sim.Result alone (independently of the
// engine's own running checks): every job accounted for with a consistent
// life cycle, gangs bound whole, GPU-hours allocated plus idle equal to
// GPU-hours supplied, no pool allocated beyond its size in any timeline
// bucket. A violation is a bug in gpuplan, reported as an InvariantError.
package validate
