package strict

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A CRD's x-kubernetes-validations are CEL rules the API server runs on
// create after applying the schema's defaults. gpuplan evaluates them
// without a CEL interpreter: a rule has a Go function here, keyed by the
// rule's exact text; CRD.Unevaluated lists a schema's rules that have
// none, so a reader that must check every rule (Kueue's objects) refuses
// a schema with one (and a newer schema with a new rule is caught by the
// test that compiles every embedded schema, not skipped). Transition rules (those that read oldSelf) only run on
// update; an object read from a file is being created, so they are not
// evaluated.

// celRule is one rule: self is the instance at the rule's place in the
// schema (JSON-decoded: map[string]any, []any, string, json.Number, bool),
// after defaulting. It reports whether the rule holds.
type celRule func(self any) bool

// celRules are the rules of the Kueue schemas gpuplan embeds (Kueue's
// ClusterQueue, Cohort and ResourceFlavor, v1beta1 and v1beta2);
// karpenterCELRules (cel_karpenter.go) those of Karpenter's.
var celRules = map[string]celRule{
	// ClusterQueue v1beta2 spec: a borrowingLimit needs a cohort.
	`!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true`: func(self any) bool {
		return noBorrowingLimitWithoutCohort(self, "cohortName")
	},
	// ClusterQueue v1beta1 spec: the same with v1beta1's field name.
	`!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true`: func(self any) bool {
		return noBorrowingLimitWithoutCohort(self, "cohort")
	},
	// ClusterQueue spec.flavorFungibility.
	`!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')`: func(self any) bool {
		m := obj(self)
		return !has(m, "preference") || str(m, "whenCanBorrow") == "TryNextFlavor" && str(m, "whenCanPreempt") == "TryNextFlavor"
	},
	// ClusterQueue spec.preemption.
	`!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  self.borrowWithinCohort.policy != 'Never')`: func(self any) bool {
		m := obj(self)
		return !(str(m, "reclaimWithinCohort") == "Never" && has(m, "borrowWithinCohort") && str(obj(m["borrowWithinCohort"]), "policy") != "Never")
	},
	// ClusterQueue and Cohort spec.resourceGroups[*].
	`self.flavors.all(x, size(x.resources) == size(self.coveredResources))`: func(self any) bool {
		m := obj(self)
		n := len(list(m["coveredResources"]))
		for _, f := range list(m["flavors"]) {
			if len(list(obj(f)["resources"])) != n {
				return false
			}
		}
		return true
	},
	// ResourceFlavor spec.
	`!has(self.topologyName) || self.nodeLabels.size() >= 1`: func(self any) bool {
		m := obj(self)
		return !has(m, "topologyName") || len(obj(m["nodeLabels"])) >= 1
	},
	// ResourceFlavor spec.nodeTaints.
	`self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`: func(self any) bool {
		return all(self, func(x map[string]any) bool {
			return slices.Contains([]string{"NoSchedule", "PreferNoSchedule", "NoExecute"}, str(x, "effect"))
		})
	},
	// ResourceFlavor spec.tolerations.
	`self.all(x, !has(x.key) ? x.operator == 'Exists' : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return has(x, "key") || str(x, "operator") == "Exists" })
	},
	`self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return !has(x, "tolerationSeconds") || str(x, "effect") == "NoExecute" })
	},
	`self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])`: func(self any) bool {
		return all(self, func(x map[string]any) bool {
			return !has(x, "operator") || slices.Contains([]string{"Equal", "Exists"}, str(x, "operator"))
		})
	},
	`self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : true)`: func(self any) bool {
		return all(self, func(x map[string]any) bool { return str(x, "operator") != "Exists" || !has(x, "value") })
	},
	`self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])`: func(self any) bool {
		return all(self, func(x map[string]any) bool {
			return !has(x, "effect") || slices.Contains([]string{"NoSchedule", "PreferNoSchedule", "NoExecute"}, str(x, "effect"))
		})
	},
}

func noBorrowingLimitWithoutCohort(self any, cohortField string) bool {
	m := obj(self)
	if has(m, cohortField) || !has(m, "resourceGroups") {
		return true
	}
	for _, rg := range list(m["resourceGroups"]) {
		for _, f := range list(obj(rg)["flavors"]) {
			for _, r := range list(obj(f)["resources"]) {
				if has(obj(r), "borrowingLimit") {
					return false
				}
			}
		}
	}
	return true
}

// CEL's has() on a field: present (JSON null counts as absent).
func has(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v != nil
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func all(self any, f func(map[string]any) bool) bool {
	for _, x := range list(self) {
		if !f(obj(x)) {
			return false
		}
	}
	return true
}

// celCheck is one rule of a schema with its message.
type celCheck struct {
	rule    celRule
	message string
}

// schemaRules reads the rules at one schema node that gpuplan can
// evaluate; the others' texts go to unknown (with their place).
func schemaRules(at string, node map[string]any, unknown *[]string) []celCheck {
	raw, _ := node["x-kubernetes-validations"].([]any)
	var out []celCheck
	for _, r := range raw {
		m := obj(r)
		text := str(m, "rule")
		if strings.Contains(text, "oldSelf") {
			continue // a transition rule: update only
		}
		f, ok := celRules[text]
		if !ok {
			f, ok = karpenterCELRules[text]
		}
		if !ok {
			if unknown != nil {
				*unknown = append(*unknown, fmt.Sprintf("%q at %s", text, at))
			}
			continue
		}
		msg := str(m, "message")
		if msg == "" {
			msg = "failed rule: " + text
		}
		out = append(out, celCheck{rule: f, message: msg})
	}
	return out
}

// unevaluatedRules lists the rules of a schema gpuplan has no evaluator
// for, in schema order.
func unevaluatedRules(schema any) []string {
	var unknown []string
	var walk func(s any, at string)
	walk = func(s any, at string) {
		m := obj(s)
		if m == nil {
			return
		}
		schemaRules(at, m, &unknown)
		props := obj(m["properties"])
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(props[k], Join(at, k))
		}
		walk(m["items"], at+"[*]")
		walk(m["additionalProperties"], at+".*")
	}
	walk(schema, "")
	return unknown
}

// applyDefaults fills the schema's defaults into inst as the API server
// does before validation: a property absent from an object that is there
// takes its default, at every depth.
func applyDefaults(schema, inst any) {
	s := obj(schema)
	if s == nil {
		return
	}
	switch v := inst.(type) {
	case map[string]any:
		props := obj(s["properties"])
		for k, p := range props {
			if _, ok := v[k]; !ok {
				if d, ok := obj(p)["default"]; ok {
					v[k] = deepCopy(d)
				}
			}
			if x, ok := v[k]; ok {
				applyDefaults(p, x)
			}
		}
		if ap := obj(s["additionalProperties"]); ap != nil && props == nil {
			for _, x := range v {
				applyDefaults(ap, x)
			}
		}
	case []any:
		for _, x := range v {
			applyDefaults(s["items"], x)
		}
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// ruleFailure is a rule that does not hold, at a field path.
type ruleFailure struct {
	field, message string
}

// evalRules runs every rule of schema over inst, depth first, and returns
// the first that fails (parents before children, fields in name order).
func evalRules(schema, inst any, at string) *ruleFailure {
	s := obj(schema)
	if s == nil || inst == nil {
		return nil
	}
	for _, r := range schemaRules(at, s, nil) {
		if !r.rule(inst) {
			return &ruleFailure{field: at, message: r.message}
		}
	}
	switch v := inst.(type) {
	case map[string]any:
		props := obj(s["properties"])
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k]
			if !ok && props == nil {
				p = s["additionalProperties"]
			}
			if f := evalRules(p, v[k], Join(at, k)); f != nil {
				return f
			}
		}
	case []any:
		for i, x := range v {
			if f := evalRules(s["items"], x, fmt.Sprintf("%s[%d]", at, i)); f != nil {
				return f
			}
		}
	}
	return nil
}
