package admission

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// zoned is a queue "q" with two flavors, a (zone=a) and b (zone=b), in
// that order, each with 2 GPUs of quota, and edit applied to the spec.
func zoned(t *testing.T, edit func(*Spec)) *Controller {
	t.Helper()
	s := Spec{
		Flavors: []Flavor{
			{Name: "a", NodeLabels: map[string]string{"zone": "a"}},
			{Name: "b", NodeLabels: map[string]string{"zone": "b"}},
		},
		ClusterQueues: []ClusterQueue{{Name: "q", Groups: []ResourceGroup{{Covered: []string{gpu}, Flavors: []FlavorQuotas{
			{Flavor: "a", Resources: []Quota{q(2)}}, {Flavor: "b", Resources: []Quota{q(2)}},
		}}}}},
		LocalQueues: []LocalQueue{{Name: "q", ClusterQueue: "q"}},
	}
	if edit != nil {
		edit(&s)
	}
	c, err := New(s)
	require.NoError(t, err)
	return c
}

// assignedFlavor submits one 1-GPU workload with constraints cons to a fresh
// controller, runs a cycle and returns the flavor it was admitted to (-1:
// none) and its reason.
func assignedFlavor(t *testing.T, edit func(*Spec), cons *cluster.Constraints) (int, string) {
	t.Helper()
	c := zoned(t, edit)
	require.NoError(t, c.Submit(Workload{ID: 1, Queue: "q", Requests: []Request{{gpu, 1}}, Constraints: cons}))
	for _, d := range settle(c) {
		if !d.Waiting && !d.Preempted {
			return d.Flavors[0], ""
		}
	}
	return -1, c.Reason(1)
}

func sel(kv ...string) *cluster.Constraints {
	c := &cluster.Constraints{NodeSelector: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		c.NodeSelector[kv[i]] = kv[i+1]
	}
	return c
}

func aff(terms ...cluster.NodeSelectorTerm) *cluster.Constraints {
	return &cluster.Constraints{Affinity: terms}
}

// Kueue's flavor assigner (checkFlavorForPodSets) takes a flavor as a
// candidate only if the pods' nodeSelector matches its nodeLabels on the
// keys the group's flavors label: a workload with no constraints gets
// the first flavor with room, a; one selecting zone=b gets b, though a
// has room; one selecting a zone no flavor is labelled with gets none.
func TestFlavorNodeSelector(t *testing.T) {
	f, _ := assignedFlavor(t, nil, nil)
	require.Equal(t, 0, f)
	f, _ = assignedFlavor(t, nil, sel("zone", "b"))
	require.Equal(t, 1, f)
	f, why := assignedFlavor(t, nil, sel("zone", "c"))
	require.Equal(t, -1, f)
	require.Equal(t, "ClusterQueue q: couldn't assign flavors: flavor a doesn't match node affinity; flavor b doesn't match node affinity", why)
	// A flavor that does not set a key others in its group set does not
	// match a selector on that key: b without its label.
	f, _ = assignedFlavor(t, func(s *Spec) { s.Flavors[1].NodeLabels = nil }, sel("zone", "b"))
	require.Equal(t, -1, f)
}

// Only the label keys some flavor of the resource group sets are looked
// at (Kueue's flavorSelector keeps only rg.LabelKeys): a selector on
// gpu-type, which neither flavor labels, is no constraint, and the
// workload gets a; with zone=b besides, b. A flavor of another queue
// labelling gpu-type does not make the key count in q's group.
func TestFlavorSelectorOnKeyNoFlavorUses(t *testing.T) {
	f, _ := assignedFlavor(t, nil, sel("gpu-type", "h100"))
	require.Equal(t, 0, f)
	f, _ = assignedFlavor(t, nil, sel("gpu-type", "h100", "zone", "b"))
	require.Equal(t, 1, f)
	other := func(s *Spec) {
		s.Flavors = append(s.Flavors, Flavor{Name: "h", NodeLabels: map[string]string{"gpu-type": "a100"}})
		s.ClusterQueues = append(s.ClusterQueues, ClusterQueue{Name: "o", Groups: []ResourceGroup{{Covered: []string{gpu},
			Flavors: []FlavorQuotas{{Flavor: "h", Resources: []Quota{q(1)}}}}}})
	}
	f, _ = assignedFlavor(t, other, sel("gpu-type", "h100"))
	require.Equal(t, 0, f)
	// In q's own group, the key counts: a and b lack it, h says a100.
	f, _ = assignedFlavor(t, func(s *Spec) {
		other(s)
		g := &s.ClusterQueues[0].Groups[0]
		g.Flavors = append(g.Flavors, FlavorQuotas{Flavor: "h", Resources: []Quota{q(2)}})
	}, sel("gpu-type", "h100"))
	require.Equal(t, -1, f)
}

// Required node affinity: terms are ORed, requirements ANDed, each
// evaluated on the flavor's labels: zone In [b, c] gives b; zone NotIn
// [a] gives b; zone NotIn [a, b] none. A requirement on a key no flavor
// labels is dropped, and a term left empty drops the whole affinity (as
// Kueue's flavorSelector does): [gpu-type In h100] OR [zone In c] matches
// every flavor, so a; [gpu-type In h100, zone In b] is zone In b, so b.
// Exists and DoesNotExist on zone: a and none.
func TestFlavorRequiredAffinity(t *testing.T) {
	zone := func(op cluster.SelectorOp, v ...string) cluster.Requirement {
		return cluster.Requirement{Key: "zone", Op: op, Values: v}
	}
	gpuType := cluster.Requirement{Key: "gpu-type", Op: cluster.OpIn, Values: []string{"h100"}}
	for _, c := range []struct {
		name string
		cons *cluster.Constraints
		want int
	}{
		{"In", aff(cluster.NodeSelectorTerm{zone(cluster.OpIn, "b", "c")}), 1},
		{"NotIn", aff(cluster.NodeSelectorTerm{zone(cluster.OpNotIn, "a")}), 1},
		{"NotIn both", aff(cluster.NodeSelectorTerm{zone(cluster.OpNotIn, "a", "b")}), -1},
		{"terms ORed", aff(cluster.NodeSelectorTerm{zone(cluster.OpIn, "c")}, cluster.NodeSelectorTerm{zone(cluster.OpIn, "b")}), 1},
		{"emptied term", aff(cluster.NodeSelectorTerm{gpuType}, cluster.NodeSelectorTerm{zone(cluster.OpIn, "c")}), 0},
		{"requirement dropped", aff(cluster.NodeSelectorTerm{gpuType, zone(cluster.OpIn, "b")}), 1},
		{"Exists", aff(cluster.NodeSelectorTerm{zone(cluster.OpExists)}), 0},
		{"DoesNotExist", aff(cluster.NodeSelectorTerm{zone(cluster.OpDoesNotExist)}), -1},
		{"selector and affinity", &cluster.Constraints{NodeSelector: map[string]string{"zone": "a"},
			Affinity: []cluster.NodeSelectorTerm{{zone(cluster.OpIn, "b")}}}, -1},
	} {
		f, _ := assignedFlavor(t, nil, c.cons)
		require.Equal(t, c.want, f, c.name)
	}
}

// A flavor's NoSchedule or NoExecute taint keeps pods that do not
// tolerate it off the flavor; a toleration in the pods or in the flavor's
// own tolerations lets them on (Kueue checks the pod's tolerations and
// then the flavor's); PreferNoSchedule is not looked at.
func TestFlavorTaintsAndTolerations(t *testing.T) {
	taint := func(e cluster.TaintEffect) func(*Spec) {
		return func(s *Spec) {
			s.Flavors[0].NodeTaints = []cluster.Taint{{Key: "reserved", Value: "x", Effect: e}}
		}
	}
	f, _ := assignedFlavor(t, taint(cluster.NoSchedule), nil)
	require.Equal(t, 1, f)
	f, _ = assignedFlavor(t, taint(cluster.NoExecute), nil)
	require.Equal(t, 1, f)
	f, _ = assignedFlavor(t, taint(cluster.PreferNoSchedule), nil)
	require.Equal(t, 0, f)
	tol := &cluster.Constraints{Tolerations: []cluster.Toleration{{Key: "reserved", Operator: "Equal", Value: "x", Effect: cluster.NoSchedule}}}
	f, _ = assignedFlavor(t, taint(cluster.NoSchedule), tol)
	require.Equal(t, 0, f)
	// The wrong value does not tolerate it.
	f, _ = assignedFlavor(t, taint(cluster.NoSchedule), &cluster.Constraints{Tolerations: []cluster.Toleration{{Key: "reserved", Operator: "Equal", Value: "y"}}})
	require.Equal(t, 1, f)
	// The flavor's own toleration.
	f, _ = assignedFlavor(t, func(s *Spec) {
		taint(cluster.NoSchedule)(s)
		s.Flavors[0].Tolerations = []Toleration{{Key: "reserved", Operator: "Exists"}}
	}, nil)
	require.Equal(t, 0, f)
	// Untolerated and mismatched: the taint is checked first and named.
	f, why := assignedFlavor(t, taint(cluster.NoSchedule), sel("zone", "a"))
	require.Equal(t, -1, f)
	require.Equal(t, "ClusterQueue q: couldn't assign flavors: untolerated taint {reserved=x:NoSchedule} in flavor a; flavor b doesn't match node affinity", why)
}

// Workloads of one shape that differ in the flavors they may take do not
// wait behind each other: with a's 2 GPUs used by workloads selecting
// zone=a, a third selecting zone=a waits, and a fourth of the same
// shape selecting zone=b, submitted after it, is admitted to b.
func TestFlavorSelectorsDoNotShareAQueuePlace(t *testing.T) {
	c := zoned(t, nil)
	a, b := sel("zone", "a"), sel("zone", "b")
	for id, cons := range []*cluster.Constraints{a, a, a, b} {
		require.NoError(t, c.Submit(Workload{ID: int32(id + 1), Queue: "q", Created: int64(id), Requests: []Request{{gpu, 1}}, Constraints: cons}))
	}
	admitted, _ := cycle(c)
	require.Equal(t, []int32{1, 2, 4}, admitted)
	require.False(t, c.Admitted(3))
}

// Preemption looks only at flavors the preemptor may take: with both
// flavors full of low-priority workloads without constraints (1, 2 on a;
// 3, 4 on b), a high-priority one selecting zone=b evicts the newer of
// b's (4), never a's.
func TestFlavorSelectorPreemptsOnlyWhereItMayGo(t *testing.T) {
	c := zoned(t, func(s *Spec) {
		s.ClusterQueues[0].Preempt.WithinClusterQueue = LowerPriority
	})
	for id := int32(1); id <= 4; id++ {
		submit(t, c, id, "q", 1, 0)
	}
	admitted, _ := cycle(c)
	require.Equal(t, []int32{1, 2, 3, 4}, admitted)
	require.NoError(t, c.Submit(Workload{ID: 5, Queue: "q", Priority: 10, Created: 5, Requests: []Request{{gpu, 1}}, Constraints: sel("zone", "b")}))
	var flavors []int
	admitted, preempted := []int32(nil), []int32(nil)
	for _, d := range settle(c) {
		switch {
		case d.Preempted:
			preempted = append(preempted, d.ID)
		case !d.Waiting:
			admitted = append(admitted, d.ID)
			flavors = append(flavors, d.Flavors[0])
		}
	}
	require.Equal(t, []int32{4}, preempted)
	require.Equal(t, []int32{5}, admitted)
	require.Equal(t, []int{1}, flavors)
}
