package workloads

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

const hour = int64(time.Hour / time.Millisecond)
const minute = int64(time.Minute / time.Millisecond)

func cronJob(schedule, zone, policy, extra string) string {
	tz := ""
	if zone != "" {
		tz = "\n  timeZone: " + zone
	}
	pol := ""
	if policy != "" {
		pol = "\n  concurrencyPolicy: " + policy
	}
	return `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  annotations: {gpuplan.dev/duration: 25m}
spec:
  schedule: "` + schedule + `"` + tz + pol + extra + `
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: score
            image: scorer
            resources: {limits: {nvidia.com/gpu: 1}}
`
}

// jobs drains a source of one file.
func jobs(t *testing.T, manifest string, origin time.Time, horizon int64) []cluster.JobSpec {
	t.Helper()
	objs, _, err := Parse("c.yaml", []byte(manifest))
	require.NoError(t, err)
	src, err := NewSource([]Entry{{Name: "c", Objects: objs}}, SourceOptions{Rng: rand.New(rand.NewPCG(1, 2)), Origin: origin, Horizon: horizon})
	require.NoError(t, err)
	var out []cluster.JobSpec
	for {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		require.NoError(t, err)
		if !ok {
			return out
		}
		out = append(out, j)
	}
}

func submits(js []cluster.JobSpec) []int64 {
	var out []int64
	for _, j := range js {
		out = append(out, j.Submit)
	}
	return out
}

// `0 2 * * *` runs once a night at 02:00 in its time zone. Europe/Berlin
// is UTC+1 (CET) until 29 March 2026, when 02:00 CET jumps to 03:00 CEST
// (UTC+2). From 2026-03-27T00:00Z over five days:
//
//	27 Mar 02:00 CET  = 01:00Z =  1 h
//	28 Mar 02:00 CET  = 01:00Z = 25 h
//	29 Mar 02:00 does not exist: no run that night
//	30 Mar 02:00 CEST = 00:00Z = 72 h
//	31 Mar 02:00 CEST = 00:00Z = 96 h
//
// Kubernetes' CronJob controller reads schedules with robfig/cron, which
// skips a time the clock jumps over; and on 25 October 2026, when 03:00
// CEST falls back to 02:00 CET, 02:00 happens twice and so does the run
// (kubernetes/kubernetes#121594 reports exactly this for Europe/Berlin):
//
//	23 Oct 02:00 CEST = 00:00Z =  0 h (the start itself counts)
//	24 Oct 02:00 CEST = 00:00Z = 24 h
//	25 Oct 02:00 CEST = 00:00Z = 48 h, and 02:00 CET = 01:00Z = 49 h
//	26 Oct 02:00 CET  = 01:00Z = 73 h
func TestCronNightlyInTimeZoneAcrossDST(t *testing.T) {
	spring := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
	got := jobs(t, cronJob("0 2 * * *", "Europe/Berlin", "", ""), spring, 120*hour)
	require.Equal(t, []int64{1 * hour, 25 * hour, 72 * hour, 96 * hour}, submits(got))
	for i, j := range got {
		require.Equal(t, int64(25*minute), j.Duration)
		require.EqualValues(t, 1, j.Pod.GPUs)
		require.Equal(t, "nightly-"+string(rune('0'+i)), j.Name)
		require.Zero(t, j.Deadline)
	}
	autumn := time.Date(2026, 10, 23, 0, 0, 0, 0, time.UTC)
	got = jobs(t, cronJob("0 2 * * *", "Europe/Berlin", "", ""), autumn, 96*hour)
	require.Equal(t, []int64{0, 24 * hour, 48 * hour, 49 * hour, 73 * hour}, submits(got))
	// No time zone: UTC, whatever the host's.
	got = jobs(t, cronJob("0 2 * * *", "", "", ""), spring, 72*hour)
	require.Equal(t, []int64{2 * hour, 26 * hour, 50 * hour}, submits(got))
}

// Every 10 minutes, each run 25 minutes long, over an hour.
//
// Allow: a run at 0, 10, 20, 30, 40 and 50 min, overlapping.
//
// Forbid: the run of 0 min is still running at 10 and 20, which are
// missed; when it ends at 25 the controller starts the most recent missed
// run (20) at once; that one ends at 50, missing 30 and 40; the run due at
// 50 starts as it ends. With startingDeadlineSeconds 200 the missed run of
// 20 is 5 min late at 25, too late: it is skipped and the next run is at
// 30 (ending 55, when 50 is again 5 min late: skipped; 60 is the horizon).
//
// Replace: a run at each schedule time, deleted when the next is due.
func TestCronConcurrencyPolicies(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := "*/10 * * * *"
	got := jobs(t, cronJob(every, "", "Allow", ""), origin, hour)
	require.Equal(t, []int64{0, 10 * minute, 20 * minute, 30 * minute, 40 * minute, 50 * minute}, submits(got))

	got = jobs(t, cronJob(every, "", "Forbid", ""), origin, hour)
	require.Equal(t, []int64{0, 25 * minute, 50 * minute}, submits(got))

	got = jobs(t, cronJob(every, "", "Forbid", "\n  startingDeadlineSeconds: 200"), origin, hour)
	require.Equal(t, []int64{0, 30 * minute}, submits(got))

	got = jobs(t, cronJob(every, "", "Replace", ""), origin, hour)
	require.Equal(t, []int64{0, 10 * minute, 20 * minute, 30 * minute, 40 * minute, 50 * minute}, submits(got))
	for i, j := range got {
		require.Equal(t, int64(i+1)*10*minute, j.Deadline, j.Name)
	}
}

func TestCronErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{cronJob("0 2 * *", "", "", ""), `c.yaml:7:13: spec.schedule: "0 2 * *" is not a cron schedule`},
		{cronJob("TZ=Europe/Paris 0 2 * * *", "", "", ""), `spec.schedule: "TZ=Europe/Paris 0 2 * * *": a time zone in the schedule is refused`},
		{cronJob("0 2 * * *", "Mars/Olympus", "", ""), `c.yaml:8:13: spec.timeZone: "Mars/Olympus" is not a time zone`},
		{cronJob("0 2 * * *", "", "Sometimes", ""), `c.yaml:8:22: spec.concurrencyPolicy: "Sometimes" is not Allow, Forbid or Replace`},
		{cronJob("0 2 * * *", "", "", "\n  startingDeadlineSecond: 10"), `c.yaml:8:3: spec.startingDeadlineSecond: unknown field "startingDeadlineSecond" (did you mean "startingDeadlineSeconds"?)`},
	} {
		_, _, err := Parse("c.yaml", []byte(c.body))
		require.ErrorContains(t, err, c.want)
	}
}
