package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The gb200-vs-h100 example by hand (its header derives the job). A
// 256-rank all-reduce of 16 GB moves 16e9 x 2 x 255/256 = 31.875e9 bytes
// over the rails (ib-ndr-400: 155.66 GB/s, 50 us), 1,000 steps:
//
//	GB200 packed (one block, 4 NVL72 racks, every rail of a tray: one NIC
//	  a GPU): 2:1 spine, 77.83 GB/s; 789 ms + 409.6 ms = 1.1986 s a step,
//	  1,198.6 s; 144 trays x $56.9664 x 0.33294 h = $2,731.19;
//	GB200 spread (trays at random over both blocks): 4:1 core, 38.915
//	  GB/s; 789 ms + 819.1 ms = 1.6081 s, 1,608.1 s; $3,664.40;
//	H100 packed (32 p5.48xlarge, two pods a node, in one block): 77.83
//	  GB/s; 1,995 ms + 409.6 ms = 2.4046 s, 2,404.6 s; 72 x $55.04 x
//	  0.66794 h = $2,646.98;
//	H100 spread (64 nodes, one pod a node: half the rails, both blocks):
//	  155.66 x 0.5 / 4 = 19.4575 GB/s; 1,995 ms + 1,638.2 ms = 3.6332 s,
//	  3,633.2 s; $3,999.47.
func TestGB200VsH100Example(t *testing.T) {
	code, out, errOut := gpuplan(t, "simulate", "../../scenarios/examples/gb200-vs-h100/scenario.yaml", "--output", "json")
	require.Equal(t, 0, code, errOut)
	var s struct {
		Variants []struct {
			Name string  `json:"name"`
			Step float64 `json:"meanStepSeconds"`
			JCT  float64 `json:"jctP50Seconds"`
			Cost float64 `json:"cost"`
		} `json:"variants"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	const bytes = 16e9 * 2 * 255 / 256
	rails, alpha := 155.66e9, 50e-6
	want := []struct {
		name         string
		compute, bw  float64
		nodes, price float64
	}{
		{"(as given)", 0.789, rails / 2, 144, 56.9664},
		{"gb200-spread", 0.789, rails / 4, 144, 56.9664},
		{"h100-packed", 1.995, rails / 2, 72, 55.04},
		{"h100-spread", 1.995, rails * 0.5 / 4, 72, 55.04},
	}
	require.Len(t, s.Variants, len(want))
	for i, w := range want {
		v := s.Variants[i]
		step := w.compute + alpha + bytes/w.bw
		require.Equal(t, w.name, v.Name)
		require.InDelta(t, step, v.Step, 1e-4, w.name)
		require.InDelta(t, 1000*step, v.JCT, 0.01, w.name)
		require.InDelta(t, w.nodes*w.price*1000*step/3600, v.Cost, 0.01, w.name)
	}
}
