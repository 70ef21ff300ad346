package karpenter

import (
	"fmt"
	"path/filepath"
	"testing"
)

// shipped are the batches of the project's reproduction karpenter-choices
// and issue 26's 29 pods (testdata/PROVENANCE.md).
var shipped = []struct{ file, trace string }{
	{"k1-one.yaml", "one.csv"},
	{"k2-four.yaml", "four.csv"},
	{"k2-gang4.yaml", "gang4.csv"},
	{"k2-eight.yaml", "eight.csv"},
	{"k3-spot-above-od.yaml", "one.csv"},
	{"k4-big.yaml", "big.csv"},
	{"batch29.yaml", "batch29.csv"},
}

// randomBatches is how many random pending batches the check generates.
const randomBatches = 200

// TestKarpenterSolve compares, batch by batch, the nodes, pods per
// offering, pending pods and $/h of Karpenter's Solve (launched on each
// NodeClaim's cheapest offering) with gpuplan's NodePool provisioning.
func TestKarpenterSolve(t *testing.T) {
	types, err := gpuTypes()
	if err != nil {
		t.Fatal(err)
	}
	var cases []batchCase
	for _, s := range shipped {
		pods, err := readTrace(filepath.Join("testdata", s.trace))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, batchCase{name: s.file, dir: "testdata", file: s.file, pods: pods})
	}
	dir := t.TempDir()
	for i := range randomBatches {
		c, err := randomBatch(dir, i, types)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	agree, agreeShipped := 0, 0
	for ci, c := range cases {
		offers, np, got, err := provision(c.dir, c.file)
		if err != nil {
			t.Fatalf("%s: gpuplan: %v", c.name, err)
		}
		want, err := solve(offers, np.capacityTypes, np.maxGPUs, c.pods)
		if err != nil {
			t.Fatalf("%s: karpenter: %v", c.name, err)
		}
		if same(want, got) {
			agree++
			if ci < len(shipped) {
				agreeShipped++
			}
			continue
		}
		t.Errorf("%s (%d pods): Karpenter %v; gpuplan %v", c.name, len(c.pods), want, got)
	}
	fmt.Printf("xcheck karpenter: %d shipped batches, %d agree exactly; %d random batches, %d agree exactly (%.1f%%); no accepted differences\n",
		len(shipped), agreeShipped, randomBatches, agree-agreeShipped, 100*float64(agree-agreeShipped)/randomBatches)
}
