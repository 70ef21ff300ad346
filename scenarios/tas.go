package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins"
)

// Kueue topology-aware scheduling in a scenario: the policy's Topology
// objects and the ResourceFlavors naming one give the levels jobs asking
// for topology are placed over (sim.Config.TASLevels); without one, the
// pools' blocks, racks, NVLink domains and hosts (sim.TASLevels). A job's
// request is checked against the levels at its annotation: a level the
// topology lacks, a slice level above the job's level, and a required
// level none of whose domains holds the job even when empty are input
// errors; a job that fits an empty domain but none now waits.

// kueueTopology is one Topology read: its levels' node labels, widest first.
type kueueTopology struct {
	levels []string
	doc    policyDoc
}

// tasFlavor is a ResourceFlavor's spec.topologyName.
type tasFlavor struct {
	name, topology string
	doc            policyDoc
}

// maxTopologyLevels is Kueue's bound on a Topology's levels (its CRD's
// maxItems).
const maxTopologyLevels = 16

// topology reads a Kueue Topology (v1beta1 or v1beta2): its levels, as
// Kueue's CRD checks them (1 to 16, each a label key, none twice, the
// hostname only as the lowest).
func (p *Policy) topology(d policyDoc) error {
	var t kueue.Topology
	if d.tm.APIVersion == kueueV1beta1 {
		var old kueuev1beta1.Topology
		if err := d.strict(&old); err != nil {
			return err
		}
		if err := d.decode(&t); err != nil {
			return err
		}
	} else if err := d.strict(&t); err != nil {
		return err
	}
	if err := p.define(d, t.Name); err != nil {
		return err
	}
	n := len(t.Spec.Levels)
	if n == 0 || n > maxTopologyLevels {
		return d.fieldErr("spec.levels", "a Topology has 1 to %d levels, not %d", maxTopologyLevels, n)
	}
	var levels []string
	for i, l := range t.Spec.Levels {
		at := fmt.Sprintf("spec.levels[%d].nodeLabel", i)
		if errs := validation.IsQualifiedName(l.NodeLabel); len(errs) > 0 {
			return d.fieldErr(at, "%s is not a node label key: %s", Quote(l.NodeLabel), errs[0])
		}
		if slices.Contains(levels, l.NodeLabel) {
			return d.fieldErr(at, "%s is listed twice (Kueue's CRD: the levels' node labels are unique)", Quote(l.NodeLabel))
		}
		if l.NodeLabel == cluster.LabelHostname && i != n-1 {
			return d.fieldErr(at, "%s may only be the lowest level (Kueue's CRD)", Quote(l.NodeLabel))
		}
		levels = append(levels, l.NodeLabel)
	}
	if p.topologies == nil {
		p.topologies = map[string]kueueTopology{}
	}
	p.topologies[t.Name] = kueueTopology{levels: levels, doc: d}
	return nil
}

// TASLevels are the levels of the Topology the policy's ResourceFlavors
// name (nil: none names one). Every flavor must name a Topology the
// policy defines, and all the same one: gpuplan places jobs over one
// topology a run.
func (p *Policy) TASLevels() ([]string, error) {
	var name string
	for _, f := range p.tasFlavors {
		t, ok := p.topologies[f.topology]
		if !ok {
			return nil, f.doc.fieldErr("spec.topologyName", "Topology %s is not in the policy's manifests (Kueue keeps the flavor inactive)", Quote(f.topology))
		}
		if name != "" && f.topology != name {
			return nil, f.doc.fieldErr("spec.topologyName", "Topology %s differs from %s, named by another ResourceFlavor: gpuplan places jobs over one topology a run", Quote(f.topology), Quote(name))
		}
		name = f.topology
		if len(t.levels) == 0 {
			return nil, f.doc.fieldErr("spec.topologyName", "Topology %s has no levels", Quote(f.topology))
		}
	}
	if name == "" {
		return nil, nil
	}
	return p.topologies[name].levels, nil
}

// TASFlavors maps each ResourceFlavor whose spec.topologyName names a
// Topology to that name (nil: none does), for writing the policy back.
func (p *Policy) TASFlavors() map[string]string {
	if len(p.tasFlavors) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, f := range p.tasFlavors {
		out[f.name] = f.topology
	}
	return out
}

// tasNotes are the assumptions of a run whose jobs ask for topology.
func tasNotes(levels []string, fromPolicy bool) []string {
	src := "the pools' topology (no Kueue Topology in the policy)"
	if fromPolicy {
		src = "the policy's Kueue Topology"
	}
	return []string{fmt.Sprintf("Kueue topology-aware scheduling: jobs asking for topology are placed over the levels %s of %s as Kueue assigns them "+
		"(BestFit: the tightest domain at the level that holds the job; preferred goes up a level while none does; required waits; unconstrained fills the smallest gaps first; "+
		"blocks, racks and NVLink domains are %s, %s and %s of each pool's topology); the assignment is made when the scheduler places the job, "+
		"so an admitted job waiting for a domain holds its quota (Kueue checks the topology at admission); jobs without the annotations are placed as any job (Kueue would give them an implied unconstrained request on a topology flavor)",
		strings.Join(levels, ", "), src, cluster.LabelTopologyBlock, cluster.LabelTopologyRack, cluster.LabelGPUClique)}
}

// checkTAS sets the run's topology levels (the Kueue Topology's, the
// Volcano HyperNodes', or the pools') and checks every topology request of
// the manifests' jobs against them. Without HyperNodes, Volcano Jobs'
// spec.networkTopology is noted and dropped (Volcano's cluster-wide root
// holds every node).
func (s builder) checkTAS(b *Built, src *workloads.Source, levels []string, hns []cluster.HyperNode) error {
	if len(hns) == 0 && src.DropVolcanoTopology() {
		b.Assumptions = append(b.Assumptions, "Volcano network topology: the policy gives no HyperNode (topology.volcano.sh/v1alpha1), so Volcano Jobs' spec.networkTopology constrains nothing: the jobs are placed as any job")
	}
	uses := src.TASUses()
	if len(uses) == 0 {
		return nil
	}
	c, err := cluster.New(b.Config.Pools)
	if err != nil {
		return err
	}
	if len(hns) > 0 {
		if err := c.SetHyperNodes(hns); err != nil {
			return fmt.Errorf("policy HyperNodes: %w", err)
		}
		b.Config.HyperNodes = hns
		levels = c.TASLevels()
		b.Assumptions = append(b.Assumptions, hyperNodeNotes(len(hns), c.HyperNodeTiers())...)
	} else {
		fromPolicy := levels != nil
		levels = sim.TASLevels(levels, b.Config.Pools)
		b.Config.TASLevels = levels
		b.Assumptions = append(b.Assumptions, tasNotes(levels, fromPolicy)...)
		if err := c.SetTASLevels(levels); err != nil {
			return err
		}
	}
	prof, err := plugins.NewProfile(plugins.Default(), nil)
	if err != nil {
		return err
	}
	fw, err := scheduler.NewFramework(prof, c)
	if err != nil {
		return err
	}
	for _, u := range uses {
		at := u.At
		r := u.Group.Constraints.TAS
		if r.Volcano != nil {
			if _, _, err := scheduler.VolcanoHighestLevel(c, r.Volcano); err != nil {
				at.Msg = err.Error()
				return &at
			}
		} else if len(hns) > 0 {
			at.Msg = "Kueue topology annotations on a run whose topology is the policy's Volcano HyperNodes: give a Kueue Topology instead, or a Volcano Job's spec.networkTopology"
			return &at
		}
		li, si := slices.Index(levels, r.Level), slices.Index(levels, r.SliceLevel)
		switch {
		case r.Level != "" && li < 0:
			at.Msg = fmt.Sprintf("topology level %s is not a level of the run's topology (%s)", Quote(r.Level), strings.Join(levels, ", "))
			return &at
		case r.SliceLevel != "" && si < 0:
			at.Msg = fmt.Sprintf("slice topology level %s is not a level of the run's topology (%s)", Quote(r.SliceLevel), strings.Join(levels, ", "))
			return &at
		case r.SliceLevel != "" && r.Level != "" && si < li:
			at.Msg = fmt.Sprintf("podset slice topology %s is above the podset topology %s (Kueue refuses the assignment)", Quote(r.SliceLevel), Quote(r.Level))
			return &at
		case r.SliceSize > u.Group.Pods:
			at.Msg = fmt.Sprintf("slice size %d must not be greater than the pod set count %d (Kueue's webhook)", r.SliceSize, u.Group.Pods)
			return &at
		case r.SliceSize > 1 && u.Group.Pods%r.SliceSize != 0:
			at.Msg = fmt.Sprintf("%d pods are not a whole number of slices of %d", u.Group.Pods, r.SliceSize)
			return &at
		}
		job := &scheduler.JobInfo{Spec: &cluster.JobSpec{Replicas: u.Group.Pods, Pod: u.Group.Pod, Constraints: u.Group.Constraints}}
		if ok, why := fw.FitsEmpty(job); !ok && strings.Contains(why, "topology-aware") {
			at.Msg = why
			return &at
		}
	}
	return nil
}
