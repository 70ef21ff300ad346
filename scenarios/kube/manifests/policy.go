package manifests

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuecfg "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim/admission"
)

// Names of Kueue's and Volcano's own configuration objects.
const (
	// KueueNamespace and KueueConfigMap hold Kueue's controller
	// configuration (its release manifests' kueue-manager-config).
	KueueNamespace   = "kueue-system"
	KueueConfigMap   = "kueue-manager-config"
	KueueConfigKey   = "controller_manager_config.yaml"
	VolcanoNamespace = "volcano-system"
	// VolcanoSchedulerConfigMap holds volcano-scheduler.conf.
	VolcanoSchedulerConfigMap = "volcano-scheduler-configmap"
	VolcanoSchedulerConfKey   = "volcano-scheduler.conf"
)

// scenarioPath resolves a path the scenario gives, relative to its file.
func scenarioPath(s *scenarios.Scenario, p string) string {
	if filepath.IsAbs(p) || s.File() == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.File()), p)
}

// loadPolicy reads the admission policy the scenario's run used: its
// spec.policy manifests, when they hold ClusterQueues or Volcano Queues.
func (g *gen) loadPolicy() error {
	ps := g.s.Spec.Policy
	if ps == nil || len(ps.Manifests) == 0 {
		return nil
	}
	var paths []string
	for _, m := range ps.Manifests {
		paths = append(paths, scenarioPath(g.s, m))
	}
	pol, err := scenarios.LoadPolicy(paths)
	if err != nil {
		return err
	}
	if len(pol.Spec.ClusterQueues) == 0 && len(pol.Volcano) == 0 {
		// NodePools (in the cluster already), PriorityClasses or
		// DeviceClasses: the DeviceClasses are written back.
		if len(pol.DeviceClasses) > 0 {
			g.classPol = pol
		}
		return nil
	}
	g.pol = pol
	return nil
}

// localQueue is the LocalQueue (or Volcano Queue) a class's jobs go to
// and its namespace, as the run mapped them: spec.policy.queues, else the
// class's own queue when the policy has it, else spec.policy.defaultQueue.
func (g *gen) localQueue(c scenarios.ClassSpec) (name, ns string, err error) {
	q := c.Queue
	if g.pol == nil {
		return queueOf(c), g.o.Namespace, nil
	}
	ps := g.s.Spec.Policy
	if len(g.pol.Volcano) > 0 {
		for _, v := range g.pol.Volcano {
			if v.Name == q {
				return q, g.o.Namespace, nil
			}
		}
	}
	known := map[string]bool{}
	for _, l := range g.pol.Spec.LocalQueues {
		known[l.Name] = true
	}
	switch {
	case ps.Queues[q] != "":
		q = ps.Queues[q]
	case known[q]:
	case ps.DefaultQueue != "":
		q = ps.DefaultQueue
	case g.s.Spec.Workload.Synthetic == nil && len(g.pol.Spec.LocalQueues) > 0:
		// The stand-in template of a trace's jobs: the first LocalQueue
		// (each job's own queue decides in the run).
		q = g.pol.Spec.LocalQueues[0].Name
	default:
		return "", "", fmt.Errorf("queue %q is no LocalQueue of the policy and spec.policy maps it nowhere", q)
	}
	if len(g.pol.Volcano) > 0 {
		return q, g.o.Namespace, nil
	}
	ns = g.pol.LocalQueueNamespaces[q]
	if ns == "" {
		ns = "default"
	}
	return scenarios.LocalQueueName(q), ns, nil
}

// policyPriorityClass is the PriorityClass spec.policy.priorityClasses
// gives a class's queue, if any.
func (g *gen) policyPriorityClass(c scenarios.ClassSpec) string {
	if g.pol == nil || g.s.Spec.Policy == nil {
		return ""
	}
	return g.s.Spec.Policy.PriorityClasses[c.Queue]
}

// quota writes an amount in the simulator's units (milli-CPU, MiB,
// counts) as a Kubernetes quantity.
func quota(res string, v int64) resource.Quantity {
	switch res {
	case string(corev1.ResourceCPU):
		return *resource.NewMilliQuantity(v, resource.DecimalSI)
	case string(corev1.ResourceMemory):
		return *resource.NewQuantity(v<<20, resource.BinarySI)
	}
	return *resource.NewQuantity(v, resource.DecimalSI)
}

func limitQuantity(res string, v int64) *resource.Quantity {
	if v == admission.NoLimit {
		return nil
	}
	q := quota(res, v)
	return &q
}

func kueueGroups(in []admission.ResourceGroup) []kueue.ResourceGroup {
	var out []kueue.ResourceGroup
	for _, rg := range in {
		g := kueue.ResourceGroup{}
		for _, r := range rg.Covered {
			g.CoveredResources = append(g.CoveredResources, corev1.ResourceName(r))
		}
		for _, f := range rg.Flavors {
			fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(f.Flavor)}
			for i, q := range f.Resources {
				res := rg.Covered[i]
				fq.Resources = append(fq.Resources, kueue.ResourceQuota{
					Name:           corev1.ResourceName(res),
					NominalQuota:   quota(res, q.Nominal),
					BorrowingLimit: limitQuantity(res, q.BorrowingLimit),
					LendingLimit:   limitQuantity(res, q.LendingLimit),
				})
			}
			g.Flavors = append(g.Flavors, fq)
		}
		out = append(out, g)
	}
	return out
}

func fairSharing(w int64) *kueue.FairSharing {
	switch w {
	case 0:
		return nil
	case admission.ZeroWeight:
		return &kueue.FairSharing{Weight: resource.NewQuantity(0, resource.DecimalSI)}
	}
	return &kueue.FairSharing{Weight: resource.NewMilliQuantity(w, resource.DecimalSI)}
}

func preemptionPolicy(p admission.Policy) kueue.PreemptionPolicy {
	return kueue.PreemptionPolicy(p.String())
}

// policyKueue writes the Kueue policy the run used, from the admission
// model it ran (so what the simulation did not read is not written).
func (g *gen) policyKueue() (File, error) {
	spec := g.pol.Spec
	f := File{Path: PathKueue, Comment: g.header(
		"Kueue: the admission policy the simulation ran, read from " + strings.Join(g.policyFiles(), ", ") +
			" and written back normalised (kueue.x-k8s.io/v1beta2, quantities canonical, defaults explicit):" +
			fmt.Sprintf(" %d ResourceFlavors, %d Cohorts, %d ClusterQueues (quotas, borrowing and lending limits, preemption, queueing strategy, flavor fungibility, fair-sharing weights) and %d LocalQueues in the namespaces their jobs run in.",
				len(spec.Flavors), len(spec.Cohorts), len(spec.ClusterQueues), len(spec.LocalQueues)),
	)}
	if len(g.pol.Notes) > 0 {
		f.Comment = append(f.Comment, "Read but not modelled, so not written back: "+strings.Join(g.pol.Notes, "; "))
	}
	for _, fl := range spec.Flavors {
		rf := &kueue.ResourceFlavor{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "ResourceFlavor"},
			ObjectMeta: metav1.ObjectMeta{Name: fl.Name},
			Spec:       kueue.ResourceFlavorSpec{NodeLabels: fl.NodeLabels},
		}
		for _, t := range fl.NodeTaints {
			rf.Spec.NodeTaints = append(rf.Spec.NodeTaints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		for _, t := range fl.Tolerations {
			rf.Spec.Tolerations = append(rf.Spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
		}
		if name, ok := g.pol.TASFlavors()[fl.Name]; ok {
			rf.Spec.TopologyName = ptr(kueue.TopologyReference(name))
		}
		f.Objects = append(f.Objects, rf)
	}
	if t, err := g.policyTopology(); err != nil {
		return f, err
	} else if t != nil {
		f.Objects = append([]any{t}, f.Objects...)
		f.Comment = append(f.Comment, fmt.Sprintf("Topology %s, as read: its levels are what the run placed the jobs asking for topology over.", t.Name))
	}
	for _, c := range spec.Cohorts {
		f.Objects = append(f.Objects, &kueue.Cohort{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "Cohort"},
			ObjectMeta: metav1.ObjectMeta{Name: c.Name},
			Spec: kueue.CohortSpec{
				ParentName:     kueue.CohortReference(c.Parent),
				ResourceGroups: kueueGroups(c.Groups),
				FairSharing:    fairSharing(c.FairWeight),
			},
		})
	}
	for _, q := range spec.ClusterQueues {
		strategy := kueue.BestEffortFIFO
		if q.Strategy == admission.StrictFIFO {
			strategy = kueue.StrictFIFO
		}
		var nss []string
		for _, l := range spec.LocalQueues {
			if l.ClusterQueue == q.Name {
				ns := g.pol.LocalQueueNamespaces[l.Name]
				if ns == "" {
					ns = "default"
				}
				if !slices.Contains(nss, ns) {
					nss = append(nss, ns)
				}
			}
		}
		sort.Strings(nss)
		// Admit the namespaces of the queue's LocalQueues only (Kueue
		// admits no namespace when the selector is unset).
		sel := &metav1.LabelSelector{}
		if len(nss) > 0 {
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: nss}}
		}
		pre := &kueue.ClusterQueuePreemption{
			WithinClusterQueue:  preemptionPolicy(q.Preempt.WithinClusterQueue),
			ReclaimWithinCohort: preemptionPolicy(q.Preempt.ReclaimWithinCohort),
		}
		if q.Preempt.BorrowWithinCohort != admission.Never {
			pre.BorrowWithinCohort = &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicy(q.Preempt.BorrowWithinCohort.String())}
		}
		ff := &kueue.FlavorFungibility{WhenCanBorrow: kueue.MayStopSearch, WhenCanPreempt: kueue.TryNextFlavor}
		if q.Fungibility.TryNextOnBorrow {
			ff.WhenCanBorrow = kueue.TryNextFlavor
		}
		if q.Fungibility.StopOnPreempt {
			ff.WhenCanPreempt = kueue.MayStopSearch
		}
		f.Objects = append(f.Objects, &kueue.ClusterQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "ClusterQueue"},
			ObjectMeta: metav1.ObjectMeta{Name: q.Name},
			Spec: kueue.ClusterQueueSpec{
				CohortName:        kueue.CohortReference(q.Cohort),
				QueueingStrategy:  strategy,
				NamespaceSelector: sel,
				ResourceGroups:    kueueGroups(q.Groups),
				Preemption:        pre,
				FlavorFungibility: ff,
				FairSharing:       fairSharing(q.FairWeight),
			},
		})
	}
	for _, l := range spec.LocalQueues {
		ns := g.pol.LocalQueueNamespaces[l.Name]
		if ns == "" {
			ns = "default"
		}
		f.Objects = append(f.Objects, &kueue.LocalQueue{
			TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "LocalQueue"},
			ObjectMeta: meta(scenarios.LocalQueueName(l.Name), ns),
			Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(l.ClusterQueue)},
		})
	}
	return f, nil
}

func (g *gen) policyFiles() []string { return g.relFiles(g.pol) }

// relFiles are a policy's files relative to the scenario's folder.
func (g *gen) relFiles(pol *scenarios.Policy) []string {
	var out []string
	for _, p := range pol.Files {
		if rel, err := filepath.Rel(filepath.Dir(g.s.File()), p); err == nil && g.s.File() != "" {
			p = rel
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out
}

// kueueConfig writes Kueue's controller configuration when the run used
// a part of it (fair sharing, waitForPodsReady).
func (g *gen) kueueConfig() (File, error) {
	f := File{Path: PathKueueConfig}
	if (g.pol != nil && len(g.pol.Volcano) > 0) || (g.pol == nil && g.allVolcano()) {
		return f, nil
	}
	var spec admission.Spec
	if g.pol != nil {
		spec = g.pol.Spec
	}
	mappings := g.deviceClassMappings()
	if spec.FairSharing == nil && spec.WaitForPodsReady == nil && len(mappings) == 0 {
		return f, nil
	}
	cfg := kueuecfg.Configuration{
		TypeMeta:     metav1.TypeMeta{APIVersion: kueuecfg.SchemeGroupVersion.String(), Kind: "Configuration"},
		Integrations: &kueuecfg.Integrations{Frameworks: g.kueueFrameworks()},
	}
	var what []string
	if len(mappings) > 0 {
		// Kueue counts DRA devices only through these mappings, behind
		// its KueueDRAIntegration feature gate (v0.18's name of v0.17's
		// DynamicResourceAllocation, beta and on by default; Kueue
		// v0.19.2 refuses to start on the old name), written on to say so.
		cfg.Resources = &kueuecfg.Resources{DeviceClassMappings: mappings}
		cfg.FeatureGates = map[string]bool{"KueueDRAIntegration": true}
		switch {
		case len(g.draClasses) == 0:
			what = append(what, "resources.deviceClassMappings (the policy's, as read: the quota resource each DeviceClass's claimed devices are charged as) with the KueueDRAIntegration feature gate on (beta, on by default since Kueue v0.18)")
		case g.pol != nil && len(g.pol.DeviceClassMappings) > 0:
			what = append(what, "resources.deviceClassMappings (the policy's, as read, and each DeviceClass of gpuplan's the jobs' claims name, charged to the quota as the resource the device plugin's form asks for) with the KueueDRAIntegration feature gate on (beta, on by default since Kueue v0.18)")
		default:
			what = append(what, "resources.deviceClassMappings (each DeviceClass the jobs' claims name, charged to the quota as the resource the device plugin's form asks for) with the KueueDRAIntegration feature gate on (beta, on by default since Kueue v0.18)")
		}
	}
	if fs := spec.FairSharing; fs != nil {
		cfg.FairSharing = &kueuecfg.FairSharing{PreemptionStrategies: []kueuecfg.PreemptionStrategy{}}
		for _, s := range fs.Strategies {
			cfg.FairSharing.PreemptionStrategies = append(cfg.FairSharing.PreemptionStrategies, kueuecfg.PreemptionStrategy(s.String()))
		}
		what = append(what, "fairSharing (on, with the preemption strategies the run used)")
	}
	if w := spec.WaitForPodsReady; w != nil {
		ts := kueuecfg.EvictionTimestamp
		if w.RequeueAtCreation {
			ts = kueuecfg.CreationTimestamp
		}
		rs := &kueuecfg.RequeuingStrategy{
			Timestamp:          &ts,
			BackoffBaseSeconds: ptr(int32(w.BackoffBase / 1000)),
			BackoffMaxSeconds:  ptr(int32(w.BackoffMax / 1000)),
		}
		if w.BackoffLimit >= 0 {
			rs.BackoffLimitCount = ptr(w.BackoffLimit)
		}
		cfg.WaitForPodsReady = &kueuecfg.WaitForPodsReady{
			Timeout:           metav1.Duration{Duration: msDuration(w.Timeout)},
			BlockAdmission:    ptr(w.BlockAdmission),
			RequeuingStrategy: rs,
		}
		what = append(what, "waitForPodsReady (timeout, blocking and requeuing as the run used)")
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return f, err
	}
	f.Comment = g.header(
		"Kueue's controller configuration: "+strings.Join(what, "; ")+", and the job integrations the",
		"generated workloads need. It replaces Kueue's whole configuration: merge these keys into your",
		"kueue-manager-config (Helm: managerConfig.controllerManagerConfigYaml) and restart kueue-controller-manager.",
	)
	f.Objects = append(f.Objects, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(KueueConfigMap, KueueNamespace),
		Data:       map[string]string{KueueConfigKey: string(b)},
	})
	return f, nil
}

// kueueFrameworks are Kueue's integrations the generated workloads use.
func (g *gen) kueueFrameworks() []string {
	fw := []string{"batch/job"}
	switch g.o.TrainingAPI {
	case TrainingPyTorchJob:
		fw = append(fw, "kubeflow.org/pytorchjob")
	case TrainingTFJob:
		fw = append(fw, "kubeflow.org/tfjob")
	}
	if len(g.svcs) > 0 {
		// Inference services' replicas: Deployments (and the plain pods
		// of an InferenceService) through Kueue's pod-based integrations.
		fw = append(fw, "pod", "deployment")
	}
	return fw
}

// policyVolcano writes the Volcano Queues the run used, as read, and the
// scheduler configuration that decided their reclaim and preemption.
func (g *gen) policyVolcano() (File, error) {
	f := File{Path: PathVolcano, Comment: g.header(
		"Volcano: the Queues the simulation ran, read from "+strings.Join(g.policyFiles(), ", ")+" and written back as read",
		"(weights, capabilities, deserved and guaranteed resources, reclaimable, parents), and the",
		"scheduler's configuration ("+VolcanoSchedulerConfigMap+" in "+VolcanoNamespace+"), whose actions decide",
		"whether queues reclaim from each other (reclaim) and jobs preempt within a queue (preempt).",
	)}
	for _, q := range g.pol.Volcano {
		q.Status = nil
		q.TypeMeta = metav1.TypeMeta{APIVersion: VolcanoQueueAPIVersion, Kind: "Queue"}
		q.ObjectMeta = metav1.ObjectMeta{Name: q.Name, Labels: q.Labels, Annotations: q.Annotations}
		f.Objects = append(f.Objects, &q)
	}
	conf := volcanoConf{Actions: "enqueue, allocate, backfill", Tiers: []volcanoTier{
		{Plugins: []volcanoPlugin{{Name: "priority"}, {Name: "gang"}, {Name: "conformance"}}},
		{Plugins: []volcanoPlugin{{Name: "drf"}, {Name: "predicates"}, {Name: "proportion"}, {Name: "nodeorder"}, {Name: "binpack"}}},
	}}
	if vs := g.pol.VolcanoScheduler; vs != nil {
		conf.Actions = strings.Join(vs.Actions, ", ")
		t := volcanoTier{}
		for _, p := range vs.Plugins {
			t.Plugins = append(t.Plugins, volcanoPlugin{Name: p})
		}
		conf.Tiers = []volcanoTier{t}
		f.Comment = append(f.Comment, "The scheduler configuration is the one read, its plugins in one tier (gpuplan reads their names, not their tiers or arguments).")
	} else {
		f.Comment = append(f.Comment, "The policy gave no scheduler configuration: this is Volcano's default one, which the simulation modelled (no reclaim, no preemption).")
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return f, err
	}
	f.Objects = append(f.Objects, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(VolcanoSchedulerConfigMap, VolcanoNamespace),
		Data:       map[string]string{VolcanoSchedulerConfKey: string(b)},
	})
	return f, nil
}

// volcanoConf is volcano-scheduler.conf: the scheduler's actions and the
// plugins of its tiers.
type volcanoConf struct {
	Actions string        `json:"actions"`
	Tiers   []volcanoTier `json:"tiers"`
}

type volcanoTier struct {
	Plugins []volcanoPlugin `json:"plugins"`
}

type volcanoPlugin struct {
	Name string `json:"name"`
}

// policyPriorityClasses writes the policy's PriorityClasses and Kueue
// WorkloadPriorityClasses, as read: the jobs (the scenario's, through
// spec.policy.priorityClasses, or its workload manifests) name them.
func (g *gen) policyPriorityClasses() []any {
	if g.pol == nil {
		return nil
	}
	var names []string
	for n := range g.pol.PriorityClasses {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []any
	for _, n := range names {
		if g.pol.WorkloadPriorityClasses[n] {
			out = append(out, &kueue.WorkloadPriorityClass{
				TypeMeta:    metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "WorkloadPriorityClass"},
				ObjectMeta:  metav1.ObjectMeta{Name: n},
				Value:       g.pol.PriorityClasses[n],
				Description: "Workload priority class " + n + " of the admission policy of gpuplan scenario " + g.s.Metadata.Name + ".",
			})
			continue
		}
		p := corev1.PreemptLowerPriority
		if g.pol.PreemptNever[n] {
			p = corev1.PreemptNever
		}
		out = append(out, &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: n},
			Value:            g.pol.PriorityClasses[n],
			PreemptionPolicy: &p,
			Description:      "Priority class " + n + " of the admission policy of gpuplan scenario " + g.s.Metadata.Name + ".",
		})
	}
	return out
}

// fraction is the share of one GPU a class's pods ask for, when it is
// below one GPU (a distribution of shares gives its largest).
func fraction(n *scenarios.NumDist) (float64, bool) {
	if n == nil {
		return 0, false
	}
	v := 0.0
	switch {
	case n.Value != nil:
		v = *n.Value
	case len(n.Values) > 0:
		v = slices.Max(n.Values)
	case n.Max != nil:
		v = *n.Max
	}
	return v, v > 0 && v < 1
}

// shares finds the pools whose time-slicing gives exactly the share a
// class asks for (replicas = 1/share): one nvidia.com/gpu there is that
// share. The device plugin does not promise that a request of several
// replicas lands on one GPU, so other shares are refused, as is a
// cluster that shares no GPU.
func (g *gen) shares(c scenarios.ClassSpec, frac float64) (pools []string, words string, n int64, err error) {
	var others []string
	for _, q := range g.pools {
		r := q.sharing.TimeSlicing
		if r > 1 && math.Abs(frac*float64(r)-1) < 1e-9 {
			pools = append(pools, q.name)
			continue
		}
		switch {
		case r > 1:
			others = append(others, fmt.Sprintf("%s time-slices %d ways (one replica is %.3g GPU)", q.name, r, 1/float64(r)))
		case q.sharing.MIGStrategy != "":
			others = append(others, fmt.Sprintf("%s is partitioned by MIG (ask for a MIG profile instead)", q.name))
		default:
			others = append(others, fmt.Sprintf("%s has no sharing configured", q.name))
		}
	}
	if len(pools) == 0 {
		want := math.Round(1 / frac)
		return nil, "", 0, fmt.Errorf("asks for %.3g of a GPU per pod, which the device plugin can only give as one time-slicing replica of a GPU shared %.0f ways, and no pool is: %s. Give a pool sharing.timeSlicing.replicas: %.0f (or MPS with that many replicas) so each GPU is advertised as %.0f nvidia.com/gpu",
			frac, want, strings.Join(others, "; "), want, want)
	}
	return pools, fmt.Sprintf("Each pod asks for %.3g of a GPU: one nvidia.com/gpu on a pool time-sliced %.0f ways (%s), where the device plugin advertises each GPU %.0f times.", frac, 1/frac, strings.Join(pools, ", "), 1/frac), 1, nil
}
