package kubescheduler

import (
	"fmt"
	"strconv"
	"strings"
)

// verdict is the comparison of one real run with gpuplan.
type verdict struct {
	// ties counts decisions where the real scheduler chose a node that is
	// not interchangeable with gpuplan's (another node type, or a used
	// node for an empty one) but that gpuplan's plugins find feasible and
	// score equal to its own choice: a tie the real scheduler broke at
	// random. gpuplan then follows the real choice.
	ties int
	// diverged, when set, is the first decision that is not a tie; the
	// comparison stops there.
	diverged string
	bound    int
	gpus     int64
	perNode  map[string]int
}

// compare walks the real run's decisions pod by pod beside gpuplan's
// scheduler (lowest-index tie break) on the same cluster. Nodes of one
// type are interchangeable: the first time the real scheduler uses a node
// it is paired with the (empty) node gpuplan chose, and from then on the
// two must agree on the pairing.
func compare(cc *clusterCase, p profileKind, real []string) (verdict, error) {
	v := verdict{perNode: map[string]int{}}
	gp, err := newGpuplan(cc, p, 0)
	if err != nil {
		return v, err
	}
	pair := map[string]int32{}
	taken := map[int32]bool{}
	gpName := func(n int32) string {
		if n < 0 {
			return "unschedulable"
		}
		k := gp.c.Nodes[n].Pool
		return nodeName(int(k), int(n-gp.first[k]))
	}
	for i := range cc.pods {
		g, err := gp.place(cc, i)
		if err != nil {
			return v, err
		}
		r := real[i]
		if r == "" {
			if g >= 0 {
				v.diverged = fmt.Sprintf("pod p%d (%s): kube-scheduler: unschedulable; gpuplan: %s", i, cc.describe(i), gpName(g))
				return v, nil
			}
			continue
		}
		k, j, err := parseNode(r)
		if err != nil || k >= len(cc.types) || j >= cc.types[k].count {
			return v, fmt.Errorf("pod p%d bound to unknown node %q", i, r)
		}
		target, ok := pair[r]
		if !ok {
			target = -1
			if g >= 0 && int(gp.c.Nodes[g].Pool) == k && !taken[g] {
				target = g
			} else {
				for n := gp.first[k]; n < gp.first[k]+int32(cc.types[k].count); n++ {
					if !taken[n] {
						target = n
						break
					}
				}
			}
		}
		if target != g {
			// Score both nodes in the state before pod i.
			if g >= 0 {
				if err := gp.release(cc, i); err != nil {
					return v, err
				}
			}
			feasible := gp.feasible(cc, i, target)
			st := gp.score(cc, i, target)
			if g < 0 || !feasible || gp.score(cc, i, g) != st {
				v.diverged = fmt.Sprintf("pod p%d (%s): kube-scheduler: %s; gpuplan: %s", i, cc.describe(i), r, gpName(g))
				if g >= 0 {
					v.diverged += fmt.Sprintf(" (gpuplan's scores: %s %d, %s %d; %s feasible: %v)", gpName(target), st, gpName(g), gp.score(cc, i, g), gpName(target), feasible)
				} else {
					v.diverged += fmt.Sprintf(" (%s feasible for gpuplan: %v)", gpName(target), feasible)
				}
				return v, nil
			}
			if err := gp.bind(cc, i, target); err != nil {
				return v, err
			}
			v.ties++
		}
		pair[r], taken[target] = target, true
		v.bound++
		v.gpus += int64(cc.pods[i].gpus)
		v.perNode[r]++
	}
	return v, nil
}

func parseNode(s string) (k, j int, err error) {
	a, b, ok := strings.Cut(strings.TrimPrefix(s, "t"), "-")
	if !ok {
		return 0, 0, fmt.Errorf("bad node name %q", s)
	}
	if k, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	j, err = strconv.Atoi(b)
	return k, j, err
}

// describe is pod i's requests and constraints, for messages.
func (cc *clusterCase) describe(i int) string {
	p := cc.pods[i]
	s := fmt.Sprintf("%d GPU, %dm cpu, %dMi", p.gpus, p.milliCPU, p.memMiB)
	if p.selector != nil {
		s += fmt.Sprintf(", selector %v", p.selector)
	}
	if p.tolerations != nil {
		s += fmt.Sprintf(", tolerations %v", p.tolerations)
	}
	return s
}
