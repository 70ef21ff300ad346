package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

const spotTraceScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: skypilot
spec:
  horizon: 24h
  cluster:
    pools:
    - name: v100-spot
      count: COUNT
      gpuModel: V100
      gpusPerNode: 1
      cpu: "8"
      memory: 61Gi
      capacityType: spot
      interruptions: {skypilot: trace.json}
  workload:
    synthetic:
      classes:
      - name: train
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "4", memory: 16Gi, gpus: 1}
        duration: 30m
`

func runSpotTrace(t *testing.T, trace, count string) *sim.Result {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("skypilot/testdata", trace))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trace.json"), data, 0o644))
	p := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(spotTraceScenario, "COUNT", count, 1)), 0o644))
	s, err := LoadFile(p)
	require.NoError(t, err)
	b, err := s.Build(Options{})
	require.NoError(t, err)
	defer b.Close()
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res
}

// A spot pool of 4 nodes follows the first day of SkyPilot's real 4-node
// preemption trace: none at the start (the trace begins at 0), every drop
// a reclaim (31 nodes, summed by hand in the skypilot package's test),
// every rise a relaunch (the trace starts and ends at 0, so as many as
// were reclaimed: 31).
func TestSpotPoolFollowsSkyPilotPreemptionTrace(t *testing.T) {
	res := runSpotTrace(t, "us-east-1f_v100_4node_first24h.json", "4")
	p := res.Pools[0]
	require.Equal(t, int64(31), p.Capacity.Interrupted)
	require.Equal(t, int64(31), p.Capacity.Launched)
	require.LessOrEqual(t, p.Capacity.MaxPresent, int32(4))
}

// A 3-node pool on a 1-instance availability trace holds all three nodes
// or none: 13 drops of 3 nodes; it starts with the trace at 1 (3 nodes,
// no launch) and ends at 0, so 12 rises relaunch 3 each.
func TestSpotPoolFollowsSkyPilotAvailabilityTrace(t *testing.T) {
	res := runSpotTrace(t, "us-west-2a_v100_1node_first24h.json", "3")
	p := res.Pools[0]
	require.Equal(t, int64(39), p.Capacity.Interrupted)
	require.Equal(t, int64(36), p.Capacity.Launched)
}
