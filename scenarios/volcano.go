package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
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
	// parentAt is an error at the Queue's spec.parent.
	parentAt func(format string, args ...any) error
}

// volcanoParentCycle refuses Queues whose spec.parent chain comes back to
// one of them: Volcano's webhook refuses such a hierarchy, and no queue
// of it has a place in the tree.
func volcanoParentCycle(qs []VolcanoQueue) error {
	byName := map[string]int{}
	for i := range qs {
		byName[qs[i].Name] = i
	}
	for i := range qs {
		chain := []string{qs[i].Name}
		seen := map[int]bool{i: true}
		for j := i; ; {
			par := qs[j].Spec.Parent
			k, ok := byName[par]
			if par == "" || par == "root" || !ok {
				break
			}
			chain = append(chain, par)
			if seen[k] {
				if k == i {
					return qs[i].Spec.parentAt("Queue %s is in a cycle of parents (%s); a Queue's parents lead up to root", Quote(qs[i].Name), strings.Join(chain, " -> "))
				}
				break // a cycle further up, reported from its own queue
			}
			seen[k] = true
			j = k
		}
	}
	return nil
}

func (p *Policy) volcanoQueue(d policyDoc) error {
	var q VolcanoQueue
	if err := d.strict(&q); err != nil {
		return err
	}
	q.Spec.where = d.where(q.Name)
	q.Spec.parentAt = func(format string, args ...any) error { return d.fieldErr("spec.parent", format, args...) }
	s := &q.Spec
	// Volcano's admission webhook refuses a weight below 1; left out, it
	// defaults to 1.
	if d.has("spec.weight") && s.Weight < 1 {
		return d.fieldErr("spec.weight", "is %d; a Volcano Queue's weight is a positive integer (leave it out for the default, 1)", s.Weight)
	}
	for _, l := range []struct {
		path string
		list corev1.ResourceList
	}{{"spec.capability", s.Capability}, {"spec.deserved", s.Deserved}, {"spec.guarantee.resource", s.Guarantee.Resource}} {
		for _, r := range volcanoResources {
			if v, ok := l.list[corev1.ResourceName(r)]; ok {
				if _, err := quotaAmount(r, v); err != nil {
					return d.quantityErr(fmt.Sprintf("%s[%s]", l.path, strconv.Quote(r)), r, v, err)
				}
			}
		}
	}
	if w := q.Annotations["volcano.sh/hierarchy-weights"]; w != "" {
		for _, x := range strings.Split(w, "/") {
			if v, err := strconv.ParseInt(strings.TrimSpace(x), 10, 32); err != nil || v < 1 {
				return d.fieldErr(`metadata.annotations["volcano.sh/hierarchy-weights"]`, "%s: each weight is a whole number from 1 to %d, got %s", Quote(w), math.MaxInt32, Quote(x))
			}
		}
	}
	if q.Annotations["volcano.sh/dequeue-strategy"] != "" {
		p.notModelled(d, q.Name, "annotation volcano.sh/dequeue-strategy")
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

// vqNode is a node of the Volcano queue tree: a Queue, or an inner level
// of the hierarchy annotations.
type vqNode struct {
	name     string
	parent   int // -1: under the root
	weight   int64
	q        *VolcanoQueue // nil for an annotation level
	children []int
	deserved [3]int64
}

var volcanoResources = [3]string{"cpu", "memory", "nvidia.com/gpu"}

// volcanoSpec turns Volcano Queues into ClusterQueues of a cohort tree
// over the whole cluster, as Volcano's proportion and capacity plugins
// share it: a queue's deserved resources (its weight's share of its
// parent's, the cluster's at the top, or spec.deserved) are its nominal
// quota; it may use more while others leave theirs idle (borrowing), up
// to its capability; its guarantee is never lent. Queues with children
// (spec.parent) and the inner levels of the volcano.sh/hierarchy
// annotations (weights from volcano.sh/hierarchy-weights) are Cohorts
// whose capability caps their subtree; jobs go to the leaves. Queues
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
	var notes []string
	var nodes []*vqNode
	byName := map[string]int{}
	add := func(n *vqNode) int {
		nodes = append(nodes, n)
		byName[n.name] = len(nodes) - 1
		return len(nodes) - 1
	}
	for i := range qs {
		q := &qs[i]
		add(&vqNode{name: q.Name, parent: -1, weight: int64(max(q.Spec.Weight, 1)), q: q})
	}
	// Parents: spec.parent, else the hierarchy annotation's path.
	for i := range qs {
		q := &qs[i]
		n := nodes[byName[q.Name]]
		if par := q.Spec.Parent; par != "" && par != "root" {
			if pi, ok := byName[par]; ok && nodes[pi].q != nil {
				n.parent = pi
			} else {
				notes = append(notes, fmt.Sprintf("%s: spec.parent %s is not a Queue of the policy; the queue is put at the top", q.Spec.where, par))
			}
			continue
		}
		path := strings.Split(q.Annotations["volcano.sh/hierarchy"], "/")
		if len(path) < 2 || path[0] != "root" {
			continue
		}
		var ws []string
		if w := q.Annotations["volcano.sh/hierarchy-weights"]; w != "" {
			ws = strings.Split(w, "/")
		}
		weightAt := func(k int) int64 {
			if k < len(ws) {
				if v, err := strconv.ParseInt(strings.TrimSpace(ws[k]), 10, 64); err == nil && v > 0 {
					return v
				}
			}
			return 1
		}
		parent := -1
		for k := 1; k < len(path)-1; k++ {
			name := strings.Join(path[:k+1], "/")
			pi, ok := byName[name]
			if !ok {
				pi = add(&vqNode{name: name, parent: parent, weight: weightAt(k)})
			}
			parent = pi
		}
		n.parent = parent
		n.weight = weightAt(len(path) - 1)
	}
	for i, n := range nodes {
		if n.parent >= 0 {
			nodes[n.parent].children = append(nodes[n.parent].children, i)
		}
	}
	// A parent cycle (a is b's parent, b is a's) would loop below; such
	// queues are put at the top.
	for i, n := range nodes {
		seen := map[int]bool{i: true}
		for p := n.parent; p >= 0; p = nodes[p].parent {
			if seen[p] {
				notes = append(notes, fmt.Sprintf("Queue %s is in a cycle of parents; it is put at the top", n.name))
				nodes[p].children = slices.DeleteFunc(nodes[p].children, func(c int) bool { return c == i })
				n.parent = -1
				break
			}
			seen[p] = true
		}
	}
	// Deserved, top down: a share of the parent's by weight among
	// siblings, unless spec.deserved says.
	var share func(parent int, of [3]int64)
	share = func(parent int, of [3]int64) {
		var sib []int
		for i, n := range nodes {
			if n.parent == parent {
				sib = append(sib, i)
			}
		}
		var weights int64
		for _, i := range sib {
			weights += nodes[i].weight
		}
		for _, i := range sib {
			n := nodes[i]
			for r, name := range volcanoResources {
				n.deserved[r] = mulDivInt64(of[r], n.weight, weights)
				if n.q != nil {
					if v, ok := n.q.Spec.Deserved[corev1.ResourceName(name)]; ok {
						n.deserved[r] = quantity(name, v)
					}
				}
			}
			share(i, n.deserved)
		}
	}
	share(-1, total)
	quotaOf := func(n *vqNode) (admission.FlavorQuotas, []string) {
		fq := admission.FlavorQuotas{Flavor: "volcano-cluster"}
		var words []string
		for r, name := range volcanoResources {
			qt := admission.Quota{Nominal: n.deserved[r], BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}
			if n.q != nil {
				if v, ok := n.q.Spec.Capability[corev1.ResourceName(name)]; ok {
					c := quantity(name, v)
					if c < qt.Nominal {
						qt.Nominal = c
					}
					qt.BorrowingLimit = c - qt.Nominal
				}
				if v, ok := n.q.Spec.Guarantee.Resource[corev1.ResourceName(name)]; ok {
					qt.LendingLimit = max(0, qt.Nominal-min(quantity(name, v), qt.Nominal))
				}
			}
			fq.Resources = append(fq.Resources, qt)
			words = append(words, fmt.Sprintf("%s %s", name, admission.Amount(name, qt.Nominal)))
		}
		return fq, words
	}
	spec := admission.Spec{Flavors: []admission.Flavor{{Name: "volcano-cluster"}}}
	cohortOf := func(n *vqNode) string {
		if n.parent < 0 {
			return "volcano"
		}
		return nodes[n.parent].name
	}
	spec.Cohorts = append(spec.Cohorts, admission.Cohort{Name: "volcano"})
	for _, n := range nodes {
		fq, words := quotaOf(n)
		where := "hierarchy level " + n.name
		if n.q != nil {
			where = n.q.Spec.where
			names := make([]string, 0, len(n.q.Spec.Capability))
			for r := range n.q.Spec.Capability {
				names = append(names, string(r))
			}
			slices.Sort(names)
			for _, r := range names {
				if !slices.Contains(volcanoResources[:], r) {
					notes = append(notes, fmt.Sprintf("%s: capability of %s is not modelled (gpuplan counts cpu, memory and nvidia.com/gpu)", where, r))
				}
			}
		}
		if len(n.children) > 0 {
			// An inner node holds no quota of its own: its children's
			// deserved make its subtree; its capability caps what the
			// subtree uses beyond them, its guarantee what it lends.
			for r := range fq.Resources {
				qt := &fq.Resources[r]
				var kids int64
				for _, c := range n.children {
					kids += nodes[c].deserved[r]
				}
				if qt.BorrowingLimit != admission.NoLimit {
					qt.BorrowingLimit = max(0, qt.Nominal+qt.BorrowingLimit-kids)
				}
				if qt.LendingLimit != admission.NoLimit {
					qt.LendingLimit = max(0, kids-(qt.Nominal-qt.LendingLimit))
				}
				qt.Nominal = 0
			}
			spec.Cohorts = append(spec.Cohorts, admission.Cohort{Name: n.name, Parent: cohortOf(n), Groups: []admission.ResourceGroup{{Covered: volcanoResources[:], Flavors: []admission.FlavorQuotas{fq}}}})
			notes = append(notes, fmt.Sprintf("%s: a parent queue, deserved %s for its children (weight %d)", where, strings.Join(words, ", "), n.weight))
			continue
		}
		cq := admission.ClusterQueue{Name: n.name, Cohort: cohortOf(n), NotReclaimable: n.q.Spec.Reclaimable != nil && !*n.q.Spec.Reclaimable}
		cq.Groups = []admission.ResourceGroup{{Covered: volcanoResources[:], Flavors: []admission.FlavorQuotas{fq}}}
		spec.ClusterQueues = append(spec.ClusterQueues, cq)
		spec.LocalQueues = append(spec.LocalQueues, admission.LocalQueue{Name: n.name, ClusterQueue: n.name})
		notes = append(notes, fmt.Sprintf("%s: deserved %s (weight %d)", where, strings.Join(words, ", "), n.weight))
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
	if err := strict.UnmarshalStrict(data, &f); err != nil {
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
