package karpenter

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/sim/capacity"
)

// batchCase is one scenario of pending pods: a gpuplan scenario file
// whose trace submits every pod at time 0, and the pods it holds.
type batchCase struct {
	name      string
	dir, file string
	pods      []pendingPod
}

// nodePool is the NodePool as gpuplan built it: the capacity types of its
// offers and its GPU limit (0: none).
type nodePool struct {
	capacityTypes []string
	maxGPUs       int64
}

// readTrace reads the pods of a gpuplan CSV trace (name, replicas, gpus,
// cpu, memory, node_selector), one pendingPod per replica.
func readTrace(path string) ([]pendingPod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(r []string, k string) string {
		if i, ok := col[k]; ok && i < len(r) {
			return r[i]
		}
		return ""
	}
	var pods []pendingPod
	for _, r := range rows[1:] {
		if get(r, "submit") != "0" {
			return nil, fmt.Errorf("%s: %s is not submitted at 0", path, get(r, "name"))
		}
		reps := 1
		if v := get(r, "replicas"); v != "" {
			if reps, err = strconv.Atoi(v); err != nil {
				return nil, err
			}
		}
		gpus, _ := strconv.ParseInt(get(r, "gpus"), 10, 64)
		cpu := resource.MustParse(get(r, "cpu"))
		mem := resource.MustParse(get(r, "memory"))
		var sel map[string]string
		if v := get(r, "node_selector"); v != "" {
			sel = map[string]string{}
			for _, kv := range strings.Split(v, ";") {
				k, val, _ := strings.Cut(kv, "=")
				sel[k] = val
			}
		}
		for i := 0; i < reps; i++ {
			pods = append(pods, pendingPod{name: fmt.Sprintf("%s-%d", get(r, "name"), i), gpus: gpus,
				milliCPU: cpu.MilliValue(), memMiB: mem.Value() >> 20, selector: sel})
		}
	}
	return pods, nil
}

// provision runs the scenario through gpuplan and returns the offers it
// built for its NodePool and what its provisioner launched.
func provision(dir, file string) ([]offer, nodePool, outcome, error) {
	body, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, nodePool{}, outcome{}, err
	}
	s, err := scenarios.Parse(file, dir, body)
	if err != nil {
		return nil, nodePool{}, outcome{}, err
	}
	b, err := s.Build(scenarios.Options{})
	if err != nil {
		return nil, nodePool{}, outcome{}, err
	}
	defer b.Close()
	cfg := b.Config
	var offers []offer
	var np nodePool
	for i, ps := range cfg.Pools {
		cp := cfg.Capacity.Pools[i]
		if cp.Group < 0 || cfg.Capacity.Groups[cp.Group].Kind != capacity.NodePool {
			continue
		}
		np.maxGPUs = cfg.Capacity.Groups[cp.Group].MaxGPUs
		if !slices.Contains(np.capacityTypes, cp.CapacityType) {
			np.capacityTypes = append(np.capacityTypes, cp.CapacityType)
		}
		offers = append(offers, offer{pool: int32(i), instanceType: ps.InstanceType, capacityType: cp.CapacityType, price: cp.PricePerHour, spec: ps})
	}
	res, err := sim.Run(cfg)
	if err != nil {
		return nil, nodePool{}, outcome{}, err
	}
	out := outcome{nodes: map[string]int{}, pods: map[string]int{}}
	key := map[int32]string{}
	for _, o := range offers {
		key[o.pool] = o.instanceType + "/" + o.capacityType
		n := int(res.Pools[o.pool].Capacity.Launched)
		out.nodes[key[o.pool]] += n
		out.perHour += float64(n) * o.price
	}
	// The pods per offering are the provisioner's plan (each NodeClaim's
	// pods), not where the scheduler binds them later; the rest of the
	// batch is left pending.
	total := 0
	for _, j := range res.Jobs {
		total += int(j.Replicas)
	}
	for _, o := range offers {
		n := int(res.Pools[o.pool].Capacity.PlannedPods)
		out.pods[key[o.pool]] += n
		total -= n
	}
	out.pending = total
	return offers, np, out, nil
}
