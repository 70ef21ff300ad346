package dra

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/models"
)

// Drivers whose devices gpuplan models.
const (
	// DriverNVIDIA is NVIDIA's DRA driver for GPUs (NVIDIA/k8s-dra-driver-gpu):
	// whole GPUs (attribute type "gpu") and MIG instances (type "mig").
	DriverNVIDIA = "gpu.nvidia.com"
	// DriverExample is the DRA example driver (kubernetes-sigs/dra-example-driver),
	// whose simulated GPUs Kueue's DRA samples ask for.
	DriverExample = "gpu.example.com"
)

// exampleMemory is the memory capacity each of the example driver's
// simulated GPUs publishes (80Gi: Kueue's setup_dra page charges one of
// them 85899345920 bytes of its gpu.memory counter).
var exampleMemory = resource.MustParse("80Gi")

// Device is one kind of device the cluster's GPUs can be, as a DRA driver
// publishes it in a ResourceSlice: a whole GPU of a model, or a MIG
// instance of a profile on one. Selectors are evaluated on these.
type Device struct {
	Driver string
	// Model is the GPU model (gpuplan's name) the device is or is cut
	// from; "" for the example driver's simulated GPUs, which stand for
	// any GPU of the cluster.
	Model string
	// MIG is the MIG profile ("" for a whole GPU).
	MIG        string
	Attributes map[string]value
	Capacity   map[string]resource.Quantity
}

// nvidiaGPU is what NVIDIA's driver publishes of a GPU model: its
// productName and architecture as NVML names them (the driver's
// deviceinfo.go copies them into the attributes). Models traces name
// without a variant (A100, H100) have an architecture only; openb's
// anonymised G1 to G3 have neither.
var nvidiaGPU = map[string]struct{ product, arch string }{
	"A100-40GB":  {"NVIDIA A100-SXM4-40GB", "Ampere"},
	"A100-80GB":  {"NVIDIA A100-SXM4-80GB", "Ampere"},
	"A100":       {"", "Ampere"},
	"A10G":       {"NVIDIA A10G", "Ampere"},
	"A10":        {"NVIDIA A10", "Ampere"},
	"H100-80GB":  {"NVIDIA H100 80GB HBM3", "Hopper"},
	"H100":       {"", "Hopper"},
	"H200-141GB": {"NVIDIA H200", "Hopper"},
	"B200":       {"NVIDIA B200", "Blackwell"},
	"GB200":      {"NVIDIA GB200", "Blackwell"},
	"B300":       {"NVIDIA B300 SXM6 AC", "Blackwell"},
	"GB300":      {"NVIDIA GB300", "Blackwell"},
	"L4":         {"NVIDIA L4", "Ada Lovelace"},
	"L40S":       {"NVIDIA L40S", "Ada Lovelace"},
	"T4":         {"Tesla T4", "Turing"},
	"V100":       {"Tesla V100-SXM2-16GB", "Volta"},
	"V100M16":    {"Tesla V100-SXM2-16GB", "Volta"},
	"V100-32GB":  {"Tesla V100-SXM2-32GB", "Volta"},
	"V100M32":    {"Tesla V100-SXM2-32GB", "Volta"},
	"P100":       {"Tesla P100-PCIE-16GB", "Pascal"},
	"P4":         {"Tesla P4", "Pascal"},
	"M60":        {"Tesla M60", "Maxwell"},
	"G1":         {},
	"G2":         {},
	"G3":         {},
}

func str(s string) value { return value{kind: 's', s: s} }

// Catalog is every device gpuplan models, in a fixed order: NVIDIA's
// whole GPUs and MIG instances of every NVIDIA model of models.GPUModels
// (AMD's MI25 and MI300X are no NVIDIA driver's), then the example
// driver's simulated GPU.
func Catalog() []Device {
	var out []Device
	for _, m := range models.GPUModels() {
		g, ok := nvidiaGPU[m]
		if !ok {
			continue
		}
		attrs := map[string]value{"type": str("gpu")}
		if g.product != "" {
			attrs["productName"] = str(g.product)
		}
		if g.arch != "" {
			attrs["architecture"] = str(g.arch)
		}
		if g.product != "" || g.arch != "" {
			attrs["brand"] = str("Nvidia")
		}
		capacity := map[string]resource.Quantity{}
		if mib := models.GPUMemoryMiB(m); mib > 0 {
			capacity["memory"] = *resource.NewQuantity(mib<<20, resource.BinarySI)
		}
		out = append(out, Device{Driver: DriverNVIDIA, Model: m, Attributes: attrs, Capacity: capacity})
		for _, p := range models.MIGProfiles(m) {
			ma := map[string]value{"type": str("mig"), "profile": str(p.Name)}
			for _, k := range []string{"productName", "architecture", "brand"} {
				if v, ok := attrs[k]; ok {
					ma[k] = v
				}
			}
			out = append(out, Device{Driver: DriverNVIDIA, Model: m, MIG: p.Name, Attributes: ma,
				Capacity: map[string]resource.Quantity{"memory": *resource.NewQuantity(p.MemoryMiB<<20, resource.BinarySI)}})
		}
	}
	out = append(out, Device{Driver: DriverExample, Attributes: map[string]value{}, Capacity: map[string]resource.Quantity{"memory": exampleMemory}})
	return out
}
