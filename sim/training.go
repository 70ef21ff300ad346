package sim

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Data-parallel training: a job with a Training spec runs Steps steps, each
// computing for ComputePerStep and then all-reducing its gradients over
// all its GPUs. Where it lands sets the all-reduce time: on one node it
// runs over the node's fabric (NVLink, PCIe); across nodes over the
// network, whose measured bus bandwidth is scaled by the share of a
// node's network rails the job uses (the fewest GPUs it has on a node over
// the ranks per node of the measurement), and by no more than the
// intra-node fabric allows. The run time is fixed when the job first
// starts.

// stepTime is one step of job j on its placement in cluster c, its
// collectives timed on fabrics.
func stepTime(c *cluster.Cluster, fabrics map[string]models.Fabric, j *jobState) (*StepRecord, error) {
	tr := j.spec.Training
	perNode := map[int32]int{}
	ranks := 0
	for k, pl := range j.placed {
		g := int(j.spec.Pod.GPUs)
		if len(j.spec.Groups) > 0 {
			p, _ := j.spec.PodAt(int32(k))
			if g = int(p.GPUs); g == 0 {
				continue // a CPU pod (a launcher) is no rank
			}
		}
		perNode[pl.Node] += g
		ranks += g
	}
	fewest := math.MaxInt
	for _, g := range perNode {
		fewest = min(fewest, g)
	}
	pool := &c.Pools[c.Nodes[j.placed[0].Node].Pool].Spec
	rec := &StepRecord{Steps: tr.Steps, ComputeMs: float64(tr.ComputePerStep), Nodes: len(perNode), Ranks: ranks, GPUsPerNode: fewest}
	if ranks <= 1 || tr.GradientBytes == 0 {
		return rec, nil
	}
	intraName := pool.Fabric
	if intraName == "" {
		intraName = models.DefaultFabricFor(pool.GPUModel)
	}
	intra, ok := fabrics[intraName]
	if !ok {
		return nil, fmt.Errorf("pool %s: fabric %q is not in the run's fabrics", pool.Name, intraName)
	}
	if topologyPriced(c, j) {
		return rec, topologyStep(c, fabrics, j, rec, pool, intra, fewest)
	}
	f, scale := intra, 1.0
	if len(perNode) > 1 {
		netName := pool.Network
		if netName == "" {
			netName = models.DefaultNetwork
		}
		net, ok := fabrics[netName]
		if !ok {
			return nil, fmt.Errorf("pool %s: network fabric %q is not in the run's fabrics", pool.Name, netName)
		}
		scale = min(1, float64(fewest)/float64(net.RanksPerNode()))
		if net.BusBWGBps*scale < intra.BusBWGBps {
			f = net
		} else {
			scale = 1
		}
	}
	rec.Fabric = f.Name
	rec.CommMs = f.Time(models.AllReduce, tr.GradientBytes, ranks, scale) * 1000
	return rec, nil
}

// startTraining fixes a training job's run time at its first start, on
// the cluster's fabrics.
func startTraining(c *cluster.Cluster, fabrics map[string]models.Fabric, j *jobState) error {
	rec, err := stepTime(c, fabrics, j)
	if err != nil {
		return err
	}
	j.ext().step = rec
	j.spec.Duration = max(Time(math.Round(float64(rec.Steps)*(rec.ComputeMs+rec.CommMs))), 1)
	return nil
}
