// Package benchmarks holds the performance benchmarks of the simulator
// (run with make bench) and, as the project grows, the on-node calibration
// runner. Nothing here needs a GPU to build or test.
package benchmarks
