// Package interpodaffinity is the required part of kube-scheduler's
// InterPodAffinity plugin: a pod's required pod affinity and anti-affinity
// terms (requiredDuringSchedulingIgnoredDuringExecution).
//
// As kube-scheduler filters (pkg/scheduler/framework/plugins/interpodaffinity):
//
//   - Anti-affinity: a node fails when its domain of the term's
//     topologyKey holds a pod the term's selector matches (the job's own
//     pods placed before count: with a selector matching its own labels
//     and kubernetes.io/hostname, one replica per node). A node without
//     the key passes.
//   - Affinity: a node passes only when its domain holds a matching pod,
//     or when no pod anywhere matches and the pod matches its own
//     selector (the first of a group); a node without the key fails.
//
// Not modelled: the symmetry (existing pods' own anti-affinity keeping
// the new pod away), preferred terms and the score, namespaces.
package interpodaffinity

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "InterPodAffinity"

// kube-scheduler's reasons.
const (
	ReasonAffinityRulesNotMatch     = "node(s) didn't match pod affinity rules"
	ReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// InterPodAffinity is a Filter plugin.
type InterPodAffinity struct {
	affinity, anti *scheduler.Status
	domains        map[string][]int32 // topology key -> node -> domain (-1: no label)
	counts         [][]int32          // per term: matching pods per domain
	any            []bool             // per term: a matching pod anywhere
	// the job and time the counts are for, when Filter may reuse them
	// (a diagnosis, node by node).
	job   *scheduler.JobInfo
	now   cluster.Time
	valid bool
}

var (
	_ scheduler.FilterPlugin         = &InterPodAffinity{}
	_ scheduler.PlacementAwarePlugin = &InterPodAffinity{}
)

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &InterPodAffinity{
		affinity: scheduler.NewStatus(scheduler.Unschedulable, Name, ReasonAffinityRulesNotMatch),
		anti:     scheduler.NewStatus(scheduler.Unschedulable, Name, ReasonAntiAffinityRulesNotMatch),
		domains:  map[string][]int32{},
	}, nil
}

func (*InterPodAffinity) Name() string { return Name }

func terms(job *scheduler.JobInfo) []cluster.PodAffinityTerm {
	if job == nil || job.Spec.Constraints == nil {
		return nil
	}
	return job.Spec.Constraints.PodAffinity
}

// PlacementAware: a job with terms.
func (*InterPodAffinity) PlacementAware(job *scheduler.JobInfo) bool { return len(terms(job)) > 0 }

func (p *InterPodAffinity) table(c *cluster.Cluster, key string) []int32 {
	if t, ok := p.domains[key]; ok && len(t) == len(c.Nodes) {
		return t
	}
	t := make([]int32, len(c.Nodes))
	ids := map[string]int32{}
	for n := range t {
		if key == cluster.LabelHostname {
			t[n] = int32(n)
			continue
		}
		v, ok := c.Topology().NodeLabel(int32(n), key)
		if !ok {
			t[n] = -1
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(ids))
			ids[v] = id
		}
		t[n] = id
	}
	p.domains[key] = t
	return t
}

// compute counts, per term, the matching pods of each domain over the
// present nodes.
func (p *InterPodAffinity) compute(c *cluster.Cluster, ts []cluster.PodAffinityTerm) {
	for len(p.counts) < len(ts) {
		p.counts = append(p.counts, nil)
		p.any = append(p.any, false)
	}
	for i := range ts {
		t := &ts[i]
		dom := p.table(c, t.TopologyKey)
		cnt := p.counts[i][:0]
		for range c.Nodes {
			cnt = append(cnt, 0)
		}
		p.any[i] = false
		for k := 0; k < c.Topology().PodLabelSets(); k++ {
			if !t.Matches(c.Topology().PodLabelSet(k)) {
				continue
			}
			for n := range c.Nodes {
				m := c.Topology().PodsWithLabels(k, int32(n))
				if m == 0 || c.Nodes[n].State == cluster.NodeAbsent {
					continue
				}
				p.any[i] = true
				if d := dom[n]; d >= 0 {
					cnt[d] += m
				}
			}
		}
		p.counts[i] = cnt
	}
}

func (p *InterPodAffinity) check(c *cluster.Cluster, pod *cluster.PodSpec, ts []cluster.PodAffinityTerm, n int32) *scheduler.Status {
	for i := range ts {
		t := &ts[i]
		d := p.domains[t.TopologyKey][n]
		if t.Anti {
			if d >= 0 && p.counts[i][d] > 0 {
				return p.anti
			}
			continue
		}
		if d < 0 {
			return p.affinity
		}
		if p.counts[i][d] == 0 && (p.any[i] || !t.Matches(pod.Labels)) {
			return p.affinity
		}
	}
	return nil
}

// FilterBatch keeps the nodes where every term holds.
func (p *InterPodAffinity) FilterBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32) []int32 {
	ts := terms(st.Job)
	if len(ts) == 0 {
		return nodes
	}
	p.compute(st.Cluster, ts)
	p.valid = false
	out := nodes[:0]
	for _, n := range nodes {
		if p.check(st.Cluster, pod, ts, n) == nil {
			out = append(out, n)
		}
	}
	return out
}

// Filter explains one node.
func (p *InterPodAffinity) Filter(st *scheduler.CycleState, pod *cluster.PodSpec, n int32) *scheduler.Status {
	ts := terms(st.Job)
	if len(ts) == 0 {
		return nil
	}
	if !p.valid || p.job != st.Job || p.now != st.Now {
		p.compute(st.Cluster, ts)
		p.job, p.now, p.valid = st.Job, st.Now, true
	}
	return p.check(st.Cluster, pod, ts, n)
}
