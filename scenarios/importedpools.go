package scenarios

import (
	"fmt"
	"strings"
)

// ImportedPoolSpec sets, by the pool's name, what a file of pools
// (spec.cluster.nodes, spec.cluster.agentPools) cannot say about one of
// them: how its spot nodes are interrupted, how its nodes fail, an Azure
// spot pool's eviction policy, disk and max price, its prices and its
// launch times. A Node carries none of these, and an ARM template only
// the eviction policy and max price.
type ImportedPoolSpec struct {
	Name                 string            `json:"name"`
	Interruptions        *InterruptionSpec `json:"interruptions,omitempty"`
	Failures             *FailureSpec      `json:"failures,omitempty"`
	EvictionPolicy       string            `json:"evictionPolicy,omitempty"`
	OSDiskPricePerMonth  *float64          `json:"osDiskPricePerMonth,omitempty"`
	MaxPrice             *float64          `json:"maxPrice,omitempty"`
	PricePerHour         *float64          `json:"pricePerHour,omitempty"`
	OnDemandPricePerHour *float64          `json:"onDemandPricePerHour,omitempty"`
	Provisioning         *Duration         `json:"provisioning,omitempty"`
	ImagePull            *Duration         `json:"imagePull,omitempty"`
}

// importSettings applies the settings of from (spec.cluster.nodes or
// spec.cluster.agentPools) to the pools it read, named: each setting names
// one of them, and an error in a setting is placed at its own line and
// field (the pool's fields are aliased to it).
type importSettings struct {
	s    *Scenario
	from string
	list []ImportedPoolSpec
	used []bool
}

func (s *Scenario) importSettings(from string, list []ImportedPoolSpec) (*importSettings, error) {
	seen := map[string]bool{}
	for i, x := range list {
		at := fmt.Sprintf("%s.pools[%d].name", from, i)
		switch {
		case x.Name == "":
			return nil, s.errAt(at, "is required: the name of a pool the file gives")
		case seen[x.Name]:
			return nil, s.errAt(at, "%s is set twice", Quote(x.Name))
		}
		seen[x.Name] = true
	}
	return &importSettings{s: s, from: from, list: list, used: make([]bool, len(list))}, nil
}

// apply sets what the settings give for pool ps, which will be
// spec.cluster.pools[index].
func (is *importSettings) apply(ps *PoolSpec, index int) {
	for i, x := range is.list {
		if x.Name != ps.Name {
			continue
		}
		is.used[i] = true
		set := func(to **float64, v *float64) {
			if v != nil {
				*to = v
			}
		}
		if x.Interruptions != nil {
			ps.Interruptions = x.Interruptions
		}
		if x.Failures != nil {
			ps.Failures = x.Failures
		}
		if x.EvictionPolicy != "" {
			ps.EvictionPolicy = x.EvictionPolicy
		}
		set(&ps.OSDiskPricePerMonth, x.OSDiskPricePerMonth)
		set(&ps.MaxPrice, x.MaxPrice)
		set(&ps.PricePerHour, x.PricePerHour)
		set(&ps.OnDemandPricePerHour, x.OnDemandPricePerHour)
		if x.Provisioning != nil {
			ps.Provisioning = x.Provisioning
		}
		if x.ImagePull != nil {
			ps.ImagePull = x.ImagePull
		}
		if is.s.aliases == nil {
			is.s.aliases = map[string]string{}
		}
		is.s.aliases[fmt.Sprintf("spec.cluster.pools[%d]", index)] = fmt.Sprintf("%s.pools[%d]", is.from, i)
	}
}

// check refuses a setting that named no pool of the file.
func (is *importSettings) check(file string, names []string) error {
	for i, u := range is.used {
		if !u {
			return is.s.errAt(fmt.Sprintf("%s.pools[%d].name", is.from, i), "%s is not a pool read from %s (its pools: %s)", Quote(is.list[i].Name), file, strings.Join(names, ", "))
		}
	}
	return nil
}

// alias is the field path an error at path is reported at: a field of an
// imported pool with settings is its setting's.
func (s *Scenario) alias(path string) string {
	for from, to := range s.aliases {
		if strings.HasPrefix(path, from) && (len(path) == len(from) || path[len(from)] == '.') {
			return to + path[len(from):]
		}
	}
	return path
}
