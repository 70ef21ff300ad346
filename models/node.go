package models

// NodeFacts is what discovery (gpuplan calibrate) found on a node.
type NodeFacts struct {
	Hostname          string     `json:"hostname,omitempty"`
	CPUs              int        `json:"cpus"`
	MemoryMiB         int64      `json:"memory_mib"`
	DriverVersion     string     `json:"driver_version,omitempty"`
	NVMLVersion       string     `json:"nvml_version,omitempty"`
	CUDADriverVersion int        `json:"cuda_driver_version,omitempty"`
	GPUs              []GPUFacts `json:"gpus"`
	// Pairs is the topology between every two GPUs.
	Pairs []GPUPair `json:"pairs,omitempty"`
	// Interconnect is nvlink when every GPU has NVLink (direct or through
	// NVSwitch), else pcie.
	Interconnect string `json:"interconnect"`
}

// GPUFacts describe one GPU.
type GPUFacts struct {
	Index             int      `json:"index"`
	Name              string   `json:"name"`
	UUID              string   `json:"uuid"`
	PCIBusID          string   `json:"pci_bus_id,omitempty"`
	MemoryMiB         int64    `json:"memory_mib"`
	ComputeCapability string   `json:"compute_capability,omitempty"`
	MIGEnabled        bool     `json:"mig_enabled"`
	MIGPending        bool     `json:"mig_pending"`
	MIGProfiles       []string `json:"mig_profiles,omitempty"`
	PowerLimitW       float64  `json:"power_limit_w,omitempty"`
	MaxSMClockMHz     uint32   `json:"max_sm_clock_mhz,omitempty"`
	MaxMemClockMHz    uint32   `json:"max_mem_clock_mhz,omitempty"`
	// NVLinks counts the GPU's active NVLinks; SwitchLinks those that go to
	// an NVSwitch rather than to another GPU.
	NVLinks     int `json:"nvlinks"`
	SwitchLinks int `json:"switch_links"`
	// Notes list what NVML did not answer.
	Notes []string `json:"notes,omitempty"`
}

// GPUPair is the path between two GPUs.
type GPUPair struct {
	A, B int `json:"-"`
	// GPUs are A and B.
	GPUs [2]int `json:"gpus"`
	// CommonAncestor is the nearest PCIe ancestor, as nvidia-smi topo
	// names it: BOARD, PIX, PXB, PHB, NODE or SYS.
	CommonAncestor string `json:"common_ancestor,omitempty"`
	// NVLinks counts direct NVLinks between the two; ViaNVSwitch is set
	// when both reach an NVSwitch.
	NVLinks     int  `json:"nvlinks"`
	ViaNVSwitch bool `json:"via_nvswitch"`
}

// Profile kinds and version.
const (
	ProfileAPIVersion = "gpuplan.dev/v1alpha1"
	ProfileKind       = "CalibrationProfile"
)

// CalibrationProfile is what `gpuplan calibrate` writes: the node's facts,
// the fitted fabrics and the raw points, versioned like a scenario.
type CalibrationProfile struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Node       *NodeFacts `json:"node,omitempty"`
	Fabrics    []Fabric   `json:"fabrics"`
	Notes      []string   `json:"notes,omitempty"`
}
