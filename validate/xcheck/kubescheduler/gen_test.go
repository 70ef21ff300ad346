package kubescheduler

import (
	"fmt"
	"math/rand/v2"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Label keys of the generated nodes.
const (
	labelType = "xcheck.gpuplan.dev/type"
	labelZone = "topology.kubernetes.io/zone"
	labelGPU  = "nvidia.com/gpu.product"
	taintKey  = "dedicated"
)

// nodeType is count identical nodes: the same allocatable, labels and
// taints. Node j of type k is named "t<k>-<j>".
type nodeType struct {
	count    int
	gpus     int32
	milliCPU int64
	memMiB   int64
	labels   map[string]string
	taints   []cluster.Taint
}

// gpuPod is one pod: requests equal limits.
type gpuPod struct {
	gpus        int32
	milliCPU    int64
	memMiB      int64
	selector    map[string]string
	tolerations []cluster.Toleration
}

// clusterCase is a cluster and the pods submitted to it, in order.
type clusterCase struct {
	name  string
	types []nodeType
	pods  []gpuPod
}

func (c *clusterCase) nodes() int {
	n := 0
	for _, t := range c.types {
		n += t.count
	}
	return n
}

func (c *clusterCase) gpus() int64 {
	var n int64
	for _, t := range c.types {
		n += int64(t.count) * int64(t.gpus)
	}
	return n
}

var (
	zones    = []string{"a", "b", "c"}
	products = []string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"}
	teams    = []string{"ml", "infra"}
)

// randomCase draws cluster i: two to five node types of one to five nodes
// (1, 2, 4 or 8 GPUs with 4 to 24 cores and 16 to 128 GiB a GPU, a zone
// and a GPU product label, a quarter of them tainted dedicated=TEAM:
// NoSchedule), and GPU pods (1, 2, 4 or 8 GPUs, 1 to 8 cores and 4 to 64
// GiB a GPU) asking for about 1.2 to 1.8 times the cluster's GPUs, so that
// some do not fit: a sixth select a zone, a tenth a GPU product, a fifth
// tolerate one team's taint and one in twenty any dedicated taint.
func randomCase(i int) clusterCase {
	r := rand.New(rand.NewPCG(26, uint64(i)))
	c := clusterCase{name: fmt.Sprintf("random-%03d", i)}
	for k := range 2 + r.IntN(4) {
		g := []int32{1, 2, 4, 4, 8, 8}[r.IntN(6)]
		t := nodeType{
			count:    1 + r.IntN(5),
			gpus:     g,
			milliCPU: int64(g) * 1000 * []int64{4, 8, 12, 16, 24}[r.IntN(5)],
			memMiB:   int64(g) * 1024 * []int64{16, 32, 64, 96, 128}[r.IntN(5)],
			labels: map[string]string{
				labelType: fmt.Sprint("t", k),
				labelZone: zones[r.IntN(len(zones))],
				labelGPU:  products[r.IntN(len(products))],
			},
		}
		if r.IntN(4) == 0 {
			t.taints = []cluster.Taint{{Key: taintKey, Value: teams[r.IntN(len(teams))], Effect: cluster.NoSchedule}}
		}
		c.types = append(c.types, t)
	}
	want := c.gpus() * int64(12+r.IntN(7)) / 10
	for asked := int64(0); asked < want; {
		g := []int32{1, 1, 2, 2, 4, 8}[r.IntN(6)]
		p := gpuPod{gpus: g, milliCPU: int64(g) * 1000 * int64(1+r.IntN(8)), memMiB: int64(g) * 4096 * int64(1+r.IntN(16))}
		switch x := r.IntN(30); {
		case x < 5:
			p.selector = map[string]string{labelZone: zones[r.IntN(len(zones))]}
		case x < 8:
			p.selector = map[string]string{labelGPU: products[r.IntN(len(products))]}
		}
		switch x := r.IntN(20); {
		case x < 4:
			p.tolerations = []cluster.Toleration{{Key: taintKey, Operator: "Equal", Value: teams[r.IntN(len(teams))], Effect: cluster.NoSchedule}}
		case x < 5:
			p.tolerations = []cluster.Toleration{{Key: taintKey, Operator: "Exists"}}
		}
		c.pods = append(c.pods, p)
		asked += int64(g)
	}
	return c
}

// spreadCase is in the shape of issue 26's spreading check (200 GPU pods
// on 20 nodes): two types of ten nodes of 8 GPUs (96 cores and 768 GiB,
// 192 cores and 1,536 GiB) and 200 pods of 1, 2, 4 or 8 GPUs, more than
// fit, with no selectors or taints, so that spreading meets many ties
// between nodes that are not interchangeable.
func spreadCase() clusterCase {
	r := rand.New(rand.NewPCG(26, 1<<20))
	c := clusterCase{name: "spread-20x8"}
	for k, size := range []int64{96, 192} {
		c.types = append(c.types, nodeType{count: 10, gpus: 8, milliCPU: size * 1000, memMiB: size * 8 * 1024,
			labels: map[string]string{labelType: fmt.Sprint("t", k)}})
	}
	for range 200 {
		g := []int32{1, 1, 2, 2, 4, 8}[r.IntN(6)]
		c.pods = append(c.pods, gpuPod{gpus: g, milliCPU: int64(g) * 1000 * int64(1+r.IntN(8)), memMiB: int64(g) * 4096 * int64(1+r.IntN(16))})
	}
	return c
}
