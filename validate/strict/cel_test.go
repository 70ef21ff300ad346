package strict

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A rule gpuplan has no evaluator for is listed by Unevaluated with its
// place (a reader that must check every rule refuses such a schema); a
// transition rule (oldSelf) runs only on update and is not listed.
func TestSchemaRuleWithoutEvaluatorIsListed(t *testing.T) {
	schema := `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}},
	  "x-kubernetes-validations":[{"rule":"self.a != 'b'","message":"a is b"},{"rule":"self == oldSelf","message":"immutable"}]}}}`
	c, err := CompileCRD("t.json", []byte(schema))
	require.NoError(t, err)
	require.Equal(t, []string{`"self.a != 'b'" at spec`}, c.Unevaluated())
}

// Defaults are applied before the rules, as the API server does:
// ClusterQueue's reclaimWithinCohort defaults to Never, so a
// borrowWithinCohort policy other than Never breaks its rule even when
// reclaimWithinCohort is not written.
func TestRulesSeeTheSchemaDefaults(t *testing.T) {
	schema := `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"spec":{"type":"object","properties":{"preemption":{"type":"object",
	  "properties":{"reclaimWithinCohort":{"type":"string","default":"Never"},
	    "borrowWithinCohort":{"type":"object","properties":{"policy":{"type":"string","default":"Never"}}}},
	  "x-kubernetes-validations":[{"rule":"!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  self.borrowWithinCohort.policy != 'Never')","message":"reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"}]}}}}}`
	c, err := CompileCRD("cq.json", []byte(schema))
	require.NoError(t, err)
	check := func(doc string) error {
		ms, err := Manifests("cq.yaml", []byte("apiVersion: x/v1\nkind: ClusterQueue\n"+doc))
		require.NoError(t, err)
		return c.Check("cq.yaml", ms[0])
	}
	err = check("spec:\n  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n")
	require.EqualError(t, err, `cq.yaml:4:3: spec.preemption: ClusterQueue: Invalid value: "object": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never (a rule of the ClusterQueue schema, checked with its defaults)`)
	require.NoError(t, check("spec:\n  preemption:\n    reclaimWithinCohort: Any\n    borrowWithinCohort: {policy: LowerPriority}\n"))
	require.NoError(t, check("spec:\n  preemption:\n    borrowWithinCohort: {}\n"), "the policy defaults to Never")
	require.NoError(t, check("spec:\n  preemption: {}\n"))
}
