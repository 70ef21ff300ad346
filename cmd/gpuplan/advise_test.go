package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden values, through the command.
func TestAdviseCheckpointGolden(t *testing.T) {
	for _, c := range []struct {
		mtbf, cost  string
		young, daly float64
	}{{"4h", "5m", 49.0, 45.7}, {"1h", "5m", 24.5, 21.3}, {"2h", "15m", 60.0, 50.4}} {
		code, out, errOut := gpuplan(t, "advise", "checkpoint", "--mtbf", c.mtbf, "--checkpoint-cost", c.cost, "--output", "json")
		require.Equal(t, 0, code, errOut)
		var adv checkpointAdvice
		require.NoError(t, json.Unmarshal([]byte(out), &adv))
		require.InDelta(t, c.young, adv.YoungMinutes, 0.05)
		require.InDelta(t, c.daly, adv.DalyMinutes, 0.05)
		require.Nil(t, adv.Simulation)
	}
	code, out, _ := gpuplan(t, "advise", "checkpoint", "--mtbf", "4h", "--checkpoint-cost", "5m")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Young (1974), sqrt(2 delta M):  49.0 min")
	require.Contains(t, out, "Daly (2006, eq. 37):            45.7 min")

	code, _, errOut := gpuplan(t, "advise", "checkpoint", "--mtbf", "4h")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--checkpoint-cost is required: a positive duration (examples: 5m, 4h, 1d)")
	code, _, errOut = gpuplan(t, "advise", "checkpoint", "--mtbf", "soon", "--checkpoint-cost", "5m")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--mtbf "soon" is not a positive duration`)
}

// --simulate finds the optimum near Daly's (the 10% check itself is in sim).
func TestAdviseCheckpointSimulate(t *testing.T) {
	code, out, errOut := gpuplan(t, "advise", "checkpoint", "--mtbf", "1h", "--checkpoint-cost", "5m", "--simulate",
		"--job-length", "8h", "--jobs", "300", "--points", "9", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var adv checkpointAdvice
	require.NoError(t, json.Unmarshal([]byte(out), &adv))
	s := adv.Simulation
	require.NotNil(t, s)
	require.Len(t, s.Points, 9)
	require.InEpsilon(t, adv.DalyMinutes, s.BestFitMin, 0.10)
	// Same seed, same numbers.
	_, again, _ := gpuplan(t, "advise", "checkpoint", "--mtbf", "1h", "--checkpoint-cost", "5m", "--simulate",
		"--job-length", "8h", "--jobs", "300", "--points", "9", "--output", "json")
	require.Equal(t, out, again)
}
