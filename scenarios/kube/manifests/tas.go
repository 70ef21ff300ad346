package manifests

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Kueue topology-aware scheduling (TAS) written out: when a workload class
// asks for topology (classes[].topology), the run placed its jobs over
// the pools' levels (sim.TASLevels: block, rack, the NVLink domain where
// one spans nodes, host). The Kueue objects that do the same are one
// Topology with those levels, every ResourceFlavor naming it
// (spec.topologyName), and the class's pod template annotated
// kueue.x-k8s.io/podset-required-topology or -preferred-topology with its
// level. Read back (scenarios' policy reader), the Topology gives the run
// the same levels, so the same placements.

// AnnotationPodSetGroup is Kueue's PodSet group (v0.17: a unit of flavor
// assignment and topology domain fitting): a Kubeflow job's replica types
// asking for topology are fitted in one domain together, as the
// simulation's one gang is.
const AnnotationPodSetGroup = "kueue.x-k8s.io/podset-group-name"

// tasLevels are the Kueue Topology levels of the run, widest first: nil
// when no class whose jobs Kueue admits asks for topology (a Volcano Job
// class's request is not written: jobfile.go's volcano).
func (g *gen) tasLevels() []string {
	for _, c := range g.classes() {
		if c.Topology != nil && g.volcanoSpec(c) == nil {
			return sim.TASLevels(nil, g.m.Pools)
		}
	}
	return nil
}

// topologyName names the Topology gpuplan writes: the scenario's, as its
// ClusterQueue is.
func (g *gen) topologyName() string { return g.queueName() }

// kueueTopology is the run's Topology and the words of the kueue file's
// comment that say what each node must carry; nil when the run has none.
func (g *gen) kueueTopology() (*kueue.Topology, []string) {
	levels := g.tasLevels()
	if levels == nil {
		return nil, nil
	}
	t := &kueue.Topology{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "Topology"},
		ObjectMeta: metav1.ObjectMeta{Name: g.topologyName()},
	}
	for _, l := range levels {
		t.Spec.Levels = append(t.Spec.Levels, kueue.TopologyLevel{NodeLabel: l})
	}
	var words []string
	for _, l := range levels {
		switch l {
		case cluster.LabelTopologyBlock:
			words = append(words, l+" its block (the nodes behind one spine)")
		case cluster.LabelTopologyRack:
			words = append(words, l+" its rack")
		case cluster.LabelGPUClique:
			words = append(words, l+" its NVLink domain (NVIDIA's GPU feature discovery sets it on GB200/GB300 nodes)")
		case cluster.LabelHostname:
			words = append(words, l+" (the kubelet sets it)")
		default:
			words = append(words, l)
		}
	}
	return t, []string{
		fmt.Sprintf("Topology-aware scheduling: Topology %s has the levels %s, as the run placed the jobs that ask for topology; every ResourceFlavor names it (spec.topologyName).", t.Name, strings.Join(levels, ", ")),
		"Each node must carry the levels' labels: " + strings.Join(words, "; ") + ". A pool's racks and blocks are each node's own labels, which one NodePool's template cannot give: label the nodes as they are racked (values unique across pools), as the run placed them by the pools' topology blocks.",
	}
}

// tasAnnotations puts class c's topology request on its pod template
// (podAnn): Kueue's podset-required-topology or podset-preferred-topology
// annotation with the level's node label.
func tasAnnotations(c scenarios.ClassSpec, podAnn map[string]string) {
	t := c.Topology
	switch {
	case t == nil:
	case t.Required != "":
		podAnn[gpufields.KueueRequiredTopology] = t.Required
	case t.Preferred != "":
		podAnn[gpufields.KueuePreferredTopology] = t.Preferred
	}
}

// withTopology sets the flavors' topologyName (a TAS flavor needs node
// labels, which every flavor gpuplan writes has: the pool's).
func withTopology(flavors []any, name string) {
	for _, o := range flavors {
		if rf, ok := o.(*kueue.ResourceFlavor); ok {
			rf.Spec.TopologyName = ptr(kueue.TopologyReference(name))
		}
	}
}

// policyTopology is the policy's Topology, as read, when its
// ResourceFlavors name one (the run places jobs over one topology, so all
// name the same; nil when none does).
func (g *gen) policyTopology() (*kueue.Topology, error) {
	var name string
	for _, n := range g.pol.TASFlavors() {
		name = n
	}
	if name == "" {
		return nil, nil
	}
	levels, err := g.pol.TASLevels()
	if err != nil {
		return nil, err
	}
	t := &kueue.Topology{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "Topology"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	for _, l := range levels {
		t.Spec.Levels = append(t.Spec.Levels, kueue.TopologyLevel{NodeLabel: l})
	}
	return t, nil
}

// classTopologyWords is a class's topology request in words.
func classTopologyWords(c scenarios.ClassSpec) string {
	if t := c.Topology; t != nil && t.Required != "" {
		return "required " + t.Required
	} else if t != nil {
		return "preferred " + t.Preferred
	}
	return "none"
}
