package sim

import "gpuplan.dev/gpuplan/sim/cluster"

// LevelSlots are, at each timeline bucket's end, the free GPUs of the
// pools with a topology (racks, blocks) and those of them that form a
// whole slot at each level: on a node whose every GPU is free, in a rack
// whose every node is, in a block whose every rack is. A rack with 7 free
// GPUs on 7 nodes counts 7 free and none in a whole node: no 8-GPU pod
// fits it. A node absent or cordoned has no free GPU here.
type LevelSlots struct {
	Free, Node, Rack, Block []int64
}

// sampleLevels appends the bucket's figures to ls. A pool's racks and
// blocks are runs of consecutive nodes (topology.Spec.PlaceOf), so one pass
// closes each as the next begins.
func sampleLevels(c *cluster.Cluster, ls *LevelSlots) {
	var free, whole, racks, blocks int64
	type run struct {
		pool, dom int32
		full      bool
		gpus      int64
		open      bool
	}
	var rack, block run
	flush := func(r *run, into *int64) {
		if r.open && r.full {
			*into += r.gpus
		}
		r.open = false
	}
	top := c.Topology()
	for n := range c.Nodes {
		nd := &c.Nodes[n]
		pl := &c.Pools[nd.Pool]
		if pl.Spec.Topology.Zero() || pl.Spec.GPUsPerNode <= 0 {
			continue
		}
		f := int64(0)
		if nd.State == cluster.NodeReady {
			f = int64(nd.FreeWhole)
		}
		full := f == int64(pl.Spec.GPUsPerNode)
		free += f
		if full {
			whole += f
		}
		p := top.PlaceOf(int32(n))
		for _, x := range []struct {
			r    *run
			dom  int32
			into *int64
		}{{&rack, p.Rack, &racks}, {&block, p.Block, &blocks}} {
			if !x.r.open || x.r.pool != nd.Pool || x.r.dom != x.dom {
				flush(x.r, x.into)
				*x.r = run{pool: nd.Pool, dom: x.dom, full: true, open: true}
			}
			x.r.full = x.r.full && full
			x.r.gpus += f
		}
	}
	flush(&rack, &racks)
	flush(&block, &blocks)
	ls.Free = append(ls.Free, free)
	ls.Node = append(ls.Node, whole)
	ls.Rack = append(ls.Rack, racks)
	ls.Block = append(ls.Block, blocks)
}
