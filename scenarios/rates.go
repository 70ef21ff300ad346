package scenarios

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"gpuplan.dev/gpuplan/models"
)

//go:embed catalog/karpenter/aws_instance_types.csv catalog/karpenter/aws_ondemand_prices.csv
var karpenterFS embed.FS

// cpuMemoryFamilies are the GPU-less families whose prices set the rates
// of a vCPU and a GiB: 7th-generation Intel compute-optimised (2 GiB a
// vCPU), general-purpose (4) and memory-optimised (8), so that the fit
// sees both resources vary.
var cpuMemoryFamilies = map[string]bool{"c7i": true, "m7i": true, "r7i": true}

// AWSCPUMemoryRates fits the per-vCPU and per-GiB on-demand rates of AWS's
// GPU-less instances (c7i, m7i and r7i, metal and flex sizes left out)
// from Karpenter's instance types and price table, embedded. The fit is a
// constant of the binary: it is made once (on first use) and shared, since
// parsing the two tables costs ~4 ms and 1.6 MB, more than a small run.
func AWSCPUMemoryRates() (models.CPUMemoryRates, error) { return awsRates() }

var awsRates = sync.OnceValues(fitAWSCPUMemoryRates)

func fitAWSCPUMemoryRates() (models.CPUMemoryRates, error) {
	rows, err := awsInstancePrices(func(family, size string) bool {
		return cpuMemoryFamilies[family] && !strings.HasPrefix(size, "metal")
	})
	if err != nil {
		return models.CPUMemoryRates{}, err
	}
	r, ok := models.FitCPUMemoryRates(rows)
	if !ok {
		return models.CPUMemoryRates{}, fmt.Errorf("no CPU and memory rates fit the embedded AWS prices")
	}
	r.Basis = fmt.Sprintf("vCPU $%.4f/h and GiB $%.5f/h, fitted over %d AWS c7i/m7i/r7i on-demand prices (us-east-1, Karpenter's table)", r.VCPU, r.GiB, len(rows))
	return r, nil
}

// awsInstancePrices joins Karpenter's instance types with its on-demand
// prices for the GPU-less types keep accepts.
func awsInstancePrices(keep func(family, size string) bool) ([]models.InstancePrice, error) {
	read := func(name string) ([][]string, error) {
		b, err := karpenterFS.ReadFile("catalog/karpenter/" + name)
		if err != nil {
			return nil, err
		}
		return csv.NewReader(bytes.NewReader(b)).ReadAll()
	}
	prices, err := read("aws_ondemand_prices.csv")
	if err != nil {
		return nil, err
	}
	price := map[string]float64{}
	for _, r := range prices[1:] {
		if v, err := strconv.ParseFloat(r[1], 64); err == nil {
			price[r[0]] = v
		}
	}
	types, err := read("aws_instance_types.csv")
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range types[0] {
		col[h] = i
	}
	const k = "karpenter.k8s.aws/"
	for _, c := range []string{"instance_type", k + "instance-family", k + "instance-size", k + "instance-cpu", k + "instance-memory", k + "instance-gpu-count", k + "instance-capability-flex"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("embedded Karpenter instance types lack the column %s", c)
		}
	}
	var out []models.InstancePrice
	for _, r := range types[1:] {
		name, fam, size := r[col["instance_type"]], r[col[k+"instance-family"]], r[col[k+"instance-size"]]
		if r[col[k+"instance-gpu-count"]] != "" || r[col[k+"instance-capability-flex"]] == "true" || !keep(fam, size) {
			continue
		}
		p, ok := price[name]
		if !ok {
			continue
		}
		cpu, err1 := strconv.ParseFloat(r[col[k+"instance-cpu"]], 64)
		mib, err2 := strconv.ParseFloat(r[col[k+"instance-memory"]], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, models.InstancePrice{Name: name, VCPUs: cpu, GiB: mib / 1024, PerHour: p})
	}
	return out, nil
}

// Price split rules (spec.pricing.split).
const (
	SplitGPUResidual = "gpu-residual"
	SplitOpenCost    = "opencost"
)

// openCostSplit reports whether the scenario asks for OpenCost's base-rate
// split of node prices instead of the GPU-residual one.
func (s builder) openCostSplit() (bool, error) {
	if err := validateSplit(s.Spec.Pricing.Split); err != nil {
		return false, s.errAt("spec.pricing.split", "%v", err)
	}
	return s.Spec.Pricing.Split == SplitOpenCost, nil
}

// validateSplit checks spec.pricing.split.
func validateSplit(v string) error {
	switch v {
	case "", SplitGPUResidual, SplitOpenCost:
		return nil
	}
	return fmt.Errorf("%s is not a split rule (gpu-residual, opencost)", Quote(v))
}

// cpuMemoryRates are the rates that price a GPU node's vCPUs and memory
// under the gpu-residual split: the scenario's pricing.cpuMemoryRates, or
// those fitted over AWS's GPU-less instances.
func (s builder) cpuMemoryRates() (models.CPUMemoryRates, error) {
	if r := s.Spec.Pricing.CPUMemoryRates; r != nil {
		if !(r.CPU > 0 && r.Memory > 0) || math.IsInf(r.CPU, 0) || math.IsInf(r.Memory, 0) {
			return models.CPUMemoryRates{}, s.errAt("spec.pricing.cpuMemoryRates", "cpu and memory must be positive USD per vCPU-hour and GiB-hour")
		}
		return models.CPUMemoryRates{VCPU: r.CPU, GiB: r.Memory,
			Basis: fmt.Sprintf("vCPU $%.4f/h and GiB $%.5f/h, from the scenario's pricing.cpuMemoryRates", r.CPU, r.Memory)}, nil
	}
	return AWSCPUMemoryRates()
}

// onDemandPriceOf is what a spot pool's node would cost on demand: the
// pool's onDemandPricePerHour, else the on-demand price of its instance
// type in its region from the scenario's catalog (loaded once); 0 when
// neither is known.
func (s builder) onDemandPriceOf(pool, instanceType string) float64 {
	region := s.region("")
	for i := range s.Spec.Cluster.Pools {
		p := &s.Spec.Cluster.Pools[i]
		if p.Name != pool {
			continue
		}
		if p.OnDemandPricePerHour != nil {
			return *p.OnDemandPricePerHour
		}
		region = s.region(p.Region)
	}
	if instanceType == "" {
		return 0
	}
	cat, err := s.catalog()
	if err != nil {
		return 0
	}
	q, err := cat.Quote(instanceType, region, "", models.OnDemand)
	if err != nil {
		return 0
	}
	return q.PerHour
}

// showback is the scenario's idle-distribution rule and budgets
// (spec.pricing), checked.
func (s builder) showback() (string, map[string]float64, error) {
	p := &s.Spec.Pricing
	switch p.IdleDistribution {
	case "", "allocation", "even":
	default:
		return "", nil, s.errAt("spec.pricing.idleDistribution", "%s is not a rule (allocation, even)", Quote(p.IdleDistribution))
	}
	for team, b := range p.Budgets {
		if !(b >= 0) || math.IsInf(b, 0) {
			return "", nil, s.errAt("spec.pricing.budgets."+team, "a budget is a non-negative number of USD, got %v", b)
		}
	}
	return p.IdleDistribution, p.Budgets, nil
}
