package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without a GPU: a clear message and exit 2, never a panic.
func TestCalibrateWithoutGPU(t *testing.T) {
	code, _, errOut := gpuplan(t, "calibrate", "--skip-nccl")
	if code == 0 {
		t.Skip("this machine has NVML")
	}
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "NVML")
	require.Contains(t, errOut, "calibrate parse")
}

func TestCalibrateParse(t *testing.T) {
	code, out, errOut := gpuplan(t, "calibrate", "parse", "../../testdata/nccl/a100_80gb_8gpu_single_proc_g8_to4G.txt",
		"../../testdata/nccl/h100_2node_16gpu_ib_ndr_default_issue290.txt", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var p struct {
		Kind    string `json:"kind"`
		Fabrics []struct {
			Name   string           `json:"name"`
			Ranks  int              `json:"ranks"`
			Alpha  float64          `json:"alpha_us"`
			BusBW  float64          `json:"busbw_gbps"`
			Peak   float64          `json:"peak_busbw_gbps"`
			Points []map[string]any `json:"points"`
		} `json:"fabrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, "CalibrationProfile", p.Kind)
	require.Len(t, p.Fabrics, 2)
	require.Equal(t, "nvlink", p.Fabrics[0].Name)
	require.Equal(t, 8, p.Fabrics[0].Ranks)
	require.Len(t, p.Fabrics[0].Points, 30)
	require.InEpsilon(t, 232.44, p.Fabrics[0].BusBW, 0.05)
	require.Equal(t, 232.44, p.Fabrics[0].Peak)
	require.Equal(t, "network", p.Fabrics[1].Name)
	require.Equal(t, 16, p.Fabrics[1].Ranks)

	code, _, errOut = gpuplan(t, "calibrate", "parse", "missing.txt")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "missing.txt")
}

// A profile from `calibrate parse` drives the simulator: the example's
// pool names the profile's fabric, and the step time is its fit's.
func TestProfileDrivesStepTime(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "node.yaml")
	code, _, errOut := gpuplan(t, "calibrate", "parse", "../../testdata/nccl/h100_2node_16gpu_ib_ndr_default_issue290.txt", "--out", prof)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile("../../scenarios/examples/packed-vs-spread.yaml")
	require.NoError(t, err)
	abs, err := filepath.Abs(prof)
	require.NoError(t, err)
	sc := strings.Replace(string(b), "      network: ib-ndr-400", "      network: network", 1)
	sc = strings.Replace(sc, "spec:\n  seed: 1", "spec:\n  seed: 1\n  calibration: "+abs, 1)
	path := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(path, []byte(sc), 0o644))
	code, out, errOut := gpuplan(t, "simulate", path, "--output", "json")
	require.Equal(t, 0, code, errOut)
	var s struct {
		Training []struct {
			Fabric string  `json:"fabric"`
			Step   float64 `json:"meanStepSeconds"`
			Comm   float64 `json:"meanCommSeconds"`
		} `json:"training"`
		Assumptions []string `json:"assumptions"`
		Variants    []struct {
			Name string  `json:"name"`
			Step float64 `json:"meanStepSeconds"`
		} `json:"variants"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	// The fitted network: busbw 155.66 GB/s, alpha 202.08 us (the large
	// messages' intercept): 202.08 us + 14e9 x 1.875 / 155.66e9 s.
	want := 202.08e-6 + 14e9*1.875/155.66e9
	require.Equal(t, "network", s.Training[0].Fabric)
	require.InDelta(t, want, s.Training[0].Comm, 1e-4)
	require.Contains(t, strings.Join(s.Assumptions, "\n"), "calibration profile "+abs+" (network)")
	require.Len(t, s.Variants, 2)
	require.Greater(t, s.Variants[1].Step, s.Variants[0].Step, "spread is slower")
}

// The example, by hand (see sim.TestPackedAgainstSpreadTraining): packed,
// 2 nodes with all rails: 1 s + 50 us + 14e9 x 1.875 / 155.66e9 =
// 1.1687 s a step; spread, 4 nodes with half the rails: 1.3373 s.
func TestPackedVsSpreadExample(t *testing.T) {
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/packed-vs-spread.yaml", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var s struct {
		Variants []struct {
			Name string  `json:"name"`
			Step float64 `json:"meanStepSeconds"`
			JCT  float64 `json:"jctP50Seconds"`
		} `json:"variants"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	require.InDelta(t, 1+50e-6+14e9*1.875/155.66e9, s.Variants[0].Step, 1e-4)
	require.InDelta(t, 1+50e-6+14e9*1.875/(155.66e9/2), s.Variants[1].Step, 1e-4)
	require.InDelta(t, 2000*s.Variants[0].Step, s.Variants[0].JCT, 1)
}

// gpuplan calibrate vllm on a measured run (BLIS's dataset, in vLLM's
// result format): the roofline to paste into an llm block, the model's
// means before and after, and what was replayed; the fitted roofline in
// a scenario gives the measured means (the fit is the exact model's).
func TestCalibrateVLLM(t *testing.T) {
	file := "../../benchmarks/calibrate/testdata/vllm-bench/llama-3.1-8b-h100-long-prompts.json"
	args := []string{"calibrate", "vllm", file, "--model", "llama-3-8b", "--gpu", "H100-80GB", "--max-num-batched-tokens", "2048",
		"--max-model-len", "4096", "--kv-blocks", "7463", "--input-tokens", "2048,1974,2,3500", "--output-tokens", "28,60,6,200"}
	code, out, errOut := gpuplan(t, args...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "# replayed: 300 requests with lengths drawn from the given distributions")
	require.Contains(t, out, "# replayed: Poisson arrivals at 10 a second (seed 1)")
	require.Contains(t, out, "# measured: mean TTFT 49.408 ms, mean ITL 8.593 ms")
	require.Regexp(t, `fitted: TTFT 49\.[3-5]\d\d ms, ITL 8\.[56]\d\d ms`, out)
	require.Regexp(t, "roofline:\n  tflops: [0-9.]+\n  gbps: 3070\\.8\n  kernelUs: [0-9.]+\n", out)
	dir := t.TempDir()
	code, out, errOut = gpuplan(t, append(args, "--out", filepath.Join(dir, "roofline.yaml"))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Wrote "+filepath.Join(dir, "roofline.yaml")+": tflops")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "vllm", file, "--gpu", "H100-80GB"}, "--model and --gpu are required"},
		{[]string{"calibrate", "vllm", file, "--model", "llama-3-8b", "--gpu", "T4"}, `--gpu is "T4"; want A100-40GB, A100-80GB, B200, H100-80GB or H200-141GB`},
		{[]string{"calibrate", "vllm", file, "--model", "llama-3-8b", "--gpu", "H100-80GB", "--input-tokens", "a,b"}, "--input-tokens"},
		{[]string{"calibrate", "vllm", file, "--model", "llama-3-8b", "--gpu", "H100-80GB", "--input-tokens", "100"}, "--input-tokens and --output-tokens go together"},
		{[]string{"calibrate", "vllm", "missing.json", "--model", "llama-3-8b", "--gpu", "H100-80GB"}, "missing.json"},
	} {
		code, _, errOut := gpuplan(t, c.args...)
		require.Equal(t, 2, code, "%v: %s", c.args, errOut)
		require.Contains(t, errOut, c.want)
	}
}
