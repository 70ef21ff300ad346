package kueue

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// classifyOn prints, for each random case that differs, the first job
// where the two sides part and what kind of difference it is
// (XCHECK_CLASSIFY set), to group the open cases by cause.
var classifyOn = os.Getenv("XCHECK_CLASSIFY") != ""

// firstDivergence names the kind of the earliest difference (by the
// earliest time either side gives the job) and the circumstances of its
// job: the policy's fair sharing, its ClusterQueue's strategy and cohort,
// its selector and tolerations.
func firstDivergence(want, got map[string]verdict, jobs []job, p policy) string {
	when := func(v verdict) int64 {
		t := int64(1) << 62
		for _, x := range []int64{v.admitted, v.end} {
			if x >= 0 && x < t {
				t = x
			}
		}
		return t
	}
	var first *job
	firstT := int64(1) << 62
	for i := range jobs {
		j := &jobs[i]
		w, g := want[j.name], got[j.name]
		if w == g {
			continue
		}
		t := min(when(w), when(g))
		if t < firstT {
			first, firstT = j, t
		}
	}
	if first == nil {
		return "agree"
	}
	w, g := want[first.name], got[first.name]
	var kind string
	switch {
	case w.admitted < 0 && g.admitted >= 0:
		kind = "gpuplan admits, Kueue never"
	case w.admitted >= 0 && g.admitted < 0:
		kind = "Kueue admits, gpuplan never"
	case g.admitted < w.admitted:
		kind = "gpuplan admits earlier"
	case g.admitted > w.admitted:
		kind = "gpuplan admits later"
	case w.preemptions != g.preemptions:
		kind = fmt.Sprintf("preemptions differ (Kueue %d, gpuplan %d)", w.preemptions, g.preemptions)
	default:
		kind = "end differs"
	}
	lq := map[string]string{}
	for _, l := range p.local {
		lq[l.Name] = string(l.Spec.ClusterQueue)
	}
	var cqDesc string
	for _, cq := range p.queues {
		if cq.Name != lq[first.queue] {
			continue
		}
		var fl []string
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					if r.Name != "nvidia.com/gpu" {
						continue
					}
					s := fmt.Sprintf("%s:%s", f.Name, r.NominalQuota.String())
					if r.BorrowingLimit != nil {
						s += "/b" + r.BorrowingLimit.String()
					}
					if r.LendingLimit != nil {
						s += "/l" + r.LendingLimit.String()
					}
					fl = append(fl, s)
				}
			}
		}
		pr := cq.Spec.Preemption
		cqDesc = fmt.Sprintf("%s %s cohort=%s flavors=[%s] preempt=%s/%s", cq.Name, cq.Spec.QueueingStrategy, cq.Spec.CohortName,
			strings.Join(fl, " "), pr.WithinClusterQueue, pr.ReclaimWithinCohort)
		if pr.BorrowWithinCohort != nil {
			cqDesc += "/" + string(pr.BorrowWithinCohort.Policy)
		}
	}
	var sel []string
	for k, v := range first.selector {
		sel = append(sel, k+"="+v)
	}
	sort.Strings(sel)
	return fmt.Sprintf("%s | fair=%t | %s: Kueue %d/%d/%d gpuplan %d/%d/%d | %dx%d GPUs prio %d sel=%s tol=%d | %s",
		kind, p.fairSharing != nil, first.name, w.admitted, w.end, w.preemptions, g.admitted, g.end, g.preemptions,
		first.replicas, first.gpus, first.priority, strings.Join(sel, ","), len(first.tolerates), cqDesc)
}
