// Package gate runs gpuplan validate's CI gate: a baseline and a
// candidate scenario on the same seeds through the run pipeline, and the
// rules of an Assertions file checked on every run's summary
// (validate.Evaluate). The command only reads flags and prints the
// result.
package gate
