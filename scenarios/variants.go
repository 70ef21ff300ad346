package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// VariantNames lists the scenario's what-if variants in order.
func (s *Scenario) VariantNames() []string {
	var out []string
	for _, v := range s.Spec.Variants {
		out = append(out, v.Name)
	}
	return out
}

// Variant is the scenario with variant name's patch applied: a scenario of
// its own (named "<scenario>/<variant>"), validated like any other. Its
// errors name the variant and the field; line numbers are the variant's.
func (s *Scenario) Variant(name string) (*Scenario, error) {
	vi := -1
	for i, v := range s.Spec.Variants {
		if v.Name == name {
			vi = i
		}
	}
	if vi < 0 {
		return nil, &InputError{File: s.file, Field: "spec.variants", Msg: fmt.Sprintf("no variant %q (variants: %v)", name, s.VariantNames())}
	}
	v := s.Spec.Variants[vi]
	at := fmt.Sprintf("spec.variants[%d]", vi)
	base := s.Spec
	base.Variants = nil
	// NodePools read from the policy's manifests are read again from the
	// variant's policy.
	base.Cluster.NodePools = slices.DeleteFunc(slices.Clone(base.Cluster.NodePools), func(np NodePoolSpec) bool { return slices.Contains(s.imported, np.Name) })
	base.Cluster.Pools = slices.DeleteFunc(slices.Clone(base.Cluster.Pools), func(p PoolSpec) bool { return slices.Contains(s.importedPools, p.Name) })
	base.Cluster.Pools = slices.DeleteFunc(slices.Clone(base.Cluster.Pools), func(p PoolSpec) bool { return slices.Contains(s.imported, p.Name) })
	data, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	var doc, patch any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(v.Patch.raw, &patch); err != nil {
		return nil, s.errAt(at+".patch", "%v", err)
	}
	if miss, name := missingDelete(doc, patch, at+".patch"); miss != "" {
		return nil, s.errAt(miss, "$patch: delete names %s, which the list does not have; a delete names an item of the scenario", Quote(name))
	}
	merged, err := json.Marshal(mergePatch(doc, patch))
	if err != nil {
		return nil, err
	}
	c := &Scenario{APIVersion: s.APIVersion, Kind: s.Kind, Metadata: s.Metadata, file: s.file, dir: s.dir, restrict: s.restrict, policyFiles: s.policyFiles}
	c.Metadata.Name = s.Metadata.Name + "/" + v.Name
	if v.Description != "" {
		c.Metadata.Description = v.Description
	}
	c.pos = positions{"": s.pos[at]}
	if err := yaml.UnmarshalStrict(merged, &c.Spec); err != nil {
		return nil, s.errAt(at+".patch", "the patched spec does not decode: %v", err)
	}
	if err := (validator{c}).checkPaths(); err != nil {
		if ie, ok := err.(*InputError); ok {
			ie.Msg = fmt.Sprintf("variant %s: %s", v.Name, ie.Msg)
		}
		return nil, err
	}
	if err := c.readInputs(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		if ie, ok := err.(*InputError); ok {
			ie.Msg = fmt.Sprintf("variant %s: %s", v.Name, ie.Msg)
		}
		return nil, err
	}
	return c, nil
}

// mergePatch applies patch to doc (both decoded JSON): maps merge key by
// key (null deletes), lists of named objects merge by name ($patch: delete
// removes an item), anything else is replaced.
func mergePatch(doc, patch any) any {
	switch p := patch.(type) {
	case map[string]any:
		d, ok := doc.(map[string]any)
		if !ok {
			d = map[string]any{}
		}
		for k, v := range p {
			if v == nil {
				delete(d, k)
				continue
			}
			d[k] = mergePatch(d[k], v)
		}
		return d
	case []any:
		d, ok := doc.([]any)
		if !ok || !named(p) || !named(d) {
			return p
		}
		for _, item := range p {
			m := item.(map[string]any)
			i := indexByName(d, m["name"].(string))
			switch {
			case m["$patch"] == "delete":
				if i >= 0 {
					d = append(d[:i], d[i+1:]...)
				}
			case i >= 0:
				d[i] = mergePatch(d[i], m)
			default:
				d = append(d, mergePatch(nil, m))
			}
		}
		return d
	}
	return patch
}

// missingDelete finds the first `$patch: delete` in patch that names no
// item of doc's list, as its field path and the name; "" when none.
func missingDelete(doc, patch any, path string) (string, string) {
	switch p := patch.(type) {
	case map[string]any:
		d, _ := doc.(map[string]any)
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if miss, name := missingDelete(d[k], p[k], path+"."+k); miss != "" {
				return miss, name
			}
		}
	case []any:
		d, ok := doc.([]any)
		if !named(p) || (ok && !named(d)) {
			return "", ""
		}
		for i, item := range p {
			m := item.(map[string]any)
			name := m["name"].(string)
			j := -1
			if ok {
				j = indexByName(d, name)
			}
			at := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case m["$patch"] == "delete" && j < 0:
				return at, name
			case j >= 0:
				if miss, n := missingDelete(d[j], m, at); miss != "" {
					return miss, n
				}
			}
		}
	}
	return "", ""
}

func named(list []any) bool {
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return true
}

func indexByName(list []any, name string) int {
	for i, x := range list {
		if x.(map[string]any)["name"] == name {
			return i
		}
	}
	return -1
}
