package serving

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

// Sizing a chat service of Llama-3-8B on H100s: 100 requests/s of
// 512-token prompts and 256-token outputs, p95 TTFT within 500 ms and
// p95 TPOT within 12 ms. The answer is the fewest replicas that meet
// both: one fewer misses (by the fast model), and the exact model on a
// replica's share confirms it. Its cost by hand: the replicas' GPUs at
// $6.88 an hour (an 8-GPU p5.48xlarge's $55.04 in the embedded AWS
// catalog) over 100 x 256 = 25,600 output tokens a second.
func TestSizeLLM(t *testing.T) {
	cfg := LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h100(t), TP: 1}, MaxModelLen: 8192}
	in, out := TokenDist{Kind: Fixed, Mean: 512}, TokenDist{Kind: Fixed, Mean: 256}
	slo := LLMSLO{TTFTP95Ms: 500, TPOTP95Ms: 12}
	s, err := SizeLLM(cfg, 100, in, out, slo, 6.88, 1)
	require.NoError(t, err)
	n := s.Replicas
	t.Logf("%d replicas (fast %d): TTFT p95 %.1f/%.1f ms, TPOT p95 %.2f/%.2f ms (fast/exact), $%.3f a million output tokens",
		n, s.FastReplicas, s.PerReplica.TTFTP95Ms, s.ExactTTFTP95Ms, s.PerReplica.TPOTP95Ms, s.ExactTPOTP95Ms, s.USDPerMillionOutput)
	require.LessOrEqual(t, s.PerReplica.TPOTP95Ms, 12.0)
	require.LessOrEqual(t, s.ExactTPOTP95Ms, 12.0)
	require.LessOrEqual(t, s.ExactTTFTP95Ms, 500.0)
	fewer, err := SteadyLLM(cfg, 100/float64(s.FastReplicas-1), in, out)
	require.True(t, err != nil || fewer.TPOTP95Ms > 12 || fewer.TTFTP95Ms > 500, "one replica fewer also meets the SLO")
	require.Equal(t, n, s.GPUs)
	require.InEpsilon(t, float64(n)*6.88/3600/25_600*1e6, s.USDPerMillionOutput, 1e-9)
	require.InEpsilon(t, float64(n)*6.88/3600/(100*768)*1e6, s.USDPerMillionTokens, 1e-9)
	require.InEpsilon(t, 25_600/float64(n), s.OutputTokensPerGPUSecond, 1e-9)

	_, err = SizeLLM(cfg, 100, in, out, LLMSLO{TTFTP95Ms: 500, TPOTP95Ms: 1}, 6.88, 1)
	require.ErrorContains(t, err, "no count of replicas")
}

// The README's sizing table (go test ./models/serving -run
// TestSizeLLMH100AgainstB200 -v): a chat service of 50 requests/s
// (prompts 512 +- 256, outputs 256 +- 128 tokens) within p95 TTFT 500 ms
// and p95 TPOT 50 ms, on H100s at $6.88 a GPU-hour (p5.48xlarge, $55.04)
// and B200s at $14.24 (p6-b200.48xlarge, $113.93), both from the
// embedded AWS us-east-1 catalog. Each answer is confirmed by the exact
// model; B200's roofline is its datasheet at the H200's measured
// efficiencies, an assumption.
func TestSizeLLMH100AgainstB200(t *testing.T) {
	in := TokenDist{Kind: Normal, Mean: 512, StdDev: 256, Min: 16, Max: 2048}
	out := TokenDist{Kind: Normal, Mean: 256, StdDev: 128, Min: 16, Max: 1024}
	slo := LLMSLO{TTFTP95Ms: 500, TPOTP95Ms: 50}
	h, _ := RooflineFor("H100-80GB")
	b, _ := RooflineFor("B200")
	f := models.DefaultFabrics()
	for _, c := range []struct {
		name  string
		cfg   LLMConfig
		price float64
	}{
		{"8B on H100", LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: h, TP: 1}, MaxModelLen: 8192}, 55.04 / 8},
		{"8B on B200", LLMConfig{Engine: Engine{Model: Llama3_8B(), GPU: b, TP: 1}, MaxModelLen: 8192}, 113.9328 / 8},
		{"70B on 4 H100", LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: h, TP: 4, AllReduce: TPAllReduce(f["h100-nvls"], 4)}, MaxModelLen: 8192}, 55.04 / 8},
		{"70B on 8 H100", LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: h, TP: 8, AllReduce: TPAllReduce(f["h100-nvls"], 8)}, MaxModelLen: 8192}, 55.04 / 8},
		{"70B on 1 B200", LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: b, TP: 1}, MaxModelLen: 8192}, 113.9328 / 8},
		{"70B on 2 B200", LLMConfig{Engine: Engine{Model: Llama3_70B(), GPU: b, TP: 2, AllReduce: TPAllReduce(f["b200-nvswitch"], 2)}, MaxModelLen: 8192}, 113.9328 / 8},
	} {
		s, err := SizeLLM(c.cfg, 50, in, out, slo, c.price, 7)
		require.NoError(t, err, c.name)
		require.LessOrEqual(t, s.ExactTTFTP95Ms, 500.0, c.name)
		require.LessOrEqual(t, s.ExactTPOTP95Ms, 50.0, c.name)
		t.Logf("| %s | %d (%d GPUs; fast model %d) | %.0f / %.1f | %.0f | $%.2f | $%.2f |", c.name, s.Replicas, s.GPUs, s.FastReplicas,
			s.ExactTTFTP95Ms, s.ExactTPOTP95Ms, s.OutputTokensPerGPUSecond, s.USDPerMillionOutput, s.USDPerMillionTokens)
	}
}
