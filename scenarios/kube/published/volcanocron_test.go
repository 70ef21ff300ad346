package published_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim"
)

// Volcano's CronJob example (every 5 minutes, concurrencyPolicy Forbid,
// startingDeadlineSeconds 60, a Volcano Job of one task, minAvailable 1,
// RestartJob on PodEvicted) runs as a batch/v1 CronJob of its Volcano
// Job. Each run taking 7 min, three runs (count 3): run 0 at 0-7 min; the
// run due at 5 min is missed (Forbid: run 0 is running), and when run 0
// ends at 7 min it is 2 min late, past the 60 s deadline, so none starts;
// run 1 at 10-17 min, run 2 at 20-27 min. Before, the CronJob was not a
// workload ("no workload in the file").
func TestVolcanoCronJobExample(t *testing.T) {
	const file = "testdata/volcano/example/cronjob/cronjob.yaml"
	objs, _, err := workloads.Load(file)
	require.NoError(t, err)
	require.Len(t, objs, 1)
	o := objs[0]
	require.Equal(t, "*/5 * * * *", o.Cron.Expr)
	require.EqualValues(t, 60_000, o.Cron.StartingDeadline)
	require.EqualValues(t, 1, o.MinAvailable)
	require.NotNil(t, o.Restart.Volcano)

	data, err := os.ReadFile(file)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cron.yaml"), data, 0o644))
	body := "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: cron}\nspec:\n  horizon: 24h\n  cluster:\n    pools:\n" +
		"    - {name: cpu, count: 1, cpu: \"8\", memory: 32Gi}\n" +
		"  workload:\n    manifests:\n    - {path: cron.yaml, count: 3, duration: {distribution: constant, value: 7m}}\n"
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), dir, []byte(body))
	require.NoError(t, err)
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	const minute = 60_000
	var got [][2]int64
	for _, j := range res.Jobs {
		got = append(got, [2]int64{j.Start, j.End})
	}
	require.Equal(t, [][2]int64{{0, 7 * minute}, {10 * minute, 17 * minute}, {20 * minute, 27 * minute}}, got)

	// Its job template's fields are named where they are.
	bad := strings.Replace(string(data), "      minAvailable: 1", "      minAvailable: 2", 1)
	_, _, err = workloads.Parse("cron.yaml", []byte(bad))
	require.EqualError(t, err, "cron.yaml:30:21: spec.jobTemplate.spec.minAvailable: 2 is not between 1 and the job's 1 pods")
}
