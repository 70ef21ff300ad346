// Package validate owns the checks. Invariants are the books every run
// must balance, checked from the sim.Result alone (independently of the
// engine's own running checks): every job accounted for with a consistent
// life cycle, gangs bound whole, GPU-hours allocated plus idle equal to
// GPU-hours supplied, no pool allocated beyond its size in any timeline
// bucket. A violation is a bug in gpuplan, reported as an InvariantError
// (exit 4).
//
// The CI gate reads a rules file (kind Assertions), evaluates each rule
// over the paired replications of a baseline and a candidate with
// confidence intervals, and writes the verdict as Markdown and JUnit
// (exit 1 on a failed rule). Strict decoding of every input, with errors
// naming file, line and field (exit 2), is validate/strict.
//
// validate sits between scenarios (which calls it) and reports (which it
// reads): it imports neither scenarios nor cmd.
package validate
