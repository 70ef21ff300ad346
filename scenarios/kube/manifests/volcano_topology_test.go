package manifests

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim/cluster"
)

const volcanoTopology = "testdata/scenarios/volcano-topology.yaml"

// TestVolcanoClassTopologyAsNetworkTopology: a class asking for topology
// that runs as a Volcano Job (testdata/scenarios/volcano-topology.yaml:
// 16 p5.48xlarge nodes, 4 a rack, 2 racks a block; llm's 4-pod gangs
// asking for one rack) is written as Volcano places it: the pools' racks
// and blocks as HyperNodes and the Job's spec.networkTopology. By hand:
// slots 0-3 are rack 0, 4-7 rack 1 (block 0), 8-11 rack 2 and 12-15
// rack 3 (block 1), so tier 1 is h100-rack-0..3, each selecting its nodes
// by cloud.provider.com/topology-rack, and tier 2 h100-block-0 = {rack-0,
// rack-1} and h100-block-1 = {rack-2, rack-3}; the required rack is tier
// 1, hard (highestTierAllowed 1), the preferred rack soft; finetune asks
// for none. Read back (the job templates as the workload with the
// classes' arrivals and durations, the written Volcano Queues and
// HyperNodes as the policy), the jobs are placed as when llm's template
// asks for the class's level by Kueue's annotation instead, the way the
// run placed the class (over the pools' levels; the Queues alone as the
// policy): the same summary. Without the HyperNodes the required gangs are no
// longer held to a rack and the summary differs. Every Volcano Job and
// HyperNode is valid under Volcano's CRD schemas.
func TestVolcanoClassTopologyAsNetworkTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the scenario three times a variant")
	}
	for _, c := range []struct {
		variant string
		want    *VolcanoNetworkTopology
	}{
		{"", &VolcanoNetworkTopology{Mode: "hard", HighestTierAllowed: ptr(1)}},
		{"preferred", &VolcanoNetworkTopology{Mode: "soft"}},
	} {
		t.Run("variant="+c.variant, func(t *testing.T) {
			s := loadRun(t, volcanoTopology, c.variant)
			m, err := s.Cluster()
			require.NoError(t, err)
			files, warnings, err := Generate(s, m, Options{})
			require.NoError(t, err)
			require.Empty(t, warnings)
			set := newSchemaSet()
			var hns []string
			for _, f := range files {
				for _, o := range f.Objects {
					checked, err := set.validate(t, o)
					require.NoError(t, err, f.Path)
					if h, ok := o.(*HyperNode); ok {
						require.True(t, checked)
						require.Equal(t, PathHyperNodes, f.Path)
						hns = append(hns, h.Name)
					}
					if vj, ok := o.(*VolcanoJob); ok {
						require.True(t, checked, "Volcano's Job CRD schema")
						if strings.HasPrefix(vj.GenerateName, "llm-") {
							require.Equal(t, c.want, vj.Spec.NetworkTopology)
						} else {
							require.Nil(t, vj.Spec.NetworkTopology, vj.GenerateName)
						}
					}
				}
			}
			require.Equal(t, []string{"h100-rack-0", "h100-rack-1", "h100-rack-2", "h100-rack-3", "h100-block-0", "h100-block-1"}, hns)
			rack2 := find[HyperNode](t, files, "h100-rack-2")
			require.Equal(t, HyperNodeSpec{Tier: 1, TierName: "rack", Members: []HyperNodeMember{{Type: "Node", Selector: HyperNodeSelector{
				LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{cluster.LabelTopologyRack: "h100-rack-2"}}}}}}, rack2.Spec)
			block1 := find[HyperNode](t, files, "h100-block-1")
			require.Equal(t, HyperNodeSpec{Tier: 2, TierName: "block", Members: []HyperNodeMember{
				{Type: "HyperNode", Selector: HyperNodeSelector{ExactMatch: &HyperNodeExactMatch{Name: "h100-rack-2"}}},
				{Type: "HyperNode", Selector: HyperNodeSelector{ExactMatch: &HyperNodeExactMatch{Name: "h100-rack-3"}}}}}, block1.Spec)

			dir := t.TempDir()
			require.NoError(t, WriteDir(dir, files))
			// Two workloads from the written templates: as written (llm's
			// Job asks for its tier by spec.networkTopology), and llm's Job
			// asking for the class's level by Kueue's pod-template
			// annotation instead, which the run places over the pools'
			// levels as it placed the class.
			var entries, kueueForm []scenarios.ManifestsSpec
			for _, cl := range s.Spec.Workload.Synthetic.Classes {
				p := filepath.Join(dir, filepath.FromSlash(DirJobTemplates+cl.Name+".yaml"))
				objs, _, err := workloads.LoadIn(p, m.Pools)
				require.NoError(t, err)
				require.Len(t, objs, 1)
				arr := cl.Arrival
				entries = append(entries, scenarios.ManifestsSpec{Path: p, Arrival: &arr, Duration: cl.Duration})
				if cl.Name != "llm" {
					kueueForm = append(kueueForm, entries[len(entries)-1])
					continue
				}
				tas := objs[0].Groups[0].Constraints.TAS
				require.NotNil(t, tas)
				require.NotNil(t, tas.Volcano, "the template asks for Volcano network topology")
				require.Equal(t, c.want.Mode == "hard", tas.Volcano.Hard)
				raw, err := os.ReadFile(p)
				require.NoError(t, err)
				decoded, err := Decode(p, raw)
				require.NoError(t, err)
				vj := decoded[0].(*VolcanoJob)
				vj.Spec.NetworkTopology = nil
				ann := map[string]string{}
				tasAnnotations(cl, ann)
				vj.Spec.Tasks[0].Template.Annotations = ann
				var b bytes.Buffer
				require.NoError(t, File{Objects: []any{vj}}.Encode(&b))
				kp := filepath.Join(dir, "llm-kueue-form.yaml")
				require.NoError(t, os.WriteFile(kp, b.Bytes(), 0o644))
				kueueForm = append(kueueForm, scenarios.ManifestsSpec{Path: kp, Arrival: &arr, Duration: cl.Duration})
			}
			var policy []string
			for _, p := range []string{PathVolcano, PathHyperNodes, PathPriorityClasses} {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
					policy = append(policy, filepath.Join(dir, filepath.FromSlash(p)))
				}
			}
			require.Equal(t, filepath.Join(dir, filepath.FromSlash(PathHyperNodes)), policy[1])
			queues := []string{policy[0]}
			summary := func(entries []scenarios.ManifestsSpec, policy []string) map[string]any {
				m := summaryJSON(t, withManifests(t, s, entries, policy), pipeline.Options{})
				delete(m["scenario"].(map[string]any), "workload")
				return m
			}
			want, got := summary(kueueForm, queues), summary(entries, policy)
			if c.want.Mode == "hard" {
				require.True(t, slices.ContainsFunc(got["pendingReasons"].([]any), func(r any) bool {
					return strings.HasPrefix(r.(map[string]any)["reason"].(string), "Volcano network-topology-aware scheduling: the topology fits only")
				}), "gangs wait for a rack with 4 free nodes: %v", got["pendingReasons"])
			}
			// A job waiting for its domain is pending for the system
			// that places it: the reason names Volcano instead of Kueue.
			for _, r := range got["pendingReasons"].([]any) {
				m := r.(map[string]any)
				m["reason"] = strings.Replace(m["reason"].(string), "Volcano network-topology-aware scheduling:", "Kueue topology-aware scheduling:", 1)
			}
			require.Equal(t, want, got, "the Volcano Jobs placed over the written HyperNodes as the class's request over the pools' levels")
			require.NotZero(t, want["jobs"].(map[string]any)["total"])

			if c.want.Mode == "hard" {
				without := summary(entries, queues)
				require.NotEqual(t, want, without, "without the HyperNodes the gangs are not held to a rack")
			}
		})
	}
}
