// Package gpuop reads the NVIDIA GPU Operator's own configurations, the
// ones gpuplan writes (scenarios/kube/manifests) and users already have:
// the device plugin's config (version v1: flags.migStrategy and the
// sharing section's time-slicing or MPS replicas), one per data key of a
// ConfigMap that nodes pick with their nvidia.com/device-plugin.config
// label, and mig-parted's config (version v1: named MIG layouts under
// mig-configs) that a node applies when its nvidia.com/mig.config label
// names one. Each is given in a ConfigMap (as the GPU Operator reads it)
// or as the bare config file.
//
// The package knows nothing of scenarios: it turns names into replica
// counts and MIG layouts, and the scenarios package applies them to the
// pools whose labels name them.
package gpuop
