package workloads

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// checkGPUFields reads the pod template's Kueue topology-aware scheduling
// annotations (the request, nil for none) and refuses or notes its
// GPU-bearing fields gpuplan does not model (HAMi shares:
// scenarios/kube/gpufields); DRA claims and DRA-backed extended resources
// are resolved by claims instead. dot prefixes the template's fields.
func checkGPUFields(d *doc, t *corev1.PodTemplateSpec, dot string) (*cluster.TASRequest, error) {
	backed := d.dra.ExtendedResources()
	tas, fs := gpufields.KueueTopology(t.Annotations, dot+"metadata")
	for _, f := range append(fs, gpufields.PodFields(&t.Spec, dot+"spec", func(n string) bool { return backed[n] != "" })...) {
		if f.Err {
			return nil, d.errAt(f.Field, "%s", f.Msg)
		}
		d.note(f.Field, "%s", f.Msg)
	}
	return tas, nil
}

// tasField is the path (under a template's metadata) of the annotation
// that names a topology request's level: required, preferred, the slice
// level, or unconstrained.
func tasField(ann map[string]string) string {
	for _, k := range []string{gpufields.KueueRequiredTopology, gpufields.KueuePreferredTopology, gpufields.KueueSliceRequiredTopology} {
		if _, ok := ann[k]; ok {
			return fmt.Sprintf(".annotations[%q]", k)
		}
	}
	return fmt.Sprintf(".annotations[%q]", gpufields.KueueUnconstrainedTopology)
}

// TASUse is a group of pods asking for Kueue topology-aware scheduling
// and where its request is written (Msg empty).
type TASUse struct {
	Group Group
	At    strict.InputError
}

// DropVolcanoTopology takes every Volcano Job's spec.networkTopology off
// its tasks (a run without HyperNodes) and reports whether there was one.
func (s *Source) DropVolcanoTopology() bool {
	dropped := false
	for _, st := range s.streams {
		for _, i := range st.objs {
			o := &st.e.Objects[i]
			for _, g := range o.Groups {
				if c := g.Constraints; c != nil && c.TAS != nil && c.TAS.Volcano != nil {
					c.TAS, dropped = nil, true
				}
			}
		}
	}
	return dropped
}

// TASUses are the groups of every object the source submits that ask for
// topology, in the objects' order.
func (s *Source) TASUses() []TASUse {
	var out []TASUse
	for _, st := range s.streams {
		for _, i := range st.objs {
			o := &st.e.Objects[i]
			for _, g := range o.Groups {
				if c := g.Constraints; c != nil && c.TAS != nil {
					out = append(out, TASUse{Group: g, At: o.tasAt[c.TAS]})
				}
			}
		}
	}
	return out
}

// namedClaim is a ResourceClaim an object's pods name (one set of devices
// for every pod that names it).
type namedClaim struct {
	dra.Named
	line, col int
}

// claims resolves the pod template's DRA claims and DRA-backed extended
// resources (ext) into pod's GPU request, and the GPU models they allow
// into c's node affinity; pod already holds the device plugin's
// resources.
func claims(d *doc, o *Object, ps *corev1.PodSpec, dot string, ext []dra.ExtRequest, pod *cluster.PodSpec, c **cluster.Constraints) (*DRAUse, error) {
	if len(ps.ResourceClaims) == 0 && len(ext) == 0 && !anyContainerClaims(ps) {
		return nil, nil
	}
	req, err := d.dra.Pod(d.namespace, ps, dot+"spec", ext, d.pools)
	var fe *dra.FieldError
	if errors.As(err, &fe) {
		return nil, d.errAt(fe.Field, "%s", fe.Msg)
	}
	if err != nil {
		return nil, err
	}
	for _, n := range req.Notes {
		d.note(n.Field, "%s", n.Msg)
	}
	for _, n := range req.Named {
		nc := namedClaim{Named: n, line: d.line}
		if p, ok := d.pos[n.Field]; ok {
			nc.line, nc.col = p[0], p[1]
		}
		o.named = append(o.named, nc)
	}
	if req.Channel != nil {
		if err := computeDomain(d, o, req.Channel, c); err != nil {
			return nil, err
		}
	}
	if req.Empty() {
		if (req.Kueue.Named != "" || req.Kueue.Unsupported != "") && pod.GPUs == 0 && pod.GPUMilli == 0 {
			// No GPU by claim (adminAccess, a class of no GPU), but
			// what Kueue refuses all the same.
			return kueueUse(d, req.Kueue), nil
		}
		return nil, nil
	}
	if pod.GPUs > 0 || pod.GPUMilli > 0 {
		return nil, d.errAt(dot+"spec.resourceClaims", "the pod asks for GPUs by DRA claim and by %s; gpuplan gives a pod one kind of GPU", gpuKind(*pod))
	}
	pod.GPUs, pod.MIG, pod.GPUMilli, pod.GPUMemMiB = req.GPUs, req.MIG, req.GPUMilli, req.GPUMemMiB
	if req.Models != nil {
		if *c == nil {
			*c = &cluster.Constraints{}
		}
		r := cluster.Requirement{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: req.Models}
		if len((*c).Affinity) == 0 {
			(*c).Affinity = []cluster.NodeSelectorTerm{{r}}
		} else {
			for i := range (*c).Affinity {
				(*c).Affinity[i] = append((*c).Affinity[i], r)
			}
		}
	}
	return kueueUse(d, req.Kueue), nil
}

// kueueUse is what Kueue counts of a pod's claims, at the line of what it
// refuses first (else the object's).
func kueueUse(d *doc, v dra.KueueView) *DRAUse {
	use := &DRAUse{KueueView: v, File: d.file, Line: d.line}
	field := v.Field
	if v.Named != "" {
		field = v.NamedField // Kueue refuses a named claim first
	}
	if p, ok := d.pos[field]; ok {
		use.Line = p[0]
	}
	return use
}

func anyContainerClaims(ps *corev1.PodSpec) bool {
	for _, cs := range [][]corev1.Container{ps.InitContainers, ps.Containers} {
		for _, c := range cs {
			if len(c.Resources.Claims) > 0 {
				return true
			}
		}
	}
	return false
}

// shareClaims divides each ResourceClaim among the pods naming it across
// the file's objects: one claim of one whole GPU named by n pods running
// at once gives each a 1/n share (Kubernetes allocates the claim once;
// its pods share its devices, they are not multiplied).
func shareClaims(file string, objs []Object) error {
	pods := map[string]int64{}
	for i := range objs {
		for _, n := range objs[i].named {
			pods[n.Key] += objs[i].Pods()
		}
	}
	for i := range objs {
		o := &objs[i]
		for _, n := range o.named {
			total := pods[n.Key]
			if total <= 1 {
				continue
			}
			if !n.Whole || len(o.Groups) != 1 || len(o.named) != 1 {
				return &strict.InputError{File: file, Line: n.line, Column: n.col, Field: n.Field,
					Msg: fmt.Sprintf("%s is shared by %d pods; gpuplan models a shared claim of one whole GPU, named by pods of single-role objects only (as a share of the GPU per pod)", n.What, total)}
			}
			g := &o.Groups[0]
			milli := max(int32(cluster.MilliGPU/total), 1)
			g.Pod.GPUs, g.Pod.GPUMilli = 0, milli
			o.Notes = append(o.Notes, fmt.Sprintf("%s:%d: %s %s: %s: %s holds 1 GPU shared by the %d pods of the file that name it, not one each: each pod is taken as a %d/1000 share of a GPU (gpuplan does not keep them on the same GPU)",
				file, n.line, o.Kind, o.Name, n.Field, n.What, total, milli))
		}
	}
	return nil
}

// labelComputeDomain is the pod label gpuplan gives the pods of one job
// claiming a ComputeDomain's channel, for their pod affinity.
const labelComputeDomain = "gpuplan.dev/compute-domain"

// computeDomain keeps the pods claiming a ComputeDomain's channel in one
// NVLink domain: required pod affinity on nvidia.com/gpu.clique to the
// job's own pods (labelComputeDomain, its value set per job). A cluster
// without a multi-node NVLink domain cannot place it across nodes: that
// is an input error naming the claim.
func computeDomain(d *doc, o *Object, ch *dra.Channel, c **cluster.Constraints) error {
	if d.pools != nil && !multiNodeDomain(d.pools) {
		return d.errAt(ch.Field, "%s: its pods must share one NVLink domain (nvidia.com/gpu.clique), and no node pool of the cluster has an NVLink domain of more than one node (give a pool topology.nvlinkDomainGPUs wider than a node, or an nvidia.com/gpu.clique label)", ch.What)
	}
	if *c == nil {
		*c = &cluster.Constraints{}
	} else {
		cp := **c
		*c = &cp
	}
	(*c).PodAffinity = append(append([]cluster.PodAffinityTerm(nil), (*c).PodAffinity...),
		cluster.PodAffinityTerm{TopologyKey: cluster.LabelGPUClique, Selector: []cluster.Requirement{{Key: labelComputeDomain, Op: cluster.OpIn, Values: []string{o.Name}}}})
	d.computeDomain = o.Name
	if o.channel == nil {
		o.channel = ch
	}
	d.note(ch.Field, "%s: the IMEX channel is not a GPU; the job's pods are kept in one NVLink domain (required pod affinity on %s to the job's own pods)", ch.What, cluster.LabelGPUClique)
	return nil
}

// domainFits refuses an object whose pods claim a ComputeDomain's
// channel (o.channel) and ask for more GPUs at once than the cluster's
// largest NVLink domain holds, or whose ComputeDomain's numNodes is more
// nodes than that domain has: kept in one domain, it would wait forever.
// The GPUs counted are the whole GPUs of every pod of the object at once
// (the pods of all its roles share the one domain).
func domainFits(d *doc, o *Object) error {
	if o.channel == nil || d.pools == nil {
		return nil
	}
	var gpus int64
	for _, g := range o.Groups {
		gpus += int64(g.Pods) * int64(g.Pod.GPUs)
	}
	big := largestDomain(d.pools)
	if gpus > big.gpus {
		return d.errAt(o.channel.Field, "%s: its pods ask for %d GPUs at once in one NVLink domain (nvidia.com/gpu.clique), and the largest NVLink domain of the cluster holds %d GPUs (%s): it would never start",
			o.channel.What, gpus, big.gpus, big.what)
	}
	if n := d.dra.DomainNodes(o.channel); n > big.nodes {
		return d.errAt(o.channel.Field, "%s: its spec.numNodes is %d nodes, and the largest NVLink domain of the cluster has %d nodes (%s): it would never start",
			o.channel.What, n, big.nodes, big.what)
	}
	return nil
}

// nvlinkDomain is the size of one NVLink domain of the cluster and where
// it is.
type nvlinkDomain struct {
	gpus  int64
	nodes int
	what  string
}

// largestDomain is the cluster's largest NVLink domain, in GPUs: the
// nodes sharing a value of an nvidia.com/gpu.clique pool label (across
// pools), else a pool's topology domains (nvlinkDomainGPUs, at most the
// pool's nodes), else one node.
func largestDomain(pools []cluster.PoolSpec) nvlinkDomain {
	var big nvlinkDomain
	take := func(c nvlinkDomain) {
		if c.gpus > big.gpus || (c.gpus == big.gpus && c.nodes > big.nodes) {
			big = c
		}
	}
	clique := map[string]*nvlinkDomain{}
	var order []string
	for _, p := range pools {
		n := max(p.Nodes, p.MaxNodes)
		if v, ok := p.Labels[cluster.LabelGPUClique]; ok {
			c := clique[v]
			if c == nil {
				c = &nvlinkDomain{what: fmt.Sprintf("%s=%s:", cluster.LabelGPUClique, v)}
				clique[v] = c
				order = append(order, v)
			} else {
				c.what += ","
			}
			c.gpus += int64(n) * int64(p.GPUsPerNode)
			c.nodes += n
			c.what += fmt.Sprintf(" pool %s, %d nodes x %d GPUs", p.Name, n, p.GPUsPerNode)
			continue
		}
		nodes := min(int(p.Topology.NodesPerDomain(p.GPUsPerNode)), n)
		what := fmt.Sprintf("pool %s: one node of %d GPUs", p.Name, p.GPUsPerNode)
		if nodes > 1 {
			what = fmt.Sprintf("pool %s: %d nodes x %d GPUs", p.Name, nodes, p.GPUsPerNode)
		}
		take(nvlinkDomain{gpus: int64(nodes) * int64(p.GPUsPerNode), nodes: nodes, what: what})
	}
	for _, v := range order {
		take(*clique[v])
	}
	return big
}

// multiNodeDomain reports whether a pool has an NVLink domain of more
// than one node.
func multiNodeDomain(pools []cluster.PoolSpec) bool {
	for _, p := range pools {
		n := max(p.Nodes, p.MaxNodes)
		if _, ok := p.Labels[cluster.LabelGPUClique]; ok && n > 1 {
			return true
		}
		if p.Topology.NodesPerDomain(p.GPUsPerNode) > 1 && n > 1 {
			return true
		}
	}
	return false
}
