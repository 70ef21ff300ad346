// Package calibrate is the on-node calibration runner: it discovers a
// node's GPUs and their topology through NVML, runs nccl-tests when it
// finds them, parses their output (text or JSON), fits each fabric's
// latency and bus bandwidth, and writes a calibration profile the
// simulator reads.
//
// Nothing here needs a GPU to build or test: NVML is reached through
// go-nvml's Interface, which the tests fill with its mock DGX servers.
package calibrate
