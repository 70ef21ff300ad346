package karpenter

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Operators a requirement may use (Kubernetes' node selector operators and
// Karpenter's Gte and Lte).
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
	OpGt           = "Gt"
	OpLt           = "Lt"
	OpGte          = "Gte"
	OpLte          = "Lte"
)

// MaxMinValues is the largest minValues Karpenter accepts.
const MaxMinValues = 50

// Requirement is one entry of a NodePool's spec.template.spec.requirements.
type Requirement struct {
	Key      string
	Operator string
	Values   []string
	// MinValues, when positive, is the least number of distinct values of
	// Key the resolved types must offer.
	MinValues int
}

func (r Requirement) String() string {
	s := r.Key + " " + r.Operator
	if len(r.Values) > 0 {
		s += " [" + strings.Join(r.Values, ", ") + "]"
	}
	return s
}

// Error is a requirement that cannot be met: Index is its place in the
// list (-1: the requirements as a whole).
type Error struct {
	Index int
	Msg   string
}

func (e *Error) Error() string {
	if e.Index < 0 {
		return e.Msg
	}
	return fmt.Sprintf("requirements[%d]: %s", e.Index, e.Msg)
}

// Resolution is what a NodePool's requirements allow.
type Resolution struct {
	// Types are the instance types left, in catalog order.
	Types []*InstanceType
	// CapacityTypes are on-demand and spot, as allowed (on-demand alone
	// when no requirement names the capacity type, Karpenter's default), in
	// the order an In requirement writes them.
	CapacityTypes []string
	// Zones are the zones allowed by an In requirement (nil: any).
	Zones []string
	// Region, when a requirement names one.
	Region string
	// Labels are the values the requirements give keys Karpenter does not
	// define on instance types: labels the NodePool's nodes carry.
	Labels map[string]string
	// Notes say what was read but is not modelled.
	Notes []string
	// NoGPU, when no resolved type has an NVIDIA GPU, says which
	// requirement left none (Index -1: the catalog types it started from).
	NoGPU *Error
}

// GPUTypes counts the resolved types with NVIDIA GPUs.
func (r *Resolution) GPUTypes() int { return gpuTypes(r.Types) }

// typeKeys are the label keys the catalog sets on instance types.
func (c *Catalog) typeKeys() map[string]bool {
	keys := map[string]bool{}
	for i := range c.Types {
		for k := range c.Types[i].Labels {
			keys[k] = true
		}
	}
	return keys
}

// check validates a requirement's shape: the values its operator takes.
func check(i int, r Requirement) (int64, error) {
	switch r.Operator {
	case OpIn, OpNotIn:
		if len(r.Values) == 0 {
			return 0, &Error{i, fmt.Sprintf("%s %s needs at least one value", r.Key, r.Operator)}
		}
	case OpExists, OpDoesNotExist:
		if len(r.Values) > 0 {
			return 0, &Error{i, fmt.Sprintf("%s %s takes no values", r.Key, r.Operator)}
		}
	case OpGt, OpLt, OpGte, OpLte:
		if len(r.Values) != 1 {
			return 0, &Error{i, fmt.Sprintf("%s %s takes a single integer value", r.Key, r.Operator)}
		}
		n, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil || n < 0 {
			return 0, &Error{i, fmt.Sprintf("%s %s: %s is not a non-negative integer", r.Key, r.Operator, quote(r.Values[0]))}
		}
		return n, nil
	default:
		return 0, &Error{i, fmt.Sprintf("operator %s is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte", quote(r.Operator))}
	}
	if r.MinValues < 0 || r.MinValues > MaxMinValues {
		return 0, &Error{i, fmt.Sprintf("minValues %d is outside 1..%d", r.MinValues, MaxMinValues)}
	}
	return 0, nil
}

// Check validates a requirement's shape as Resolve does (the values its
// operator takes, minValues); n is its integer for Gt, Lt, Gte and Lte.
func Check(i int, r Requirement) (n int64, err error) { return check(i, r) }

// Holds says whether labels meet the requirement (n from Check): a key
// they lack fails In, Exists and the comparisons and meets NotIn and
// DoesNotExist.
func (r Requirement) Holds(labels map[string]string, n int64) bool {
	v, ok := labels[r.Key]
	return matches(r, n, v, ok)
}

// quote shows a value from the input, at most 64 bytes of it.
func quote(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}

// matches applies a requirement to a label value (present or not).
func matches(r Requirement, n int64, v string, present bool) bool {
	switch r.Operator {
	case OpIn:
		return present && slices.Contains(r.Values, v)
	case OpNotIn:
		return !present || !slices.Contains(r.Values, v)
	case OpExists:
		return present
	case OpDoesNotExist:
		return !present
	}
	if !present {
		return false
	}
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	switch r.Operator {
	case OpGt:
		return x > n
	case OpLt:
		return x < n
	case OpGte:
		return x >= n
	}
	return x <= n
}

// offerings applies a requirement to a fixed set of values (capacity
// types, zones), keeping those that match.
func offerings(r Requirement, n int64, all []string) []string {
	var out []string
	for _, v := range all {
		if matches(r, n, v, true) {
			out = append(out, v)
		}
	}
	return out
}

// Resolve applies requirements to the catalog. A requirement that leaves no
// instance type, no capacity type or no zone is an *Error naming it and
// what was left before it.
func (c *Catalog) Resolve(reqs []Requirement) (*Resolution, error) {
	res := &Resolution{CapacityTypes: []string{OnDemand}, Labels: map[string]string{}}
	keys := c.typeKeys()
	left := make([]*InstanceType, len(c.Types))
	for i := range c.Types {
		left[i] = &c.Types[i]
	}
	ctSet := false
	for i, r := range reqs {
		n, err := check(i, r)
		if err != nil {
			return nil, err
		}
		switch {
		case r.Key == LabelCapacityType:
			all := []string{OnDemand, Spot}
			if !ctSet {
				res.CapacityTypes = all
				ctSet = true
			}
			if r.Operator == OpIn && slices.Contains(r.Values, Reserved) {
				res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: capacity type reserved is not read from a NodePool (its capacity reservations and their counts are not in it) unless its EC2NodeClass's capacityReservationSelectorTerms carry gpuplan's reservation tags (what gpuplan manifests writes); else give them in spec.cluster.nodePools[].reservations", i))
			}
			if r.Operator == OpIn {
				// In keeps the order the values are written in.
				var in []string
				for _, v := range r.Values {
					if slices.Contains(res.CapacityTypes, v) && !slices.Contains(in, v) {
						in = append(in, v)
					}
				}
				res.CapacityTypes = in
			} else {
				res.CapacityTypes = offerings(r, n, res.CapacityTypes)
			}
			if len(res.CapacityTypes) == 0 {
				return nil, &Error{i, fmt.Sprintf("%s allows no capacity type gpuplan models (on-demand, spot)", r)}
			}
		case r.Key == LabelZone:
			switch r.Operator {
			case OpIn:
				zs := r.Values
				if res.Zones != nil {
					zs = offerings(Requirement{Operator: OpIn, Values: r.Values}, 0, res.Zones)
				}
				if len(zs) == 0 {
					return nil, &Error{i, fmt.Sprintf("%s leaves no zone after the zones allowed before it (%s)", r, strings.Join(res.Zones, ", "))}
				}
				res.Zones = zs
			case OpNotIn:
				if res.Zones != nil {
					res.Zones = offerings(r, n, res.Zones)
					if len(res.Zones) == 0 {
						return nil, &Error{i, fmt.Sprintf("%s leaves no zone", r)}
					}
				} else {
					res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: %s: zones are not told apart (prices are the region's)", i, r))
				}
			case OpExists:
			default:
				return nil, &Error{i, fmt.Sprintf("%s: every node has a zone", r)}
			}
		case r.Key == LabelRegion:
			switch r.Operator {
			case OpIn:
				res.Region = r.Values[0]
				if len(r.Values) > 1 {
					res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: regions beyond the first (%s) are not modelled", i, strings.Join(r.Values[1:], ", ")))
				}
			case OpExists:
			default:
				res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: %s is not modelled", i, r))
			}
		case r.Key == LabelNodePool:
			res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: %s is set by Karpenter itself; not read", i, r))
		case keys[r.Key] || r.Key == LabelOS || isProviderKey(r.Key):
			// A label of instance types (a provider key the catalog never
			// sets is absent on every type).
			before := left
			left = nil
			for _, t := range before {
				v, ok := t.Labels[r.Key]
				if matches(r, n, v, ok) {
					left = append(left, t)
				}
			}
			if len(left) == 0 {
				return nil, &Error{i, fmt.Sprintf("%s leaves no instance type: %s", r, describeValues(r.Key, before))}
			}
			if res.NoGPU == nil && gpuTypes(left) == 0 {
				res.NoGPU = &Error{i, fmt.Sprintf("%s leaves no type with an NVIDIA GPU: %s", r, describeValues(r.Key, gpuOnly(before)))}
			}
		default:
			// A custom label: Karpenter puts it on the nodes.
			switch r.Operator {
			case OpIn:
				res.Labels[r.Key] = r.Values[0]
			case OpExists, OpNotIn, OpDoesNotExist:
				res.Notes = append(res.Notes, fmt.Sprintf("requirements[%d]: %s on a custom label gives its nodes no value gpuplan can place pods by", i, r))
			default:
				return nil, &Error{i, fmt.Sprintf("%s: a custom label has no integer value to compare", r)}
			}
		}
	}
	res.Types = left
	for i, r := range reqs {
		if r.MinValues <= 0 {
			continue
		}
		var got []string
		switch r.Key {
		case LabelCapacityType:
			got = res.CapacityTypes
		case LabelZone:
			got = res.Zones
			if got == nil {
				continue // any zone: as many as the region has
			}
		default:
			seen := map[string]bool{}
			for _, t := range res.Types {
				if v, ok := t.Labels[r.Key]; ok {
					seen[v] = true
				}
			}
			got = sortedKeys(seen)
		}
		if len(got) < r.MinValues {
			return nil, &Error{i, fmt.Sprintf("minValues %d: the instance types the requirements allow have %d distinct %s (%s)", r.MinValues, len(got), r.Key, short(got, 8))}
		}
	}
	return res, nil
}

func gpuTypes(ts []*InstanceType) int {
	n := 0
	for _, t := range ts {
		if t.HasGPU() {
			n++
		}
	}
	return n
}

func gpuOnly(ts []*InstanceType) []*InstanceType {
	var out []*InstanceType
	for _, t := range ts {
		if t.HasGPU() {
			out = append(out, t)
		}
	}
	return out
}

// isProviderKey reports keys of the AWS provider's label domain.
func isProviderKey(k string) bool {
	return strings.HasPrefix(k, "karpenter.k8s.aws/") || k == "node.kubernetes.io/windows-build"
}

// describeValues says what values of key the types had, for an error.
func describeValues(key string, types []*InstanceType) string {
	seen := map[string]bool{}
	without := 0
	for _, t := range types {
		if v, ok := t.Labels[key]; ok {
			seen[v] = true
		} else {
			without++
		}
	}
	vals := sortedKeys(seen)
	if allInts(vals) {
		slices.SortFunc(vals, func(a, b string) int {
			x, _ := strconv.ParseInt(a, 10, 64)
			y, _ := strconv.ParseInt(b, 10, 64)
			return int(x - y)
		})
	}
	s := fmt.Sprintf("the %d types left before it", len(types))
	if len(vals) == 0 {
		return s + " have no " + key + " label"
	}
	s += fmt.Sprintf(" have %s %s", key, short(vals, 12))
	if without > 0 {
		s += fmt.Sprintf(" (%d have none)", without)
	}
	return s
}

func allInts(vs []string) bool {
	for _, v := range vs {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return false
		}
	}
	return len(vs) > 0
}

// short lists at most n values.
func short(vs []string, n int) string {
	if len(vs) <= n {
		return strings.Join(vs, ", ")
	}
	return strings.Join(vs[:n], ", ") + fmt.Sprintf(", ... (%d in all)", len(vs))
}
