package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gpuplan.dev/gpuplan/sim"
)

// AdmissionLine is one Kueue ClusterQueue over the run.
type AdmissionLine struct {
	Name     string `json:"name"`
	Cohort   string `json:"cohort,omitempty"`
	Strategy string `json:"strategy"`
	// NominalGPUs is the queue's GPU quota; MeanGPUsUsed what its admitted
	// workloads held on average.
	NominalGPUs  int64   `json:"nominalGPUs"`
	MeanGPUsUsed float64 `json:"meanGPUsUsed"`
	// CohortShare is the queue's part of the GPUs its cohort's queues
	// used; NominalShare its part of the cohort's nominal GPUs (what a
	// share in proportion to quota would give it).
	CohortShare  float64 `json:"cohortShare,omitempty"`
	NominalShare float64 `json:"nominalShare,omitempty"`
	// FairShare is its part of the GPUs a weighted max-min division of
	// the cohort among the queues' demands (used plus pending) would have
	// given, moment by moment: each queue its demand up to its nominal
	// quota, then what others leave unused by weight, within borrowing
	// and lending limits. MeanFairGPUs is that division's mean for it.
	FairShare    float64 `json:"fairShare,omitempty"`
	MeanFairGPUs float64 `json:"meanFairGPUs"`
	// Weight is its fair-sharing weight (given when fair sharing is on).
	Weight *float64 `json:"weight,omitempty"`
	// BorrowedGPUHours were used beyond nominal quota; LentGPUHours are
	// the cohort's borrowing out of this queue's unused quota.
	BorrowedGPUHours float64 `json:"borrowedGPUHours"`
	LentGPUHours     float64 `json:"lentGPUHours"`
	Jobs             int     `json:"jobs"`
	Admissions       int     `json:"admissions"`
	// PreemptionsSuffered evicted this queue's jobs; PreemptionsCaused
	// were made for them, of which Reclaims took back lent quota.
	PreemptionsSuffered int `json:"preemptionsSuffered"`
	PreemptionsCaused   int `json:"preemptionsCaused"`
	Reclaims            int `json:"reclaims"`
	// PodsReadyTimeouts are waitForPodsReady's evictions of its workloads,
	// Deactivated those given up after the backoff limit.
	PodsReadyTimeouts int `json:"podsReadyTimeouts,omitempty"`
	Deactivated       int `json:"deactivated,omitempty"`
	// TimeToAdmission is submit to first admission, over the jobs
	// admitted; PendingAtEnd the jobs never admitted.
	TimeToAdmission Stats `json:"timeToAdmission"`
	PendingAtEnd    int   `json:"pendingAtEnd"`
}

func summarizeAdmission(res *sim.Result) []AdmissionLine {
	a := res.Admission
	idx := map[string]int{}
	lines := make([]AdmissionLine, len(a.Queues))
	waits := make([][]float64, len(a.Queues))
	span := float64(res.End)
	for i, q := range a.Queues {
		idx[q.Name] = i
		l := AdmissionLine{Name: q.Name, Cohort: q.Cohort, Strategy: q.Strategy, NominalGPUs: q.NominalGPUs,
			BorrowedGPUHours: round(q.BorrowedGPUMs/float64(sim.Hour), 3), LentGPUHours: round(q.LentGPUMs/float64(sim.Hour), 3),
			Admissions: q.Admissions, PreemptionsCaused: q.PreemptionsCaused, Reclaims: q.Reclaims,
			PodsReadyTimeouts: q.PodsReadyTimeouts, Deactivated: q.Deactivated}
		if span > 0 {
			l.MeanGPUsUsed = round(q.UsedGPUMs/span, 3)
			l.MeanFairGPUs = round(q.FairGPUMs/span, 3)
		}
		if a.FairSharing != nil {
			w := q.Weight
			l.Weight = &w
		}
		lines[i] = l
	}
	for c := range lines {
		if lines[c].Cohort == "" {
			continue
		}
		var used, nominal, fair float64
		for k, q := range a.Queues {
			if lines[k].Cohort == lines[c].Cohort {
				used += q.UsedGPUMs
				nominal += float64(q.NominalGPUs)
				fair += q.FairGPUMs
			}
		}
		if used > 0 {
			lines[c].CohortShare = round(a.Queues[c].UsedGPUMs/used, 4)
		}
		if fair > 0 {
			lines[c].FairShare = round(a.Queues[c].FairGPUMs/fair, 4)
		}
		if nominal > 0 {
			lines[c].NominalShare = round(float64(a.Queues[c].NominalGPUs)/nominal, 4)
		}
	}
	for _, j := range res.Records() {
		k, ok := idx[a.LocalQueues[j.Queue]]
		if !ok || j.Outcome == sim.Unschedulable {
			continue
		}
		lines[k].Jobs++
		lines[k].PreemptionsSuffered += int(j.Preemptions)
		if w := j.AdmissionWait(); w >= 0 {
			waits[k] = append(waits[k], float64(w))
		} else if j.Outcome == sim.Pending {
			lines[k].PendingAtEnd++
		}
	}
	for k := range lines {
		lines[k].TimeToAdmission = Describe(waits[k])
	}
	return lines
}

func admissionHeader() []string {
	return []string{"ClusterQueue", "cohort", "strategy", "nominal GPUs", "mean GPUs used", "cohort share: used / fair (nominal)", "borrowed GPU-h", "lent GPU-h",
		"jobs", "admission p50", "p95", "p99", "preempted", "preempting (reclaims)", "never admitted"}
}

func admissionRows(ls []AdmissionLine) [][]string {
	var rows [][]any
	for _, l := range ls {
		share := "-"
		if l.Cohort != "" {
			share = fmt.Sprintf("%s / %s (%s)", pct(l.CohortShare), pct(l.FairShare), pct(l.NominalShare))
		}
		cohort := l.Cohort
		if cohort == "" {
			cohort = "-"
		}
		t := l.TimeToAdmission
		rows = append(rows, []any{l.Name, cohort, l.Strategy, fmt.Sprint(l.NominalGPUs), fmt.Sprintf("%.2f", l.MeanGPUsUsed), share,
			fmt.Sprintf("%.1f", l.BorrowedGPUHours), fmt.Sprintf("%.1f", l.LentGPUHours), fmt.Sprint(l.Jobs),
			durSecs(t.P50), durSecs(t.P95), durSecs(t.P99), fmt.Sprint(l.PreemptionsSuffered), fmt.Sprintf("%d (%d)", l.PreemptionsCaused, l.Reclaims), fmt.Sprint(l.PendingAtEnd)})
	}
	return columns(rows)
}

func writeAdmissionMarkdown(w io.Writer, s *Summary) {
	if len(s.Admission) == 0 {
		return
	}
	fmt.Fprintf(w, "## Admission (Kueue)\n\n")
	if s.FairSharing != nil {
		fmt.Fprintf(w, "%s\n\n", fairNote(s))
	}
	mdTable(w, admissionHeader(), admissionRows(s.Admission))
	fmt.Fprintf(w, "%s\n\n", admissionNote)
	if n := podsReadyNote(s.Admission); n != "" {
		fmt.Fprintf(w, "%s\n\n", n)
	}
}

func writeAdmissionTable(w io.Writer, s *Summary) {
	if len(s.Admission) == 0 {
		return
	}
	fmt.Fprintln(w)
	if s.FairSharing != nil {
		fmt.Fprintln(w, fairNote(s))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	h := admissionHeader()
	for i := range h {
		h[i] = strings.ToUpper(h[i])
	}
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	for _, r := range admissionRows(s.Admission) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// weights lists the queues' fair-sharing weights.
func weights(ls []AdmissionLine) string {
	var out []string
	for _, l := range ls {
		if l.Weight != nil && !strings.HasPrefix(l.Name, "cohort/") {
			out = append(out, fmt.Sprintf("%s %g", l.Name, *l.Weight))
		}
	}
	return strings.Join(out, ", ")
}

const admissionNote = "Time to admission is submit to first admission. Cohort share is the queue's part of the GPUs its cohort used, then its part of a fair division (moment by moment, a weighted max-min division of the cohort tree's quota among the queues' demands, used plus pending, root to leaves, each first getting its demand up to its own quota), then its part of the cohort's nominal quota."

func fairNote(s *Summary) string {
	return fmt.Sprintf("Fair sharing is on (preemption strategies %s); weights: %s.", strings.Join(s.FairSharing, ", "), weights(s.Admission))
}

func admissionNotes(s *Summary) []string {
	out := []string{admissionNote}
	if s.FairSharing != nil {
		out = []string{fairNote(s), admissionNote}
	}
	if n := podsReadyNote(s.Admission); n != "" {
		out = append(out, n)
	}
	return out
}

// podsReadyNote counts waitForPodsReady's evictions per queue ("" when
// there were none).
func podsReadyNote(ls []AdmissionLine) string {
	var parts []string
	for _, l := range ls {
		if l.PodsReadyTimeouts > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%d deactivated)", l.Name, l.PodsReadyTimeouts, l.Deactivated))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Evicted by waitForPodsReady (pods not all running within the timeout), then requeued: " + strings.Join(parts, ", ") + "."
}
