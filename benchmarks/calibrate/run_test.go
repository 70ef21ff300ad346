package calibrate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models"
)

// Fake nccl-tests binaries: all_reduce_perf prints a saved output (and
// the ring file under NCCL_ALGO=RING), all_gather_perf fails,
// reduce_scatter_perf hangs past the time limit.
func fakeNCCL(t *testing.T) string {
	dir := t.TempDir()
	abs, err := filepath.Abs(ncclDir)
	require.NoError(t, err)
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	write("all_reduce_perf", `if [ "$NCCL_ALGO" = RING ]; then cat `+abs+`/h100_2node_16gpu_ib_ndr_ring_issue290.txt; else cat `+abs+`/a100_80gb_8gpu_single_proc_g8_to4G.txt; fi`)
	write("all_gather_perf", `echo "NCCL error: unhandled system error" >&2; exit 3`)
	write("reduce_scatter_perf", `exec sleep 5`)
	return dir
}

func TestRunNCCLWithFakeBinaries(t *testing.T) {
	dir := fakeNCCL(t)
	var log bytes.Buffer
	runs, notes, err := RunNCCL(context.Background(), Options{Dir: dir, GPUs: 8, Timeout: 500 * time.Millisecond, Ring: true}, &log)
	require.NoError(t, err)
	require.Len(t, runs, 2, "all_reduce and all_reduce with NCCL_ALGO=RING")
	require.Contains(t, log.String(), "all_reduce_perf -b 8 -e 4G -f 2 -g 8")
	require.Len(t, notes, 4)
	require.Contains(t, notes[0], "all_gather_perf: failed: exit status 3 NCCL error: unhandled system error")
	require.Contains(t, notes[2], "reduce_scatter_perf: stopped after the 500ms limit")

	p, err := BuildProfile(&models.NodeFacts{Hostname: "n1"}, runs, notes)
	require.NoError(t, err)
	require.Equal(t, []string{"nvlink", "network-ring"}, []string{p.Fabrics[0].Name, p.Fabrics[1].Name})
	require.InEpsilon(t, 232.44, p.Fabrics[0].BusBWGBps, 0.05)

	// The profile round-trips through YAML.
	var buf bytes.Buffer
	require.NoError(t, WriteProfile(&buf, p, "yaml"))
	var back models.CalibrationProfile
	require.NoError(t, yaml.UnmarshalStrict(buf.Bytes(), &back))
	require.Equal(t, p.Fabrics[0].BusBWGBps, back.Fabrics[0].BusBWGBps)
	require.Len(t, back.Fabrics[0].Points, 30)

	_, _, err = RunNCCL(context.Background(), Options{Dir: t.TempDir()}, nil)
	require.ErrorContains(t, err, "no nccl-tests binary")
}
