package scenarios

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/validate/strict"
)

// APIVersion and Kind identify a scenario document.
const (
	APIVersion = strict.APIVersion
	Kind       = "Scenario"
)

// Scenario is the versioned, Kubernetes-style scenario document.
type Scenario struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`

	// file is where it was loaded from ("" for built in); dir resolves
	// relative paths; pos maps field paths to lines.
	file string
	dir  string
	pos  positions
	cat  *models.PriceCatalog // loaded on first use
	karp *karpenter.Catalog   // Karpenter's AWS catalog, loaded on first use
	// imported names the NodePools read from spec.policy's manifests;
	// importedPools the pools read from spec.cluster.nodes, nodeNotes what
	// reading them left out.
	imported      []string
	importedPools []string
	nodeNotes     []string
	// aliases maps an imported pool's field path (spec.cluster.pools[3])
	// to the setting that gave its fields (spec.cluster.nodes.pools[0]).
	aliases map[string]string
	// restrict refuses paths outside dir (LoadOptions.RestrictPaths).
	restrict bool
	// policyFiles replace spec.policy.manifests while the scenario is
	// read (LoadOptions.PolicyManifests; nil: the spec's).
	policyFiles []string
}

// Metadata names and describes a scenario.
type Metadata struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// Spec is the body of a scenario.
type Spec struct {
	// Seed drives every random stream of the run (default 1).
	Seed *uint64 `json:"seed,omitempty"`
	// Horizon ends the run; empty means run until the workload drains.
	Horizon *Duration   `json:"horizon,omitempty"`
	Cluster ClusterSpec `json:"cluster"`
	Pricing PricingSpec `json:"pricing,omitempty"`
	// Calibration is a calibration profile (gpuplan calibrate) whose
	// fabrics add to and replace the built-in ones.
	Calibration string        `json:"calibration,omitempty"`
	Workload    WorkloadSpec  `json:"workload"`
	Scheduler   SchedulerSpec `json:"scheduler,omitempty"`
	Queueing    QueueingSpec  `json:"queueing,omitempty"`
	// Policy puts Kueue admission, read from manifests, in front of the
	// scheduler.
	Policy *PolicySpec `json:"policy,omitempty"`
	Output OutputSpec  `json:"output,omitempty"`
	// Variants are what-ifs of the same scenario, run beside it.
	Variants []VariantSpec `json:"variants,omitempty"`
}

// VariantSpec is a what-if: the scenario's spec changed by a patch.
type VariantSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Patch is a JSON merge patch (RFC 7386) over spec, except that lists
	// of named items (pools, nodePools, classes) merge item by item by
	// name, as Kubernetes' strategic merge does: a named item not in the
	// list is added, {name: x, $patch: delete} removes one, null removes a
	// field.
	Patch SpecPatch `json:"patch"`
}

// SpecPatch holds a patch's JSON; it is checked against Spec's fields
// when the scenario is read.
type SpecPatch struct{ raw []byte }

// UnmarshalJSON keeps the patch as it is.
func (p *SpecPatch) UnmarshalJSON(b []byte) error {
	p.raw = append([]byte(nil), b...)
	return nil
}

// MarshalJSON writes the patch back.
func (p SpecPatch) MarshalJSON() ([]byte, error) {
	if p.raw == nil {
		return []byte("null"), nil
	}
	return p.raw, nil
}

// ClusterSpec lists node pools, given inline or imported from a node list,
// and Karpenter-like NodePools.
type ClusterSpec struct {
	Pools     []PoolSpec     `json:"pools,omitempty"`
	NodePools []NodePoolSpec `json:"nodePools,omitempty"`
	NodeList  *NodeListSpec  `json:"nodeList,omitempty"`
	// Nodes is the live cluster's `kubectl get nodes -o yaml`.
	Nodes *NodesSpec `json:"nodes,omitempty"`
	// AgentPools are AKS agent pools as an ARM template (what gpuplan
	// manifests --provider aks writes).
	AgentPools *AgentPoolsSpec `json:"agentPools,omitempty"`
	// GPUConfigs are the GPU Operator's configs (the device plugin's
	// time-slicing/MPS ConfigMap, mig-parted's ConfigMap, or the bare
	// config files): pools without sharing take theirs through their
	// nvidia.com/device-plugin.config and nvidia.com/mig.config labels.
	GPUConfigs []string `json:"gpuConfigs,omitempty"`
}

// PricingSpec says where prices come from.
type PricingSpec struct {
	// Region prices pools that name no region (default us-east-1).
	Region string `json:"region,omitempty"`
	// Catalogs are SkyPilot-format price files read over the embedded
	// catalog.
	Catalogs []string `json:"catalogs,omitempty"`
	// BaseRates set how a node's price is split over GPUs, vCPUs and
	// memory with split: opencost, and for nodes without GPUs (OpenCost's
	// ratios by default).
	BaseRates *BaseRatesSpec `json:"baseRates,omitempty"`
	// Split is how a GPU node's price divides over its resources:
	// gpu-residual (the default: vCPUs and memory at GPU-less instances'
	// rates, the GPUs the rest) or opencost (the base rates' ratio, as an
	// OpenCost install with default custom pricing does).
	Split string `json:"split,omitempty"`
	// CPUMemoryRates, with the gpu-residual split, are what a vCPU-hour
	// and a GiB-hour cost on the provider's GPU-less instances (default:
	// fitted over AWS's c7i, m7i and r7i on-demand prices).
	CPUMemoryRates *BaseRatesSpec `json:"cpuMemoryRates,omitempty"`
	// IdleDistribution is how the showback spreads idle cost over the
	// teams (queues): allocation (in proportion to what their pods paid,
	// the default) or even.
	IdleDistribution string `json:"idleDistribution,omitempty"`
	// Budgets are USD per team (queue) for 30 days, prorated to the run,
	// shown beside each team's showback.
	Budgets map[string]float64 `json:"budgets,omitempty"`
	// Commitments are reserved instances, Savings Plans and committed-use
	// discounts bought ahead (commitments.go).
	Commitments []CommitmentSpec `json:"commitments,omitempty"`
	// CommitmentAdvice asks for the spend commitment that makes the run's
	// demand cheapest (commitments.go).
	CommitmentAdvice *CommitmentAdviceSpec `json:"commitmentAdvice,omitempty"`
}

// BaseRatesSpec are USD per GPU-hour, vCPU-hour and GiB-hour, as ratios.
type BaseRatesSpec struct {
	GPU    float64 `json:"gpu"`
	CPU    float64 `json:"cpu"`
	Memory float64 `json:"memory"`
}

// CapacitySpec is how a pool's (or NodePool's) nodes are bought and lost.
type CapacitySpec struct {
	// CapacityType is on-demand (default) or spot.
	CapacityType string `json:"capacityType,omitempty"`
	// Region and Zone price the nodes (Region defaults to spec.pricing's).
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// PricePerHour overrides the catalog's price of a node.
	PricePerHour *float64 `json:"pricePerHour,omitempty"`
	// OnDemandPricePerHour is what a spot pool's node would cost
	// on-demand, for the spot-against-on-demand comparison (default: the
	// catalog's price).
	OnDemandPricePerHour *float64 `json:"onDemandPricePerHour,omitempty"`
	// Provisioning is the time from a launch to the node being Ready
	// (default 5m); ImagePull, when given, is added to it (the first pod's
	// image pull on a fresh node).
	Provisioning *Duration `json:"provisioning,omitempty"`
	ImagePull    *Duration `json:"imagePull,omitempty"`
	// Interruptions is the spot reclaim process of spot nodes.
	Interruptions *InterruptionSpec `json:"interruptions,omitempty"`
	// Failures fails nodes of any capacity type, without notice.
	Failures *FailureSpec `json:"failures,omitempty"`
}

// InterruptionSpec is one of a rate, an MTBF, an AWS Spot Advisor band
// (a label such as "<5%", or auto: the band of the pool's instance type
// and region: a monthly share of instances interrupted, read as an
// exponential rate), on an Azure VM size an Azure eviction-rate band (an
// hourly chance, given or looked up in a Resource Graph result), a
// lifetime distribution or a trace of times; with
// none, the measured preset (models.MeasuredSpotPreset: lifetimes,
// outages and waves fitted to public spot preemption traces).
type InterruptionSpec struct {
	// Lifetime is each node's time to preemption, drawn at each launch
	// (spotmodel.go).
	Lifetime *LifetimeSpec `json:"lifetime,omitempty"`
	// Outage is how long the capacity stays gone after a reclaim: a fixed
	// pool relaunches when it ends, a NodePool falls back to its next
	// offering by price meanwhile.
	Outage *LifetimeSpec `json:"outage,omitempty"`
	// Wave is the chance that each other node of the pool goes with a
	// reclaimed one (a node's mean time to preemption is kept).
	Wave        *float64  `json:"wave,omitempty"`
	RatePerHour *float64  `json:"ratePerHour,omitempty"`
	MTBF        *Duration `json:"mtbf,omitempty"`
	// Band is an AWS Spot Advisor band on AWS, an Azure eviction-rate
	// band on an Azure VM size (models.AzureEvictionRate), or auto.
	Band string `json:"band,omitempty"`
	// EvictionRates is an Azure Resource Graph result of eviction-rate
	// bands per VM size and region (package scenarios/azurerates): an Azure
	// pool's band, looked up.
	EvictionRates string `json:"evictionRates,omitempty"`
	// Times and Path are a trace: at each time one node is interrupted.
	// Path is a CSV file with a time column (seconds from the start).
	Times []Duration `json:"times,omitempty"`
	Path  string     `json:"path,omitempty"`
	// SkyPilot is a spot capacity trace in SkyPilot's spot-traces format
	// (package scenarios/skypilot): the nodes a fixed spot pool may hold
	// over time, scaled from the trace's peak to the pool's count.
	SkyPilot string `json:"skypilot,omitempty"`
	// Notice before the reclaim (default: AWS 2m, GCP and Azure 30s).
	Notice *Duration `json:"notice,omitempty"`
}

// FailureSpec is node failures with a mean time between them per node.
type FailureSpec struct {
	MTBF Duration `json:"mtbf"`
}

// AutoscalingSpec makes a pool a cluster-autoscaler node group.
type AutoscalingSpec struct {
	MinNodes int `json:"minNodes,omitempty"`
	MaxNodes int `json:"maxNodes"`
	// ScaleDownUnneededTime and ScaleDownDelayAfterAdd default to 10m.
	ScaleDownUnneededTime  *Duration `json:"scaleDownUnneededTime,omitempty"`
	ScaleDownDelayAfterAdd *Duration `json:"scaleDownDelayAfterAdd,omitempty"`
	// Expander is random (default), least-waste or price.
	Expander string `json:"expander,omitempty"`
	// ScanInterval is how often the autoscaler looks at pending pods: the
	// delay before a scale-up (default 10s).
	ScanInterval *Duration `json:"scanInterval,omitempty"`
}

// NodePoolSpec is a Karpenter NodePool: nodes of several instance types
// and capacity types, launched for pending pods up to its limits.
type NodePoolSpec struct {
	Name          string   `json:"name"`
	InstanceTypes []string `json:"instanceTypes"`
	// CapacityTypes allowed (default [on-demand]); spot is preferred when
	// allowed, on-demand is the fallback.
	CapacityTypes []string `json:"capacityTypes,omitempty"`
	Region        string   `json:"region,omitempty"`
	Zone          string   `json:"zone,omitempty"`
	// PricePerHour overrides catalog prices: instance type -> capacity type -> USD/h.
	PricePerHour  map[string]map[string]float64 `json:"pricePerHour,omitempty"`
	Limits        NodePoolLimits                `json:"limits"`
	Provisioning  *Duration                     `json:"provisioning,omitempty"`
	ImagePull     *Duration                     `json:"imagePull,omitempty"`
	Consolidation *ConsolidationSpec            `json:"consolidation,omitempty"`
	// SpotLaunchFailure is the chance a spot launch finds no capacity.
	SpotLaunchFailure float64           `json:"spotLaunchFailure,omitempty"`
	Interruptions     *InterruptionSpec `json:"interruptions,omitempty"`
	Failures          *FailureSpec      `json:"failures,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Taints            []TaintSpec       `json:"taints,omitempty"`
	// Weight orders NodePools as Karpenter's spec.weight does: a pod is
	// launched for by the highest-weighted NodePool that can (ties: by
	// name; no NodePool weighted: in the order given).
	Weight int32 `json:"weight,omitempty"`
	// ExpireAfter is each node's lifetime (Karpenter's expireAfter): then
	// it is drained, its jobs given 30 s, and launched for again.
	ExpireAfter *Duration `json:"expireAfter,omitempty"`
	// Reservations are the capacity reservations the NodePool's reserved
	// capacity type launches into (an EC2NodeClass's
	// capacityReservationSelectorTerms): count instances of a type, paid
	// for the whole run whether launched or not.
	Reservations []NodePoolReservation `json:"reservations,omitempty"`
	// resolved: InstanceTypes came from requirements on well-known labels.
	resolved bool
	// overlays are the policy's Karpenter NodeOverlays, highest weight
	// first (nodeoverlay.go).
	overlays []nodeOverlay
}

// NodePoolReservation is one capacity reservation a NodePool may launch
// into: count instances of instanceType, at pricePerHour (default: the
// on-demand price, as an on-demand capacity reservation bills).
type NodePoolReservation struct {
	InstanceType string   `json:"instanceType"`
	Count        int      `json:"count"`
	PricePerHour *float64 `json:"pricePerHour,omitempty"`
}

// NodePoolLimits cap a NodePool's nodes (spec.limits).
type NodePoolLimits struct {
	GPUs  int64 `json:"nvidia.com/gpu,omitempty"`
	Nodes int   `json:"nodes,omitempty"`
	// CPU and Memory cap the vCPUs and memory of its nodes together.
	CPU    *resource.Quantity `json:"cpu,omitempty"`
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// ConsolidationSpec is a NodePool's disruption policy.
type ConsolidationSpec struct {
	// Policy is WhenEmpty or WhenEmptyOrUnderutilized.
	Policy           string   `json:"policy"`
	ConsolidateAfter Duration `json:"consolidateAfter"`
}

// RecoverySpec is how jobs survive losing a node.
type RecoverySpec struct {
	Checkpoint *CheckpointSpec `json:"checkpoint,omitempty"`
	// BackoffLimit is the Job's spec.backoffLimit (default 6).
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// IgnoreDisruptions is a podFailurePolicy rule Ignore on DisruptionTarget.
	IgnoreDisruptions bool `json:"ignoreDisruptions,omitempty"`
	// ActiveDeadline is spec.activeDeadlineSeconds, from submission.
	ActiveDeadline *Duration `json:"activeDeadline,omitempty"`
	// DoNotDisrupt is the karpenter.sh/do-not-disrupt annotation.
	DoNotDisrupt bool `json:"doNotDisrupt,omitempty"`
	// TerminationGracePeriod is the pods' terminationGracePeriodSeconds
	// (default: long enough for a checkpoint write, as gpuplan manifests
	// writes it): a preempted or drained job whose write fits in it (and
	// in a spot notice) checkpoints before its pods go.
	TerminationGracePeriod *Duration `json:"terminationGracePeriod,omitempty"`
}

// CheckpointSpec is a job's checkpointing: a write every interval taking
// cost; restore, the reload after a disruption, defaults to cost (the same
// checkpoint read back over the same storage).
type CheckpointSpec struct {
	Interval Duration  `json:"interval"`
	Cost     *Duration `json:"cost,omitempty"`
	Restore  *Duration `json:"restore,omitempty"`
}

// WindowSpec is a capacity block's reserved time, from the run's start.
type WindowSpec struct {
	Start Duration `json:"start"`
	End   Duration `json:"end"`
}

// PoolSpec is a group of identical nodes.
type PoolSpec struct {
	Name         string            `json:"name"`
	Count        int               `json:"count"`
	InstanceType string            `json:"instanceType,omitempty"`
	GPUModel     string            `json:"gpuModel,omitempty"`
	GPUsPerNode  int32             `json:"gpusPerNode,omitempty"`
	CPU          resource.Quantity `json:"cpu,omitzero"`
	Memory       resource.Quantity `json:"memory,omitzero"`
	Labels       map[string]string `json:"labels,omitempty"`
	Taints       []TaintSpec       `json:"taints,omitempty"`
	// GPUMemory is each GPU's memory (default: the model's, when known).
	GPUMemory *resource.Quantity `json:"gpuMemory,omitempty"`
	// Sharing shares the pool's GPUs by time-slicing or MIG.
	Sharing *SharingSpec `json:"sharing,omitempty"`
	// Fabric and Network name the interconnects within and between the
	// pool's nodes (spec.calibration's fabrics or the built-in ones;
	// default: the GPU model's, and ib-ndr-400).
	Fabric  string `json:"fabric,omitempty"`
	Network string `json:"network,omitempty"`
	// CapacitySpec: capacity type, price, provisioning, interruptions.
	CapacitySpec `json:",inline"`
	// Replace relaunches lost nodes of a pool without autoscaling (default true).
	Replace *bool `json:"replace,omitempty"`
	// EvictionPolicy is an Azure spot pool's scale-set eviction policy:
	// Delete (the AKS default) or Deallocate (azurespot.go);
	// OSDiskPricePerMonth the USD a month its OS disk bills while a
	// Deallocate pool's evicted node is stopped-deallocated (default
	// DefaultOSDiskPricePerMonth).
	EvictionPolicy      string   `json:"evictionPolicy,omitempty"`
	OSDiskPricePerMonth *float64 `json:"osDiskPricePerMonth,omitempty"`
	// MaxPrice is a spot pool's max price, USD a node-hour: Azure's
	// spotMaxPrice or EC2's spot max price (the launch template's
	// SpotOptions.MaxPrice); -1, the default, is up to the on-demand price
	// (maxprice.go).
	MaxPrice *float64 `json:"maxPrice,omitempty"`
	// Autoscaling makes the pool a cluster-autoscaler node group; count is
	// then its initial size.
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`
	// Window makes a reserved pool a capacity block (EC2 Capacity Blocks
	// for ML): its count nodes from start to end of the run's clock, paid
	// for the whole window, terminated from 30 minutes before its end.
	Window *WindowSpec `json:"window,omitempty"`
	// Topology groups the pool's nodes into NVLink domains, racks and
	// blocks (topology.go); none: one flat network.
	Topology *PoolTopologySpec `json:"topology,omitempty"`
	// levelKeys, for a pool read from a node list, maps the cloud's level
	// labels its nodes carry to gpuplan's (scenarios/kube/nodes Levels).
	levelKeys map[string]string
}

// SharingSpec is how a pool's GPUs are shared (one of the two).
type SharingSpec struct {
	// TimeSlicing is the device plugin's time-slicing: each GPU advertised
	// replicas times.
	TimeSlicing *TimeSlicingSpec `json:"timeSlicing,omitempty"`
	// MIG partitions every GPU the same way.
	MIG *MIGSpec `json:"mig,omitempty"`
}

// TimeSlicingSpec is the device plugin's sharing.timeSlicing.
type TimeSlicingSpec struct {
	Replicas int32 `json:"replicas"`
	// Overhead is the share of the GPU lost to context switching when it is
	// shared (default 0: each of k sharers runs at 1/k).
	Overhead float64 `json:"overhead,omitempty"`
}

// MIGSpec is a static MIG layout, mig-parted style.
type MIGSpec struct {
	// Strategy is single (instances advertised as nvidia.com/gpu) or mixed
	// (as nvidia.com/mig-<profile>).
	Strategy string `json:"strategy"`
	// Layout is a mig-parted name: all-<profile> or all-balanced.
	Layout string `json:"layout,omitempty"`
	// Profiles lists each GPU's instances instead of a layout name.
	Profiles []string `json:"profiles,omitempty"`
	// Relayout lets an idle GPU be re-partitioned as all-<profile> when
	// jobs wait for a profile no GPU offers (mixed strategy).
	Relayout *RelayoutSpec `json:"relayout,omitempty"`
}

// RelayoutSpec is how long a GPU is out of service for a re-layout.
type RelayoutSpec struct {
	Drain       Duration `json:"drain"`
	Reconfigure Duration `json:"reconfigure"`
}

// TaintSpec is a core/v1 taint.
type TaintSpec struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// NodeListSpec imports pools from a node list file (format openb: the
// openb_node_list_*.csv of the Alibaba trace), grouping identical nodes.
type NodeListSpec struct {
	Path   string `json:"path"`
	Format string `json:"format"`
}

// WorkloadSpec is a trace, a synthetic generator or Kubernetes workload
// manifests (at most one; none when it has services), and inference
// services.
type WorkloadSpec struct {
	Trace     *TraceSpec     `json:"trace,omitempty"`
	Synthetic *SyntheticSpec `json:"synthetic,omitempty"`
	// Manifests are files of Job, CronJob, PyTorchJob, TFJob, Volcano Job,
	// JobSet, RayJob and RayCluster manifests (see manifests.go).
	Manifests []ManifestsSpec `json:"manifests,omitempty"`
	// Recovery applies to every job that does not say its own.
	Recovery *RecoverySpec `json:"recovery,omitempty"`
	// Volcano runs every job that does not say its own as a Volcano Job.
	Volcano *VolcanoJobSpec `json:"volcano,omitempty"`
	// Services are inference services beside the jobs (or alone): see
	// services.go.
	Services []ServiceSpec `json:"services,omitempty"`
}

// VolcanoJobSpec is how jobs run as Volcano Jobs (batch.volcano.sh/v1alpha1):
// the fields of a Job's spec that change what happens to it.
type VolcanoJobSpec struct {
	// MinAvailable is the PodGroup's minMember: pods that must be placeable
	// together before any binds (default: all of the job's; capped at its
	// size). The job runs once all its pods are bound.
	MinAvailable *int32 `json:"minAvailable,omitempty"`
	// MaxRetry: the job fails when its RestartJob retries reach it
	// (default 3).
	MaxRetry *int32 `json:"maxRetry,omitempty"`
	// Policies are the Job's lifecycle policies.
	Policies []VolcanoPolicySpec `json:"policies,omitempty"`
}

// VolcanoPolicySpec is one lifecycle policy: on event (or any of events),
// take action.
type VolcanoPolicySpec struct {
	Event  string   `json:"event,omitempty"`
	Events []string `json:"events,omitempty"`
	Action string   `json:"action"`
	// ExitCode and Timeout are read to refuse them with a clear message.
	ExitCode *int32    `json:"exitCode,omitempty"`
	Timeout  *Duration `json:"timeout,omitempty"`
}

// TraceSpec replays a trace file.
type TraceSpec struct {
	Path string `json:"path"`
	// Format is native (csv, or jsonl for .jsonl files), csv, jsonl, openb,
	// philly, philly-raw, helios or pai.
	Format string `json:"format"`
	// GPUsPerNode splits jobs given as a GPU total (philly, helios) into
	// pods of at most this many GPUs (default 8).
	GPUsPerNode int64 `json:"gpusPerNode,omitempty"`
	// JobTable is PAI's pai_job_table.csv: its users become the queues.
	JobTable string `json:"jobTable,omitempty"`
	// PendingPods says what to do with openb pods that never ran in the
	// source trace: replay (default: submit them; they are deleted at their
	// deletion time, running or not) or exclude (count and report them only).
	PendingPods string `json:"pendingPods,omitempty"`
}

// SyntheticSpec generates jobs from classes, each its own arrival stream.
type SyntheticSpec struct {
	// Jobs caps the number of jobs generated (0: until the horizon).
	Jobs    int         `json:"jobs,omitempty"`
	Classes []ClassSpec `json:"classes"`
}

// ClassSpec is one kind of job in a synthetic workload.
type ClassSpec struct {
	Name     string `json:"name"`
	Queue    string `json:"queue,omitempty"`
	Priority int32  `json:"priority,omitempty"`
	// PreemptionPolicy is the class's PriorityClass preemptionPolicy:
	// PreemptLowerPriority (default) or Never; it matters when
	// spec.scheduler.preemption is on.
	PreemptionPolicy string       `json:"preemptionPolicy,omitempty"`
	Arrival          ArrivalSpec  `json:"arrival"`
	Replicas         *NumDist     `json:"replicas,omitempty"`
	Pod              PodTemplate  `json:"pod"`
	Duration         DurationDist `json:"duration,omitempty"`
	// NodeSelector, Affinity and Tolerations place the class's pods.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Affinity     []TermSpec        `json:"affinity,omitempty"`
	Tolerations  []TolerationSpec  `json:"tolerations,omitempty"`
	// Recovery is how the class's jobs checkpoint and restart.
	Recovery *RecoverySpec `json:"recovery,omitempty"`
	// Volcano runs the class's jobs as Volcano Jobs (default: the
	// workload's spec.workload.volcano).
	Volcano *VolcanoJobSpec `json:"volcano,omitempty"`
	// Training makes the class data-parallel training: its run time is
	// steps x (computePerStep + the all-reduce of gradientBytes over its
	// placement); duration is then not given.
	Training *TrainingSpec `json:"training,omitempty"`
	// Topology places the class's pods as Kueue's topology-aware
	// scheduling does for the kueue.x-k8s.io/podset-required-topology or
	// -preferred-topology annotation (one of the two), over the run's
	// topology levels.
	Topology *ClassTopologySpec `json:"topology,omitempty"`
}

// ClassTopologySpec is a class's Kueue TAS request: a level's node label
// key (cloud.provider.com/topology-block, cloud.provider.com/topology-rack,
// nvidia.com/gpu.clique, kubernetes.io/hostname by default).
type ClassTopologySpec struct {
	Required  string `json:"required,omitempty"`
	Preferred string `json:"preferred,omitempty"`
}

// TrainingSpec is a data-parallel training job's steps.
type TrainingSpec struct {
	Steps          int64             `json:"steps"`
	ComputePerStep Duration          `json:"computePerStep"`
	GradientBytes  resource.Quantity `json:"gradientBytes"`
}

// ArrivalSpec is an arrival process.
type ArrivalSpec struct {
	// Process is poisson (exponential gaps) or fixed (constant gaps).
	Process     string  `json:"process"`
	RatePerHour float64 `json:"ratePerHour"`
	// Diurnal modulates a poisson rate: rate x (1 + amplitude cos(2 pi (h - peakHour)/24)).
	Diurnal *DiurnalSpec `json:"diurnal,omitempty"`
	// Start delays the class's first arrival.
	Start *Duration `json:"start,omitempty"`
}

// DiurnalSpec is a daily cycle of the arrival rate.
type DiurnalSpec struct {
	Amplitude float64 `json:"amplitude"`
	PeakHour  float64 `json:"peakHour"`
}

// PodTemplate is a pod's requests (equal to its limits).
type PodTemplate struct {
	CPU    resource.Quantity `json:"cpu"`
	Memory resource.Quantity `json:"memory"`
	// GPUs per pod: whole GPUs, or a value below 1 for a share of one GPU.
	GPUs *NumDist `json:"gpus,omitempty"`
	// MIG asks for gpus MIG instances of this profile (mixed strategy).
	MIG string `json:"mig,omitempty"`
	// GPUMemory is the GPU memory each GPU of the pod uses (checked on
	// time-sliced GPUs, which do not isolate it).
	GPUMemory *resource.Quantity `json:"gpuMemory,omitempty"`
}

// TermSpec, RequirementSpec and TolerationSpec are node affinity and
// tolerations as a scenario and a native JSON-lines trace write them
// (scenarios/traces).
type (
	TermSpec        = traces.TermSpec
	RequirementSpec = traces.RequirementSpec
	TolerationSpec  = traces.TolerationSpec
)

// SchedulerSpec is the scheduler profile: the enabled plugins in order, or
// a GPU placement policy by name (the default profile with that policy's
// score plugin in place of MostAllocated).
type SchedulerSpec struct {
	Plugins []PluginSpec `json:"plugins,omitempty"`
	// Policy is one of fgd, bestfit, dotprod, gpupacking, gpuclustering, random.
	Policy string `json:"policy,omitempty"`
	// TieBreak between nodes of equal score: lowestIndex (default), random
	// (uniform per decision, as kube-scheduler) or nodeOrder (a fixed random
	// order of the nodes from the seed).
	TieBreak string `json:"tieBreak,omitempty"`
	// Preemption lets a pending job evict running jobs of lower priority,
	// as kube-scheduler's DefaultPreemption does (default off).
	Preemption bool `json:"preemption,omitempty"`
}

// Preemption policies of a PriorityClass.
const (
	PreemptLowerPriority = "PreemptLowerPriority"
	PreemptNever         = "Never"
)

// PluginSpec enables one plugin.
type PluginSpec struct {
	Name      string           `json:"name"`
	Weight    int64            `json:"weight,omitempty"`
	Resources map[string]int64 `json:"resources,omitempty"`
}

// QueueingSpec is how the pending queue is served, in QueueSort order
// (priority, then submit time).
type QueueingSpec struct {
	// Policy is SchedulingQueue (kube-scheduler's queue: a job that does
	// not fit backs off and the jobs behind it are tried; the default),
	// StrictFIFO (the first job that does not fit blocks every job behind
	// it), Backfill (every job that fits starts, at once) or FIFO (StrictFIFO,
	// or Backfill with backfill: true). Empty: SchedulingQueue, or Backfill
	// with backfill: true.
	Policy string `json:"policy,omitempty"`
	// Backfill (with policy FIFO or empty) lets later jobs start past one
	// that does not fit at once.
	Backfill bool `json:"backfill,omitempty"`
	// BackfillDepth bounds how many jobs past a blocked one are tried (0:
	// all; Backfill only).
	BackfillDepth int `json:"backfillDepth,omitempty"`
}

// Queueing policy names (spec.queueing.policy).
const (
	QueueSchedulingQueue = "SchedulingQueue"
	QueueStrictFIFO      = "StrictFIFO"
	QueueBackfill        = "Backfill"
	QueueFIFO            = "FIFO"
)

// Effective is the policy the spec names once defaults are applied:
// SchedulingQueue, StrictFIFO or Backfill.
func (q QueueingSpec) Effective() string {
	switch q.Policy {
	case "":
		if q.Backfill {
			return QueueBackfill
		}
		return QueueSchedulingQueue
	case QueueFIFO:
		if q.Backfill {
			return QueueBackfill
		}
		return QueueStrictFIFO
	}
	return q.Policy
}

// PolicySpec is an admission policy given as Kubernetes manifests.
type PolicySpec struct {
	// Manifests are YAML files or folders (relative to the scenario) of
	// Kueue ResourceFlavors, ClusterQueues, LocalQueues, Cohorts and
	// priority classes.
	Manifests []string `json:"manifests"`
	// Queues maps a job's queue (a class's queue, a trace's VC) to a
	// LocalQueue; a queue not mapped is itself a LocalQueue's name.
	Queues map[string]string `json:"queues,omitempty"`
	// DefaultQueue takes the jobs whose queue is neither mapped nor a
	// LocalQueue (empty: such a job stops the run with an error).
	DefaultQueue string `json:"defaultQueue,omitempty"`
	// PriorityClasses gives the jobs of a queue (before mapping) the
	// priority of a PriorityClass or WorkloadPriorityClass of the policy,
	// and its preemptionPolicy.
	PriorityClasses map[string]string `json:"priorityClasses,omitempty"`
}

// OutputSpec tunes the results.
type OutputSpec struct {
	// TimelineInterval is the bucket width of the allocation timeline (default 1h).
	TimelineInterval *Duration `json:"timelineInterval,omitempty"`
	// Fragmentation samples each pool's GPU fragmentation (FGD measure) at
	// every timeline interval (on anyway with the fgd policy).
	Fragmentation bool `json:"fragmentation,omitempty"`
	// StartTime is the wall-clock time (RFC 3339) simulated time 0 stands
	// for in the metric series' timestamps (default 2026-01-01T00:00:00Z).
	StartTime string `json:"startTime,omitempty"`
	// SpotSensitivity turns the spot sensitivity (a run that buys spot
	// replayed at 16 spot MTBFs for the break-even) off or on (default on;
	// simulate's --spot-sensitivity overrides it).
	SpotSensitivity Switch `json:"spotSensitivity,omitempty"`
	// SpotSensitivitySeeds is how many seeds of node supply each point of
	// the spot sensitivity replays, 1 to 100 (default 5; simulate's
	// --spot-seeds overrides it): each point is their mean with its 95%
	// interval.
	SpotSensitivitySeeds int `json:"spotSensitivitySeeds,omitempty"`
}

// MaxSpotSensitivitySeeds bounds spec.output.spotSensitivitySeeds.
const MaxSpotSensitivitySeeds = 100

// Switch is a setting written off or on ("": not given). A YAML 1.1 reader
// takes those words for booleans: false and true are read as off and on.
type Switch string

// The values of a Switch.
const (
	Off Switch = "off"
	On  Switch = "on"
)

// UnmarshalJSON reads "off", "on", false or true.
func (s *Switch) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "false":
		*s = Off
		return nil
	case "true":
		*s = On
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want off or on: %w", err)
	}
	*s = Switch(v)
	return nil
}

// DefaultStartTime is the wall-clock time simulated time 0 stands for when
// spec.output.startTime is not given.
const DefaultStartTime = "2026-01-01T00:00:00Z"

// Start is the wall-clock time of simulated time 0 (the default when
// startTime does not parse; loading rejects such a file).
func (o *OutputSpec) Start() time.Time {
	st := o.StartTime
	if st == "" {
		st = DefaultStartTime
	}
	t, err := time.Parse(time.RFC3339, st)
	if err != nil {
		t, _ = time.Parse(time.RFC3339, DefaultStartTime)
	}
	return t.UTC()
}
