package nodes

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Well-known node labels read here.
const (
	LabelInstanceType   = corev1.LabelInstanceTypeStable // node.kubernetes.io/instance-type
	LabelRegion         = corev1.LabelTopologyRegion     // topology.kubernetes.io/region
	LabelZone           = corev1.LabelTopologyZone       // topology.kubernetes.io/zone
	LabelKarpenterCT    = "karpenter.sh/capacity-type"
	LabelEKSCT          = "eks.amazonaws.com/capacityType"
	LabelGKESpot        = "cloud.google.com/gke-spot"
	LabelGKEPreemptible = "cloud.google.com/gke-preemptible"
	LabelAKSPriority    = "kubernetes.azure.com/scalesetpriority"
	LabelAKSAgentPool   = "kubernetes.azure.com/agentpool"
	LabelAKSMode        = "kubernetes.azure.com/mode" // system or user
	LabelGPUProduct     = "nvidia.com/gpu.product"
	LabelGPUCount       = "nvidia.com/gpu.count"
	LabelGPUMemory      = "nvidia.com/gpu.memory" // MiB
	LabelMIGStrategy    = "nvidia.com/mig.strategy"
	LabelMIGConfig      = "nvidia.com/mig.config"
	ResourceGPU         = "nvidia.com/gpu"
	resourceMIGPrefix   = "nvidia.com/mig-"
)

// Capacity types, as gpuplan spells them.
const (
	OnDemand = "on-demand"
	Spot     = "spot"
	// Reserved: a capacity reservation or capacity block (Karpenter's
	// reserved, EKS's CAPACITY_BLOCK): held and paid for whether used or
	// not, never interrupted.
	Reserved = "reserved"
)

// Pool is a group of identical nodes.
type Pool struct {
	// Name is made from the instance type, capacity type and zone, with a
	// suffix when two groups would share it.
	Name  string
	Nodes int
	// Line is where the group's first node is in the file; FirstNode its name.
	Line      int
	FirstNode string

	InstanceType, CapacityType, Region, Zone string
	// AgentPool is the node pool the cloud made the node in, when its
	// labels say (AKS's kubernetes.azure.com/agentpool): the pool keeps
	// its name.
	AgentPool string
	// GPUProduct is nvidia.com/gpu.product as labelled; GPUModel is
	// gpuplan's name for it ("" when it is not one gpuplan knows).
	GPUProduct, GPUModel string
	// GPUs is the node's physical GPUs; GPUMemoryMiB each one's memory
	// (nvidia.com/gpu.memory; 0 when not labelled).
	GPUs         int32
	GPUMemoryMiB int64
	// MIGStrategy is single or mixed when the GPUs are MIG-partitioned;
	// MIGLayout is each GPU's instances (from nvidia.com/mig.config, or from
	// the allocatable nvidia.com/mig-* devices).
	MIGStrategy string
	MIGLayout   []string
	MIGConfig   string
	// CPU and Memory are the node's allocatable resources (memory as
	// written: a scenario pool rounds it down to whole MiB).
	CPU, Memory resource.Quantity
	Labels      map[string]string
	Taints      []corev1.Taint
	// Levels is the pool's topology as its nodes' labels give it (nil:
	// none, or levels gpuplan's pools cannot hold: Result.Notes says).
	Levels *Levels
}

// Result is the pools of a node list and what was left out.
type Result struct {
	Pools []Pool
	Notes []string
}

// Parse reads a node list (YAML or JSON) from data, or one Node (`kubectl
// get node NAME -o yaml`); file names it in errors.
func Parse(file string, data []byte) (*Result, error) {
	var list corev1.NodeList
	var tm metav1.TypeMeta
	// The kind decides the type; a document that does not decode is
	// reported by the strict decoding below.
	_ = yaml.Unmarshal(data, &tm)
	single := tm.Kind == "Node"
	var pos strict.Positions
	var err error
	if single {
		var n corev1.Node
		if pos, err = strict.Decode(file, data, &n, strict.Options{What: "a node"}); err != nil {
			return nil, err
		}
		list.APIVersion, list.Kind, list.Items = n.APIVersion, "List", []corev1.Node{n}
	} else if pos, err = strict.Decode(file, data, &list, strict.Options{What: "a node list"}); err != nil {
		return nil, err
	}
	trim := func(path string) string {
		if single {
			// One Node's fields are at the top of its file.
			return strings.TrimPrefix(strings.TrimPrefix(path, "items[0]"), ".")
		}
		return path
	}
	where := func(path string) (int, int) {
		path = trim(path)
		for p := path; ; {
			if lc, ok := pos[p]; ok {
				return lc[0], lc[1]
			}
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				return 0, 0
			}
			p = p[:i]
		}
	}
	bad := func(path, format string, args ...any) error {
		l, c := where(path)
		return &strict.InputError{File: file, Line: l, Column: c, Field: trim(path), Msg: fmt.Sprintf(format, args...)}
	}
	switch list.Kind {
	case "List", "NodeList":
	default:
		return nil, bad("kind", "is %s; gpuplan reads the List (or NodeList) of Nodes that `kubectl get nodes -o yaml` prints", strict.Quote(list.Kind))
	}
	if list.APIVersion != "v1" {
		return nil, bad("apiVersion", "is %s; a node list is apiVersion v1", strict.Quote(list.APIVersion))
	}
	if len(list.Items) == 0 {
		return nil, bad("items", "the node list has no nodes")
	}
	if len(list.Items) > strict.MaxNodes {
		return nil, bad("items", "has %d nodes, more than %d", len(list.Items), strict.MaxNodes)
	}
	res := &Result{}
	byKey := map[string]int{}
	var levels [][]nodeLevels // each pool's nodes' topology levels
	cordoned := 0
	for i := range list.Items {
		n := &list.Items[i]
		at := fmt.Sprintf("items[%d]", i)
		if n.Kind != "" && n.Kind != "Node" {
			return nil, bad(at+".kind", "is %s; a node list holds Nodes", strict.Quote(n.Kind))
		}
		if n.Spec.Unschedulable {
			cordoned++
			continue
		}
		p, key, err := pool(n, at, bad)
		if err != nil {
			return nil, err
		}
		if k, ok := byKey[key]; ok {
			g := &res.Pools[k]
			g.Nodes++
			levels[k] = append(levels[k], readLevels(n.Labels))
			for l, v := range g.Labels {
				if n.Labels[l] != v {
					delete(g.Labels, l)
				}
			}
			continue
		}
		p.Nodes = 1
		p.Line, _ = where(at)
		byKey[key] = len(res.Pools)
		res.Pools = append(res.Pools, p)
		levels = append(levels, []nodeLevels{readLevels(n.Labels)})
	}
	if len(res.Pools) == 0 {
		return nil, bad("items", "every node is cordoned (spec.unschedulable): no node takes pods")
	}
	if cordoned > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %d cordoned nodes (spec.unschedulable) left out", file, cordoned))
	}
	nameAll(res.Pools)
	for i := range res.Pools {
		p := &res.Pools[i]
		lv, notes := poolLevels(p.Name, levels[i])
		p.Levels = lv
		for _, n := range notes {
			res.Notes = append(res.Notes, fmt.Sprintf("%s:%d: %s", file, p.Line, n))
		}
	}
	return res, nil
}

// perNode labels differ between identical machines.
var perNode = []string{corev1.LabelHostname, "nvidia.com/gfd.timestamp", "nvidia.com/mig.config.state",
	"node.kubernetes.io/instance-id", "alpha.eksctl.io/instance-id", "karpenter.k8s.aws/instance-id"}

func pool(n *corev1.Node, at string, bad func(path, format string, args ...any) error) (Pool, string, error) {
	lb := n.Labels
	p := Pool{FirstNode: n.Name, InstanceType: lb[LabelInstanceType], Region: lb[LabelRegion], Zone: lb[LabelZone],
		AgentPool: lb[LabelAKSAgentPool], GPUProduct: lb[LabelGPUProduct], MIGConfig: lb[LabelMIGConfig], Labels: maps.Clone(lb)}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	for _, l := range perNode {
		delete(p.Labels, l)
	}
	labels := at + ".metadata.labels"
	label := func(key string) string { return labels + "[" + strconv.Quote(key) + "]" }
	ct, ctLabel, err := capacityType(lb)
	if err != nil {
		return p, "", bad(label(ctLabel), "%v", err)
	}
	p.CapacityType = ct
	alloc := n.Status.Allocatable
	if alloc == nil {
		alloc = n.Status.Capacity
	}
	allocAt := at + ".status.allocatable"
	if n.Status.Allocatable == nil {
		allocAt = at + ".status.capacity"
	}
	cpu, ok := alloc[corev1.ResourceCPU]
	if !ok {
		return p, "", bad(allocAt, "node %s gives no allocatable cpu", strict.Quote(n.Name))
	}
	milli, err := strict.MilliCPU(cpu)
	if err != nil {
		return p, "", bad(allocAt+`["cpu"]`, "%v", err)
	}
	mem, ok := alloc[corev1.ResourceMemory]
	if !ok {
		return p, "", bad(allocAt, "node %s gives no allocatable memory", strict.Quote(n.Name))
	}
	if _, err := strict.MemoryMiB(mem); err != nil {
		return p, "", bad(allocAt+`["memory"]`, "%v", err)
	}
	p.CPU = *resource.NewMilliQuantity(milli, resource.DecimalSI)
	p.Memory = mem.DeepCopy()

	// MIG devices advertised under the mixed strategy, and GPUs.
	a := nodeAt{n: n, labels: labels, allocAt: allocAt, bad: bad}
	mig, gpus, err := a.devices(alloc)
	if err != nil {
		return p, "", err
	}
	if err := a.gpus(&p, mig, gpus); err != nil {
		return p, "", err
	}
	if p.GPUs > 0 && p.GPUProduct == "" && p.InstanceType == "" {
		// Without GPU feature discovery's label the instance type (an
		// AKS VM size, an EC2 type) tells the GPU through the catalog.
		return p, "", bad(labels, "node %s has %d GPUs but no %s label (GPU feature discovery's): gpuplan cannot tell which GPU it is", strict.Quote(n.Name), p.GPUs, LabelGPUProduct)
	}
	p.Taints = machineTaints(n)
	var key strings.Builder
	fmt.Fprintf(&key, "%s|%s|%s|%s|%s|%s|%d|%d|%s|%s|%d|%d", p.AgentPool, p.InstanceType, p.CapacityType, p.Region, p.Zone, p.GPUProduct, p.GPUs, p.GPUMemoryMiB,
		p.MIGStrategy, strings.Join(p.MIGLayout, ","), milli, mem.Value())
	for _, t := range p.Taints {
		fmt.Fprintf(&key, "|%s=%s:%s", t.Key, t.Value, t.Effect)
	}
	return p, key.String(), nil
}

// nodeAt is where a node's fields are, for errors: its labels, its
// allocatable (or capacity) resources, and the error for a bad field.
type nodeAt struct {
	n               *corev1.Node
	labels, allocAt string
	bad             func(path, format string, args ...any) error
}

func (a nodeAt) label(key string) string { return a.labels + "[" + strconv.Quote(key) + "]" }

// devices are the MIG devices the node advertises by profile (mixed
// strategy) and its nvidia.com/gpu count, each a whole number.
func (a nodeAt) devices(alloc corev1.ResourceList) (map[string]int64, int64, error) {
	allocAt, bad := a.allocAt, a.bad
	var err error
	mig := map[string]int64{}
	for r, q := range alloc {
		if prof, ok := strings.CutPrefix(string(r), resourceMIGPrefix); ok {
			v, err := strict.QuantityIn(q, false, 1, 64*8, string(r))
			if err != nil {
				return nil, 0, bad(allocAt+"["+strconv.Quote(string(r))+"]", "%v", err)
			}
			if q.MilliValue()%1000 != 0 {
				return nil, 0, bad(allocAt+"["+strconv.Quote(string(r))+"]", "%s %s: a device plugin advertises whole devices", r, strict.Quote(q.String()))
			}
			if v > 0 {
				mig[prof] = v
			}
		}
	}
	var gpus int64
	if q, ok := alloc[ResourceGPU]; ok {
		if gpus, err = strict.QuantityIn(q, false, 1, strict.MaxPodGPUs*8, ResourceGPU); err != nil {
			return nil, 0, bad(allocAt+"["+strconv.Quote(ResourceGPU)+"]", "%v", err)
		}
		if q.MilliValue()%1000 != 0 {
			return nil, 0, bad(allocAt+"["+strconv.Quote(ResourceGPU)+"]", "%s %s: a device plugin advertises whole GPUs", ResourceGPU, strict.Quote(q.String()))
		}
	}
	return mig, gpus, nil
}

// gpus reads the node's GPUs into p: the model (from gpu.product and
// gpu.memory), and, with MIG on, the strategy, the layout (configured,
// the single strategy's profile, or the devices advertised) and the
// whole GPUs behind the devices.
func (a nodeAt) gpus(p *Pool, mig map[string]int64, gpus int64) error {
	n, lb, labels, allocAt, bad, label := a.n, a.n.Labels, a.labels, a.allocAt, a.bad, a.label
	labelInt := func(key string, max int64) (int64, error) {
		v, ok := lb[key]
		if !ok {
			return 0, nil
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x < 0 || x > max {
			return 0, bad(label(key), "%s is not a whole number from 0 to %d", strict.Quote(v), max)
		}
		return x, nil
	}
	count, err := labelInt(LabelGPUCount, strict.MaxPodGPUs*8)
	if err != nil {
		return err
	}
	memMiB, err := labelInt(LabelGPUMemory, 1<<24)
	if err != nil {
		return err
	}
	strategy := lb[LabelMIGStrategy]
	product, migProfile, _ := strings.Cut(p.GPUProduct, "-MIG-")
	p.GPUModel = GPUModel(product, memMiB)
	// The GPU operator labels a strategy even where MIG is off: MIG is on
	// where a layout is configured or MIG devices are advertised.
	configured := p.MIGConfig != "" && p.MIGConfig != "all-disabled"
	migOn := false
	switch strategy {
	case "", "none":
	case "single":
		migOn = migProfile != "" || configured
	case "mixed":
		migOn = len(mig) > 0 || configured
	default:
		return bad(label(LabelMIGStrategy), "is %s; GPU feature discovery's strategies are none, single and mixed", strict.Quote(strategy))
	}
	if !migOn {
		p.GPUs = int32(gpus)
		p.GPUMemoryMiB = memMiB
	} else {
		if p.GPUModel == "" || models.MIGProfiles(p.GPUModel) == nil {
			return bad(label(LabelGPUProduct), "node %s uses MIG (%s=%s) on %s, which gpuplan knows no MIG profiles of (MIG models: %s)",
				strict.Quote(n.Name), LabelMIGStrategy, strategy, strict.Quote(p.GPUProduct), strings.Join(models.MIGModels(), ", "))
		}
		p.MIGStrategy = strategy
		layout, err := migLayout(p.GPUModel, p.MIGConfig)
		if err != nil {
			// A configuration of the cluster's own mig-parted config
			// (hptuning-1g10gb): what it made is what the node advertises,
			// its MIG devices (mixed) or its MIG product (single).
			if strategy == "mixed" && len(mig) > 0 || strategy == "single" && migProfile != "" {
				layout, err = nil, nil
			} else {
				return bad(label(LabelMIGConfig), "node %s: %v", strict.Quote(n.Name), err)
			}
		}
		if strategy == "single" {
			// GPU feature discovery overrides gpu.product with the profile
			// and gpu.count with the MIG devices; the device plugin
			// advertises each as an nvidia.com/gpu.
			if layout == nil {
				layout, err = migLayout(p.GPUModel, "all-"+migProfile)
				if err != nil {
					return bad(label(LabelGPUProduct), "node %s: %v", strict.Quote(n.Name), err)
				}
			}
			if gpus%int64(len(layout)) != 0 {
				return bad(allocAt+"["+strconv.Quote(ResourceGPU)+"]", "node %s advertises %d MIG devices, not a whole number of GPUs of %d instances (%s)", strict.Quote(n.Name), gpus, len(layout), strings.Join(layout, ", "))
			}
			p.GPUs = int32(gpus / int64(len(layout)))
		} else {
			p.GPUs = int32(count)
			if p.GPUs == 0 {
				return bad(labels, "node %s uses the mixed MIG strategy but gives no %s", strict.Quote(n.Name), LabelGPUCount)
			}
			if layout == nil {
				layout, err = layoutFromDevices(mig, int64(p.GPUs))
				if err != nil {
					return bad(allocAt, "node %s: %v", strict.Quote(n.Name), err)
				}
			}
		}
		p.MIGLayout = layout
	}
	return nil
}

// machineTaints are the node's taints but the conditions the node
// controller sets (node.kubernetes.io/...), sorted.
func machineTaints(n *corev1.Node) []corev1.Taint {
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if strings.HasPrefix(t.Key, "node.kubernetes.io/") {
			continue // conditions the node controller sets, not the machine's
		}
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	sort.Slice(taints, func(i, j int) bool {
		a, b := taints[i], taints[j]
		return a.Key+"\x00"+string(a.Effect)+"\x00"+a.Value < b.Key+"\x00"+string(b.Effect)+"\x00"+b.Value
	})
	return taints
}

// capacityType reads the capacity type from the labels the provisioners
// set, with the label it came from.
func capacityType(lb map[string]string) (string, string, error) {
	if v, ok := lb[LabelKarpenterCT]; ok {
		switch v {
		case "spot":
			return Spot, LabelKarpenterCT, nil
		case "on-demand":
			return OnDemand, LabelKarpenterCT, nil
		case "reserved":
			return Reserved, LabelKarpenterCT, nil
		}
		return "", LabelKarpenterCT, fmt.Errorf("%s is %s; Karpenter's capacity types are on-demand, spot and reserved", LabelKarpenterCT, strict.Quote(v))
	}
	if v, ok := lb[LabelEKSCT]; ok {
		switch v {
		case "SPOT":
			return Spot, LabelEKSCT, nil
		case "ON_DEMAND":
			return OnDemand, LabelEKSCT, nil
		case "CAPACITY_BLOCK":
			return Reserved, LabelEKSCT, nil
		}
		return "", LabelEKSCT, fmt.Errorf("%s is %s; EKS's capacity types are ON_DEMAND, SPOT and CAPACITY_BLOCK", LabelEKSCT, strict.Quote(v))
	}
	if lb[LabelGKESpot] == "true" || lb[LabelGKEPreemptible] == "true" || lb[LabelAKSPriority] == "spot" {
		return Spot, "", nil
	}
	return OnDemand, "", nil
}

// GPUModel maps GPU feature discovery's product name (NVIDIA-A100-SXM4-40GB,
// NVIDIA-H100-80GB-HBM3, NVIDIA-A10G, Tesla-T4, ...) to gpuplan's GPU model
// name; memMiB (nvidia.com/gpu.memory), when known, tells memory variants
// apart. It is "" for a product gpuplan does not know.
func GPUModel(product string, memMiB int64) string {
	p := strings.ToUpper(product)
	for _, prefix := range []string{"NVIDIA-", "TESLA-", "QUADRO-"} {
		p = strings.TrimPrefix(p, prefix)
	}
	tok := strings.FieldsFunc(p, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	has := func(s string) bool { return slices.Contains(tok, s) }
	if len(tok) == 0 {
		return ""
	}
	switch tok[0] {
	case "A100":
		if has("80GB") || memMiB >= 70<<10 {
			return "A100-80GB"
		}
		return "A100-40GB"
	case "H100":
		return "H100-80GB"
	case "H200":
		return "H200-141GB"
	case "V100":
		if has("32GB") || memMiB >= 30<<10 {
			return "V100-32GB"
		}
		return "V100"
	case "A10G", "A10", "L4", "L40S", "T4", "P100", "P4", "B200", "GB200", "B300", "GB300", "M60":
		return tok[0]
	}
	return ""
}

var allProfile = regexp.MustCompile(`^all-(\d+g\.\d+gb|balanced)$`)

// migLayout expands a mig-parted configuration name gpuplan knows
// (all-<profile>, all-balanced); nil for none or all-disabled.
func migLayout(model, config string) ([]string, error) {
	switch {
	case config == "" || config == "all-disabled":
		return nil, nil
	case allProfile.MatchString(config):
		return models.MIGLayout(model, config)
	}
	return nil, fmt.Errorf("%s is %s; gpuplan reads mig-parted's all-<profile> and all-balanced configurations (or the mixed strategy's advertised devices)", LabelMIGConfig, strict.Quote(config))
}

// layoutFromDevices divides a node's advertised MIG devices over its GPUs:
// every GPU partitioned the same way.
func layoutFromDevices(mig map[string]int64, gpus int64) ([]string, error) {
	if len(mig) == 0 {
		return nil, fmt.Errorf("the mixed MIG strategy advertises no nvidia.com/mig-* devices")
	}
	var out []string
	for _, prof := range slices.Sorted(maps.Keys(mig)) {
		n := mig[prof]
		if n%gpus != 0 {
			return nil, fmt.Errorf("%d %s%s devices do not divide evenly over %d GPUs", n, resourceMIGPrefix, prof, gpus)
		}
		for range n / gpus {
			out = append(out, prof)
		}
	}
	return out, nil
}

var notName = regexp.MustCompile(`[^a-z0-9.-]+`)

// nameAll names each pool: an AKS agent pool by its own name (with its
// zone when its nodes span zones); else from its instance type (or GPU),
// capacity type and zone; numbering the groups that would share a name
// in file order.
func nameAll(pools []Pool) {
	groups := map[string]int{}
	for _, p := range pools {
		if p.AgentPool != "" {
			groups[p.AgentPool]++
		}
	}
	seen := map[string]int{}
	for i := range pools {
		p := &pools[i]
		var parts []string
		switch {
		case p.AgentPool != "":
			parts = []string{p.AgentPool}
			if groups[p.AgentPool] > 1 && p.Zone != "" {
				parts = append(parts, p.Zone)
			}
		default:
			parts = []string{p.InstanceType}
			if p.InstanceType == "" {
				parts[0] = "nodes"
				if p.GPUProduct != "" {
					parts[0] = p.GPUProduct
				}
			}
			parts = append(parts, p.CapacityType)
			if p.Zone != "" {
				parts = append(parts, p.Zone)
			}
		}
		n := strings.Trim(notName.ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-"), "-.")
		if len(n) > 200 {
			n = strings.Trim(n[:200], "-.")
		}
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s-%d", n, seen[n])
		}
		p.Name = n
	}
}

// Read reads a node list file, bounded by strict.MaxFileBytes.
func Read(path string) (*Result, error) {
	data, err := strict.ReadFileBounded(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}
