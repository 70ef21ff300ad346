package models

// GPUMemoryMiB is the memory of common GPU models, in MiB, as their data
// sheets give it (0 for a model it does not know).
func GPUMemoryMiB(model string) int64 {
	gib := map[string]int64{
		"A100-40GB": 40, "A100-80GB": 80, "H100-80GB": 80, "H200-141GB": 141,
		"A10G": 24, "A10": 24, "L4": 24, "L40S": 48, "T4": 16,
		"V100": 16, "V100M16": 16, "V100M32": 32, "V100-32GB": 32, "P100": 16, "P4": 8,
		"B200": 180, "MI300X": 192, "M60": 8, "MI25": 16,
	}
	return gib[model] << 10
}
