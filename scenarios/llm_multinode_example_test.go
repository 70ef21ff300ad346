package scenarios

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim"
)

// The multi-node LLM example (scenarios/examples/llm-serving/multi-node):
// Llama-3-70B on two groups of two p5.48xlarge pods (a LeaderWorkerSet of
// size 2, tensor parallel 8 x pipeline parallel 2), 22 +- 10 requests/s
// over a day, and the
// variant one-node (four replicas of one node). Figures by hand:
//   - arrivals: 22/s x 86,400 s = 1,900,800 (the cosine integrates to 0
//     over the day);
//   - cold start: both groups bind at 0 (each pod on its own node) and
//     serve after the 120 s image pull and the model load: each pod reads
//     half of the 141.10 GB of weights at 2 GB/s, 35.276 s, then the
//     engine's 60 s init: 215.276 s (one node's replica reads all of them,
//     70.552 s: 250.552 s);
//   - dropped: the requests before the first replica is ready, the
//     integral of 22 + 10 cos(2 pi (t - 14 h) / 24 h) over the cold start;
//   - GPU-hours: the 32 GPUs held all day, 768, either way;
//   - a group's engine serves a little more than one node's (27.9 against
//     22.4 requests/s): its two stages hold two batches in flight, but
//     max_num_seqs (256) bounds the requests decoding in either, and a
//     token of each takes a pass through both stages (a step of half the
//     batch at each), so the same GPUs serve 55.8 requests/s as two groups
//     and 89.6 as four single-node replicas.
func TestExampleLLMMultiNode(t *testing.T) {
	day, peak := 86400.0, 14*3600.0
	dropped := func(cold float64) float64 {
		return 22*cold + 10*day/(2*math.Pi)*(math.Sin(2*math.Pi*(cold-peak)/day)-math.Sin(2*math.Pi*(0-peak)/day))
	}
	var capGroup, capNode float64
	for _, c := range []struct {
		variant      string
		pods, tp, pp int
		replicas     int
		coldMs       float64
		capLo, capHi float64
	}{
		{"", 2, 8, 2, 2, 215_276, 27.6, 28.2},
		{"one-node", 0, 8, 1, 4, 250_552, 22.1, 22.7},
	} {
		b, res := runExample(t, "examples/llm-serving/multi-node/scenario.yaml", c.variant)
		cfg := b.Config.Services[0]
		require.Equal(t, c.pods, cfg.PodsPerReplica, c.variant)
		require.Equal(t, c.tp, cfg.Spec.LLM.Config.Engine.TP, c.variant)
		require.Equal(t, c.pp, max(cfg.Spec.LLM.Config.Engine.PP, 1), c.variant)
		r := res.Services[0]
		require.InEpsilon(t, 1_900_800, r.Arrived, 1e-6, c.variant)
		require.Equal(t, c.replicas, r.ColdStarts, c.variant)
		require.Equal(t, c.coldMs, r.ColdStartMs, c.variant)
		require.InEpsilon(t, dropped(c.coldMs/1000), r.Dropped, 0.01, c.variant)
		var gpuMs int64
		for _, u := range r.Usage {
			gpuMs += u.Held[sim.ResGPU]
		}
		require.InEpsilon(t, 768.0, float64(gpuMs)/1000/float64(sim.Hour), 1e-9, c.variant)
		x := cfg.Spec.LLM
		require.Greater(t, x.CapacityPerReplica, c.capLo, c.variant)
		require.Less(t, x.CapacityPerReplica, c.capHi, c.variant)
		want, err := serving.LLMCapacity(x.Config, x.Input, x.Output)
		require.NoError(t, err)
		require.Equal(t, want, x.CapacityPerReplica)
		require.Less(t, r.LLM.TPOTP95Ms, 50.0, c.variant)
		if c.pods == 2 {
			capGroup = x.CapacityPerReplica * float64(c.replicas)
		} else {
			capNode = x.CapacityPerReplica * float64(c.replicas)
		}
	}
	require.Greater(t, capNode/capGroup, 1.5, "four one-node replicas serve over 1.5 times what two groups do on the same GPUs")
}
