package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports/focus"
)

func readFOCUS(t *testing.T, dir string) ([]string, []map[string]string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "focus.csv"))
	require.NoError(t, err)
	defer f.Close()
	h, rows, err := focus.ReadTable(f)
	require.NoError(t, err)
	return h, rows
}

func centsOf(t *testing.T, s string) int64 {
	t.Helper()
	v, err := focus.ParseDecimal(s)
	require.NoError(t, err)
	return int64(math.Round(v * 100))
}

// testdata/focus-split.yaml by hand: one 8-GPU node for 8 h at $24/h,
// split exactly into $2.50 per GPU-hour, $0.0625 per vCPU-hour and
// $0.0078125 per GiB-hour. vision's train-a holds 4 GPUs, 8 vCPUs, 64 GiB
// for 3 h: 3 x (10 + 0.5 + 0.5) = $33.00; nlp's train-b 2 GPUs, 4 vCPUs,
// 32 GiB for 5 h: 5 x (5 + 0.25 + 0.25) = $27.50. The node bills 8 x 24 =
// $192.00, so $131.50 is held by no pod. In focus.csv (FOCUS 1.3, the
// default) the node's origin charge splits into the two jobs' allocated
// charges and the unallocated rest; summed per team from AllocatedTags
// they are the report's per-queue allocated cost, and with the
// unallocated rows the report's total, to the cent.
func TestFOCUSSplitByHand(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "testdata/focus-split.yaml", "--out", dir, "--output", "json")
	require.Equal(t, 0, code, errOut)
	h, rows := readFOCUS(t, dir)
	require.NoError(t, focus.CheckVersion(focus.V1_3, h, rows))
	require.Len(t, rows, 3)
	byTeam, unallocated, billed := map[string]int64{}, int64(0), int64(0)
	for _, r := range rows {
		require.Equal(t, "gpuplan/focus-split/node", r["ResourceId"], "the origin charge is the node pool")
		require.Equal(t, focus.AllocationMethod, r["AllocatedMethodId"])
		c := centsOf(t, r["BilledCost"])
		billed += c
		if r["AllocatedResourceId"] == "" {
			unallocated += c
			continue
		}
		var tags map[string]string
		require.NoError(t, json.Unmarshal([]byte(r["AllocatedTags"]), &tags))
		byTeam[tags["team"]] += c
	}
	require.Equal(t, map[string]int64{"vision": 3300, "nlp": 2750}, byTeam)
	require.Equal(t, int64(13150), unallocated)
	require.Equal(t, int64(19200), billed)
	s := readSummary(t, dir)
	require.Equal(t, 192.0, s.Cost.Total)
	require.Equal(t, 131.5, s.Cost.Idle)
	for _, q := range s.Cost.ByQueue {
		require.Equal(t, byTeam[q.Name], int64(math.Round(q.Allocated*100)), q.Name)
	}
	require.Equal(t, `{"Elements":[{"AllocatedRatio":0.15625,"UsageUnit":"GPU-Hours","UsageQuantity":12},{"AllocatedRatio":0.0078125,"UsageUnit":"vCPU-Hours","UsageQuantity":24},{"AllocatedRatio":0.0078125,"UsageUnit":"GiB-Hours","UsageQuantity":192}]}`,
		rows[0]["AllocatedMethodDetails"], "train-a: 12 GPU-h x $2.50 = $30 of $192, 24 vCPU-h and 192 GiB-h $1.50 each")
}

// --focus-version 1.2 writes FOCUS 1.2 as before (one row per job and
// pool, ResourceId naming both, no Allocated* columns); a version gpuplan
// does not write is refused with exit 2.
func TestFOCUSVersionFlag(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := gpuplan(t, "simulate", "testdata/focus-split.yaml", "--out", dir, "--focus-version", "1.2")
	require.Equal(t, 0, code, errOut)
	h, rows := readFOCUS(t, dir)
	require.NoError(t, focus.CheckVersion(focus.V1_2, h, rows))
	require.NotContains(t, h, "AllocatedMethodId")
	require.NotContains(t, h, "ServiceProviderName")
	require.Equal(t, "gpuplan/focus-split/node/train-a", rows[0]["ResourceId"])
	require.Error(t, focus.CheckVersion(focus.V1_3, h, rows))

	code, _, errOut = gpuplan(t, "simulate", "testdata/focus-split.yaml", "--focus-version", "1.4")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--focus-version "1.4": want one of 1.2, 1.3`)
}
