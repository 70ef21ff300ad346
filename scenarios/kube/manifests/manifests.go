package manifests

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Names of the objects and labels the generated files share.
const (
	// GPUOperatorNamespace holds the device-plugin and MIG ConfigMaps.
	GPUOperatorNamespace = "gpu-operator"
	// DevicePluginConfigMap holds one device-plugin config per pool that
	// shares its GPUs; point the GPU Operator's ClusterPolicy
	// devicePlugin.config.name at it.
	DevicePluginConfigMap = "device-plugin-config"
	// MigConfigMap holds the mig-parted layouts; point the ClusterPolicy's
	// migManager.config.name at it.
	MigConfigMap = "custom-mig-config"
	// LabelDevicePluginConfig and LabelMigConfig are the node labels the
	// GPU Operator reads to pick a node's device-plugin config and MIG
	// layout.
	LabelDevicePluginConfig = "nvidia.com/device-plugin.config"
	LabelMigConfig          = "nvidia.com/mig.config"
	// LabelQueueName is Kueue's label naming a Job's LocalQueue.
	LabelQueueName = "kueue.x-k8s.io/queue-name"
	// AnnotationVolcanoQueue and AnnotationVolcanoMinMember put a plain
	// Job's pods in a Volcano Queue, as one group of that many members.
	AnnotationVolcanoQueue     = "scheduling.volcano.sh/queue-name"
	AnnotationVolcanoMinMember = "scheduling.volcano.sh/group-min-member"
	// AnnotationDoNotDisrupt keeps Karpenter from disrupting a pod's node.
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// ResourceGPU is the device plugin's GPU resource.
	ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

	generatedBy = "gpuplan.dev/generated-from"
)

// Options are the cluster facts a scenario does not hold.
type Options struct {
	// ClusterName tags the subnets and security groups Karpenter uses
	// (karpenter.sh/discovery) and names the node IAM role
	// (KarpenterNodeRole-NAME); default: the scenario's name.
	ClusterName string
	// Namespace is where the Jobs, their LocalQueues and claims go
	// (default "gpuplan").
	Namespace string
	// Image is the container image of the Job templates.
	Image string
	// CheckpointStorage sizes each class's checkpoint volume claim
	// (default 500Gi).
	CheckpointStorage string
	// StorageClass is the checkpoint volumes' storageClassName (default:
	// the cluster's default class).
	StorageClass string
	// AccessMode of the checkpoint volumes: ReadWriteOnce (default, one
	// volume per pod, as EKS's EBS classes provide) or ReadWriteMany
	// (one claim a class's pods share; needs a class that provides it,
	// such as EFS or FSx for Lustre).
	AccessMode string
	// TrainingAPI is how gangs are written: job (an Indexed Job, the
	// default), pytorchjob or tfjob (Kubeflow's training operator).
	TrainingAPI string
	// FixedPools is how pools of a fixed size are written:
	// nodepool-static (a static Karpenter NodePool, the default) or
	// managed-nodegroup (an EKS managed node group, eksctl ClusterConfig).
	FixedPools string
	// PrometheusRelease is the release label of the PrometheusRule, which
	// kube-prometheus-stack's default rule selector matches (default
	// kube-prometheus-stack, the chart's name as a release name).
	PrometheusRelease string
	// Entrypoint is the training script the Job templates run.
	Entrypoint string
	// ServingImage is the container image of the inference services'
	// replicas (default DefaultServingImage).
	ServingImage string
	// LLMImage is the container image of the LLM services' replicas
	// (default DefaultLLMImage).
	LLMImage string
	// Provider is the cloud the pools are written for: eks (Karpenter
	// NodePools and EC2NodeClass, the default) or aks (AKS agent pools
	// as an ARM template).
	Provider string
	// GPUs is how the job classes' pods ask for GPUs: device-plugin
	// (nvidia.com/gpu and nvidia.com/mig-PROFILE, the default) or dra
	// (ResourceClaimTemplates of gpuplan's DeviceClasses; dra.go).
	GPUs string
}

// Values of Options' enumerations.
const (
	TrainingJob        = "job"
	TrainingPyTorchJob = "pytorchjob"
	TrainingTFJob      = "tfjob"
	FixedStatic        = "nodepool-static"
	FixedNodeGroup     = "managed-nodegroup"
	ProviderEKS        = "eks"
	ProviderAKS        = "aks"
	AccessRWO          = string(corev1.ReadWriteOnce)
	AccessRWX          = string(corev1.ReadWriteMany)
)

// The values each enumeration of Options takes: the one list Generate
// checks against and the command line completes from.
func TrainingAPIs() []string   { return []string{TrainingJob, TrainingPyTorchJob, TrainingTFJob} }
func FixedPoolKinds() []string { return []string{FixedStatic, FixedNodeGroup} }
func AccessModes() []string    { return []string{AccessRWO, AccessRWX} }
func Providers() []string      { return []string{ProviderEKS, ProviderAKS} }

// Defaults of Options.
const (
	DefaultNamespace         = "gpuplan"
	DefaultImage             = "nvcr.io/nvidia/pytorch:25.01-py3"
	DefaultCheckpointStorage = "500Gi"
	DefaultPrometheusRelease = "kube-prometheus-stack"
	DefaultEntrypoint        = "/workspace/train.py"
)

// File is one generated file: its path under the output folder and the
// objects it holds, in order.
type File struct {
	Path    string
	Comment []string
	Objects []any
	// Raw, when set, is the file's content instead of objects (a
	// TorchServe config.properties), after the comment.
	Raw []byte
}

// Generate builds the manifests of scenario s, whose resolved cluster is m
// (s.Cluster()), and the warnings a user must read before applying them
// (each also a comment in its file).
func Generate(s *scenarios.Scenario, m *scenarios.ClusterModel, o Options) ([]File, []string, error) {
	if o.ClusterName == "" {
		o.ClusterName = kubeName(s.Metadata.Name)
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.CheckpointStorage == "" {
		o.CheckpointStorage = DefaultCheckpointStorage
	}
	if o.PrometheusRelease == "" {
		o.PrometheusRelease = DefaultPrometheusRelease
	}
	if o.Entrypoint == "" {
		o.Entrypoint = DefaultEntrypoint
	}
	if o.LLMImage == "" {
		o.LLMImage = DefaultLLMImage
	}
	if o.ServingImage == "" {
		o.ServingImage = DefaultServingImage
	}
	if o.TrainingAPI == "" {
		o.TrainingAPI = TrainingJob
	}
	if o.FixedPools == "" {
		o.FixedPools = FixedStatic
	}
	if o.AccessMode == "" {
		o.AccessMode = AccessRWO
	}
	if o.Provider == "" {
		o.Provider = ProviderEKS
	}
	if o.GPUs == "" {
		o.GPUs = GPUsDevicePlugin
	}
	ckpt, err := resource.ParseQuantity(o.CheckpointStorage)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint storage %q: %v", o.CheckpointStorage, err)
	}
	for what, v := range map[string]string{"cluster name": o.ClusterName, "namespace": o.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return nil, nil, fmt.Errorf("%s %q: %s", what, v, strings.Join(errs, "; "))
		}
	}
	if o.StorageClass != "" {
		if errs := validation.IsDNS1123Subdomain(o.StorageClass); len(errs) > 0 {
			return nil, nil, fmt.Errorf("storage class %q: %s", o.StorageClass, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsQualifiedName(o.PrometheusRelease); len(errs) > 0 || len(o.PrometheusRelease) > 63 {
		return nil, nil, fmt.Errorf("prometheus release %q is not a label value", o.PrometheusRelease)
	}
	for _, c := range []struct {
		what, v string
		ok      []string
	}{
		{"training API", o.TrainingAPI, TrainingAPIs()},
		{"fixed pools", o.FixedPools, FixedPoolKinds()},
		{"access mode", o.AccessMode, AccessModes()},
		{"provider", o.Provider, Providers()},
		{"GPU request", o.GPUs, GPUKinds()},
	} {
		if !slices.Contains(c.ok, c.v) {
			return nil, nil, fmt.Errorf("%s %q is not one of %s", c.what, c.v, strings.Join(c.ok, ", "))
		}
	}
	g := &gen{s: s, m: m, o: o, ckpt: ckpt, source: filepath.Base(s.File())}
	if g.source == "." || g.source == "" {
		g.source = s.Metadata.Name
	}
	if err := g.gatherPools(); err != nil {
		return nil, nil, err
	}
	if err := g.loadPolicy(); err != nil {
		return nil, nil, err
	}
	if err := g.gatherServices(); err != nil {
		return nil, nil, err
	}
	var files []File
	add := func(f File, err error) error {
		if err != nil {
			return err
		}
		if len(f.Objects) > 0 {
			files = append(files, f)
		}
		return nil
	}
	// The jobs first: they say which namespaces and queues are used.
	jobs, err := g.jobs()
	if err != nil {
		return nil, nil, err
	}
	svcFiles, err := g.serviceFiles()
	if err != nil {
		return nil, nil, err
	}
	steps := []func() (File, error){g.namespaces}
	if o.Provider == ProviderAKS {
		aksFile, err := g.agentPools()
		if err != nil {
			return nil, nil, err
		}
		files = append(files, aksFile)
	} else {
		steps = append(steps, g.nodeClass, g.nodePools, g.nodeGroups)
	}
	steps = append(steps, g.gpuOperator, g.deviceClasses, g.priorityClasses, g.kueue, g.hyperNodes, g.kueueConfig, g.storage, g.alerts)
	for _, step := range steps {
		if err := add(step()); err != nil {
			return nil, nil, err
		}
	}
	files = append(files, jobs...)
	files = append(files, svcFiles...)
	return files, g.warnings, nil
}

// warn records a warning and returns it, for the file's comment too.
func (g *gen) warn(format string, args ...any) string {
	w := fmt.Sprintf(format, args...)
	g.warnings = append(g.warnings, w)
	return "WARNING: " + w
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// Encode writes f as multi-document YAML, its comment lines first.
func (f File) Encode(w io.Writer) error {
	var buf bytes.Buffer
	// Pieces of one sentence (not ending in a full stop) join the next
	// piece in one paragraph.
	var paras []string
	for i, c := range f.Comment {
		if i > 0 && !strings.HasSuffix(strings.TrimSpace(paras[len(paras)-1]), ".") {
			paras[len(paras)-1] += " " + c
			continue
		}
		paras = append(paras, c)
	}
	for _, c := range paras {
		for _, l := range wrap(c, 98) {
			buf.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	buf.Write(f.Raw)
	for i, obj := range f.Objects {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := marshal(obj)
		if err != nil {
			return fmt.Errorf("%s: %v", f.Path, err)
		}
		buf.Write(b)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// marshal writes an object as YAML without the fields a typed object
// always carries when empty (status, creationTimestamp).
func marshal(obj any) ([]byte, error) {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status") // generated objects are desired state only
	prune(m)
	return yaml.Marshal(m)
}

// prune drops null creation timestamps and the empty metadata and
// resources sections they leave, at any depth (pod templates carry their
// own metadata).
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch {
			case k == "creationTimestamp" && x == nil:
				delete(t, k)
			default:
				prune(x)
				if (k == "metadata" || k == "resources") && isEmpty(t[k]) {
					delete(t, k)
				}
			}
		}
	case []any:
		for _, x := range t {
			prune(x)
		}
	}
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, x := range t {
			if !isEmpty(x) {
				return false
			}
		}
		return true
	}
	return false
}

// pool is a scenario pool or Karpenter NodePool as the generated objects
// need it: one NodePool, one ResourceFlavor.
type pool struct {
	name          string
	instanceTypes []string
	capacityTypes []string
	// block: a fixed pool of a capacity block (reserved, with a window).
	block       bool
	zone        string
	gpuModel    string
	gpusPerNode int32 // most of any instance type
	labels      map[string]string
	taints      []corev1.Taint
	// maxNodes bounds the pool (its count, autoscaling maximum or limit).
	maxNodes int
	gpuLimit int64
	// per node, the most of any instance type
	milliCPU, memMiB int64
	sharing          cluster.Sharing
	consolidation    *scenarios.ConsolidationSpec
	scaleDown        time.Duration
	// fixed pools keep their nodes: a static NodePool (spec.replicas).
	fixed bool
	nodes int
}

type gen struct {
	s      *scenarios.Scenario
	m      *scenarios.ClusterModel
	o      Options
	ckpt   resource.Quantity
	source string
	pools  []pool
	// pol is the admission policy the run read from spec.policy, if any.
	pol *scenarios.Policy
	// classPol is a policy without queues whose DeviceClasses are
	// written back (nil: none, or pol's).
	classPol *scenarios.Policy
	// jobNamespaces are the namespaces the generated jobs use.
	jobNamespaces []string
	warnings      []string
	// workloadFiles are the workload's own manifests, when it has them.
	workloadFiles []string
	// perPodVolumes names the classes with per-pod checkpoint volumes.
	perPodVolumes []string
	// svcs are the scenario's inference services as the run built them.
	svcs []Service
	// draClasses are the DeviceClasses the classes' claims name (dra.go).
	draClasses []draClass
}

func meta(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns}
}

// managedMeta is a cluster-scoped object's metadata, labelled as
// gpuplan's (a label map of its own).
func managedMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "gpuplan"}}
}

func (g *gen) header(what ...string) []string {
	c := []string{fmt.Sprintf("Generated by gpuplan manifests from scenario %s (%s).", g.s.Metadata.Name, g.source)}
	return append(c, what...)
}

// userLabels are the labels a NodePool may set on its nodes: the pool's
// own, without the well-known ones the cloud or Karpenter set.
func userLabels(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		switch {
		case k == scenarios.LabelCapacityType, k == scenarios.LabelRegion, k == scenarios.LabelZone,
			strings.HasPrefix(k, "karpenter.sh/"), strings.HasPrefix(k, "karpenter.k8s.aws/"),
			strings.HasPrefix(k, "node.kubernetes.io/"), strings.HasPrefix(k, "kubernetes.io/"):
			continue
		}
		out[k] = v
	}
	return out
}

func taints(ts []cluster.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}

// pools gathers the scenario's pools and NodePools with their resolved
// sizes.
func (g *gen) gatherPools() error {
	spec := g.s.Spec.Cluster
	if spec.NodeList != nil {
		return fmt.Errorf("spec.cluster.nodeList: an imported node list has no instance types to provision; manifests need pools or nodePools")
	}
	for i, p := range spec.Pools {
		r := g.m.Pools[i]
		if p.InstanceType == "" {
			return fmt.Errorf("spec.cluster.pools[%d] (%s): a NodePool needs an instanceType", i, p.Name)
		}
		ct := p.CapacityType
		if ct == "" {
			ct = "on-demand"
		}
		q := pool{
			name: p.Name, instanceTypes: []string{p.InstanceType}, capacityTypes: []string{ct}, zone: p.Zone,
			gpuModel: r.GPUModel, gpusPerNode: r.GPUsPerNode, labels: userLabels(r.Labels), taints: taints(r.Taints),
			maxNodes: r.Slots(), milliCPU: r.MilliCPU, memMiB: r.MemoryMiB, sharing: r.Sharing,
			fixed: p.Autoscaling == nil, nodes: p.Count, block: p.CapacityType == models.Reserved && p.Window != nil,
		}
		q.gpuLimit = int64(q.maxNodes) * int64(q.gpusPerNode)
		if a := p.Autoscaling; a != nil {
			q.scaleDown = 10 * time.Minute
			if a.ScaleDownUnneededTime != nil {
				q.scaleDown = a.ScaleDownUnneededTime.Duration
			}
		}
		g.pools = append(g.pools, q)
	}
	expanded := g.m.Pools[len(spec.Pools):]
	for _, np := range spec.NodePools {
		q := pool{
			name: np.Name, instanceTypes: np.InstanceTypes, capacityTypes: np.CapacityTypes, zone: np.Zone,
			labels: userLabels(np.Labels), consolidation: np.Consolidation,
		}
		if len(q.capacityTypes) == 0 {
			q.capacityTypes = []string{"on-demand"}
		}
		for _, t := range np.Taints {
			q.taints = append(q.taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		minGPUs := int32(math.MaxInt32)
		for _, r := range expanded {
			if r.Labels[scenarios.LabelNodePool] != np.Name {
				continue
			}
			q.gpuModel = r.GPUModel
			q.gpusPerNode = max(q.gpusPerNode, r.GPUsPerNode)
			minGPUs = min(minGPUs, r.GPUsPerNode)
			q.milliCPU = max(q.milliCPU, r.MilliCPU)
			q.memMiB = max(q.memMiB, r.MemoryMiB)
			q.sharing = r.Sharing
		}
		q.maxNodes, q.gpuLimit = np.Limits.Nodes, np.Limits.GPUs
		if q.maxNodes == 0 && minGPUs > 0 && minGPUs != math.MaxInt32 {
			q.maxNodes = int((q.gpuLimit + int64(minGPUs) - 1) / int64(minGPUs))
		}
		if q.gpuLimit == 0 {
			q.gpuLimit = int64(q.maxNodes) * int64(q.gpusPerNode)
		}
		g.pools = append(g.pools, q)
	}
	for _, q := range g.pools {
		if errs := validation.IsDNS1123Subdomain(q.name); len(errs) > 0 {
			return fmt.Errorf("pool %q is not a valid Kubernetes name: %s", q.name, strings.Join(errs, "; "))
		}
	}
	return nil
}

func (g *gen) namespaces() (File, error) {
	f := File{Path: PathNamespaces, Comment: g.header("Namespaces of the Jobs and of the NVIDIA GPU Operator's configuration.")}
	if len(g.workloadFiles) > 0 {
		f.Comment = append(f.Comment, "The workload is the scenario's own manifests ("+strings.Join(g.workloadFiles, ", ")+"): apply them as they are; gpuplan writes no job templates for them.")
	}
	nss := append([]string{}, g.jobNamespaces...)
	if g.pol != nil {
		for _, ns := range g.pol.LocalQueueNamespaces {
			nss = append(nss, ns)
		}
	}
	if len(nss) == 0 {
		nss = append(nss, g.o.Namespace)
	}
	slices.Sort(nss)
	nss = slices.Compact(nss)
	nss = slices.DeleteFunc(nss, func(n string) bool { return n == "default" || n == "" })
	for _, ns := range append(nss, GPUOperatorNamespace) {
		f.Objects = append(f.Objects, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns},
		})
	}
	return f, nil
}

// nodeClassName is the EC2NodeClass every NodePool launches from.
const nodeClassName = "gpu"

func (g *gen) nodeClass() (File, error) {
	disc := map[string]string{"karpenter.sh/discovery": g.o.ClusterName}
	nc := &EC2NodeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: nodeClassName},
		Spec: EC2NodeClassSpec{
			Role:                       "KarpenterNodeRole-" + g.o.ClusterName,
			AMISelectorTerms:           []AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []SelectorTerm{{Tags: disc}},
			SecurityGroupSelectorTerms: []SelectorTerm{{Tags: disc}},
			BlockDeviceMappings: []BlockDeviceMapping{{
				DeviceName: "/dev/xvda", RootVolume: true,
				EBS: BlockDeviceEBS{VolumeSize: "200Gi", VolumeType: "gp3", Encrypted: true, DeleteOnTermination: true},
			}},
			Tags: map[string]string{generatedBy: g.s.Metadata.Name},
		},
	}
	f := File{Path: PathEC2NodeClass, Objects: []any{nc}, Comment: g.header(
		"The AWS node class of every NodePool: the EKS-optimised AL2023 image (Karpenter picks its NVIDIA",
		"variant for GPU instances), subnets and security groups tagged karpenter.sh/discovery, and a",
		"200 GiB gp3 root volume for container images.",
	)}
	// A fixed reserved pool (a capacity reservation, or a capacity block
	// with its window) is a static NodePool of reserved capacity that
	// launches from a node class of its own selecting its reservation.
	for _, p := range g.s.Spec.Cluster.Pools {
		if p.CapacityType != models.Reserved || (p.Autoscaling == nil && (p.Count == 0 || g.o.FixedPools == FixedNodeGroup)) {
			continue // no NodePool is written for it
		}
		rc := *nc
		rc.ObjectMeta = metav1.ObjectMeta{Name: reservedClassName(p.Name)}
		rc.Spec.CapacityReservationSelectorTerms = []CapacityReservationSelectorTerm{{Tags: scenarios.PoolReservationTags(p)}}
		f.Objects = append(f.Objects, &rc)
		what := "its capacity reservation"
		if w := p.Window; w != nil {
			what = fmt.Sprintf("its capacity block (EC2 Capacity Blocks for ML; the window %s to %s of the run's clock is EC2's: buy the block for those times)", w.Start.Duration, w.End.Duration)
		}
		f.Comment = append(f.Comment, fmt.Sprintf("EC2NodeClass %s, for the static NodePool %s, selects %s by tags (capacityReservationSelectorTerms): tag the reservation with them in EC2, or replace the term by its id (cr-...); the tags carry the instance type, count, price and window gpuplan ran, so these files read back to the same pool.", rc.Name, p.Name, what))
	}
	// A NodePool with capacity reservations launches from a node class of
	// its own that selects them.
	for _, np := range g.s.Spec.Cluster.NodePools {
		if len(np.Reservations) == 0 {
			continue
		}
		rc := *nc
		rc.ObjectMeta = metav1.ObjectMeta{Name: reservedClassName(np.Name)}
		for _, r := range np.Reservations {
			rc.Spec.CapacityReservationSelectorTerms = append(rc.Spec.CapacityReservationSelectorTerms, CapacityReservationSelectorTerm{Tags: scenarios.ReservationTags(np.Name, r)})
		}
		f.Objects = append(f.Objects, &rc)
		f.Comment = append(f.Comment, fmt.Sprintf("EC2NodeClass %s, for NodePool %s, selects its capacity reservations by tags (capacityReservationSelectorTerms): tag each reservation with them in EC2, or replace a term by the reservation's id (cr-...); the tags carry the instance type, count and price gpuplan ran, so these files read back to the same NodePool.", rc.Name, np.Name))
	}
	return f, nil
}

// reservedClassName is the EC2NodeClass of NodePool np's reservations.
func reservedClassName(np string) string { return nodeClassName + "-" + np }

// sharingLabels are the node labels that pick a pool's device-plugin
// config and MIG layout.
func (q *pool) sharingLabels() map[string]string {
	l := map[string]string{}
	if q.sharing.TimeSlicing > 1 || q.sharing.MIGStrategy != "" {
		l[LabelDevicePluginConfig] = q.name
	}
	if q.sharing.MIGStrategy != "" {
		l[LabelMigConfig] = migConfigName(q.name)
	}
	return l
}

func migConfigName(pool string) string { return "gpuplan-" + pool }

func (g *gen) nodePools() (File, error) {
	f := File{Path: PathNodePools, Comment: g.header(
		"One Karpenter NodePool per scenario pool. A fixed pool is a static NodePool (spec.replicas, alpha:",
		"start Karpenter with the feature gate StaticCapacity=true) that keeps its node count as the",
		"simulation did; the others launch nodes for pending pods within their GPU and node limits.",
	)}
	for _, q := range g.pools {
		if !q.fixed && (q.sharing.TimeSlicing > 1 || q.sharing.MIGStrategy != "") {
			f.Comment = append(f.Comment, fmt.Sprintf("Pool %s shares its GPUs but scales: Karpenter sizes nodes by whole GPUs, not by the MIG instances or time-slice replicas the device plugin will advertise.", q.name))
		}
	}
	if so := g.simulationOnly(); len(so) > 0 {
		f.Comment = append(f.Comment, "Simulation only, with no Kubernetes object (the simulation's model of the cloud, kept in the scenario): "+strings.Join(so, "; ")+".")
	}
	f.Comment = append(f.Comment, "expireAfter is Never on every NodePool: the simulation does not expire nodes, and an expiry drains whatever runs there, long training runs included; set one if your policy rotates nodes, knowing that.")
	for _, q := range g.pools {
		if q.fixed && (g.o.FixedPools == FixedNodeGroup || q.nodes == 0) {
			if q.nodes == 0 {
				f.Comment = append(f.Comment, fmt.Sprintf("Pool %s has no nodes in this scenario (count 0, no autoscaling): no NodePool is written for it.", q.name))
			}
			continue
		}
		req := []karpv1.NodeSelectorRequirementWithMinValues{
			{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: q.instanceTypes},
			{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: q.capacityTypes},
		}
		if q.zone != "" {
			req = append(req, karpv1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{q.zone}})
		}
		if q.block {
			// As Karpenter selects capacity blocks: its reserved offerings
			// of reservation type capacity-block alone.
			req = append(req, karpv1.NodeSelectorRequirementWithMinValues{Key: scenarios.LabelCapacityReservationType, Operator: corev1.NodeSelectorOpIn, Values: []string{scenarios.ReservationCapacityBlock}})
		}
		labels := map[string]string{cluster.LabelPool: q.name}
		for k, v := range q.labels {
			labels[k] = v
		}
		for k, v := range q.sharingLabels() {
			labels[k] = v
		}
		limits := karpv1.Limits{}
		if q.gpuLimit > 0 && !q.fixed {
			limits[ResourceGPU] = *resource.NewQuantity(q.gpuLimit, resource.DecimalSI)
		}
		if q.maxNodes > 0 {
			limits["nodes"] = *resource.NewQuantity(int64(q.maxNodes), resource.DecimalSI)
		}
		dis := karpv1.Disruption{ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmpty}
		switch {
		case q.consolidation != nil:
			if q.consolidation.Policy == string(karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized) {
				dis.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
			}
			dis.ConsolidateAfter = karpv1.MustParseNillableDuration(q.consolidation.ConsolidateAfter.Duration.String())
		case q.scaleDown > 0:
			// A cluster-autoscaler pool: empty nodes go after the
			// scale-down unneeded time.
			dis.ConsolidateAfter = karpv1.MustParseNillableDuration(q.scaleDown.String())
		default:
			// A fixed pool, or a NodePool the scenario never consolidates.
			dis.ConsolidateAfter = karpv1.MustParseNillableDuration("Never")
		}
		np := &karpv1.NodePool{
			TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
			ObjectMeta: metav1.ObjectMeta{Name: q.name},
			Spec: karpv1.NodePoolSpec{
				Template: karpv1.NodeClaimTemplate{
					ObjectMeta: karpv1.ObjectMeta{Labels: labels},
					Spec: karpv1.NodeClaimTemplateSpec{
						Taints:       q.taints,
						Requirements: req,
						NodeClassRef: &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: g.nodeClassOf(q.name)},
						// The simulation never expires nodes: an expiry would
						// drain long training runs it did not model.
						ExpireAfter: karpv1.MustParseNillableDuration("Never"),
					},
				},
				Disruption: dis,
				Limits:     limits,
			},
		}
		if q.fixed {
			np.Spec.Replicas = ptr(int64(q.nodes))
		}
		f.Objects = append(f.Objects, np)
	}
	if ovs := g.s.NodeOverlays(); len(ovs) > 0 {
		f.Comment = append(f.Comment, "The NodeOverlays that priced the NodePools' offerings in the simulation follow them (alpha: start Karpenter with the feature gate NodeOverlay=true).")
		for i := range ovs {
			f.Objects = append(f.Objects, &ovs[i])
		}
	}
	return f, nil
}

// resources is what one node of the pool advertises.
func (q *pool) resources() map[corev1.ResourceName]int64 {
	r := map[corev1.ResourceName]int64{}
	sh := q.sharing
	switch {
	case sh.MIGStrategy == cluster.MIGMixed:
		for _, p := range sh.MIGLayout {
			r[corev1.ResourceName("nvidia.com/mig-"+p)] += int64(q.gpusPerNode)
		}
	case sh.MIGStrategy == cluster.MIGSingle:
		r[ResourceGPU] = int64(q.gpusPerNode) * int64(len(sh.MIGLayout))
	case sh.TimeSlicing > 1:
		r[ResourceGPU] = int64(q.gpusPerNode) * int64(sh.TimeSlicing)
	default:
		r[ResourceGPU] = int64(q.gpusPerNode)
	}
	return r
}

func (g *gen) gpuOperator() (File, error) {
	f := File{Path: PathGPUOperator, Comment: g.header(
		"NVIDIA GPU Operator configuration: one device-plugin config per pool that shares its GPUs",
		"(set ClusterPolicy devicePlugin.config.name to "+DevicePluginConfigMap+") and the MIG layouts",
		"(set ClusterPolicy migManager.config.name to "+MigConfigMap+"). Each pool's NodePool labels its",
		"nodes "+LabelDevicePluginConfig+" and "+LabelMigConfig+" to pick them.",
	)}
	dp := map[string]string{}
	mig := MigPartedConfig{Version: "v1", MigConfigs: map[string][]MigDeviceSet{}}
	for _, q := range g.pools {
		sh := q.sharing
		if sh.TimeSlicing <= 1 && sh.MIGStrategy == "" {
			continue
		}
		c := DevicePluginConfig{Version: "v1", Flags: DevicePluginFlags{MigStrategy: "none"}}
		if sh.MIGStrategy != "" {
			c.Flags.MigStrategy = sh.MIGStrategy
			counts := map[string]int{}
			for _, p := range sh.MIGLayout {
				counts[p]++
			}
			mig.MigConfigs[migConfigName(q.name)] = []MigDeviceSet{{Devices: "all", MigEnabled: true, MigDevices: counts}}
		} else {
			c.Sharing = &Sharing{TimeSlicing: TimeSlicing{Resources: []TimeSlicingResource{{Name: string(ResourceGPU), Replicas: sh.TimeSlicing}}}}
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			return f, err
		}
		dp[q.name] = string(b)
	}
	if len(dp) > 0 {
		f.Objects = append(f.Objects, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(DevicePluginConfigMap, GPUOperatorNamespace),
			Data:       dp,
		})
	}
	if len(mig.MigConfigs) > 0 {
		// mig-parted's own all-disabled layout, which the MIG manager
		// applies to nodes with no label.
		mig.MigConfigs["all-disabled"] = []MigDeviceSet{{Devices: "all", MigEnabled: false}}
		b, err := yaml.Marshal(mig)
		if err != nil {
			return f, err
		}
		f.Objects = append(f.Objects, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(MigConfigMap, GPUOperatorNamespace),
			Data:       map[string]string{"config.yaml": string(b)},
		})
	}
	return f, nil
}

// classes returns the workload classes (a trace workload has none: one
// generic class stands for it).
func (g *gen) classes() []scenarios.ClassSpec {
	wl := g.s.Spec.Workload
	if sy := wl.Synthetic; sy != nil {
		return sy.Classes
	}
	if wl.Trace == nil && len(wl.Manifests) == 0 && len(wl.Services) > 0 {
		return nil // inference services alone: no jobs
	}
	one := 1.0
	return []scenarios.ClassSpec{{Name: "trace-job", Pod: scenarios.PodTemplate{
		CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPUs: &scenarios.NumDist{Value: &one},
	}}}
}

func priorityClassName(p int32) string {
	if p < 0 {
		return fmt.Sprintf("gpuplan-priority-minus-%d", -int64(p))
	}
	return fmt.Sprintf("gpuplan-priority-%d", p)
}

// hasPriorities says whether any class sets a priority.
func (g *gen) hasPriorities() bool {
	for _, c := range g.classes() {
		if c.Priority != 0 {
			return true
		}
	}
	return false
}

func (g *gen) priorityClasses() (File, error) {
	words := "priority and does not preempt, so each has preemptionPolicy Never."
	if g.s.Spec.Scheduler.Preemption {
		words = "priority and preempts lower-priority jobs (spec.scheduler.preemption), so each has preemptionPolicy PreemptLowerPriority unless its classes say Never."
	}
	f := File{Path: PathPriorityClasses, Comment: g.header(
		"One PriorityClass per priority the workload classes use. The simulation orders its queue by",
		words,
	)}
	if pcs := g.policyPriorityClasses(); len(pcs) > 0 {
		f.Comment = append(f.Comment, "The policy's PriorityClasses and WorkloadPriorityClasses, as read: the jobs name them.")
		f.Objects = append(f.Objects, pcs...)
	}
	svcs := g.servicesWithPriority()
	if !g.hasPriorities() && len(svcs) == 0 {
		return f, nil
	}
	var ps []int32
	users, svcUsers := map[int32][]string{}, map[int32][]string{}
	preempts := map[int32]bool{}
	if g.hasPriorities() {
		for _, c := range g.classes() {
			if !slices.Contains(ps, c.Priority) {
				ps = append(ps, c.Priority)
			}
			users[c.Priority] = append(users[c.Priority], c.Name)
		}
		for _, c := range g.classes() {
			if g.s.Spec.Scheduler.Preemption && c.PreemptionPolicy != scenarios.PreemptNever {
				preempts[c.Priority] = true
			}
		}
	}
	for _, v := range svcs {
		p := v.Config.Priority
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
		svcUsers[p] = append(svcUsers[p], v.Name)
		if g.s.Spec.Scheduler.Preemption && v.Config.Flags&cluster.FlagPreemptNever == 0 {
			preempts[p] = true
		}
	}
	slices.Sort(ps)
	for _, p := range ps {
		never := corev1.PreemptNever
		if preempts[p] {
			never = corev1.PreemptLowerPriority
		}
		f.Objects = append(f.Objects, &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: priorityClassName(p)},
			Value:            p,
			PreemptionPolicy: &never,
			Description:      priorityUsers(users[p], svcUsers[p]) + " of gpuplan scenario " + g.s.Metadata.Name + ".",
		})
	}
	return f, nil
}

// priorityUsers names the workload classes and inference services of a
// priority.
func priorityUsers(classes, svcs []string) string {
	var parts []string
	if len(classes) > 0 {
		parts = append(parts, plural(len(classes), "Workload class ", "Workload classes ")+strings.Join(classes, ", "))
	}
	if len(svcs) > 0 {
		w := plural(len(svcs), "inference service ", "inference services ") + strings.Join(svcs, ", ")
		if len(parts) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " and ")
}

// queues are the LocalQueue names the classes use.
func (g *gen) queues() []string {
	var qs []string
	for _, c := range g.classes() {
		q := queueOf(c)
		if !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
	}
	sort.Strings(qs)
	return qs
}

func queueOf(c scenarios.ClassSpec) string {
	if c.Queue == "" {
		return "default"
	}
	return c.Queue
}

func (g *gen) kueue() (File, error) {
	if g.pol != nil && len(g.pol.Volcano) > 0 {
		return g.policyVolcano()
	}
	if g.pol != nil {
		return g.policyKueue()
	}
	if g.allVolcano() {
		return g.volcanoQueues()
	}
	strategy := kueue.StrictFIFO
	words := "StrictFIFO: the scenario's queue is FIFO without backfill"
	switch g.s.Spec.Queueing.Effective() {
	case scenarios.QueueBackfill:
		strategy = kueue.BestEffortFIFO
		words = "BestEffortFIFO: the scenario backfills, letting a smaller job past one that does not fit"
	case scenarios.QueueSchedulingQueue:
		strategy = kueue.BestEffortFIFO
		words = "BestEffortFIFO: the scenario's queue is kube-scheduler's, which tries the jobs behind one that does not fit"
	}
	f := File{Path: PathKueue, Comment: g.header(
		"Kueue: a ResourceFlavor per pool, one ClusterQueue holding the whole cluster (the simulation has",
		"one queue and no quotas) with "+words+", and a LocalQueue per workload queue.",
	)}
	covered := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	extra := map[corev1.ResourceName]bool{}
	for _, q := range g.pools {
		for r := range q.resources() {
			extra[r] = true
		}
	}
	var names []corev1.ResourceName
	for r := range extra {
		names = append(names, r)
	}
	slices.Sort(names)
	covered = append(covered, names...)
	var flavors []kueue.FlavorQuotas
	for _, q := range g.pools {
		fl := &kueue.ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: q.name},
			Spec: kueue.ResourceFlavorSpec{
				NodeLabels: map[string]string{cluster.LabelPool: q.name},
				NodeTaints: q.taints,
			},
		}
		f.Objects = append(f.Objects, fl)
		n := int64(q.maxNodes)
		per := q.resources()
		fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(q.name)}
		for _, r := range covered {
			var v resource.Quantity
			switch r {
			case corev1.ResourceCPU:
				v = *resource.NewMilliQuantity(n*q.milliCPU, resource.DecimalSI)
			case corev1.ResourceMemory:
				v = *resource.NewQuantity(n*q.memMiB<<20, resource.BinarySI)
			default:
				v = *resource.NewQuantity(n*per[r], resource.DecimalSI)
				if r == ResourceGPU && q.sharing.TimeSlicing <= 1 && q.sharing.MIGStrategy == "" && q.gpuLimit > 0 {
					v = *resource.NewQuantity(q.gpuLimit, resource.DecimalSI)
				}
			}
			fq.Resources = append(fq.Resources, kueue.ResourceQuota{Name: r, NominalQuota: v})
		}
		flavors = append(flavors, fq)
	}
	if t, words := g.kueueTopology(); t != nil {
		withTopology(f.Objects, t.Name)
		f.Objects = append([]any{t}, f.Objects...)
		f.Comment = append(f.Comment, words...)
	}
	cq := &kueue.ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "ClusterQueue"},
		ObjectMeta: metav1.ObjectMeta{Name: g.queueName()},
		Spec: kueue.ClusterQueueSpec{
			ResourceGroups:    []kueue.ResourceGroup{{CoveredResources: covered, Flavors: flavors}},
			QueueingStrategy:  strategy,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: g.o.Namespace}},
		},
	}
	f.Objects = append(f.Objects, cq)
	for _, q := range g.queues() {
		f.Objects = append(f.Objects, &kueue.LocalQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "LocalQueue"},
			ObjectMeta: meta(q, g.o.Namespace),
			Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(g.queueName())},
		})
	}
	return f, nil
}

// queueName names the ClusterQueue after the scenario.
func (g *gen) queueName() string { return kubeName(g.s.Metadata.Name) }

// kubeName turns a scenario name (a variant's is SCENARIO/VARIANT) into a
// DNS-1123 label: lower case, other characters as '-'.
func kubeName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-")
	if len(out) > 63 {
		out = strings.Trim(out[:63], "-")
	}
	if out == "" {
		out = "gpuplan"
	}
	return out
}

func (g *gen) alerts() (File, error) {
	// dcgm-exporter's series carry gpu, UUID, device, modelName and
	// Hostname, and pod, namespace and container while a pod holds the
	// GPU; scraped through the GPU Operator's ServiceMonitor those become
	// exported_pod, exported_namespace and exported_container.
	held := `DCGM_FI_DEV_GPU_UTIL{exported_pod!=""}`
	pr := &monitoringv1.PrometheusRule{
		TypeMeta: metav1.TypeMeta{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpuplan-gpu-utilisation", Namespace: GPUOperatorNamespace,
			Labels: map[string]string{"release": g.o.PrometheusRelease}},
		Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
			Name: "gpuplan.gpu-utilisation",
			Rules: []monitoringv1.Rule{{
				Alert: "GPUUnderutilised",
				// The mean of the last 30 minutes' samples, once the pod
				// has held the GPU for 30 minutes (its series has a sample
				// 30 minutes back): no `for`, which would add its own 30
				// minutes on top of the window's (a GPU going from 100%
				// to 40% would fire after 55 minutes, not 25).
				Expr: intstr.FromString("avg_over_time(" + held + "[30m]) < 50 and " + held + " offset 30m"),
				Labels: map[string]string{
					"severity": "warning",
				},
				Annotations: map[string]string{
					"summary":     "GPU {{ $labels.gpu }} ({{ $labels.modelName }}) on {{ $labels.Hostname }}, held by pod {{ $labels.exported_namespace }}/{{ $labels.exported_pod }}, averaged under 50% utilisation over the last 30 minutes.",
					"description": "DCGM_FI_DEV_GPU_UTIL averaged {{ $value }}% over the last 30 minutes, all of them held by this pod. A GPU a pod holds but does not use still costs its full hourly price and keeps queued jobs waiting.",
				},
			}, {
				Alert: "GPUHeldIdle",
				// 0 at every evaluation for an hour: the `for` is the
				// hour. (A max over a 1h window with a `for` of 15m fired
				// 15 minutes into a new pod's life, whose window held
				// nothing but zeros, and 1h15m after a busy spell.)
				Expr: intstr.FromString(held + " == 0"),
				For:  ptr(monitoringv1.Duration("1h")),
				Labels: map[string]string{
					"severity": "warning",
				},
				Annotations: map[string]string{
					"summary":     "Pod {{ $labels.exported_namespace }}/{{ $labels.exported_pod }} has held GPU {{ $labels.gpu }} ({{ $labels.modelName }}) on {{ $labels.Hostname }} for an hour without using it.",
					"description": "DCGM_FI_DEV_GPU_UTIL read 0 at every rule evaluation for the last hour on a GPU this pod holds.",
				},
			}},
		}}},
	}
	return File{Path: PathPrometheusRule, Objects: []any{pr}, Comment: g.header(
		"Alerts on GPUs a pod holds (dcgm-exporter's series with exported_pod set: a GPU no pod holds has no pod label and does not fire) whose utilisation averaged under 50% over the last 30 minutes (once the pod has held the GPU that long), or read 0 at every evaluation for an hour.",
		"The release label ("+g.o.PrometheusRelease+", --prometheus-release) is what kube-prometheus-stack's default ruleSelector matches: its Helm release name.",
	)}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func ptr[T any](v T) *T { return &v }

// largest is the biggest value a count distribution can take: a
// template must fit the largest job of its class.
func largest(n *scenarios.NumDist, def int64) int64 {
	switch {
	case n == nil:
		return def
	case n.Value != nil:
		return int64(math.Ceil(*n.Value))
	case len(n.Values) > 0:
		return int64(math.Ceil(slices.Max(n.Values)))
	case n.Max != nil:
		return int64(math.Ceil(*n.Max))
	}
	return def
}

func describe(n *scenarios.NumDist) string {
	switch {
	case n == nil:
		return "1"
	case n.Value != nil:
		return fmt.Sprint(*n.Value)
	case len(n.Values) > 0:
		var s []string
		for _, v := range n.Values {
			s = append(s, fmt.Sprint(v))
		}
		return strings.Join(s, " or ")
	case n.Min != nil && n.Max != nil:
		return fmt.Sprintf("%g to %g", *n.Min, *n.Max)
	}
	return "?"
}

// capacityKey maps the simulator's capacity-type label to Karpenter's.
func capacityKey(k string) string {
	if k == scenarios.LabelCapacityType {
		return karpv1.CapacityTypeLabelKey
	}
	return k
}

func (g *gen) jobs() ([]File, error) {
	var files []File
	spot := false
	for _, q := range g.pools {
		if slices.Contains(q.capacityTypes, "spot") {
			spot = true
		}
	}
	if ms := g.s.Spec.Workload.Manifests; len(ms) > 0 {
		// The workload is the user's own manifests: they are what gets
		// applied, and gpuplan writes no templates for them.
		for _, m := range ms {
			g.workloadFiles = append(g.workloadFiles, m.Path)
		}
		return nil, nil
	}
	for i, c := range g.classes() {
		if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
			return nil, fmt.Errorf("spec.workload.synthetic.classes[%d].name %q is not a valid Kubernetes name: %s", i, c.Name, strings.Join(errs, "; "))
		}
		lq, ns, err := g.localQueue(c)
		if err == nil {
			g.jobNamespaces = append(g.jobNamespaces, ns)
		}
		var fs []File
		if err == nil {
			fs, err = (&jobFile{gen: g, c: c, rec: g.recovery(c), spot: spot, lq: lq, ns: ns}).write()
		}
		if err != nil {
			return nil, fmt.Errorf("spec.workload.synthetic.classes[%d] (%s): %v", i, c.Name, err)
		}
		files = append(files, fs...)
	}
	return files, nil
}

func (g *gen) recovery(c scenarios.ClassSpec) *scenarios.RecoverySpec {
	if c.Recovery != nil {
		return c.Recovery
	}
	return g.s.Spec.Workload.Recovery
}

// torchrun is the command that starts one node's processes of a
// training run: nnodes nodes of nproc processes, this node's rank and the
// rendezvous host (a single node runs standalone).
func torchrun(entry string, nnodes int32, nproc int64, rank, master string) []string {
	if nnodes <= 1 {
		return []string{"torchrun", "--standalone", fmt.Sprintf("--nproc-per-node=%d", nproc), entry}
	}
	return []string{"torchrun", fmt.Sprintf("--nnodes=%d", nnodes), fmt.Sprintf("--nproc-per-node=%d", nproc),
		"--node-rank=" + rank, "--master-addr=" + master, "--master-port=29500", entry}
}

// roundGi rounds a size down to whole GiB (at least 1 GiB).
func roundGi(q *resource.Quantity) *resource.Quantity {
	gi := max(q.Value()>>30, 1)
	return resource.NewQuantity(gi<<30, resource.BinarySI)
}

// nodeClassOf is the EC2NodeClass pool's NodePool launches from: its own
// when the scenario NodePool has capacity reservations.
func (g *gen) nodeClassOf(pool string) string {
	for _, p := range g.s.Spec.Cluster.Pools {
		if p.Name == pool && p.CapacityType == models.Reserved {
			return reservedClassName(pool)
		}
	}
	for _, np := range g.s.Spec.Cluster.NodePools {
		if np.Name == pool && len(np.Reservations) > 0 {
			return reservedClassName(pool)
		}
	}
	return nodeClassName
}
