// Package dra reads Dynamic Resource Allocation objects (resource.k8s.io/v1
// DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice,
// decoded strictly into k8s.io/api's types) and turns a pod's claims into
// the GPU request the simulator models: whole GPUs, instances of one MIG
// profile, or a share of one GPU, with the GPU models they may be.
//
// Devices are those the node pools' GPUs would be as their driver
// publishes them (Catalog): NVIDIA's DRA driver's whole GPUs and MIG
// instances (driver gpu.nvidia.com; attributes type, productName,
// architecture, brand, profile; capacity memory) and the DRA example
// driver's simulated GPUs (gpu.example.com, 80Gi of memory), which Kueue's
// DRA samples ask for. The DeviceClasses those drivers install are built
// in; a file's own DeviceClass replaces one of the same name, and so does
// the cluster's (a scenario's policy files, Set.UseCluster). A claim's
// request takes the devices its class's selectors and its own both select,
// as the Kubernetes allocator checks them (k8s.io/dynamic-resource-allocation,
// structured allocator isSelectable: the class's, then the request's). A
// class named nowhere is an input error at the request's deviceClassName;
// one defined in the policy and a workload file with different specs is an
// input error too (a cluster holds one DeviceClass of a name).
//
// Selectors are evaluated in a small, exact subset of CEL (cel.go); an
// expression outside it is an input error naming the expression and its
// field. A request matching no device gpuplan models is an error too (for
// firstAvailable, the next subrequest is tried). Whatever a claim says
// that is not modelled (constraints, config such as MPS or time-slicing,
// adminAccess, tolerations) is a note saying what it was taken as.
//
// Request.Kueue (KueueView) is what Kueue v0.19.2's DRA integration
// (sigs.k8s.io/kueue pkg/dra) counts of the same claims and what it
// refuses, for the scenario's Kueue admission to charge; the fixtures of
// testdata/kueue are given to Kueue's own code in validate/xcheck/kueue.
package dra
