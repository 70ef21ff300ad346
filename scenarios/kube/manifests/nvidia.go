package manifests

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DevicePluginConfig is one configuration of the NVIDIA Kubernetes device
// plugin (the config file format, version v1, of NVIDIA/k8s-device-plugin):
// the MIG strategy and, for time-slicing, how many replicas each GPU is
// advertised as. The GPU Operator reads several of them, one per data key
// of a ConfigMap, and gives each node the one its
// nvidia.com/device-plugin.config label names.
type DevicePluginConfig struct {
	Version string            `json:"version"`
	Flags   DevicePluginFlags `json:"flags"`
	Sharing *Sharing          `json:"sharing,omitempty"`
}

// DevicePluginFlags are the device plugin's command-line flags in the
// config file.
type DevicePluginFlags struct {
	// MigStrategy is none, single or mixed.
	MigStrategy string `json:"migStrategy"`
}

// Sharing is the device plugin's sharing section.
type Sharing struct {
	TimeSlicing TimeSlicing `json:"timeSlicing"`
}

// TimeSlicing advertises each GPU of the named resources Replicas times.
type TimeSlicing struct {
	RenameByDefault            bool                  `json:"renameByDefault"`
	FailRequestsGreaterThanOne bool                  `json:"failRequestsGreaterThanOne"`
	Resources                  []TimeSlicingResource `json:"resources"`
}

// TimeSlicingResource is one resource's replica count.
type TimeSlicingResource struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// MigPartedConfig is NVIDIA mig-parted's configuration file (version v1):
// named MIG layouts, one of which a node applies when its
// nvidia.com/mig.config label names it (the GPU Operator's MIG manager).
type MigPartedConfig struct {
	Version    string                    `json:"version"`
	MigConfigs map[string][]MigDeviceSet `json:"mig-configs"`
}

// MigDeviceSet partitions a set of GPUs ("all" or indices) into MIG
// instances, counted per profile.
type MigDeviceSet struct {
	Devices    any            `json:"devices"`
	MigEnabled bool           `json:"mig-enabled"`
	MigDevices map[string]int `json:"mig-devices,omitempty"`
}

// EC2NodeClass is Karpenter's AWS node class (karpenter.k8s.aws/v1): the
// AMI, IAM role, subnets, security groups and disks of the nodes its
// NodePools launch. The fields are the subset gpuplan writes, with the
// names and shapes of the published CRD.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              EC2NodeClassSpec `json:"spec"`
}

// EC2NodeClassSpec is the node class's spec.
type EC2NodeClassSpec struct {
	Role                       string               `json:"role"`
	AMISelectorTerms           []AMISelectorTerm    `json:"amiSelectorTerms"`
	SubnetSelectorTerms        []SelectorTerm       `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms []SelectorTerm       `json:"securityGroupSelectorTerms"`
	BlockDeviceMappings        []BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	// CapacityReservationSelectorTerms select the capacity reservations
	// the node class's NodePools launch into (capacity type reserved).
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
	Tags                             map[string]string                 `json:"tags,omitempty"`
}

// CapacityReservationSelectorTerm selects capacity reservations by id or
// by tags (the CRD's other fields, ownerID and instanceMatchCriteria, are
// not written).
type CapacityReservationSelectorTerm struct {
	ID   string            `json:"id,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

// AMISelectorTerm picks AMIs; Alias (e.g. al2023@latest) lets Karpenter
// choose the EKS-optimised image, its NVIDIA variant for GPU instances.
type AMISelectorTerm struct {
	Alias string `json:"alias,omitempty"`
}

// SelectorTerm picks subnets or security groups by tags.
type SelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
}

// BlockDeviceMapping is one EBS volume of the node.
type BlockDeviceMapping struct {
	DeviceName string         `json:"deviceName"`
	RootVolume bool           `json:"rootVolume,omitempty"`
	EBS        BlockDeviceEBS `json:"ebs"`
}

// BlockDeviceEBS describes an EBS volume.
type BlockDeviceEBS struct {
	VolumeSize          string `json:"volumeSize"`
	VolumeType          string `json:"volumeType"`
	Encrypted           bool   `json:"encrypted"`
	DeleteOnTermination bool   `json:"deleteOnTermination"`
}
