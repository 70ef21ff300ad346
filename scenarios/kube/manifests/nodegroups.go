package manifests

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// EksctlAPIVersion is eksctl's ClusterConfig API.
const EksctlAPIVersion = "eksctl.io/v1alpha5"

// ClusterConfig is eksctl's cluster configuration file, the part that
// declares managed node groups (eksctl's Go module pulls in the AWS SDK).
type ClusterConfig struct {
	metav1.TypeMeta   `json:",inline"`
	Metadata          ClusterMeta        `json:"metadata"`
	ManagedNodeGroups []ManagedNodeGroup `json:"managedNodeGroups"`
}

// ClusterMeta names the cluster and its region.
type ClusterMeta struct {
	Name   string `json:"name"`
	Region string `json:"region"`
}

// ManagedNodeGroup is an EKS managed node group.
type ManagedNodeGroup struct {
	Name              string            `json:"name"`
	InstanceType      string            `json:"instanceType,omitempty"`
	InstanceTypes     []string          `json:"instanceTypes,omitempty"`
	Spot              bool              `json:"spot,omitempty"`
	AMIFamily         string            `json:"amiFamily"`
	DesiredCapacity   int               `json:"desiredCapacity"`
	MinSize           int               `json:"minSize"`
	MaxSize           int               `json:"maxSize"`
	AvailabilityZones []string          `json:"availabilityZones,omitempty"`
	VolumeSize        int               `json:"volumeSize"`
	VolumeType        string            `json:"volumeType"`
	Labels            map[string]string `json:"labels,omitempty"`
	Taints            []NodeGroupTaint  `json:"taints,omitempty"`
	Tags              map[string]string `json:"tags,omitempty"`
}

// NodeGroupTaint is a node group's taint (eksctl's effects are the
// Kubernetes ones).
type NodeGroupTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// nodeGroups writes the fixed pools as EKS managed node groups when
// --fixed-pools managed-nodegroup asks for it.
func (g *gen) nodeGroups() (File, error) {
	f := File{Path: PathEksctl}
	if g.o.FixedPools != FixedNodeGroup {
		return f, nil
	}
	region := g.s.Spec.Pricing.Region
	if region == "" {
		region = "us-east-1"
	}
	cc := &ClusterConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: EksctlAPIVersion, Kind: "ClusterConfig"},
		Metadata: ClusterMeta{Name: g.o.ClusterName, Region: region},
	}
	for i, q := range g.pools {
		if !q.fixed || q.nodes == 0 {
			continue
		}
		labels := map[string]string{cluster.LabelPool: q.name}
		for k, v := range q.labels {
			labels[k] = v
		}
		for k, v := range q.sharingLabels() {
			labels[k] = v
		}
		ng := ManagedNodeGroup{
			Name: q.name, AMIFamily: "AmazonLinux2023",
			DesiredCapacity: q.nodes, MinSize: q.nodes, MaxSize: q.nodes,
			VolumeSize: 200, VolumeType: "gp3", Labels: labels,
			Tags: map[string]string{generatedBy: g.s.Metadata.Name},
		}
		if slices.Contains(q.capacityTypes, "spot") {
			ng.Spot, ng.InstanceTypes = true, q.instanceTypes
		} else {
			ng.InstanceType = q.instanceTypes[0]
		}
		if q.zone != "" {
			ng.AvailabilityZones = []string{q.zone}
		}
		if p := g.s.Spec.Cluster.Pools; i < len(p) && p[i].Region != "" && p[i].Region != region {
			return f, fmt.Errorf("pool %s is in region %s, pool region %s differs: one eksctl ClusterConfig holds one region", q.name, p[i].Region, region)
		}
		for _, t := range q.taints {
			ng.Taints = append(ng.Taints, NodeGroupTaint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
		}
		cc.ManagedNodeGroups = append(cc.ManagedNodeGroups, ng)
	}
	if len(cc.ManagedNodeGroups) == 0 {
		return f, nil
	}
	var names []string
	for _, ng := range cc.ManagedNodeGroups {
		names = append(names, ng.Name)
	}
	f.Comment = g.header(
		"The fixed pools ("+strings.Join(names, ", ")+") as EKS managed node groups (--fixed-pools managed-nodegroup):",
		"min = max = desired, so the group keeps the node count the simulation had. Apply with",
		"eksctl create nodegroup --config-file eksctl-nodegroups.yaml. The GPU Operator's device plugin",
		"and the pools' labels and taints are as on the NodePools; the Kueue flavors select gpuplan.dev/pool.",
	)
	f.Objects = append(f.Objects, cc)
	return f, nil
}

// simulationOnly lists, per pool, the settings of the scenario that no
// Kubernetes object carries: the simulation's model of the cloud.
func (g *gen) simulationOnly() []string {
	var out []string
	add := func(name string, c scenarios.CapacitySpec, extra ...string) {
		var k []string
		if c.PricePerHour != nil || c.OnDemandPricePerHour != nil {
			k = append(k, "prices")
		}
		if c.Provisioning != nil {
			k = append(k, "provisioning "+c.Provisioning.Duration.String())
		}
		if c.ImagePull != nil {
			k = append(k, "image pull "+c.ImagePull.Duration.String())
		}
		if c.Interruptions != nil {
			k = append(k, "spot interruptions")
		}
		if c.Failures != nil {
			k = append(k, "node failures")
		}
		k = append(k, extra...)
		if len(k) > 0 {
			out = append(out, name+": "+strings.Join(k, ", "))
		}
	}
	for _, p := range g.s.Spec.Cluster.Pools {
		var extra []string
		if p.Sharing != nil && p.Sharing.TimeSlicing != nil && p.Sharing.TimeSlicing.Overhead > 0 {
			extra = append(extra, "time-slicing overhead")
		}
		if p.Sharing != nil && p.Sharing.MIG != nil && p.Sharing.MIG.Relayout != nil {
			extra = append(extra, "MIG re-layout times")
		}
		if p.Fabric != "" || p.Network != "" {
			extra = append(extra, "fabric and network")
		}
		if a := p.Autoscaling; a != nil && (a.Expander != "" || a.ScanInterval != nil || a.ScaleDownDelayAfterAdd != nil) {
			extra = append(extra, "cluster-autoscaler expander, scan interval and scale-down delay (Karpenter has none)")
		}
		if p.OSDiskPricePerMonth != nil {
			extra = append(extra, "the OS disk's price while deallocated")
		}
		if p.MaxPrice != nil && *p.MaxPrice > 0 && g.o.Provider != ProviderAKS {
			extra = append(extra, "spot max price (Karpenter and EKS managed node groups have no field for it)")
		}
		add(p.Name, p.CapacitySpec, extra...)
	}
	for _, np := range g.s.Spec.Cluster.NodePools {
		c := scenarios.CapacitySpec{Provisioning: np.Provisioning, ImagePull: np.ImagePull, Interruptions: np.Interruptions, Failures: np.Failures}
		var extra []string
		if len(np.PricePerHour) > 0 {
			extra = append(extra, "prices")
		}
		if np.SpotLaunchFailure > 0 {
			extra = append(extra, "spot launch failures")
		}
		add(np.Name, c, extra...)
	}
	return out
}
