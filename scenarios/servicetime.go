package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Service-time defaults: what a batch of n takes on one whole GPU of a
// model, base + perItem x n, for a BERT-base-like model (110M parameters,
// sequence length 128, FP16) served by a framework such as TorchServe.
//
// These are assumptions, listed in every run that uses them, not
// measurements of the user's model:
//
//   - the anchor is an A100: 4.9 ms for a batch of 1 and 11.1 ms for a
//     batch of 32, so base 4.9 ms and 0.2 ms per request, the order of
//     PyTorch FP16 eager inference of BERT-base at sequence length 128
//     as commonly reported;
//   - the per-request time of another model is the A100's scaled by the
//     ratio of dense FP16 Tensor Core throughput in NVIDIA's data sheets
//     (A100 312 TFLOPS; H100 SXM and H200 989; B200 2250; L40S 362; L4
//     121; A10 125, which the A10G is taken as, NVIDIA publishing no A10G
//     sheet; V100 125; T4 65; P100, without Tensor Cores, 18.7);
//   - the base (framework, tokenisation, kernel launches, mostly host
//     time) is the same 4.9 ms on every model.
//
// A replica on a MIG instance gets the instance's share of the GPU's
// compute slices (1g of 7: 7 times the per-request time); one on a
// time-sliced share of a GPU (gpus below 1) that share. A scenario's
// batching.baseMs and perItemMs replace the defaults (and are taken as
// measured on the replica's own slice). Calibration profiles have no
// serving fields yet: they do not change these.
const (
	serviceBaseMs      = 4.9
	anchorPerItemMs    = 0.2
	anchorTensorTFLOPS = 312
)

// serviceTimeDefaults is each GPU model's dense FP16 Tensor Core TFLOPS.
var serviceTimeDefaults = map[string]float64{
	"A100-40GB": 312, "A100-80GB": 312,
	"H100-80GB": 989, "H200-141GB": 989, "B200": 2250,
	"L40S": 362, "L4": 121, "A10": 125, "A10G": 125,
	"V100": 125, "V100M16": 125, "V100M32": 125, "V100-32GB": 125,
	"T4": 65, "P100": 18.7,
}

// serviceTimeModels lists the models with defaults, sorted.
func serviceTimeModels() []string {
	out := make([]string, 0, len(serviceTimeDefaults))
	for k := range serviceTimeDefaults {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// perItemMs is the default per-request time on one whole GPU of model.
func perItemMs(model string) (float64, bool) {
	tf, ok := serviceTimeDefaults[model]
	if !ok {
		return 0, false
	}
	return anchorPerItemMs * anchorTensorTFLOPS / tf, true
}

// gpuShare is the share of one GPU's compute a replica pod gets on a
// pool (nil: on the GPU model alone): its MIG instance's compute slices of
// the GPU's 7 (the pod's profile, or the instance a single-strategy pool
// advertises as a GPU), its time-sliced share (gpus below 1), or one of a
// time-sliced GPU's replicas with every replica busy; 1 for a whole GPU.
func gpuShare(model string, pool *cluster.PoolSpec, p cluster.PodSpec) float64 {
	prof := p.MIG
	if pool != nil && prof == "" && pool.Sharing.MIGStrategy == cluster.MIGSingle && len(pool.Sharing.MIGLayout) > 0 {
		prof = pool.Sharing.MIGLayout[0]
	}
	if prof != "" {
		if mp, ok := models.MIGProfileByName(model, prof); ok && mp.Compute > 0 {
			return float64(mp.Compute) / 7
		}
	}
	share := 1.0
	if p.Shared() {
		share = float64(p.GPUMilli) / cluster.MilliGPU
	}
	if pool != nil && pool.Sharing.TimeSlicing > 1 && !p.Shared() {
		share = (1 - pool.Sharing.SliceOverhead) / float64(pool.Sharing.TimeSlicing)
	}
	return share
}

// servicePools are the pools a replica pod can run on: labels matching
// its constraints, every NoSchedule and NoExecute taint tolerated, a
// node's CPU and memory enough for it, GPUs when it asks for them (as many
// whole GPUs as it asks on a pool whose GPUs are not shared), its MIG
// profile offered.
func servicePools(pools []cluster.PoolSpec, c *cluster.Constraints, p cluster.PodSpec) []cluster.PoolSpec {
	var out []cluster.PoolSpec
	for _, pool := range pools {
		if p.MilliGPUs() > 0 && pool.GPUsPerNode == 0 {
			continue
		}
		if p.MilliCPU > pool.MilliCPU || p.MemoryMiB > pool.MemoryMiB {
			continue
		}
		unshared := pool.Sharing.TimeSlicing <= 1 && pool.Sharing.MIGStrategy == ""
		if unshared && p.GPUs > pool.GPUsPerNode {
			continue
		}
		if p.MIG != "" {
			offered := false
			for _, name := range migOffers(pool) {
				offered = offered || name == p.MIG
			}
			if !offered && pool.Sharing.MIGStrategy != cluster.MIGSingle {
				continue
			}
		}
		if !placeable(pool, c) {
			continue
		}
		out = append(out, pool)
	}
	return out
}

// placeable reports whether a pod with constraints c passes a pool's
// node labels (its own and the well-known ones every node carries) and
// taints.
func placeable(pool cluster.PoolSpec, c *cluster.Constraints) bool {
	var sel map[string]string
	var terms []cluster.NodeSelectorTerm
	var tols []cluster.Toleration
	if c != nil {
		sel, terms, tols = c.NodeSelector, c.Affinity, c.Tolerations
	}
	labels := pool.NodeLabels()
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	if len(terms) > 0 {
		any := false
		for _, t := range terms {
			all := true
			for _, r := range t {
				all = all && r.Matches(labels)
			}
			any = any || all
		}
		if !any {
			return false
		}
	}
	for _, t := range pool.Taints {
		if t.Effect == cluster.PreferNoSchedule {
			continue
		}
		ok := false
		for _, tol := range tols {
			ok = ok || tol.Tolerates(t)
		}
		if !ok {
			return false
		}
	}
	return true
}

// defaultServiceTime is a replica's batch service time from the GPU
// model's defaults: the model named, else the slowest of the pools the
// replica can run on, on the share of a GPU it gets there. It says which
// model and why.
func defaultServiceTime(named string, pools []cluster.PoolSpec, c *cluster.Constraints, p cluster.PodSpec) (base, perItem float64, note string, err error) {
	if named != "" {
		per, _ := perItemMs(named)
		share := gpuShare(named, nil, p)
		return serviceBaseMs, per / share, describeServiceTime(named, share, per/share, ""), nil
	}
	if p.MilliGPUs() == 0 {
		return 0, 0, "", fmt.Errorf("a replica without GPUs has no service-time defaults: give batching.baseMs and perItemMs")
	}
	var known, unknown []string
	model, slowest, slowShare := "", 0.0, 1.0
	cand := servicePools(pools, c, p)
	for i, pool := range cand {
		per, ok := perItemMs(pool.GPUModel)
		if !ok {
			unknown = append(unknown, pool.Name+" ("+pool.GPUModel+")")
			continue
		}
		known = append(known, pool.GPUModel)
		share := gpuShare(pool.GPUModel, &cand[i], p)
		if per/share > slowest {
			model, slowest, slowShare = pool.GPUModel, per/share, share
		}
	}
	if model == "" {
		if len(unknown) > 0 {
			return 0, 0, "", fmt.Errorf("the pools a replica can run on, %s, have no service-time defaults (known: %s): give gpuModel, or batching.baseMs and perItemMs", strings.Join(unknown, ", "), strings.Join(serviceTimeModels(), ", "))
		}
		return 0, 0, "", fmt.Errorf("no pool can run a replica (GPUs, labels, taints, MIG profile): give gpuModel, or batching.baseMs and perItemMs")
	}
	why := ""
	if k := dedupe(known); len(k) > 1 || len(unknown) > 0 {
		why = fmt.Sprintf(", the slowest of the GPUs the replicas can run on (%s)", strings.Join(append(k, unknown...), ", "))
	}
	return serviceBaseMs, slowest, describeServiceTime(model, slowShare, slowest, why), nil
}

func describeServiceTime(model string, share, per float64, why string) string {
	slice := ""
	if share < 1 {
		slice = fmt.Sprintf(" (%.3g of its compute)", share)
	}
	return fmt.Sprintf("%s%s: %.3g ms + %.3g ms per request%s", model, slice, serviceBaseMs, per, why)
}

func dedupe(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
