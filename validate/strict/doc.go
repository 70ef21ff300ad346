// Package strict is how gpuplan reads what users give it: strict YAML
// decoding against Go types (unknown or mistyped fields refused at their
// line, column and field path, with a suggestion for a typo), InputError
// (bad input, exit code 2, naming file, line, column and field), quotes of
// the input bounded to a few bytes, and the bounds every size read from
// input is checked against before anything is allocated for it (lines,
// files, a pod's CPU, memory and GPUs, replicas, nodes).
//
// It imports nothing of gpuplan, so every reader (scenarios, traces,
// Kubernetes manifest importers, validate's assertions) can use it.
package strict
