// Package podtopologyspread is kube-scheduler's PodTopologySpread plugin:
// a pod's topologySpreadConstraints keep the pods their label selector
// matches spread over the domains of a node label (zones, hosts).
//
// As kube-scheduler does it (pkg/scheduler/framework/plugins/podtopologyspread):
//
//   - The pods counted are those the constraint's selector matches, on the
//     nodes that count: present nodes with every topology key of the
//     pod's constraints, which the pod's node selector and required node
//     affinity admit (nodeAffinityPolicy Honor, the default) and, with
//     nodeTaintsPolicy Honor, whose taints it tolerates (default Ignore).
//     Every such node's domain is eligible, with or without pods.
//   - Filter (whenUnsatisfiable DoNotSchedule): a node without the
//     topology key is rejected for good; otherwise skew = the matching
//     pods in the node's domain + 1 if the pod matches its own selector -
//     the least any eligible domain has (0 when there are fewer eligible
//     domains than minDomains) must be at most maxSkew.
//   - Score (ScheduleAnyway): each feasible node with every key scores
//     round(sum over the constraints of count x ln(domains + 2) +
//     maxSkew - 1), domains counted among the feasible nodes (for the hostname
//     key, the feasible nodes); scores are then normalised so the fewest
//     matching pods gets 100: 100 x (max + min - s) / max (100 for all
//     when max is 0). Nodes without a key score 0.
//
// Not modelled: the cluster's default constraints for pods without their
// own, namespaces (every pod is in one), matchLabelKeys.
//
// Placing one pod changes the verdict on every node of its domain, so for
// a job with constraints the plugin asks the framework to filter and score
// every node again before each pod (scheduler.PlacementAwarePlugin).
package podtopologyspread

import (
	"math"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/nodeaffinity"
	"gpuplan.dev/gpuplan/sim/scheduler/plugins/tainttoleration"
)

// Name is the plugin's registered name.
const Name = "PodTopologySpread"

// DefaultWeight is the plugin's score weight in kube-scheduler's default profile.
const DefaultWeight = 2

// kube-scheduler's reasons.
const (
	ReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ReasonNodeLabelNotMatch   = ReasonConstraintsNotMatch + " (missing required label)"
)

// PodTopologySpread is a Filter and Score plugin.
type PodTopologySpread struct {
	notMatch, noLabel *scheduler.Status
	// domains[key] numbers each node's domain for the topology key (-1:
	// the node lacks the label); labels are fixed for the run.
	domains map[string]*domainTable
	// filter state of the last job and cluster state it was computed for
	// (Filter, called node by node in a diagnosis, reuses it).
	fs      []constraintState
	fsJob   *scheduler.JobInfo
	fsNow   cluster.Time
	fsValid bool
	ss      []constraintState
	raw     []float64
}

var (
	_ scheduler.FilterPlugin         = &PodTopologySpread{}
	_ scheduler.ScorePlugin          = &PodTopologySpread{}
	_ scheduler.PlacementAwarePlugin = &PodTopologySpread{}
)

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &PodTopologySpread{
		notMatch: scheduler.NewStatus(scheduler.Unschedulable, Name, ReasonConstraintsNotMatch),
		noLabel:  scheduler.NewStatus(scheduler.UnschedulableAndUnresolvable, Name, ReasonNodeLabelNotMatch),
		domains:  map[string]*domainTable{},
	}, nil
}

func (*PodTopologySpread) Name() string { return Name }

func spread(job *scheduler.JobInfo) []cluster.SpreadConstraint {
	if job == nil || job.Spec.Constraints == nil {
		return nil
	}
	return job.Spec.Constraints.Spread
}

// PlacementAware: a job with spread constraints.
func (*PodTopologySpread) PlacementAware(job *scheduler.JobInfo) bool { return len(spread(job)) > 0 }

type domainTable struct {
	of []int32 // node -> domain, -1 without the label
	n  int     // domains
}

func (p *PodTopologySpread) table(c *cluster.Cluster, key string) *domainTable {
	if t, ok := p.domains[key]; ok && len(t.of) == len(c.Nodes) {
		return t
	}
	t := &domainTable{of: make([]int32, len(c.Nodes))}
	if key == cluster.LabelHostname {
		for n := range t.of {
			t.of[n] = int32(n)
		}
		t.n = len(t.of)
	} else {
		ids := map[string]int32{}
		for n := range t.of {
			v, ok := c.Topology().NodeLabel(int32(n), key)
			if !ok {
				t.of[n] = -1
				continue
			}
			id, seen := ids[v]
			if !seen {
				id = int32(len(ids))
				ids[v] = id
			}
			t.of[n] = id
		}
		t.n = len(ids)
	}
	p.domains[key] = t
	return t
}

// constraintState is one constraint's counts for the cycle.
type constraintState struct {
	c        *cluster.SpreadConstraint
	dom      *domainTable
	counts   []int32 // matching pods per domain, over the nodes that count
	eligible []bool  // the domain has a node that counts
	min      int32   // least count over eligible domains (0 under minDomains)
	self     int32   // 1 when the pod matches its own selector
}

// hasKeys reports whether node n has every topology key of the constraints.
func hasKeys(states []constraintState, n int32) bool {
	for i := range states {
		if states[i].dom.of[n] < 0 {
			return false
		}
	}
	return true
}

// compute fills states for the job's constraints that pass keep
// (DoNotSchedule ones for the filter, ScheduleAnyway ones for the score):
// the matching pods per domain over the nodes that count.
func (p *PodTopologySpread) compute(st *scheduler.CycleState, job *scheduler.JobInfo, doNotSchedule bool, states []constraintState) []constraintState {
	c := st.Cluster
	states = states[:0]
	cons := job.Spec.Constraints
	for i := range cons.Spread {
		sc := &cons.Spread[i]
		if sc.DoNotSchedule != doNotSchedule {
			continue
		}
		dom := p.table(c, sc.TopologyKey)
		var cs constraintState
		if len(states) < cap(states) {
			cs = states[:len(states)+1][len(states)]
		}
		cs.c, cs.dom = sc, dom
		cs.counts = resize(cs.counts, dom.n)
		cs.eligible = resizeBool(cs.eligible, dom.n)
		cs.self = 0
		if sc.Matches(job.Spec.Pod.Labels) {
			cs.self = 1
		}
		states = append(states, cs)
	}
	if len(states) == 0 {
		return states
	}
	sets := c.Topology().PodLabelSets()
	for pi := range c.Pools {
		pl := &c.Pools[pi]
		if pl.Present == 0 {
			continue
		}
		affinityOK := nodeaffinity.Matches(cons, pl.Labels)
		_, tainted := tainttoleration.Untolerated(pl.Spec.Taints, cons)
		for n := pl.First; n < pl.First+pl.Count; n++ {
			if s := c.Nodes[n].State; s != cluster.NodeReady && s != cluster.NodeCordoned {
				continue
			}
			if !hasKeys(states, n) {
				continue
			}
			for i := range states {
				cs := &states[i]
				if (!cs.c.IgnoreNodeAffinity && !affinityOK) || (cs.c.HonorTaints && tainted) {
					continue
				}
				d := cs.dom.of[n]
				cs.eligible[d] = true
				for k := 0; k < sets; k++ {
					if m := c.Topology().PodsWithLabels(k, n); m > 0 && cs.c.Matches(c.Topology().PodLabelSet(k)) {
						cs.counts[d] += m
					}
				}
			}
		}
	}
	for i := range states {
		cs := &states[i]
		cs.min = math.MaxInt32
		domains := int32(0)
		for d, ok := range cs.eligible {
			if ok {
				domains++
				cs.min = min(cs.min, cs.counts[d])
			}
		}
		if domains == 0 || domains < cs.c.MinDomains {
			cs.min = 0
		}
	}
	return states
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func resizeBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (p *PodTopologySpread) hasHard(job *scheduler.JobInfo) bool {
	for i := range spread(job) {
		if spread(job)[i].DoNotSchedule {
			return true
		}
	}
	return false
}

// check is the filter's verdict on node n (nil: passes).
func (p *PodTopologySpread) check(states []constraintState, n int32) *scheduler.Status {
	for i := range states {
		cs := &states[i]
		d := cs.dom.of[n]
		if d < 0 {
			return p.noLabel
		}
		if cs.counts[d]+cs.self-cs.min > cs.c.MaxSkew {
			return p.notMatch
		}
	}
	return nil
}

// FilterBatch keeps the nodes where every DoNotSchedule constraint holds.
func (p *PodTopologySpread) FilterBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32) []int32 {
	if !p.hasHard(st.Job) {
		return nodes
	}
	p.fs = p.compute(st, st.Job, true, p.fs)
	p.fsJob, p.fsNow, p.fsValid = st.Job, st.Now, false
	out := nodes[:0]
	for _, n := range nodes {
		if p.check(p.fs, n) == nil {
			out = append(out, n)
		}
	}
	return out
}

// Filter explains one node (a diagnosis: the counts are computed once for
// the job and time, then reused node by node).
func (p *PodTopologySpread) Filter(st *scheduler.CycleState, pod *cluster.PodSpec, n int32) *scheduler.Status {
	if !p.hasHard(st.Job) {
		return nil
	}
	if !p.fsValid || p.fsJob != st.Job || p.fsNow != st.Now {
		p.fs = p.compute(st, st.Job, true, p.fs)
		p.fsJob, p.fsNow, p.fsValid = st.Job, st.Now, true
	}
	return p.check(p.fs, n)
}

// ScoreBatch scores the feasible nodes for the ScheduleAnyway constraints
// (0 for every node when the job has none).
func (p *PodTopologySpread) ScoreBatch(st *scheduler.CycleState, pod *cluster.PodSpec, nodes []int32, out []int64) {
	clear(out)
	if len(spread(st.Job)) == 0 {
		return
	}
	p.ss = p.compute(st, st.Job, false, p.ss)
	if len(p.ss) == 0 {
		return
	}
	c := st.Cluster
	// Domains among the feasible nodes with every key: the weights.
	if cap(p.raw) < len(nodes) {
		p.raw = make([]float64, len(nodes))
	}
	raw := p.raw[:len(nodes)]
	for i := range p.ss {
		cs := &p.ss[i]
		var seen []bool
		size := 0
		if cs.c.TopologyKey != cluster.LabelHostname {
			seen = make([]bool, cs.dom.n)
		}
		for _, n := range nodes {
			if !hasKeys(p.ss, n) {
				continue
			}
			if seen == nil {
				size++
			} else if d := cs.dom.of[n]; !seen[d] {
				seen[d] = true
				size++
			}
		}
		w := math.Log(float64(size + 2))
		for j, n := range nodes {
			if i == 0 {
				raw[j] = 0
			}
			if !hasKeys(p.ss, n) {
				continue
			}
			var cnt int32
			if cs.c.TopologyKey == cluster.LabelHostname {
				// The pods on the node itself, whatever the policies.
				for k := 0; k < c.Topology().PodLabelSets(); k++ {
					if m := c.Topology().PodsWithLabels(k, n); m > 0 && cs.c.Matches(c.Topology().PodLabelSet(k)) {
						cnt += m
					}
				}
			} else {
				cnt = cs.counts[cs.dom.of[n]]
			}
			raw[j] += float64(cnt)*w + float64(cs.c.MaxSkew-1)
		}
	}
	lo, hi := int64(math.MaxInt64), int64(0)
	any := false
	for j, n := range nodes {
		if !hasKeys(p.ss, n) {
			continue
		}
		s := int64(math.Round(raw[j]))
		out[j] = s
		lo, hi, any = min(lo, s), max(hi, s), true
	}
	if !any {
		return
	}
	for j, n := range nodes {
		switch {
		case !hasKeys(p.ss, n):
			out[j] = 0
		case hi == 0:
			out[j] = scheduler.MaxNodeScore
		default:
			out[j] = scheduler.MaxNodeScore * (hi + lo - out[j]) / hi
		}
	}
}
