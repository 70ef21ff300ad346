package scenarios

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
)

const volcanoAPI = "scheduling.volcano.sh/v1beta1"

// VolcanoQueue is Volcano's Queue (scheduling.volcano.sh/v1beta1). The
// module proxy does not serve volcano.sh/apis, so this is the published
// schema's spec, decoded strictly; status, as kubectl prints it, is
// accepted and ignored.
type VolcanoQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VolcanoQueueSpec `json:"spec,omitempty"`
	Status            map[string]any   `json:"status,omitempty"`
}

// VolcanoQueueSpec is a Queue's spec.
type VolcanoQueueSpec struct {
	Weight      int32               `json:"weight,omitempty"`
	Capability  corev1.ResourceList `json:"capability,omitempty"`
	Reclaimable *bool               `json:"reclaimable,omitempty"`
	Deserved    corev1.ResourceList `json:"deserved,omitempty"`
	Guarantee   struct {
		Resource corev1.ResourceList `json:"resource,omitempty"`
	} `json:"guarantee,omitempty"`
	Parent          string         `json:"parent,omitempty"`
	Priority        int32          `json:"priority,omitempty"`
	Type            string         `json:"type,omitempty"`
	Affinity        map[string]any `json:"affinity,omitempty"`
	ExtendClusters  []any          `json:"extendClusters,omitempty"`
	DequeueStrategy string         `json:"dequeueStrategy,omitempty"`

	where string
}

func (p *Policy) volcanoQueue(d policyDoc) error {
	var q VolcanoQueue
	if err := d.strict(&q); err != nil {
		return err
	}
	q.Spec.where = d.where(q.Name)
	s := &q.Spec
	if s.Parent != "" && s.Parent != "root" {
		p.notModelled(d, q.Name, "spec.parent (hierarchical queues: this queue is modelled beside the others)")
	}
	for k := range q.Annotations {
		if strings.HasPrefix(k, "volcano.sh/hierarchy") || k == "volcano.sh/dequeue-strategy" {
			p.notModelled(d, q.Name, "annotation "+k)
		}
	}
	if s.Priority != 0 || s.Affinity != nil || len(s.ExtendClusters) > 0 || s.Type != "" || s.DequeueStrategy != "" {
		p.notModelled(d, q.Name, "spec.priority, affinity, extendClusters, type or dequeueStrategy")
	}
	if q.Status != nil {
		p.Notes = append(p.Notes, q.Spec.where+": status is ignored")
	}
	p.Volcano = append(p.Volcano, q)
	return nil
}

// volcanoSpec turns Volcano Queues into ClusterQueues of one cohort over
// the whole cluster, as Volcano's proportion plugin shares it: a queue's
// deserved resources (its weight's share of the cluster, or spec.deserved)
// are its nominal quota, it may use more while others leave theirs idle
// (borrowing), up to its capability; its guarantee is never lent. Queues
// reclaim from each other only with the scheduler's reclaim action
// (VolcanoSchedulerConf.apply), which is off by default.
func volcanoSpec(qs []VolcanoQueue, pools []cluster.PoolSpec) (admission.Spec, []string) {
	var total [3]int64 // cpu milli, memory MiB, GPUs
	for _, p := range pools {
		n := int64(p.Slots())
		total[0] += n * p.MilliCPU
		total[1] += n * p.MemoryMiB
		g := int64(p.GPUsPerNode)
		if p.Sharing.TimeSlicing > 1 {
			g *= int64(p.Sharing.TimeSlicing)
		}
		total[2] += n * g
	}
	names := [3]string{"cpu", "memory", "nvidia.com/gpu"}
	var weights int64
	for _, q := range qs {
		weights += int64(max(q.Spec.Weight, 1))
	}
	spec := admission.Spec{Flavors: []admission.Flavor{{Name: "volcano-cluster"}}}
	var notes []string
	for _, q := range qs {
		w := int64(max(q.Spec.Weight, 1))
		cq := admission.ClusterQueue{Name: q.Name, Cohort: "volcano", NotReclaimable: q.Spec.Reclaimable != nil && !*q.Spec.Reclaimable}
		fq := admission.FlavorQuotas{Flavor: "volcano-cluster"}
		var words []string
		for i, r := range names {
			nominal := total[i] * w / weights
			if v, ok := q.Spec.Deserved[corev1.ResourceName(r)]; ok {
				nominal = quantity(r, v)
			}
			qt := admission.Quota{Nominal: nominal, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
			if v, ok := q.Spec.Capability[corev1.ResourceName(r)]; ok {
				c := quantity(r, v)
				if c < qt.Nominal {
					qt.Nominal = c
				}
				qt.BorrowingLimit = c - qt.Nominal
			}
			if v, ok := q.Spec.Guarantee.Resource[corev1.ResourceName(r)]; ok {
				qt.LendingLimit = max(0, qt.Nominal-min(quantity(r, v), qt.Nominal))
			}
			fq.Resources = append(fq.Resources, qt)
			words = append(words, fmt.Sprintf("%s %s", r, admission.Amount(r, qt.Nominal)))
		}
		for r := range q.Spec.Capability {
			if !slices.Contains(names[:], string(r)) {
				notes = append(notes, fmt.Sprintf("%s: capability of %s is not modelled (gpuplan counts cpu, memory and nvidia.com/gpu)", q.Spec.where, r))
			}
		}
		cq.Groups = []admission.ResourceGroup{{Covered: names[:], Flavors: []admission.FlavorQuotas{fq}}}
		spec.ClusterQueues = append(spec.ClusterQueues, cq)
		notes = append(notes, fmt.Sprintf("%s: deserved %s (weight %d of %d)", q.Spec.where, strings.Join(words, ", "), w, weights))
	}
	for _, q := range qs {
		spec.LocalQueues = append(spec.LocalQueues, admission.LocalQueue{Name: q.Name, ClusterQueue: q.Name})
	}
	return spec, notes
}

// VolcanoSchedulerConf is the Volcano scheduler's configuration
// (volcano-scheduler.conf in the volcano-scheduler-configmap ConfigMap):
// its actions and the plugins of its tiers.
type VolcanoSchedulerConf struct {
	Actions []string
	Plugins []string
	where   string
}

type volcanoConfFile struct {
	Actions string `json:"actions"`
	Tiers   []struct {
		Plugins []map[string]any `json:"plugins"`
	} `json:"tiers"`
	Configurations []map[string]any `json:"configurations,omitempty"`
	Metrics        map[string]any   `json:"metrics,omitempty"`
}

// parseVolcanoScheduler reads a volcano-scheduler.conf.
func parseVolcanoScheduler(where string, data []byte) (*VolcanoSchedulerConf, error) {
	var f volcanoConfFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, &InputError{File: where, Msg: strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: ")}
	}
	out := &VolcanoSchedulerConf{where: where}
	for _, a := range strings.Split(f.Actions, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out.Actions = append(out.Actions, a)
		}
	}
	if len(out.Actions) == 0 {
		return nil, &InputError{File: where, Msg: "actions: no scheduler actions listed"}
	}
	for ti, t := range f.Tiers {
		for pi, pl := range t.Plugins {
			name, _ := pl["name"].(string)
			if name == "" {
				return nil, &InputError{File: where, Msg: fmt.Sprintf("tiers[%d].plugins[%d]: a plugin needs a name", ti, pi)}
			}
			out.Plugins = append(out.Plugins, name)
		}
	}
	return out, nil
}

// apply sets the Volcano queues' preemption from the scheduler's actions
// (nil: Volcano's default actions, enqueue, allocate and backfill): reclaim
// lets a queue below its deserved share take back what queues above
// theirs use (reclaimWithinCohort), preempt lets a job evict lower-priority
// jobs of its own queue (withinClusterQueue). It returns notes for what
// is not modelled.
func (v *VolcanoSchedulerConf) apply(spec *admission.Spec) []string {
	if v == nil {
		return []string{"Volcano queues share one cohort over the whole cluster; with Volcano's default actions (enqueue, allocate, backfill) queues do not reclaim from each other and jobs do not preempt"}
	}
	notes := []string{"Volcano queues share one cohort over the whole cluster"}
	var skipped []string
	for _, a := range v.Actions {
		switch a {
		case "enqueue", "allocate", "backfill":
		case "reclaim":
			for i := range spec.ClusterQueues {
				spec.ClusterQueues[i].Preempt.ReclaimWithinCohort = admission.Any
			}
			notes = append(notes, v.where+": action reclaim: a queue below its deserved share reclaims from queues above theirs (not from reclaimable: false queues)")
		case "preempt":
			for i := range spec.ClusterQueues {
				spec.ClusterQueues[i].Preempt.WithinClusterQueue = admission.LowerPriority
			}
			notes = append(notes, v.where+": action preempt: a job preempts lower-priority jobs of its own queue")
		default:
			skipped = append(skipped, "action "+a)
		}
	}
	for _, p := range v.Plugins {
		switch p {
		case "priority", "gang", "proportion", "capacity", "predicates", "conformance":
		default:
			skipped = append(skipped, "plugin "+p)
		}
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s read but not modelled (node scoring and gangs follow the scenario's scheduler profile)", v.where, strings.Join(skipped, ", ")))
	}
	return notes
}
