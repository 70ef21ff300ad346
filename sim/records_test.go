package sim

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// A plain run builds each job's record as the job finishes and drops the
// job table's chunks as they empty, reusing them once the scheduler holds
// no finished job; a run with preemption on builds every record at the
// end. With every priority equal preemption never fires, so the two must
// agree record for record, whatever the records hint: on a cluster that
// queues (finished jobs linger in the queue's buckets) and on one that
// does not (chunks are reused).
func TestRecordsAsJobsFinishEqualRecordsAtTheEnd(t *testing.T) {
	for _, nodes := range []int{2, 64} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) { recordsAgree(t, nodes) })
	}
}

func recordsAgree(t *testing.T, nodes int) {
	const n = 6000 // six chunks of the job table and of the records
	var jobs []cluster.JobSpec
	unschedulable := 0
	for i := 0; i < n; i++ {
		g := int32(1) << (i % 4)
		j := job(fmt.Sprintf("j%d", i), Time(i)*10*Second, Time(1+i%7)*40*Second, 1, g)
		if i%100 == 7 {
			j.Pod.GPUs = 16 // no 8-GPU node holds it
			unschedulable++
		}
		if i%50 == 3 {
			j.Deadline = j.Submit + 5*Second
		}
		jobs = append(jobs, j)
	}
	// 2 nodes: 16 GPUs offered about 3.75 x 160 s / 10 s = 60, a queue
	// builds up, and the horizon leaves jobs running and pending.
	horizon := Time(n) * 10 * Second / 2
	cfg := Config{Pools: []cluster.PoolSpec{pool("p", nodes, 8)}, Horizon: horizon}
	atEnd := cfg
	atEnd.Preemption = true
	want := run(t, atEnd, jobs...)
	require.Len(t, want.Jobs, n/2, "jobs submitted before the horizon")
	counts := map[Outcome]int{}
	for i, r := range want.Jobs {
		require.Equal(t, int32(i), r.ID)
		counts[r.Outcome]++
	}
	require.Equal(t, unschedulable/2, counts[Unschedulable])
	require.Positive(t, counts[Completed])
	require.Positive(t, counts[Running])
	if nodes == 2 {
		require.Positive(t, counts[Abandoned])
		require.Positive(t, counts[Pending])
	}
	for _, hint := range []int{0, n / 2, 100, 10 * n} {
		cfg.JobsHint = hint
		got := run(t, cfg, jobs...)
		require.Equal(t, want.Jobs, got.Jobs, "hint %d", hint)
	}
	// Records moved to the temporary file as their chunks fill (after
	// the first record, or once two chunks are whole), as jobs finish or at the
	// end (preemption on), read back the same, more than once.
	for _, base := range []Config{cfg, atEnd} {
		for _, keep := range []int{1, recChunk + 1} {
			c := base
			c.JobsHint, c.RecordsInMemory, c.TempDir = n, keep, t.TempDir()
			got := run(t, c, jobs...)
			require.True(t, got.Spilled(), "keep %d preemption %v", keep, c.Preemption)
			require.Nil(t, got.Jobs)
			require.Equal(t, len(want.Jobs), got.NumJobs())
			for range 2 {
				var recs []JobRecord
				for i, r := range got.Records() {
					require.Equal(t, len(recs), i)
					recs = append(recs, *r)
				}
				require.NoError(t, got.RecordsErr())
				require.Equal(t, want.Jobs, recs, "keep %d, preemption %v", keep, c.Preemption)
			}
		}
	}
}

// A record is kept for every job of a run: 208 bytes, no padding. The
// fields are 19 of 8 bytes (strings count 2, the three Held values 3),
// 13 of 4 and 3 of 1: 152 + 52 + 3 = 207, rounded up to 8.
func TestJobRecordSize(t *testing.T) {
	require.Equal(t, uintptr(208), unsafe.Sizeof(JobRecord{}))
}

// Jobs with the same diagnosis (and no other rare part) share it: two
// 16-GPU jobs on one 8-GPU node are unschedulable for the same reason, a
// third job waits behind a running one until the horizon; setting one
// record's diagnosis changes no other.
func TestDiagnosisShared(t *testing.T) {
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}, Horizon: 10 * Minute},
		job("big1", 0, Minute, 1, 16), job("big2", 0, Minute, 1, 16), job("long", 0, Hour, 1, 8), job("next", Minute, Minute, 1, 8))
	big1, big2, long, next := &res.Jobs[0], &res.Jobs[1], &res.Jobs[2], &res.Jobs[3]
	require.Equal(t, []Outcome{Unschedulable, Unschedulable, Running, Pending}, []Outcome{big1.Outcome, big2.Outcome, long.Outcome, next.Outcome})
	require.Equal(t, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", big1.Diagnosis())
	require.Same(t, big1.rare, big2.rare)
	require.Empty(t, long.Diagnosis())
	require.Nil(t, long.rare)
	require.Equal(t, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", next.Diagnosis())
	big1.SetDiagnosis("changed")
	require.Equal(t, "changed", big1.Diagnosis())
	require.Equal(t, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", big2.Diagnosis())
	big1.SetDiagnosis("")
	require.Nil(t, big1.rare, "nothing rare left")
}

// Records with the same recovery settings and nothing else rare share
// their rare part; setting one's usage leaves the others as they were.
func TestRecoverySharedUntilUsageSet(t *testing.T) {
	rcv := &cluster.Recovery{BackoffLimit: 3}
	a, b := job("a", 0, Minute, 1, 1), job("b", Minute, Minute, 1, 1)
	a.Recovery, b.Recovery = rcv, rcv
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 1, 8)}}, a, b, job("c", 2*Minute, Minute, 1, 1))
	ra, rb, rc := &res.Jobs[0], &res.Jobs[1], &res.Jobs[2]
	require.Same(t, rcv, ra.Recovery())
	require.Same(t, rcv, rb.Recovery())
	require.Nil(t, rc.Recovery())
	require.Same(t, ra.rare, rb.rare, "shared")
	require.Nil(t, rc.rare)

	lost := PoolUsage{Pool: 0, Held: [3]int64{10, 20, 30}, Lost: [3]int64{1, 2, 3}}
	ra.SetUsage([]PoolUsage{lost})
	require.Equal(t, []PoolUsage{lost}, slices.Collect(ra.Usage()))
	require.Same(t, rcv, ra.Recovery())
	require.Equal(t, []PoolUsage{{Pool: 0, Held: [3]int64{1000 * Minute, 1000 * Minute, 1024 * Minute}}}, slices.Collect(rb.Usage()))
	require.Same(t, rcv, rb.Recovery())
	ra.SetDiagnosis("why")
	require.Equal(t, "why", ra.Diagnosis())
	require.Equal(t, []PoolUsage{lost}, slices.Collect(ra.Usage()))
	require.Empty(t, rb.Diagnosis())
	ra.SetUsage(nil)
	require.Empty(t, slices.Collect(ra.Usage()))
	require.Same(t, rcv, ra.Recovery())
	require.Equal(t, "why", ra.Diagnosis())
}

// Usage gives back what SetUsage was given, whether it fits in the record
// (one pool, nothing lost or checkpointed) or needs a list; a record made
// by hand with no usage has none.
func TestUsageKeptInPlaceOrInAList(t *testing.T) {
	one := PoolUsage{Pool: 0, Held: [3]int64{3, 2, 1}}
	lost := PoolUsage{Pool: 2, Held: [3]int64{10, 20, 30}, Lost: [3]int64{1, 2, 3}}
	ckpt := PoolUsage{Pool: 1, Held: [3]int64{10, 20, 30}, Checkpoint: [3]int64{0, 0, 4}}
	for _, us := range [][]PoolUsage{nil, {one}, {{Pool: 5}}, {lost}, {ckpt}, {one, lost}, {lost, one, ckpt}} {
		var r JobRecord
		require.Empty(t, slices.Collect(r.Usage()))
		r.SetUsage(us)
		got := slices.Collect(r.Usage())
		if len(us) == 0 {
			require.Empty(t, got)
			continue
		}
		require.Equal(t, us, got)
		require.Equal(t, len(us) == 1 && us[0].Lost == [3]int64{} && us[0].Checkpoint == [3]int64{}, r.rare == nil, "in place: %v", us)
		for range r.Usage() {
			break // stopping early is allowed
		}
	}
}

// The usage a run records, worked out by hand: a job of one pod (2 GPUs,
// 1 CPU, 1 GiB) for 10 minutes holds 2,000 milli-GPU, 1,000 milli-CPU and
// 1,024 MiB for 600,000 ms in its one pool; a gang of two 8-GPU pods on a
// cluster of two one-node pools holds one node of each for 5 minutes.
func TestRecordedUsage(t *testing.T) {
	const d1, d2 = 10 * Minute, 5 * Minute
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("a", 1, 8), pool("b", 1, 8)}},
		job("small", 0, d1, 1, 2), job("gang", d1, d2, 2, 8))
	require.Len(t, res.Jobs, 2)
	small, gang := &res.Jobs[0], &res.Jobs[1]
	require.Equal(t, []PoolUsage{{Pool: small.Pool, Held: [3]int64{2000 * d1, 1000 * d1, 1024 * d1}}}, slices.Collect(small.Usage()))
	require.Nil(t, small.rare, "one pool, nothing lost: in place")
	require.Equal(t, int64(2000*d1), small.HeldMilliMs)
	got := slices.Collect(gang.Usage())
	require.Len(t, got, 2)
	require.Equal(t, gang.Pool, got[0].Pool, "the first pod's pool first")
	require.ElementsMatch(t, []int32{0, 1}, []int32{got[0].Pool, got[1].Pool})
	for _, u := range got {
		require.Equal(t, [3]int64{8000 * d2, 1000 * d2, 1024 * d2}, u.Held)
		require.Zero(t, u.Lost)
		require.Zero(t, u.Checkpoint)
	}
	require.Equal(t, int64(2*8000*d2), gang.HeldMilliMs)
}

// An admission run is plain too: records built as jobs finish, chunks
// dropped, and the events left queued for finished jobs (waitForPodsReady
// timeouts, requeues after one) dropped with them. The same run with
// every record built at the end must agree record for record, and so must
// the admission figures: with quota borrowed and reclaimed by preemption
// (victims that checkpoint write a last checkpoint first), jobs whose
// deadline passes while they wait for admission, and waitForPodsReady
// evicting admitted jobs that wait too long for nodes (a quota twice the
// cluster).
func TestAdmissionRecordsAsJobsFinishEqualRecordsAtTheEnd(t *testing.T) {
	const n = 6000
	var jobs []cluster.JobSpec
	for i := 0; i < n; i++ {
		// team-b's jobs come in bursts of 200 every 600: team-a borrows
		// its quota in between and gives it back by preemption.
		q := "team-a"
		if i/200%3 == 2 {
			q = "team-b"
		}
		j := queued(job(fmt.Sprintf("j%d", i), Time(i)*10*Second, Time(1+i%7)*10*Second, 1, int32(1)<<(i%4)), q)
		if i%5 == 0 {
			j.Recovery = &cluster.Recovery{CheckpointInterval: 20 * Second, CheckpointCost: 2 * Second, BackoffLimit: 6}
		}
		if i%50 == 3 {
			j.Deadline = j.Submit + 3*Minute
		}
		if i%100 == 7 {
			// No 8-GPU node holds it; it waits in its queue (as Kueue
			// queues it) until its deadline deletes it.
			j.Pod.GPUs = 16
			j.Deadline = j.Submit + 5*Minute
		}
		jobs = append(jobs, j)
	}
	reclaim := twoTeams("org", admission.BestEffortFIFO, admission.Any)
	wfpr := twoTeams("org", admission.BestEffortFIFO, admission.Any)
	for q := range wfpr.ClusterQueues {
		reclaim.ClusterQueues[q].Groups[0].Flavors[0].Resources[2] = quota(8)
		wfpr.ClusterQueues[q].Groups[0].Flavors[0].Resources[2] = quota(16)
	}
	wfpr.WaitForPodsReady = &admission.WaitForPodsReady{Timeout: 2 * Minute, BackoffBase: Minute, BackoffMax: Hour, BackoffLimit: -1}
	for _, c := range []struct {
		name string
		adm  *admission.Spec
	}{{"reclaim", reclaim}, {"waitForPodsReady", wfpr}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Pools: []cluster.PoolSpec{pool("p", 2, 8)}, Admission: c.adm, Horizon: Time(n) * 10 * Second * 9 / 10, JobsHint: 1000}
			results := [2]*Result{}
			for k, plain := range []bool{false, true} {
				cfg.Workload = &SliceSource{Jobs: jobs}
				r, err := newRunner(cfg)
				require.NoError(t, err)
				require.True(t, r.jobs.plain, "an admission run is plain")
				r.jobs.plain = plain
				res, err := r.run()
				require.NoError(t, err)
				results[k] = res
				if plain {
					require.Positive(t, r.jobs.reused, "slots of recorded jobs reused")
					if c.adm.WaitForPodsReady != nil {
						require.Positive(t, r.jobs.stale, "timeouts queued for jobs whose state was dropped")
					}
				}
			}
			want, got := results[0], results[1]
			require.Equal(t, want.Jobs, got.Jobs)
			require.Equal(t, want.Admission, got.Admission)
			counts := map[Outcome]int{}
			preempted := 0
			for _, r := range want.Jobs {
				counts[r.Outcome]++
				preempted += int(r.Preemptions)
			}
			require.Positive(t, preempted)
			require.Positive(t, counts[Completed])
			abandoned := 0
			for i := 7; i < len(want.Jobs); i += 100 {
				if o := want.Jobs[i].Outcome; o != Running && o != Pending {
					require.Equal(t, Abandoned, o, want.Jobs[i].Name)
					abandoned++
				}
			}
			require.Positive(t, abandoned, "16-GPU jobs queued until their deadline")
			require.Positive(t, counts[Running]+counts[Pending], "jobs left at the horizon")
			if c.adm.WaitForPodsReady != nil {
				require.Positive(t, want.Admission.Queues[0].PodsReadyTimeouts)
			}
		})
	}
}

// A spilled chunk that reads back garbled stops Records early and is
// RecordsErr's, rather than yielding made-up records.
func TestSpilledRecordsReadFailureIsAnError(t *testing.T) {
	var jobs []cluster.JobSpec
	for i := 0; i < 3*recChunk; i++ {
		jobs = append(jobs, job(fmt.Sprintf("j%d", i), Time(i)*Second, 10*Second, 1, 1))
	}
	res := run(t, Config{Pools: []cluster.PoolSpec{pool("p", 4, 8)}, RecordsInMemory: 1, TempDir: t.TempDir()}, jobs...)
	require.True(t, res.Spilled())
	require.NoError(t, res.RecordsErr())
	// Garble the second chunk's record count.
	f := res.recs
	_, err := f.f.WriteAt([]byte{0xff, 0xff, 0xff, 0x7f}, f.at[1])
	require.NoError(t, err)
	n := 0
	for range res.Records() {
		n++
	}
	require.Equal(t, recChunk, n, "the first chunk only")
	require.ErrorContains(t, res.RecordsErr(), "chunk 1 is corrupt")
}

// A run with inference services is plain too: a job's record is built as
// it finishes, numbered as a job of the workload (the services' replica
// pods, interleaved with the jobs in the job table as the HPA scales up
// and down, are left out), and its slot reused. The same run with every
// record built at the end agrees record for record and service for
// service, spilled to a file or not.
func TestServiceRecordsAsJobsFinishEqualRecordsAtTheEnd(t *testing.T) {
	const n = 3000
	var jobs []cluster.JobSpec
	for i := 0; i < n; i++ {
		jobs = append(jobs, job(fmt.Sprintf("j%d", i), Time(i)*5*Second, Time(1+i%7)*10*Second, 1, int32(1)<<(i%3)))
	}
	svc := hpaService(t)
	// 100/s and 1,000/s in turns every 20 minutes: the HPA scales from 2
	// to 20 replicas and back again, making new replica pods each time.
	svc.Spec.Load.Points = nil
	for k := 0; k < 12; k++ {
		svc.Spec.Load.Points = append(svc.Spec.Load.Points, serving.Point{AtMs: int64(k) * 20 * Minute, Rate: float64(100 + 900*(k%2))})
	}
	for _, keep := range []int{0, 1} {
		cfg := Config{Pools: []cluster.PoolSpec{pool("p", 8, 4)}, Horizon: Time(n) * 5 * Second * 9 / 10, Services: []ServiceConfig{svc},
			RecordsInMemory: keep, TempDir: t.TempDir()}
		results := [2]*Result{}
		for k, plain := range []bool{false, true} {
			cfg.Workload = &SliceSource{Jobs: jobs}
			r, err := newRunner(cfg)
			require.NoError(t, err)
			require.True(t, r.jobs.plain, "a run with services is plain")
			r.jobs.plain = plain
			res, err := r.run()
			require.NoError(t, err)
			results[k] = res
			if plain {
				require.Positive(t, r.jobs.reused, "slots of recorded jobs reused")
				require.Greater(t, len(r.jobs.reps), 20, "replica pods made as the HPA scaled up again and again")
			}
		}
		want, got := results[0], results[1]
		require.Equal(t, keep == 1, got.Spilled())
		collect := func(r *Result) []JobRecord {
			var out []JobRecord
			for _, rec := range r.Records() {
				out = append(out, *rec)
			}
			return out
		}
		wantJobs, gotJobs := collect(want), collect(got)
		require.NoError(t, got.RecordsErr())
		require.Equal(t, n*9/10, len(gotJobs), "the jobs that arrived before the horizon")
		for i, r := range gotJobs {
			require.Equal(t, jobs[i].Name, r.Name, "record %d is the workload's job %d", i, i)
			require.Equal(t, int32(i), r.ID)
		}
		require.Equal(t, wantJobs, gotJobs)
		require.Equal(t, want.Services, got.Services)
		counts := map[Outcome]int{}
		for _, r := range gotJobs {
			counts[r.Outcome]++
		}
		require.Positive(t, counts[Completed])
		require.Positive(t, counts[Running]+counts[Pending], "jobs left at the horizon")
	}
}
