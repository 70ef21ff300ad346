package scenarios

import "encoding/json"

// Patched is the scenario with a merge patch over its spec applied, as a
// variant's patch is (lists of named items merge by name), validated like
// any other scenario and named "<scenario>/<name>". Its variants are
// dropped. Sweeps and recommend build their points with it.
func (s *Scenario) Patched(name string, patch []byte) (*Scenario, error) {
	if !json.Valid(patch) {
		return nil, s.errAt("spec", "a patch is not JSON")
	}
	c := *s
	c.Spec.Variants = []VariantSpec{{Name: name, Patch: SpecPatch{raw: patch}}}
	return c.Variant(name)
}
