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

// derive is a copy of the scenario whose spec the caller may change (the
// all-on-demand twin, a spot-sensitivity point): a deep copy of the spec,
// and the same origin (file, folder, path restriction, field positions)
// and inputs read when it loaded (catalogs, imported NodePools and nodes
// and their notes), which nothing changes once loaded. Every such copy is
// made here, so none leaves out a field.
func (s *Scenario) derive() (*Scenario, error) {
	data, err := json.Marshal(s.Spec)
	if err != nil {
		return nil, err
	}
	c := *s
	c.Spec = Spec{}
	if err := json.Unmarshal(data, &c.Spec); err != nil {
		return nil, err
	}
	return &c, nil
}
