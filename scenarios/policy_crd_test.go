package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Kueue objects are checked against Kueue's published CRD schemas and
// their CEL rules, after the schema's defaults, as the API server does
// when they are created: each row breaks one rule (or one schema
// constraint) of a policy that loads, and must be refused at the line of
// the field the rule is attached to, in the CRD's own words. Before this
// check every row loaded (the rules were not evaluated).
func TestKueueObjectsMeetTheirCRDRules(t *testing.T) {
	dir := t.TempDir()
	const rf = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec:\n  nodeLabels: {pool: a}\n"
	const cq = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  cohortName: all\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 4}\n"
	load := func(body string) error {
		p := filepath.Join(dir, "p.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := LoadPolicy([]string{p})
		return err
	}
	require.NoError(t, load(rf+cq))
	for _, c := range []struct{ name, from, to, want string }{
		{"borrowWithinCohort needs reclaimWithinCohort (defaulted to Never)",
			"  cohortName: all\n", "  cohortName: all\n  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n",
			`p.yaml:12:3: spec.preemption: ClusterQueue: Invalid value: "object": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never`},
		{"preference needs TryNextFlavor twice",
			"  cohortName: all\n", "  cohortName: all\n  flavorFungibility: {whenCanPreempt: MayStopSearch, whenCanBorrow: TryNextFlavor, preference: BorrowingOverPreemption}\n",
			`p.yaml:12:3: spec.flavorFungibility: ClusterQueue: Invalid value: "object": preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor`},
		// gpuplan's own check of this rule speaks first, at the flavor.
		{"a flavor lists as many resources as the group covers",
			"coveredResources: [nvidia.com/gpu]", "coveredResources: [nvidia.com/gpu, cpu]",
			`p.yaml:17:7: spec.resourceGroups[0].flavors[0].resources: flavor f lists 1 resources for 2 covered resources`},
		{"a flavor's taint effect",
			"  nodeLabels: {pool: a}\n", "  nodeLabels: {pool: a}\n  nodeTaints: [{key: k, value: v, effect: Sometimes}]\n",
			`p.yaml:6:3: spec.nodeTaints: ResourceFlavor`},
		{"a toleration without key must be Exists",
			"  nodeLabels: {pool: a}\n", "  nodeLabels: {pool: a}\n  tolerations: [{operator: Equal, value: v, effect: NoSchedule}]\n",
			`p.yaml:6:3: spec.tolerations: ResourceFlavor: Invalid value: "object": operator must be Exists when 'key' is empty, which means 'match all values and all keys'`},
		{"tolerationSeconds only with NoExecute",
			"  nodeLabels: {pool: a}\n", "  nodeLabels: {pool: a}\n  tolerations: [{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}]\n",
			`p.yaml:6:3: spec.tolerations: ResourceFlavor: Invalid value: "object": effect must be 'NoExecute' when 'tolerationSeconds' is set`},
		{"Exists takes no value",
			"  nodeLabels: {pool: a}\n", "  nodeLabels: {pool: a}\n  tolerations: [{key: k, operator: Exists, value: v}]\n",
			`p.yaml:6:3: spec.tolerations: ResourceFlavor: Invalid value: "object": a value must be empty when 'operator' is 'Exists'`},
		{"topologyName needs a node label",
			"  nodeLabels: {pool: a}\n", "  topologyName: default\n",
			`p.yaml:4:1: spec: ResourceFlavor: Invalid value: "object": at least one nodeLabel is required when topology is set`},
	} {
		body := strings.Replace(rf+cq, c.from, c.to, 1)
		require.NotEqual(t, rf+cq, body, c.name)
		err := load(body)
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
	}
	// The same rules in v1beta1, whose cohort field is spec.cohort.
	old := strings.ReplaceAll(strings.Replace(rf+cq, "  cohortName: all\n", "  cohort: all\n  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n", 1), "v1beta2", "v1beta1")
	require.ErrorContains(t, load(old), `p.yaml:12:3: spec.preemption: ClusterQueue: Invalid value: "object": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never`)
	ok := strings.Replace(rf+cq, "  cohortName: all\n", "  cohortName: all\n  preemption:\n    reclaimWithinCohort: Any\n    borrowWithinCohort: {policy: LowerPriority}\n", 1)
	require.NoError(t, load(ok), "borrowWithinCohort beside reclaimWithinCohort: Any")
}
