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
			Admissions: q.Admissions, PreemptionsCaused: q.PreemptionsCaused, Reclaims: q.Reclaims}
		if span > 0 {
			l.MeanGPUsUsed = round(q.UsedGPUMs/span, 3)
		}
		lines[i] = l
	}
	for c := range lines {
		if lines[c].Cohort == "" {
			continue
		}
		var used, nominal float64
		for k, q := range a.Queues {
			if lines[k].Cohort == lines[c].Cohort {
				used += q.UsedGPUMs
				nominal += float64(q.NominalGPUs)
			}
		}
		if used > 0 {
			lines[c].CohortShare = round(a.Queues[c].UsedGPUMs/used, 4)
		}
		if nominal > 0 {
			lines[c].NominalShare = round(float64(a.Queues[c].NominalGPUs)/nominal, 4)
		}
	}
	for i := range res.Jobs {
		j := &res.Jobs[i]
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
	return []string{"ClusterQueue", "cohort", "strategy", "nominal GPUs", "mean GPUs used", "cohort share (nominal)", "borrowed GPU-h", "lent GPU-h",
		"jobs", "admission p50", "p95", "p99", "preempted", "preempting (reclaims)", "never admitted"}
}

func admissionRows(ls []AdmissionLine) [][]string {
	var rows [][]string
	for _, l := range ls {
		share := "-"
		if l.Cohort != "" {
			share = fmt.Sprintf("%s (%s)", pct(l.CohortShare), pct(l.NominalShare))
		}
		cohort := l.Cohort
		if cohort == "" {
			cohort = "-"
		}
		t := l.TimeToAdmission
		rows = append(rows, []string{l.Name, cohort, l.Strategy, fmt.Sprint(l.NominalGPUs), fmt.Sprintf("%.2f", l.MeanGPUsUsed), share,
			fmt.Sprintf("%.1f", l.BorrowedGPUHours), fmt.Sprintf("%.1f", l.LentGPUHours), fmt.Sprint(l.Jobs),
			Human(t.P50), Human(t.P95), Human(t.P99), fmt.Sprint(l.PreemptionsSuffered), fmt.Sprintf("%d (%d)", l.PreemptionsCaused, l.Reclaims), fmt.Sprint(l.PendingAtEnd)})
	}
	return rows
}

func writeAdmissionMarkdown(w io.Writer, s *Summary) {
	if len(s.Admission) == 0 {
		return
	}
	fmt.Fprintf(w, "## Admission (Kueue)\n\n")
	mdTable(w, admissionHeader(), admissionRows(s.Admission))
	fmt.Fprintf(w, "Time to admission is submit to first admission. Cohort share is the queue's part of the GPUs its cohort used, beside its part of the cohort's nominal quota.\n\n")
}

func writeAdmissionTable(w io.Writer, s *Summary) {
	if len(s.Admission) == 0 {
		return
	}
	fmt.Fprintln(w)
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
