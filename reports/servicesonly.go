package reports

import (
	"fmt"
	"math"
	"slices"
)

// A run of inference services alone has no jobs: its reports leave out
// every figure that counts jobs (completed, completion times, waits,
// work lost, cost per useful GPU-hour) instead of printing zeros, and
// measure the money by the requests served.

// isJobColumn says whether a run-comparison column counts jobs.
func isJobColumn(h string) bool {
	switch h {
	case "GPU-h lost", "lost cost", "$/useful GPU-h", "completed", "failed", "disruptions", "p95 wait",
		"p50 JCT*", "p95 JCT*", "same-work saving", "mean step", "both completed", "mean JCT, both",
		"as given, both", "slower", "only this", "only as given":
		return true
	}
	return false
}

// billPerMillion is the run-level cost per million requests of a run of
// services alone, named apart from a service's own (what its replica
// pods held): the bill counts idle nodes too.
const billPerMillion = "bill $/M requests"

// forRuns fits a run-comparison table to s: in a run of services alone
// its job columns go and its cost per million requests is named as the
// whole bill's.
func forRuns(s *Summary, h []string, rows [][]string) ([]string, [][]string) {
	if !servicesOnly(s) {
		return h, rows
	}
	var keep []int
	var nh []string
	for i, x := range h {
		if isJobColumn(x) {
			continue
		}
		if x == "$/M requests" {
			x = billPerMillion
		}
		keep = append(keep, i)
		nh = append(nh, x)
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		nr := make([]string, 0, len(keep))
		for _, i := range keep {
			if i < len(r) {
				nr = append(nr, r[i])
			}
		}
		out = append(out, nr)
	}
	return nh, out
}

// runsNote is the note under a run comparison: the censored completion
// times, or for services alone what the bill's cost per million
// requests counts.
func runsNote(s *Summary) string {
	if servicesOnly(s) {
		return servedBillNote
	}
	return censoredNote
}

// servedBillNote tells the bill's cost per million requests from a
// service's own.
const servedBillNote = "A run's bill $/M requests is the whole bill, idle nodes included, over the requests served; a service's $/M requests is what its own replica pods held. Fewer replicas lower a service's figure but not the bill unless the nodes scale down with them: a fixed pool bills the same."

// replicaDisruptions writes, for a run of services alone whose nodes can
// be lost, what lost nodes and preemption did to its replicas ("" otherwise).
func replicaDisruptions(s *Summary) string {
	if !servicesOnly(s) || s.Disruptions == nil {
		return ""
	}
	ev, lost := 0, 0
	for _, v := range s.Services {
		ev += v.Preempted
		lost += v.Disrupted
	}
	return fmt.Sprintf("Disruptions: %d replica pods lost with their node, %d evicted by the scheduler or admission (no jobs: inference services only).", lost, ev)
}

// variantTable, pairedTable, spotTable and spotCurveTable are the run
// comparisons' headers and rows, fitted to s.
func variantTable(s *Summary) ([]string, [][]string) {
	return forRuns(s, variantHeaderFor(s.Variants), variantRows(s.Variants))
}

func pairedTable(s *Summary) ([]string, [][]string) {
	h, r := forRuns(s, pairedHeaderFor(s.Variants), pairedRows(s.Variants))
	if servicesOnly(s) && !slices.Contains(h, billPerMillion) {
		// Nothing but the run's name is left.
		return h, nil
	}
	return h, r
}

func spotTable(s *Summary, sc *SpotComparison) ([]string, [][]string) {
	return forRuns(s, spotHeaderFor(sc), spotRows(sc))
}

func spotCurveTable(s *Summary, c *SpotCurve) ([]string, [][]string) {
	return forRuns(s, spotCurveHeaderFor(c), spotCurveRows(c))
}

// pairedCaption and pairedCaptionShort name the like-for-like table: by
// job, or for services alone by the requests served.
func pairedCaption(s *Summary) string {
	if servicesOnly(s) {
		return "Like for like against the scenario as given: the bill for the same requests served."
	}
	return "Like for like against the scenario as given: completion times over the jobs both runs completed, and cost for the same completed work."
}

func pairedCaptionShort(s *Summary) string {
	if servicesOnly(s) {
		return "Like for like against the scenario as given (the bill for the same requests served):"
	}
	return "Like for like against the scenario as given (jobs both runs completed; cost for the same work):"
}

// signedPct writes a change in percent with its sign, one decimal; a
// change that rounds to nothing is +0.0%, never -0.0%.
func signedPct(x float64) string {
	r := math.Round(x*10) / 10
	if r == 0 {
		r = 0 // not -0
	}
	return fmt.Sprintf("%+.1f%%", r)
}
