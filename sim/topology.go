package sim

import (
	"fmt"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Topology-aware step time: when a training job's pods are on a pool with
// a topology (NVLink domains, racks, blocks), its all-reduce is priced by
// the widest level its nodes span (models/topology): inside one NVLink
// domain at the domain's NVLink, across hosts of a rack at the rails,
// across racks through the spine, across blocks (or pools) through the
// core. Pools without a topology keep the flat model of stepTime.
//
// When the run's levels are Volcano HyperNodes, they state the network
// where the pools do not: a job whose nodes span more than one NVLink
// domain, are all in HyperNodes, and are not all in one pool that gives
// racks (nodesPerRack) or blocks (racksPerBlock) is priced by the
// narrowest HyperNode holding them all, counting only the network tiers
// (cluster.NetworkTierSpan: tiers whose HyperNodes each lie within one
// NVLink domain add no hop). The first network tier is a rack (the
// rails), the second a block (through the spine), a wider one, or none
// holding them all (Volcano's cluster-wide root), the datacentre core
// (hyperNodeLevel). Inside one pool with racks or blocks, the pool's
// levels price it, whatever the HyperNodes group (they place it).

// topologyPriced reports whether j's placement touches a pool with a
// topology, or lies on HyperNodes with a network tier.
func topologyPriced(c *cluster.Cluster, j *jobState) bool {
	for _, pl := range j.placed {
		if !c.Pools[c.Nodes[pl.Node].Pool].Spec.Topology.Zero() {
			return true
		}
	}
	if !c.HasNetworkTiers() {
		return false // (without a slice of the nodes for every job)
	}
	_, ok := c.NetworkTierSpan(placedNodes(j))
	return ok
}

// placedNodes are the nodes of j's pods.
func placedNodes(j *jobState) []int32 {
	nodes := make([]int32, len(j.placed))
	for i, pl := range j.placed {
		nodes[i] = pl.Node
	}
	return nodes
}

// hyperNodeLevel is the level of a placement the narrowest HyperNode
// holding it puts k network tiers up (cluster.NetworkTierSpan): the
// first network tier a rack, the second a block, any wider, or none
// (-1), the zone.
func hyperNodeLevel(k int) topology.Level {
	switch k {
	case 0:
		return topology.Rack
	case 1:
		return topology.Block
	}
	return topology.Zone
}

// topologyStep fills rec's all-reduce for j on a topology pool: intra is
// the node's fabric as stepTime resolved it, fewest the fewest ranks on a
// node.
func topologyStep(c *cluster.Cluster, fabrics map[string]models.Fabric, j *jobState, rec *StepRecord, pool *cluster.PoolSpec, intra models.Fabric, fewest int) error {
	places := make([]topology.Place, 0, len(j.placed))
	level := topology.Host
	first := c.Nodes[j.placed[0].Node].Pool
	for _, pl := range j.placed {
		if c.Nodes[pl.Node].Pool != first {
			level = topology.Zone // different pools share no rack or spine
		}
		places = append(places, c.Topology().PlaceOf(pl.Node))
	}
	onePool := level == topology.Host
	level = max(level, topology.Span(places))
	if racks := pool.Topology.NodesPerRack > 0 || pool.Topology.RacksPerBlock > 0; level > topology.Domain && !(onePool && racks) {
		if k, ok := c.NetworkTierSpan(placedNodes(j)); ok {
			level = hyperNodeLevel(k)
		}
	}
	spec := &pool.Topology
	spine, core := spec.Oversubscriptions()
	tr := topology.Tiers{Host: intra, Spine: spine, Core: core}
	if spec.NodesPerDomain(pool.GPUsPerNode) > 1 {
		name := spec.DomainFabric
		if name == "" {
			name = topology.DomainFabricFor(pool.GPUModel)
		}
		f, ok := fabrics[name]
		if !ok {
			f, ok = topology.DefaultFabrics()[name]
		}
		if !ok {
			return fmt.Errorf("pool %s: NVLink domains of %d GPUs need a domain fabric (%q is not in the run's fabrics)", pool.Name, spec.DomainGPUs, name)
		}
		tr.Domain = f
		if pool.Fabric == "" {
			// A node's GPUs talk through the domain's NVLink switches.
			tr.Host = f
		}
	}
	railScale := 1.0
	if level >= topology.Rack {
		netName := pool.Network
		if netName == "" {
			netName = models.DefaultNetwork
		}
		net, ok := fabrics[netName]
		if !ok {
			return fmt.Errorf("pool %s: network fabric %q is not in the run's fabrics", pool.Name, netName)
		}
		tr.Rails = net
		rails := net.RanksPerNode()
		if spec.NodesPerDomain(pool.GPUsPerNode) > 1 {
			// A GB200/GB300 NVL72 compute tray has a 400G NIC (or more)
			// per GPU, as an 8-GPU HGX node has: its 4 GPUs use all its
			// rails (NVIDIA's GB200 NVL72: 4 ConnectX-7 a tray; AWS's
			// p6e-gb200.36xlarge 3.2 Tbps of EFA for 4 GPUs, p5.48xlarge
			// 3.2 Tbps for 8; taken as one rail a GPU).
			rails = min(rails, int(pool.GPUsPerNode))
		}
		railScale = min(1, float64(fewest)/float64(rails))
	}
	sec, name := tr.AllReduce(level, j.spec.Training.GradientBytes, rec.Ranks, railScale)
	rec.Fabric, rec.CommMs, rec.Level = name, sec*1000, level.String()
	return nil
}

// TASLevels are the Kueue topology levels of a run: the given ones, or
// by default the pools' blocks, racks, NVLink domains (when some pool's
// are wider than a node) and hosts, under the labels of
// cluster.LabelTopologyBlock, LabelTopologyRack, LabelGPUClique and
// kubernetes.io/hostname.
func TASLevels(given []string, pools []cluster.PoolSpec) []string {
	if len(given) > 0 {
		return given
	}
	levels := []string{cluster.LabelTopologyBlock, cluster.LabelTopologyRack}
	for _, p := range pools {
		if p.Topology.NodesPerDomain(p.GPUsPerNode) > 1 {
			levels = append(levels, cluster.LabelGPUClique)
			break
		}
	}
	return append(levels, cluster.LabelHostname)
}
