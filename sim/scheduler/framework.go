package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// WeightedScore is a score plugin with its weight in the sum.
type WeightedScore struct {
	Plugin ScorePlugin
	Weight int64
}

// Profile is the set of plugins enabled at each extension point, in order.
type Profile struct {
	QueueSort QueueSortPlugin
	PreFilter []PreFilterPlugin
	Filter    []FilterPlugin
	Score     []WeightedScore
	Reserve   []ReservePlugin
	Permit    []PermitPlugin
	MinMember MinMemberPlugin
	// PlacementAware are the plugins that may ask for every node to be
	// filtered and scored again before each of a job's pods.
	PlacementAware []PlacementAwarePlugin
	// GPUSelect places shared pods on a GPU of the chosen node (nil: least free that fits).
	GPUSelect GPUSelectPlugin
}

// Names lists the enabled plugins per extension point (for reports).
func (p *Profile) Names() map[string][]string {
	m := map[string][]string{}
	if p.QueueSort != nil {
		m["queueSort"] = []string{p.QueueSort.Name()}
	}
	for _, x := range p.PreFilter {
		m["preFilter"] = append(m["preFilter"], x.Name())
	}
	for _, x := range p.Filter {
		m["filter"] = append(m["filter"], x.Name())
	}
	for _, x := range p.Score {
		m["score"] = append(m["score"], fmt.Sprintf("%s(weight %d)", x.Plugin.Name(), x.Weight))
	}
	for _, x := range p.Reserve {
		m["reserve"] = append(m["reserve"], x.Name())
	}
	for _, x := range p.Permit {
		m["permit"] = append(m["permit"], x.Name())
	}
	return m
}

// Framework runs the extension points of a profile for one job at a time.
type Framework struct {
	prof    *Profile
	c       *cluster.Cluster
	st      CycleState
	stmt    cluster.Statement
	reasons reasonTable
	// lastEmptied is the filter plugin that last rejected every candidate.
	lastEmptied string
	statuses    map[string]*Status
	// tieRand, when set, breaks score ties uniformly at random (as
	// kube-scheduler does) instead of by lowest node index.
	tieRand *rand.Rand
	// rank, when set, breaks ties by a fixed order of the nodes.
	rank []int32
	// byClass: filter and score one node per state class of the classed
	// pools (see cluster.AppendClassFirsts), not every node. Off with a
	// random tie break or a ListScorer, whose results depend on every node.
	byClass bool
	// partSpecs and partInfos: a job of several pod groups, each group as
	// a job of its own (parts), while the job is placed.
	partSpecs []cluster.JobSpec
	partInfos []JobInfo
}

// SetTieOrder breaks score ties by a fixed random order of the nodes drawn
// from r: the node earliest in the order wins (the FGD paper's simulator
// names nodes by a seeded permutation and so breaks ties this way).
func (f *Framework) SetTieOrder(r *rand.Rand) {
	f.tieRand = nil
	f.rank = make([]int32, len(f.c.Nodes))
	for i, p := range r.Perm(len(f.c.Nodes)) {
		f.rank[i] = int32(p)
	}
	f.c.SetTieOrder(f.rank)
	f.byClass = f.classesServe()
}

// SetRandomTieBreak makes equal top scores be broken uniformly at random
// with r (kube-scheduler's behaviour); nil restores lowest node index.
func (f *Framework) SetRandomTieBreak(r *rand.Rand) {
	f.tieRand, f.rank = r, nil
	f.c.SetTieOrder(nil)
	f.byClass = f.classesServe()
}

// classesServe reports whether one node per state class gives the same
// placements as every node: ties are broken by a fixed order of the nodes
// (the class's first node is first in it) and every score plugin scores a
// node by its own state.
func (f *Framework) classesServe() bool {
	if f.tieRand != nil {
		return false
	}
	for _, s := range f.prof.Score {
		if _, ok := s.Plugin.(ListScorer); ok {
			return false
		}
	}
	return true
}

// best is the index of the highest score; ties go to the lowest node
// index or, with a random tie break, to a uniformly random one.
func (f *Framework) best(nodes []int32, scores []int64) int {
	best := 0
	ties := 1
	for i := 1; i < len(nodes); i++ {
		switch {
		case scores[i] > scores[best]:
			best, ties = i, 1
		case scores[i] == scores[best]:
			if f.tieRand != nil {
				ties++
				if f.tieRand.IntN(ties) == 0 {
					best = i
				}
			} else if f.rank != nil {
				if f.rank[nodes[i]] < f.rank[nodes[best]] {
					best = i
				}
			} else if nodes[i] < nodes[best] {
				best = i
			}
		}
	}
	return best
}

// NewFramework binds a profile to a cluster.
func NewFramework(p *Profile, c *cluster.Cluster) (*Framework, error) {
	if p.QueueSort == nil {
		return nil, fmt.Errorf("scheduler profile has no QueueSort plugin")
	}
	f := &Framework{prof: p, c: c, reasons: newReasonTable(), statuses: map[string]*Status{}}
	c.SetTieOrder(nil)
	f.byClass = f.classesServe()
	return f, nil
}

// Profile returns the profile the framework runs.
func (f *Framework) Profile() *Profile { return f.prof }

// Reason returns the text of a reason id (-1: empty).
func (f *Framework) Reason(id int32) string { return f.reasons.text(id) }

// Reasons returns the reason table, indexed by id.
// InternReason adds a reason given outside the framework (admission's)
// to the reason table.
func (f *Framework) InternReason(s string) int32 { return f.reasons.intern(s) }

// Reasons returns the reason table.
func (f *Framework) Reasons() []string { return append([]string(nil), f.reasons.texts...) }

func (f *Framework) preFilter(now cluster.Time, job *JobInfo, diagnosing bool) *Status {
	st := &f.st
	st.reset(f.c, now, job)
	st.Diagnosing = diagnosing
	if f.prof.MinMember != nil {
		st.MinPods = f.prof.MinMember.MinMember(job)
	}
	for _, p := range f.prof.PreFilter {
		if s := p.PreFilter(st, job); !s.IsSuccess() {
			return s
		}
		if len(st.Pools) == 0 {
			return NewStatus(UnschedulableAndUnresolvable, p.Name(), "no node pool left after "+p.Name())
		}
	}
	return nil
}

// candidates lists the nodes of the eligible pools that have enough whole
// GPUs free for pod (every node for pods without whole GPUs).
func (f *Framework) candidates(pod *cluster.PodSpec) []int32 {
	st := &f.st
	nodes := st.nodes[:0]
	need := pod.GPUs
	if pod.MIG != "" {
		need = 0 // MIG instances are not in the free-GPU buckets
	}
	for _, p := range st.Pools {
		nodes = f.c.AppendNodesWithFree(p, need, nodes)
	}
	st.nodes = nodes
	return nodes
}

// classCandidates is candidates with one node per state class of the
// classed pools: the class's first node in the tie order.
func (f *Framework) classCandidates(pod *cluster.PodSpec) []int32 {
	st := &f.st
	nodes := st.nodes[:0]
	need := pod.GPUs
	if pod.MIG != "" {
		need = 0
	}
	for _, p := range st.Pools {
		if f.c.Classed(p) {
			nodes = f.c.AppendClassFirsts(p, need, nodes)
		} else {
			nodes = f.c.AppendNodesWithFree(p, need, nodes)
		}
	}
	st.nodes = nodes
	return nodes
}

func (f *Framework) filter(pod *cluster.PodSpec, nodes []int32) []int32 {
	for _, p := range f.prof.Filter {
		if len(nodes) == 0 {
			break
		}
		nodes = p.FilterBatch(&f.st, pod, nodes)
		if len(nodes) == 0 {
			f.lastEmptied = p.Name()
		}
	}
	return nodes
}

func (f *Framework) score(pod *cluster.PodSpec, nodes []int32, total []int64) {
	for i := range total {
		total[i] = 0
	}
	if cap(f.st.tmp) < len(nodes) {
		f.st.tmp = make([]int64, len(nodes), 2*len(nodes))
	}
	tmp := f.st.tmp[:len(nodes)]
	for _, s := range f.prof.Score {
		s.Plugin.ScoreBatch(&f.st, pod, nodes, tmp)
		for i, v := range tmp {
			total[i] += s.Weight * v
		}
	}
}

// Attempt tries to place job's remaining pods. It returns the number of
// pods bound (through b) and, when none could be bound, the status that
// stopped it.
func (f *Framework) Attempt(now cluster.Time, job *JobInfo, b Binder) (int32, *Status, error) {
	job.Attempted = true
	f.lastEmptied = ""
	if len(job.Spec.Groups) == 0 {
		// (A job of several pod groups is checked group by group.)
		if s := f.preFilter(now, job, false); !s.IsSuccess() {
			return 0, s, s.Err()
		}
	}
	st := &f.st
	f.stmt.Begin(f.c)
	var placed int32
	var refused *Status
	var err error
	if len(job.Spec.Groups) > 0 {
		placed, refused, err = f.placeGroups(now, job)
	} else {
		placed, refused, err = f.place(now, job, job.Remaining())
	}
	if err != nil {
		return 0, nil, err
	}
	if refused != nil {
		return 0, refused, refused.Err()
	}
	var status *Status
	for _, p := range f.prof.Permit {
		if s := p.Permit(st, job, placed); !s.IsSuccess() {
			status = s
			break
		}
	}
	if status == nil && placed == 0 {
		status = f.cached(f.lastEmptied, "no eligible node has the free cpu, memory and GPUs the pod asks for")
	}
	if status == nil && placed < st.MinPods {
		status = f.cached(f.lastEmptied, "only part of the job's pods fit at once")
	}
	if status != nil {
		if err := f.discard(now, job); err != nil {
			return 0, nil, err
		}
		return 0, status, status.Err()
	}
	job.Bound += placed
	if err := b.Bind(job, f.stmt.Placements()); err != nil {
		return 0, nil, err
	}
	return placed, nil, nil
}

// place reserves up to want of job's pods, all of one shape, in the
// statement begun.
func (f *Framework) place(now cluster.Time, job *JobInfo, want int32) (int32, *Status, error) {
	if c := job.Spec.Constraints; c != nil && c.TAS != nil {
		return f.placeTAS(now, job, want)
	} else if f.placementAware(job) {
		return f.placeEach(now, job, want)
	} else if f.byClass {
		return f.placeByClass(now, job, want)
	}
	return f.placeByNode(now, job, want)
}

// parts fills f.parts with job's pod groups as jobs of their own
// (cluster.JobSpec.Part), each with the pods of it already bound: the
// job's pods bind in order (main pods first, then each group's), so the
// first Bound of them are bound.
func (f *Framework) parts(job *JobInfo) []JobInfo {
	n := len(job.Spec.Groups) + 1
	if cap(f.partSpecs) < n {
		f.partSpecs = make([]cluster.JobSpec, n)
		f.partInfos = make([]JobInfo, n)
	}
	specs, infos := f.partSpecs[:n], f.partInfos[:n]
	left := job.Bound
	for g := range specs {
		specs[g] = job.Spec.Part(g)
		b := min(left, specs[g].Replicas)
		left -= b
		infos[g] = JobInfo{ID: job.ID, Spec: &specs[g], Bound: b, FirstReason: -1, LastReason: -1}
	}
	return infos
}

// placeGroups reserves the remaining pods of a job of several pod groups
// in one statement, each group's with its own pod and constraints (its
// own PreFilter, filters and scores): the main pods first, then each
// group's. A group that does not place whole stops the job's later
// groups, so that the pods bound are always the job's first (PodAt). A
// refusal discards what the earlier groups reserved.
func (f *Framework) placeGroups(now cluster.Time, job *JobInfo) (int32, *Status, error) {
	parts := f.parts(job)
	var placed int32
	for g := range parts {
		part := &parts[g]
		want := part.Remaining()
		if want == 0 {
			continue
		}
		if s := f.preFilter(now, part, false); !s.IsSuccess() {
			if s.Err() != nil {
				return 0, nil, s.Err()
			}
			if placed == 0 {
				return 0, s, nil
			}
			break
		}
		n, refused, err := f.place(now, part, want)
		if err != nil {
			return 0, nil, err
		}
		if refused != nil {
			if err := f.discard(now, job); err != nil {
				return 0, nil, err
			}
			return 0, refused, nil
		}
		placed += n
		if n < want {
			break
		}
	}
	// The gang is the whole job: Permit and MinPods see it, not a group.
	f.st.reset(f.c, now, job)
	if f.prof.MinMember != nil {
		f.st.MinPods = f.prof.MinMember.MinMember(job)
	}
	return placed, nil, nil
}

// placeByNode reserves as many of the job's pods as fit (up to want) in
// the statement, filtering and scoring every candidate node once and then
// only the node each pod went to. When a Reserve plugin refuses, the
// statement is discarded and its status returned.
func (f *Framework) placeByNode(now cluster.Time, job *JobInfo, want int32) (int32, *Status, error) {
	st := &f.st
	pod := &job.Spec.Pod
	nodes := f.filter(pod, f.candidates(pod))
	if cap(st.scores) < len(nodes) {
		st.scores = make([]int64, len(nodes), 2*len(nodes))
	}
	scores := st.scores[:len(nodes)]
	f.score(pod, nodes, scores)
	var placed int32
	for placed < want && len(nodes) > 0 {
		best := f.best(nodes, scores)
		n := nodes[best]
		if refused, err := f.reserve(now, job, n); refused != nil || err != nil {
			return 0, refused, err
		}
		placed++
		if placed == want {
			break
		}
		// Only node n changed: re-filter and rescore it alone.
		one := f.filter(pod, nodes[best:best+1])
		if len(one) == 0 {
			copy(nodes[best:], nodes[best+1:])
			copy(scores[best:], scores[best+1:])
			nodes = nodes[:len(nodes)-1]
			scores = scores[:len(scores)-1]
		} else {
			f.score(pod, nodes[best:best+1], scores[best:best+1])
		}
	}
	return placed, nil, nil
}

// placeByClass is placeByNode over one node per state class: the class's
// first node in the tie order wins every tie the class's other nodes
// would, and scores like them, so the node chosen for each pod is the
// one placeByNode would choose. After each pod the classes are listed
// and scored again (the chosen node moved to another class).
func (f *Framework) placeByClass(now cluster.Time, job *JobInfo, want int32) (int32, *Status, error) {
	st := &f.st
	pod := &job.Spec.Pod
	var placed int32
	nodes := f.filter(pod, f.classCandidates(pod))
	for placed < want && len(nodes) > 0 {
		if cap(st.scores) < len(nodes) {
			st.scores = make([]int64, len(nodes), 2*len(nodes))
		}
		scores := st.scores[:len(nodes)]
		f.score(pod, nodes, scores)
		n := nodes[f.best(nodes, scores)]
		if refused, err := f.reserve(now, job, n); refused != nil || err != nil {
			return 0, refused, err
		}
		placed++
		if placed == want {
			break
		}
		// As placeByNode: the filter that turns node n away is the one a
		// failure names, whatever turns the other nodes away.
		st.one = append(st.one[:0], n)
		f.filter(pod, st.one)
		emptied := f.lastEmptied
		nodes = f.filter(pod, f.classCandidates(pod))
		f.lastEmptied = emptied
	}
	return placed, nil, nil
}

// placementAware reports whether a plugin's verdicts for job depend on
// where its (and others') pods are across the nodes.
func (f *Framework) placementAware(job *JobInfo) bool {
	for _, p := range f.prof.PlacementAware {
		if p.PlacementAware(job) {
			return true
		}
	}
	return false
}

// placeEach reserves the job's pods one at a time (up to want), listing,
// filtering and scoring every candidate node before each, as
// kube-scheduler runs one cycle per pod: for placement-aware jobs, whose
// pods change the verdict on other nodes than their own.
func (f *Framework) placeEach(now cluster.Time, job *JobInfo, want int32) (int32, *Status, error) {
	st := &f.st
	pod := &job.Spec.Pod
	var placed int32
	for placed < want {
		nodes := f.filter(pod, f.candidates(pod))
		if len(nodes) == 0 {
			break
		}
		if cap(st.scores) < len(nodes) {
			st.scores = make([]int64, len(nodes), 2*len(nodes))
		}
		scores := st.scores[:len(nodes)]
		f.score(pod, nodes, scores)
		n := nodes[f.best(nodes, scores)]
		if refused, err := f.reserve(now, job, n); refused != nil || err != nil {
			return 0, refused, err
		}
		placed++
	}
	return placed, nil, nil
}

// reserve allocates one pod of job on node n in the statement and runs the
// Reserve plugins. When one refuses, the statement is discarded and its
// status returned.
func (f *Framework) reserve(now cluster.Time, job *JobInfo, n int32) (*Status, error) {
	st := &f.st
	pod := &job.Spec.Pod
	gpu := -1
	if pod.GPUMilli > 0 && f.prof.GPUSelect != nil {
		gpu = f.prof.GPUSelect.SelectGPU(st, pod, n)
	}
	if err := f.stmt.Allocate(now, n, pod, gpu); err != nil {
		return nil, err
	}
	for _, r := range f.prof.Reserve {
		if s := r.Reserve(st, job, n); !s.IsSuccess() {
			if err := f.discard(now, job); err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	return nil, nil
}

// cached returns one shared status per (plugin, text): failures on the hot
// path allocate nothing.
func (f *Framework) cached(plugin, text string) *Status {
	key := plugin + "\x00" + text
	if s, ok := f.statuses[key]; ok {
		return s
	}
	msg := text
	if plugin != "" {
		msg = text + " (" + plugin + ")"
	}
	s := NewStatus(Unschedulable, plugin, msg)
	f.statuses[key] = s
	return s
}

func (f *Framework) discard(now cluster.Time, job *JobInfo) error {
	for _, pl := range f.stmt.Placements() {
		for _, r := range f.prof.Reserve {
			r.Unreserve(&f.st, job, pl.Node)
		}
	}
	return f.stmt.Discard(now)
}

// FitsEmpty reports whether the job could ever be placed: its pods pass the
// static PreFilter checks of some pool and the job fits the pools' total
// size when every node is empty. The reason is given when it cannot.
func (f *Framework) FitsEmpty(job *JobInfo) (bool, string) {
	if len(job.Spec.Groups) > 0 {
		// Each group must fit on its own (the gang then needs them all
		// at once, which the pools' size alone does not settle).
		for g, part := range f.parts(&JobInfo{ID: job.ID, Spec: job.Spec}) {
			if ok, why := f.fitsEmpty(&part); !ok {
				return false, fmt.Sprintf("pod group %s: %s", groupName(job.Spec, g), why)
			}
		}
		return true, ""
	}
	return f.fitsEmpty(job)
}

// groupName names a job's pod group g for reasons (0: the main pods).
func groupName(j *cluster.JobSpec, g int) string {
	if g == 0 {
		return "main"
	}
	if n := j.Groups[g-1].Name; n != "" {
		return n
	}
	return fmt.Sprint(g)
}

func (f *Framework) fitsEmpty(job *JobInfo) (bool, string) {
	st := &f.st
	st.reset(f.c, 0, job)
	st.Diagnosing = true
	if f.prof.MinMember != nil {
		st.MinPods = f.prof.MinMember.MinMember(job)
	}
	for _, p := range f.prof.PreFilter {
		if s := p.PreFilter(st, job); !s.IsSuccess() {
			return false, s.Message()
		}
		if len(st.Pools) == 0 {
			return false, "no node pool left after " + p.Name()
		}
	}
	pod := &job.Spec.Pod
	var capacity int64
	for _, p := range st.Pools {
		pl := &f.c.Pools[p]
		if !f.c.FitsEmpty(int(p), pod) {
			continue
		}
		capacity += int64(pl.Count) * f.c.PodsPerEmptyNode(int(p), pod)
	}
	if capacity == 0 {
		return false, "no node pool has nodes large enough for the pod"
	}
	if capacity < int64(st.MinPods) {
		return false, fmt.Sprintf("gang of %d pods is larger than the %d such pods the eligible pools hold when empty", st.MinPods, capacity)
	}
	if c := job.Spec.Constraints; c != nil && c.TAS != nil {
		return f.tasFitsEmpty(job)
	}
	return true, ""
}

// EligiblePools appends to dst the pools whose empty nodes could hold one of
// the job's pods: they pass the PreFilter checks (taints, affinity, ...)
// and are large enough. A capacity controller launches nodes only there.
func (f *Framework) EligiblePools(job *JobInfo, dst []int32) []int32 {
	if len(job.Spec.Groups) > 0 {
		for _, part := range f.parts(&JobInfo{ID: job.ID, Spec: job.Spec}) {
			from := len(dst)
			dst = f.eligiblePools(&part, dst)
			// Keep each pool once.
			kept := dst[:from]
			for _, p := range dst[from:] {
				if !slices.Contains(kept, p) {
					kept = append(kept, p)
				}
			}
			dst = kept
		}
		return dst
	}
	return f.eligiblePools(job, dst)
}

func (f *Framework) eligiblePools(job *JobInfo, dst []int32) []int32 {
	st := &f.st
	st.reset(f.c, 0, job)
	st.Diagnosing = true
	for _, p := range f.prof.PreFilter {
		if s := p.PreFilter(st, job); !s.IsSuccess() || len(st.Pools) == 0 {
			return dst
		}
	}
	for _, p := range st.Pools {
		if f.c.FitsEmpty(int(p), &job.Spec.Pod) {
			dst = append(dst, p)
		}
	}
	return dst
}

// Diagnosis explains why a job cannot be placed now, kube-scheduler style:
// of all nodes, how many were rejected for each reason.
type Diagnosis struct {
	Nodes   int
	Reasons map[string]int
	// Placeable is how many of the job's remaining pods fit right now.
	Placeable int32
	Remaining int32
}

// Message renders the diagnosis like "0/12 nodes are available: 8
// Insufficient nvidia.com/gpu, 4 node(s) had untolerated taint {...}."
func (d Diagnosis) Message() string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range d.Reasons {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = fmt.Sprintf("%d %s", x.v, x.k)
	}
	msg := fmt.Sprintf("0/%d nodes are available", d.Nodes)
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	if d.Remaining > 1 && d.Placeable > 0 && d.Placeable < d.Remaining {
		msg = fmt.Sprintf("gang: %d of %d pods can be placed now; %s", d.Placeable, d.Remaining, msg)
	} else if d.Placeable >= d.Remaining && d.Remaining > 0 {
		msg = fmt.Sprintf("fits now: %d of %d pods can be placed", d.Placeable, d.Remaining)
	}
	return msg + "."
}

// Diagnose explains, without changing the cluster, why job does not fit.
// Every node is counted once per reason it fails (a node short of both CPU
// and GPUs counts under both, as kube-scheduler reports). With static set
// only the pool-level checks against empty nodes run: why a job can never fit.
func (f *Framework) Diagnose(now cluster.Time, job *JobInfo, static bool) (Diagnosis, error) {
	if len(job.Spec.Groups) > 0 {
		// The first group not yet bound whole is what the job waits
		// for: its pods are the ones placed next.
		for _, part := range f.parts(job) {
			if part.Remaining() > 0 {
				d, err := f.diagnose(now, &part, static)
				d.Remaining = job.Remaining()
				return d, err
			}
		}
	}
	return f.diagnose(now, job, static)
}

func (f *Framework) diagnose(now cluster.Time, job *JobInfo, static bool) (Diagnosis, error) {
	d := Diagnosis{Nodes: f.c.PresentNodes(), Reasons: map[string]int{}, Remaining: job.Remaining()}
	pod := &job.Spec.Pod
	eligible := []int32{}
	for pi := range f.c.Pools {
		pl := &f.c.Pools[pi]
		if pl.Count == 0 {
			continue
		}
		st := &f.st
		st.reset(f.c, now, job)
		st.Diagnosing = true
		st.Pools = append(st.Pools[:0], int32(pi))
		dropped := false
		for _, p := range f.prof.PreFilter {
			s := p.PreFilter(st, job)
			if !s.IsSuccess() || len(st.Pools) == 0 {
				reasons := []string{"node(s) rejected by " + p.Name()}
				if !s.IsSuccess() && len(s.Reasons) > 0 {
					reasons = s.Reasons
				}
				for _, r := range reasons {
					if pl.Present > 0 {
						d.Reasons[r] += int(pl.Present)
					}
				}
				dropped = true
				break
			}
		}
		if !dropped {
			eligible = append(eligible, int32(pi))
		}
	}
	if static {
		return d, nil
	}
	for _, pi := range eligible {
		pl := &f.c.Pools[pi]
		for n := pl.First; n < pl.First+pl.Count; n++ {
			switch f.c.Nodes[n].State {
			case cluster.NodeAbsent:
				continue
			case cluster.NodeBooting:
				d.Reasons["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"]++
				continue
			case cluster.NodeCordoned:
				d.Reasons["node(s) were unschedulable"]++
				continue
			}
			for _, p := range f.prof.Filter {
				if s := p.Filter(&f.st, pod, n); !s.IsSuccess() {
					for _, r := range s.Reasons {
						d.Reasons[r]++
					}
					break
				}
			}
		}
	}
	// Count how many pods fit now with a dry run on a statement.
	if len(eligible) > 0 {
		st := &f.st
		st.reset(f.c, now, job)
		st.Pools = append(st.Pools[:0], eligible...)
		f.stmt.Begin(f.c)
		for d.Placeable < d.Remaining {
			nodes := f.filter(pod, f.candidates(pod))
			if len(nodes) == 0 {
				break
			}
			if err := f.stmt.Allocate(now, slices.Min(nodes), pod, -1); err != nil {
				return d, err
			}
			d.Placeable++
		}
		if err := f.stmt.Discard(now); err != nil {
			return d, err
		}
	}
	return d, nil
}

type reasonTable struct {
	ids   map[string]int32
	texts []string
}

func newReasonTable() reasonTable { return reasonTable{ids: map[string]int32{}} }

func (t *reasonTable) intern(s string) int32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := int32(len(t.texts))
	t.ids[s] = id
	t.texts = append(t.texts, s)
	return id
}

func (t *reasonTable) text(id int32) string {
	if id < 0 || int(id) >= len(t.texts) {
		return ""
	}
	return t.texts[id]
}
