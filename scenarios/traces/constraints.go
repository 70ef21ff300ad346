package traces

import (
	"fmt"
	"strconv"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// TermSpec is a required node affinity term: all its expressions hold.
type TermSpec struct {
	MatchExpressions []RequirementSpec `json:"matchExpressions"`
}

// RequirementSpec is a node selector requirement.
type RequirementSpec struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// TolerationSpec is a core/v1 toleration.
type TolerationSpec struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

// ConstraintsFrom checks node selector, affinity and tolerations as
// written and makes them the engine's constraints (nil when all are
// empty).
func ConstraintsFrom(sel map[string]string, terms []TermSpec, tols []TolerationSpec) (*cluster.Constraints, error) {
	if len(sel) == 0 && len(terms) == 0 && len(tols) == 0 {
		return nil, nil
	}
	c := &cluster.Constraints{NodeSelector: sel}
	for i, t := range terms {
		var term cluster.NodeSelectorTerm
		for j, r := range t.MatchExpressions {
			op := cluster.SelectorOp(r.Operator)
			switch op {
			case cluster.OpIn, cluster.OpNotIn:
				if len(r.Values) == 0 {
					return nil, fmt.Errorf("affinity[%d].matchExpressions[%d]: %s needs values", i, j, op)
				}
			case cluster.OpExists, cluster.OpDoesNotExist:
				if len(r.Values) != 0 {
					return nil, fmt.Errorf("affinity[%d].matchExpressions[%d]: %s takes no values", i, j, op)
				}
			case cluster.OpGt, cluster.OpLt:
				if len(r.Values) != 1 {
					return nil, fmt.Errorf("affinity[%d].matchExpressions[%d]: %s takes one value", i, j, op)
				}
				if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
					return nil, fmt.Errorf("affinity[%d].matchExpressions[%d].values[0]: %s %s is not an integer; Gt and Lt compare a label as a whole number", i, j, op, strict.Quote(r.Values[0]))
				}
			default:
				return nil, fmt.Errorf("affinity[%d].matchExpressions[%d].operator: %q is not In, NotIn, Exists, DoesNotExist, Gt or Lt", i, j, r.Operator)
			}
			if r.Key == "" {
				return nil, fmt.Errorf("affinity[%d].matchExpressions[%d].key is required", i, j)
			}
			term = append(term, cluster.Requirement{Key: r.Key, Op: op, Values: r.Values})
		}
		c.Affinity = append(c.Affinity, term)
	}
	for i, t := range tols {
		tol := cluster.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: cluster.TaintEffect(t.Effect)}
		switch t.Operator {
		case "", "Equal":
			tol.Operator = "Equal"
			if t.Key == "" {
				return nil, fmt.Errorf("tolerations[%d]: operator Equal needs a key", i)
			}
		case "Exists":
			if t.Value != "" {
				return nil, fmt.Errorf("tolerations[%d]: operator Exists takes no value", i)
			}
		default:
			return nil, fmt.Errorf("tolerations[%d].operator: %q is not Equal or Exists", i, t.Operator)
		}
		switch tol.Effect {
		case "", cluster.NoSchedule, cluster.PreferNoSchedule, cluster.NoExecute:
		default:
			return nil, fmt.Errorf("tolerations[%d].effect: %q is not NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
		c.Tolerations = append(c.Tolerations, tol)
	}
	return c, nil
}
