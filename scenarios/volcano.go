package scenarios

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// (borrowing), up to its capability; its guarantee is never lent. Volcano
// reclaims only when its reclaim action is configured, which it is not by
// default: queues do not preempt each other here.
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
