package models

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// MilliGPU is one GPU in thousandths.
const MilliGPU = 1000

// PodShape is a pod's demand as GPU fragmentation sees it (memory plays no
// part): CPU, the number of GPUs and the thousandths of each it needs
// (1000 for whole GPUs, below for a share of one GPU, 0 for a CPU-only
// pod), and the GPU models it may use ("" any; else "A|B").
type PodShape struct {
	MilliCPU int64
	GPUs     int32
	GPUMilli int32
	Models   string
}

// TotalMilli is the shape's GPU demand in thousandths of a GPU.
func (s PodShape) TotalMilli() int64 { return int64(s.GPUs) * int64(s.GPUMilli) }

func (s PodShape) String() string {
	m := ""
	if s.Models != "" {
		m = " on " + s.Models
	}
	return fmt.Sprintf("cpu %dm, %d x %d milli-GPU%s", s.MilliCPU, s.GPUs, s.GPUMilli, m)
}

func (s PodShape) allows(model string) bool {
	if s.Models == "" {
		return true
	}
	for _, m := range strings.Split(s.Models, "|") {
		if m == model {
			return true
		}
	}
	return false
}

// PodMix is a workload's typical pods: the most common shapes and their
// shares (summing to 1), as in the FGD paper (Weng et al., ATC'23).
type PodMix struct {
	Shapes  []PodShape
	Weights []float64
}

// NewPodMix keeps the most common shapes until they cover at least
// coverage (0..1] of all pods, and renormalises their shares. Shapes with
// equal counts are ordered by their fields, so the mix is deterministic.
func NewPodMix(counts map[PodShape]int, coverage float64) (*PodMix, error) {
	if coverage <= 0 || coverage > 1 {
		return nil, fmt.Errorf("pod mix coverage %g is outside (0, 1]", coverage)
	}
	type kv struct {
		s PodShape
		n int
	}
	var list []kv
	total := 0
	for s, n := range counts {
		if n > 0 {
			list = append(list, kv{s, n})
			total += n
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("pod mix of no pods")
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.n != b.n {
			return a.n > b.n
		}
		if a.s.GPUs != b.s.GPUs {
			return a.s.GPUs < b.s.GPUs
		}
		if a.s.GPUMilli != b.s.GPUMilli {
			return a.s.GPUMilli < b.s.GPUMilli
		}
		if a.s.MilliCPU != b.s.MilliCPU {
			return a.s.MilliCPU < b.s.MilliCPU
		}
		return a.s.Models < b.s.Models
	})
	m := &PodMix{}
	cum := 0
	for _, x := range list {
		if float64(cum) >= coverage*float64(total) {
			break
		}
		m.Shapes = append(m.Shapes, x.s)
		m.Weights = append(m.Weights, float64(x.n))
		cum += x.n
	}
	for i := range m.Weights {
		m.Weights[i] /= float64(cum)
	}
	return m, nil
}

// NodeState is what GPU fragmentation looks at on a node: its free CPU,
// the free thousandths of each of its GPUs, and its GPU model.
type NodeState struct {
	MilliCPU int64
	GPUFree  []int32
	Model    string
}

// Idle is the node's free GPU capacity in thousandths.
func (n NodeState) Idle() int64 {
	var s int64
	for _, f := range n.GPUFree {
		s += int64(f)
	}
	return s
}

// Fragmentation is the FGD measure of a node for a pod mix: the expected
// free GPU capacity (in thousandths) that a pod drawn from the mix could not
// use. For each shape: if the node cannot host it at all (too little CPU,
// too few GPUs with enough free, a GPU model it may not use, or it needs no
// GPU) all free GPU capacity counts; if it can, the free capacity of the
// GPUs too small for its per-GPU demand counts. Shapes are weighted by
// their share of the mix.
func Fragmentation(n NodeState, mix *PodMix) float64 {
	idle := float64(n.Idle())
	if idle == 0 || mix == nil {
		return 0
	}
	var frag float64
	for i, s := range mix.Shapes {
		w := mix.Weights[i]
		if s.GPUMilli == 0 || !s.allows(n.Model) || n.MilliCPU < s.MilliCPU {
			frag += w * idle
			continue
		}
		var fit int32
		var small int64
		for _, f := range n.GPUFree {
			if f >= s.GPUMilli {
				fit++
			} else {
				small += int64(f)
			}
		}
		if fit >= s.GPUs {
			frag += w * float64(small)
		} else {
			frag += w * idle
		}
	}
	return frag
}

// Sigmoid is the logistic function 1/(1+e^-x).
func Sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
