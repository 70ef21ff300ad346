package compose

import (
	"path/filepath"
	"testing"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim"
)

// A checkpointing job restarted on time-sliced GPUs restores its
// checkpoint before it goes on (the composer's finding "completed but
// ran from ... for ... of work, ... of checkpoints and ... lost": the
// attempt skipped the restore it was booked for). The fixture, by hand:
// a two-pod CronJob of 50 minutes of work (checkpoint every 20m, 1m to
// write, 1m to restore) starts at 15m on the two spot nodes. It computes
// 20m (to 35m), writes (to 36m); the node reclaimed at 40m gives AWS's
// 2-minute notice at 38m, and the job writes what it computed since
// (22m of work saved, 2m of writes) and stops at 39m. After the Job
// controller's 10 s backoff its pods go to the time-sliced GPUs (one
// spot node left), at 39m10s: a 1m restore and the 28m left end it at
// 68m10s = 4090 s.
func TestSlicedAttemptPaysItsRestore(t *testing.T) {
	file := filepath.Join("testdata", "regressions", "sliced-restore", ScenarioFile)
	sc, err := scenarios.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pipeline.Scenario(sc, pipeline.Options{File: file, Workers: 1, NoSensitivity: true})
	if err != nil {
		t.Fatal(err)
	}
	j := out.Main.Result.Jobs[0]
	if j.Outcome != sim.Completed || j.Start != 900_000 || j.End != 4_090_000 || j.Attempts != 2 ||
		j.CheckpointMs != 120_000 || j.LostMs != 60_000 {
		t.Errorf("job 0: %s from %d to %d ms in %d attempts, %d ms of writes, %d lost; want completed from 900000 to 4090000 in 2, 120000 of writes, 60000 lost (the restore)",
			j.Outcome, j.Start, j.End, j.Attempts, j.CheckpointMs, j.LostMs)
	}
	pools := map[int32]bool{}
	for u := range j.Usage() {
		pools[u.Pool] = true
	}
	if !pools[0] || !pools[1] {
		t.Errorf("job 0 held GPUs in pools %v; want both the spot pool and the time-sliced one", pools)
	}
	// And on every seed the run keeps its books.
	for seed := uint64(1); seed <= 20; seed++ {
		o := pipeline.Options{File: file, Workers: 1, NoSensitivity: true, Build: scenarios.Options{Seed: &seed}}
		if _, err := pipeline.Scenario(sc, o); err != nil {
			t.Errorf("--seed %d: %v", seed, err)
		}
	}
}

// The shrunk findings kept in testdata/findings run clean: each fails
// until its defect is fixed (their READMEs say which).
func TestFindingsRunClean(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "findings", "*", ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range dirs {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			out := classify(runFile(file, false, Options{}))
			if out.Verdict != OK {
				t.Errorf("gpuplan simulate %s: %s: %v", file, out.Verdict, out.Err)
			}
		})
	}
}
