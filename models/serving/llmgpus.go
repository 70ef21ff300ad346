package serving

import "gpuplan.dev/gpuplan/models"

// Rooflines of the GPUs an LLM replica runs on. Each is the GPU's
// published peak dense bf16 rate and HBM bandwidth (the datasheets named
// in Source) times the efficiencies the one GPU measured for this project
// reached: the H200 fit (H200Roofline) reaches 750 of its 989 dense bf16
// TFLOP/s (0.758) and 4,400 of its 4,800 GB/s (0.917), with a fixed 24 us
// a kernel. Applying the H200's efficiencies to the other GPUs is an
// assumption, not a measurement; any field can be overridden (a scenario's
// roofline, or calibrate's fit of a measured GPU).
const (
	// ComputeEfficiency and BandwidthEfficiency are the H200 fit's
	// shares of its published peaks.
	ComputeEfficiency   = 750.0 / 989.0
	BandwidthEfficiency = 4400.0 / 4800.0
	// DefaultKernelUS is the H200 fit's fixed time of one kernel.
	DefaultKernelUS = 24.0
)

// PublishedRoofline is a GPU's roofline from its published peaks (dense
// bf16 TFLOP/s, HBM GB/s) and the memory a process sees (GiB), at the
// default efficiencies and kernel time.
func PublishedRoofline(name string, peakTFLOPS, peakGBps, memGiB float64, source string) Roofline {
	return Roofline{Name: name, TFLOPS: peakTFLOPS * ComputeEfficiency, GBps: peakGBps * BandwidthEfficiency,
		KernelUS: DefaultKernelUS, MemoryGiB: memGiB, PeakTFLOPS: peakTFLOPS, PeakGBps: peakGBps,
		Source: source + "; efficiencies " + "0.758 (compute) and 0.917 (bandwidth) and 24 us a kernel from the H200 fit"}
}

// RooflineFor is the default roofline of a GPU model of the catalog
// (models.GPUMemoryGB's names), false for one without LLM defaults. The
// H200 is the measured fit; the others are PublishedRoofline of:
//   - A100-80GB and A100-40GB (SXM): 312 TFLOP/s dense bf16; 2,039 and
//     1,555 GB/s (NVIDIA A100 datasheet, 2021); 80 and 40 GiB.
//   - H100-80GB (SXM): 989 TFLOP/s dense bf16 (1,979 with sparsity),
//     3,350 GB/s HBM3 (NVIDIA H100 datasheet); 79.6 GiB (81,559 MiB,
//     what nvidia-smi reports of an H100 SXM 80GB).
//   - B200: 2,250 TFLOP/s dense bf16 (4.5 PFLOP/s with sparsity), 8,000
//     GB/s HBM3e (NVIDIA HGX B200 datasheet, per GPU); 179 GiB (of the
//     180 GB the datasheet gives).
func RooflineFor(gpu string) (Roofline, bool) {
	switch gpu {
	case "H200-141GB":
		r := H200Roofline()
		r.PeakTFLOPS, r.PeakGBps = 989, 4800
		return r, true
	case "H100-80GB":
		return PublishedRoofline(gpu, 989, 3350, 79.6, "NVIDIA H100 SXM datasheet: 989 TFLOP/s dense bf16, 3.35 TB/s"), true
	case "A100-80GB":
		return PublishedRoofline(gpu, 312, 2039, 80, "NVIDIA A100 SXM datasheet: 312 TFLOP/s dense bf16, 2,039 GB/s"), true
	case "A100-40GB":
		return PublishedRoofline(gpu, 312, 1555, 40, "NVIDIA A100 SXM datasheet: 312 TFLOP/s dense bf16, 1,555 GB/s"), true
	case "B200":
		return PublishedRoofline(gpu, 2250, 8000, 179, "NVIDIA HGX B200 datasheet (per GPU): 2.25 PFLOP/s dense bf16, 8 TB/s"), true
	}
	return Roofline{}, false
}

// TPAllReduce is the time in seconds of one all-reduce of a step's
// activations over tp GPUs of a replica on fabric f (ring all-reduce
// priced as models.Fabric.Time does: its latency plus 2(n-1)/n of the
// bytes over its bus bandwidth); nil for tp 1.
func TPAllReduce(f models.Fabric, tp int) func(bytes float64) float64 {
	if tp <= 1 {
		return nil
	}
	return func(bytes float64) float64 { return f.Time(models.AllReduce, int64(bytes), tp, 1) }
}

// PPSend is the time of a pipeline stage's send of bytes of activations to
// the next stage over fabric f (the network between nodes): its latency
// and the bytes at its bus bandwidth scaled by bwScale (the share of a
// node's rails the pod uses).
func PPSend(f models.Fabric, bwScale float64) func(bytes float64) float64 {
	return func(bytes float64) float64 { return f.AlphaUS*1e-6 + bytes/(f.BusBWGBps*bwScale*1e9) }
}
