package karpenter

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/scenarios/catalog/karpenter"
)

// families are the GPU instance families random batches draw from.
var families = []string{"g4dn", "g5", "g6", "g6e", "p3", "p4d", "p5"}

// gpuTypes are the catalog's NVIDIA instance types of the families, by
// family, in catalog order.
func gpuTypes() (map[string][]string, error) {
	cat, err := karpenter.AWS()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, f := range families {
		for _, t := range cat.Types {
			if t.Labels[karpenter.LabelFamily] == f && t.HasGPU() && t.OnDemandPerHour > 0 {
				out[f] = append(out[f], t.Name)
			}
		}
	}
	return out, nil
}

// randomBatch writes a scenario and trace for random batch i under dir:
// one NodePool of two to four families' GPU types on on-demand, spot or
// both, and 1 to 40 pods of 1, 2, 4 or 8 GPUs with CPU and memory in
// proportion, a fifth selecting a family and a tenth an instance type.
func randomBatch(dir string, i int, types map[string][]string) (batchCase, error) {
	r := rand.New(rand.NewPCG(26, uint64(i)))
	fams := slices.Clone(families)
	r.Shuffle(len(fams), func(a, b int) { fams[a], fams[b] = fams[b], fams[a] })
	fams = fams[:2+r.IntN(3)]
	slices.Sort(fams)
	var its []string
	for _, f := range fams {
		its = append(its, types[f]...)
	}
	cts := [][]string{{"on-demand"}, {"spot"}, {"spot", "on-demand"}}[r.IntN(3)]
	limit := int64(0)
	if r.IntN(4) == 0 {
		limit = int64(8 * (1 + r.IntN(8)))
	}
	var trace strings.Builder
	trace.WriteString("name,submit,duration,replicas,gpus,cpu,memory,node_selector\n")
	n := 1 + r.IntN(40)
	for p := range n {
		g := []int{1, 2, 4, 8}[r.IntN(4)]
		cpu := g * (1 + r.IntN(8))
		mem := g * 4 * (1 + r.IntN(8))
		sel := ""
		switch x := r.IntN(10); {
		case x < 2:
			sel = "karpenter.k8s.aws/instance-family=" + fams[r.IntN(len(fams))]
		case x < 3:
			sel = "node.kubernetes.io/instance-type=" + its[r.IntN(len(its))]
		}
		fmt.Fprintf(&trace, "p%d,0,3600,1,%d,%d,%dGi,%s\n", p, g, cpu, mem, sel)
	}
	name := fmt.Sprintf("random-%03d", i)
	var sc strings.Builder
	fmt.Fprintf(&sc, "apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata: {name: %s}\nspec:\n  seed: 1\n  horizon: 1h\n", name)
	sc.WriteString("  pricing: {region: us-east-1}\n  cluster:\n    pools: []\n    nodePools:\n    - name: gpu\n")
	fmt.Fprintf(&sc, "      instanceTypes: [%s]\n      capacityTypes: [%s]\n", strings.Join(its, ", "), strings.Join(cts, ", "))
	if limit > 0 {
		fmt.Fprintf(&sc, "      limits: {nvidia.com/gpu: %d}\n", limit)
	} else {
		sc.WriteString("      limits: {nvidia.com/gpu: 1000}\n")
	}
	// Nodes Ready only after the horizon: the run holds the batch's one
	// provisioning decision (later scale-ups see the first's nodes in
	// flight, as Solve does), never a second one after the scheduler
	// bound pods elsewhere than planned.
	sc.WriteString("      provisioning: 2h\n      consolidation: {policy: WhenEmpty, consolidateAfter: 100h}\n")
	if slices.Contains(cts, "spot") {
		sc.WriteString("      interruptions: {times: [100h]}\n")
	}
	fmt.Fprintf(&sc, "  workload:\n    trace: {path: %s.csv, format: csv}\n", name)
	if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(trace.String()), 0o644); err != nil {
		return batchCase{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(sc.String()), 0o644); err != nil {
		return batchCase{}, err
	}
	pods, err := readTrace(filepath.Join(dir, name+".csv"))
	return batchCase{name: name, dir: dir, file: name + ".yaml", pods: pods}, err
}
