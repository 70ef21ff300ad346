package kubescheduler

import (
	"fmt"
	"strings"
	"testing"
)

// randomClusters is how many random clusters each profile is checked on.
const randomClusters = 200

// TestKubeSchedulerPlacements runs kube-scheduler and gpuplan's scheduler
// on the same random clusters and pods under MostAllocated,
// LeastAllocated and the real default profile, and compares them decision
// by decision (compare): a decision that is neither the same (up to
// interchangeable nodes) nor a tie in gpuplan's own scores fails.
func TestKubeSchedulerPlacements(t *testing.T) {
	cases := make([]clusterCase, randomClusters)
	nodes, pods := 0, 0
	for i := range cases {
		cases[i] = randomCase(i)
		nodes += cases[i].nodes()
		pods += len(cases[i].pods)
	}
	for _, p := range []profileKind{mostAllocated, leastAllocated, kubeDefault} {
		exact, tied, ties, bound, gpus := 0, 0, 0, 0, int64(0)
		var diverged []string
		for i := range cases {
			cc := &cases[i]
			real, err := runReal(cc, p)
			if err != nil {
				t.Fatalf("%s %s: kube-scheduler: %v", p, cc.name, err)
			}
			v, err := compare(cc, p, real)
			if err != nil {
				t.Fatalf("%s %s: gpuplan: %v", p, cc.name, err)
			}
			switch {
			case v.diverged != "":
				diverged = append(diverged, cc.name+": "+v.diverged)
				t.Errorf("%s %s: %s", p, cc.name, v.diverged)
				continue
			case v.ties == 0:
				exact++
			default:
				tied++
				ties += v.ties
			}
			bound += v.bound
			gpus += v.gpus
		}
		accepted := "none"
		if tied > 0 {
			accepted = fmt.Sprintf("%d clusters with %d decisions where kube-scheduler broke a tie otherwise between nodes gpuplan scores equal and chose another than gpuplan's lowest index (gpuplan then followed it)", tied, ties)
		}
		fmt.Printf("xcheck kube-scheduler %s: %d random clusters (%d nodes, %d pods; kube-scheduler bound %d pods, %d GPUs): %d agree exactly pod by pod (%.1f%%), %d diverge; accepted differences: %s\n",
			p, randomClusters, nodes, pods, bound, gpus, exact, 100*float64(exact)/randomClusters, len(diverged), accepted)
		for _, d := range diverged {
			fmt.Printf("  divergence (%s): %s\n", p, d)
		}
	}
}

// spreadRuns is how many runs of each scheduler the distribution check
// compares.
const spreadRuns = 20

// alpha is the significance level of the six Mann-Whitney U tests
// together (two profiles, three measures): each is run at alpha/6
// (Bonferroni), so that make xcheck fails at random at most once in a
// hundred runs when the distributions are the same.
const alpha = 0.01

const perTest = alpha / 6

// TestKubeSchedulerSpreading compares, under LeastAllocated and the real
// default profile, where ties between nodes of the two types are common,
// the distributions over repeated runs of kube-scheduler (its random tie
// break) and of gpuplan with --tie-break random: pods bound, GPUs bound
// and pods on the fullest node, each by a two-sided Mann-Whitney U test
// at alpha 0.01/6. Every real run is also compared decision by decision.
func TestKubeSchedulerSpreading(t *testing.T) {
	cc := spreadCase()
	for _, p := range []profileKind{leastAllocated, kubeDefault} {
		var real, gp [3][]float64
		ties := 0
		for run := range spreadRuns {
			r, err := runReal(&cc, p)
			if err != nil {
				t.Fatal(err)
			}
			v, err := compare(&cc, p, r)
			if err != nil {
				t.Fatal(err)
			}
			if v.diverged != "" {
				t.Errorf("%s %s run %d: %s", p, cc.name, run, v.diverged)
				continue
			}
			ties += v.ties
			real[0] = append(real[0], float64(v.bound))
			real[1] = append(real[1], float64(v.gpus))
			real[2] = append(real[2], float64(maxOf(v.perNode)))

			s, err := newGpuplan(&cc, p, uint64(run+1))
			if err != nil {
				t.Fatal(err)
			}
			per := map[int32]int{}
			b, g := 0, int64(0)
			for i := range cc.pods {
				n, err := s.place(&cc, i)
				if err != nil {
					t.Fatal(err)
				}
				if n >= 0 {
					per[n]++
					b++
					g += int64(cc.pods[i].gpus)
				}
			}
			gp[0] = append(gp[0], float64(b))
			gp[1] = append(gp[1], float64(g))
			gp[2] = append(gp[2], float64(maxOf(per)))
		}
		var line []string
		for k, name := range []string{"pods bound", "GPUs bound", "pods on the fullest node"} {
			pv := mannWhitney(real[k], gp[k])
			line = append(line, fmt.Sprintf("%s kube-scheduler %s, gpuplan %s, p = %.2f", name, span(real[k]), span(gp[k]), pv))
			if pv < perTest {
				t.Errorf("%s %s: %s differ: kube-scheduler %v, gpuplan %v (Mann-Whitney p = %.4f < %.4f)", p, cc.name, name, real[k], gp[k], pv, perTest)
			}
		}
		fmt.Printf("xcheck kube-scheduler %s, %s (%d nodes, %d pods), %d runs each (Mann-Whitney U, alpha %g/6): %s; %d tied decisions over the real runs, no other difference\n",
			p, cc.name, cc.nodes(), len(cc.pods), spreadRuns, alpha, strings.Join(line, "; "), ties)
	}
}

func maxOf[K comparable](m map[K]int) int {
	best := 0
	for _, v := range m {
		best = max(best, v)
	}
	return best
}

func span(x []float64) string {
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return fmt.Sprintf("%g-%g", lo, hi)
}
