package models

// GPUMemoryMiB is the memory of common GPU models, in MiB, as their data
// sheets give it (0 for a model it does not know).
func GPUMemoryMiB(model string) int64 {
	gib := map[string]int64{
		"A100-40GB": 40, "A100-80GB": 80, "H100-80GB": 80, "H200-141GB": 141,
		"A10G": 24, "A10": 24, "L4": 24, "L40S": 48, "T4": 16,
		"V100": 16, "V100M16": 16, "V100M32": 32, "V100-32GB": 32, "P100": 16, "P4": 8,
		"B200": 180, "GB200": 186, "MI300X": 192, "M60": 8, "MI25": 16,
		// B300 and GB300: 288 GB of HBM3e on the data sheets; what a
		// process sees, as the whole-GPU MIG profile names it (7g.269gb,
		// 7g.278gb) and Karpenter labels p6-b300 (275,040 MiB).
		"B300": 269, "GB300": 278,
	}
	return gib[model] << 10
}

// GPUModels are the GPU model names gpuplan knows: those of GPUMemoryMiB
// and the generic or anonymised names traces use (A100, H100, openb's G1 to
// G3), sorted.
func GPUModels() []string {
	return []string{"A10", "A100", "A100-40GB", "A100-80GB", "A10G", "B200", "B300", "G1", "G2", "G3", "GB200", "GB300", "H100", "H100-80GB", "H200-141GB",
		"L4", "L40S", "M60", "MI25", "MI300X", "P100", "P4", "T4", "V100", "V100-32GB", "V100M16", "V100M32"}
}

// KnownGPUModel reports whether model is one of GPUModels.
func KnownGPUModel(model string) bool {
	for _, m := range GPUModels() {
		if m == model {
			return true
		}
	}
	return false
}
