package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/sim/admission"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// Kueue's own documentation samples load into the admission model, with
// their quotas in the simulator's units.
func TestKueueSiteSamplesLoad(t *testing.T) {
	p, err := LoadPolicy([]string{"testdata/kueue/site/single-clusterqueue-setup.yaml"})
	require.NoError(t, err)
	require.Len(t, p.Spec.ClusterQueues, 1)
	cq := p.Spec.ClusterQueues[0]
	require.Equal(t, "cluster-queue", cq.Name)
	require.Equal(t, admission.BestEffortFIFO, cq.Strategy, "Kueue's default")
	require.Equal(t, []string{"cpu", "memory"}, cq.Groups[0].Covered)
	q := cq.Groups[0].Flavors[0].Resources
	require.Equal(t, int64(9000), q[0].Nominal, "9 CPUs in milli-CPU")
	require.Equal(t, int64(36*1024), q[1].Nominal, "36Gi in MiB")
	require.Equal(t, admission.NoLimit, q[0].BorrowingLimit)
	require.Equal(t, []admission.LocalQueue{{Name: "user-queue", ClusterQueue: "cluster-queue"}}, p.Spec.LocalQueues)

	p, err = LoadPolicy([]string{"testdata/kueue/site/shared-quota-setup.yaml"})
	require.NoError(t, err)
	require.Len(t, p.Spec.ClusterQueues[0].Groups, 2)
	require.Equal(t, int64(14), p.Spec.ClusterQueues[0].Groups[1].Flavors[0].Resources[0].Nominal)

	// A flavor alone is no policy.
	_, err = LoadPolicy([]string{"testdata/kueue/site/resource-flavor-taints.yaml"})
	require.ErrorContains(t, err, "the policy has no ClusterQueue")

	// The documentation's minimal-cq uses a field v1beta1 does not have.
	_, err = LoadPolicy([]string{"testdata/kueue/site/minimal-cq.yaml"})
	require.ErrorContains(t, err, `testdata/kueue/site/minimal-cq.yaml:7: ClusterQueue: unknown field "spec.flavorFallbackStrategy"`)
}

// The kueueviz examples (hierarchical cohorts, flavorFungibility,
// borrowWithinCohort, priority classes) load, with their
// flavorFungibility and preemption read.
func TestKueuevizExamplesLoadWithNotes(t *testing.T) {
	p, err := LoadPolicy([]string{"testdata/kueue/kueueviz"})
	require.NoError(t, err)
	require.Len(t, p.Files, 5)
	names := []string{}
	for _, c := range p.Spec.ClusterQueues {
		names = append(names, c.Name)
	}
	require.Contains(t, names, "emergency-cluster-queue")
	var em admission.ClusterQueue
	for _, c := range p.Spec.ClusterQueues {
		if c.Name == "emergency-cluster-queue" {
			em = c
		}
	}
	require.Equal(t, "ai-for-humanity-foundation", em.Cohort)
	require.Equal(t, admission.Preemption{WithinClusterQueue: admission.LowerPriority, ReclaimWithinCohort: admission.Any, BorrowWithinCohort: admission.LowerPriority}, em.Preempt)
	require.Equal(t, int32(1000000), p.PriorityClasses["human-critical"])
	require.Equal(t, admission.Fungibility{StopOnPreempt: true}, em.Fungibility, "whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch")
	require.Len(t, p.Spec.Cohorts, 5, "ai-for-humanity-foundation, orphan-cohort-for-testing, organization and its research and engineering")
	for _, f := range p.Spec.Flavors {
		if f.Name == "spot" {
			require.Equal(t, []cluster.Taint{{Key: "spot", Value: "true", Effect: cluster.NoSchedule}}, f.NodeTaints)
			require.Equal(t, []admission.Toleration{{Key: "spot-taint", Operator: "Exists", Effect: "NoSchedule"}}, f.Tolerations)
		}
	}
}

func TestPolicyErrorsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "p.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	head := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
	cq := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 4}\n"
	_, err := LoadPolicy([]string{write(head + cq)})
	require.NoError(t, err)
	for _, c := range []struct{ from, to, want string }{
		{"resourceGroups:", "resourceGroup:", `p.yaml:9: ClusterQueue: unknown field "spec.resourceGroup"`},
		{"name: f\n      resources", "name: g\n      resources", `flavor "g", which no ResourceFlavor defines`},
		{"nominalQuota: 4}", "nominalQuota: 4, lendingLimit: 5}", "lendingLimit 5 is more than nominalQuota 4"},
		{"spec:\n", "spec:\n  queueingStrategy: LIFO\n", `p.yaml:9:21: spec.queueingStrategy: "LIFO" is not StrictFIFO or BestEffortFIFO`},
		{"metadata: {name: q}", "metadata: {name: q}\nbogus: [", "p.yaml:"},
	} {
		body := strings.Replace(head+cq, c.from, c.to, 1)
		_, err := LoadPolicy([]string{write(body)})
		require.ErrorContains(t, err, c.want, c.to)
	}
	_, err = LoadPolicy([]string{filepath.Join(dir, "missing")})
	require.ErrorContains(t, err, "cannot read the policy")
}

// The two-team example: its policy loads, queues map to LocalQueues, and
// BestEffortFIFO makes team-b's two-worker jobs wait longer than its
// one-GPU jobs, which pass them.
func TestTwoTeamsExample(t *testing.T) {
	s, err := LoadFile("examples/two-teams/scenario.yaml")
	require.NoError(t, err)
	for _, v := range append([]string{""}, s.VariantNames()...) {
		sc := s
		if v != "" {
			sc, err = s.Variant(v)
			require.NoError(t, err)
		}
		b, err := sc.Build(Options{})
		require.NoError(t, err, v)
		require.NotNil(t, b.Config.Admission, v)
		require.Len(t, b.Config.Admission.ClusterQueues, 2, v)
		b.Close()
	}
}

func TestPreemptionPolicyField(t *testing.T) {
	body, err := os.ReadFile("examples/priority-preemption.yaml")
	require.NoError(t, err)
	bad := strings.Replace(string(body), "        priority: 10000\n", "        priority: 10000\n        preemptionPolicy: Sometimes\n", 1)
	s, err := Parse("p.yaml", "", []byte(bad))
	if err == nil {
		_, err = s.Build(Options{})
	}
	require.ErrorContains(t, err, `preemptionPolicy: is "Sometimes"; want PreemptLowerPriority or Never`)
}

// Volcano's own sample Queues load; what gpuplan does not model (the
// dequeue-strategy annotation) is named per queue; on a cluster the
// weights give each queue its deserved share, level by level in a
// hierarchy.
func TestVolcanoSamplesLoad(t *testing.T) {
	p, err := LoadPolicy([]string{"testdata/volcano/hierarchical-jobs-queues.yaml"})
	require.NoError(t, err)
	require.Len(t, p.Volcano, 4)
	// The hierarchy annotations on 100 GPUs: eng and sci weigh 2 and 8
	// (20 and 80 GPUs), prod and dev within each 8 and 2: eng-prod 16,
	// eng-dev 4, sci-prod 64, sci-dev 16, in Cohorts root/eng and root/sci.
	hpools := []cluster.PoolSpec{{Name: "p", Nodes: 25, GPUsPerNode: 4, MilliCPU: 64000, MemoryMiB: 512 << 10}}
	hs, _ := volcanoSpec(p.Volcano, hpools)
	got := map[string]int64{}
	parents := map[string]string{}
	for _, q := range hs.ClusterQueues {
		got[q.Name] = q.Groups[0].Flavors[0].Resources[2].Nominal
		parents[q.Name] = q.Cohort
	}
	require.Equal(t, map[string]int64{"root-eng-prod": 16, "root-eng-dev": 4, "root-sci-prod": 64, "root-sci-dev": 16}, got)
	require.Equal(t, "root/eng", parents["root-eng-dev"])
	require.Len(t, hs.Cohorts, 3)
	_, err = admission.New(hs)
	require.NoError(t, err)

	p, err = LoadPolicy([]string{"testdata/volcano/dequeue-strategies-queues.yaml"})
	require.NoError(t, err)
	require.Len(t, p.Volcano, 3, "a v1 List of Queues")
	require.Contains(t, strings.Join(p.Notes, "\n"), "Queue fifo-queue: annotation volcano.sh/dequeue-strategy is read but not modelled")

	p, err = LoadPolicy([]string{"testdata/volcano/deployment-queue.yaml"})
	require.NoError(t, err)
	q := p.Volcano[0]
	require.Equal(t, int32(1), q.Spec.Weight)
	require.False(t, *q.Spec.Reclaimable)

	// Two queues, weights 3:1, on 2 nodes of 8 GPUs, 64 CPUs, 512 GiB:
	// deserved 12 and 4 GPUs; the first capped at 10 by its capability
	// (so it cannot borrow), the second free to borrow; the first
	// guarantees 6 of its 10.
	pools := []cluster.PoolSpec{{Name: "p", Nodes: 2, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 512 << 10}}
	ten := resource.MustParse("10")
	six := resource.MustParse("6")
	a := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: VolcanoQueueSpec{Weight: 3, Capability: corev1.ResourceList{"nvidia.com/gpu": ten}}}
	a.Spec.Guarantee.Resource = corev1.ResourceList{"nvidia.com/gpu": six}
	b := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: VolcanoQueueSpec{Weight: 1}}
	spec, _ := volcanoSpec([]VolcanoQueue{a, b}, pools)
	ga := spec.ClusterQueues[0].Groups[0].Flavors[0].Resources[2]
	gb := spec.ClusterQueues[1].Groups[0].Flavors[0].Resources[2]
	require.Equal(t, admission.Quota{Nominal: 10, BorrowingLimit: 0, LendingLimit: 4}, ga)
	require.Equal(t, admission.Quota{Nominal: 4, BorrowingLimit: admission.NoLimit, LendingLimit: admission.NoLimit}, gb)
	require.Equal(t, int64(96000), spec.ClusterQueues[0].Groups[0].Flavors[0].Resources[0].Nominal, "3/4 of 128 CPUs")

	// spec.parent: eng (weight 1, capability 40 GPUs) and sci (3) on 80
	// GPUs deserve 20 and 60; eng's children prod (3) and dev (1) 15 and
	// 5. eng is a Cohort: prod, borrowing freely, is held to eng's 40.
	forty := resource.MustParse("40")
	eng := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "eng"}, Spec: VolcanoQueueSpec{Weight: 1, Capability: corev1.ResourceList{"nvidia.com/gpu": forty}}}
	sci := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "sci"}, Spec: VolcanoQueueSpec{Weight: 3}}
	prod := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: VolcanoQueueSpec{Weight: 3, Parent: "eng"}}
	dev := VolcanoQueue{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: VolcanoQueueSpec{Weight: 1, Parent: "eng"}}
	ps, _ := volcanoSpec([]VolcanoQueue{eng, sci, prod, dev}, []cluster.PoolSpec{{Name: "p", Nodes: 10, GPUsPerNode: 8, MilliCPU: 64000, MemoryMiB: 512 << 10}})
	got = map[string]int64{}
	for _, q := range ps.ClusterQueues {
		got[q.Name] = q.Groups[0].Flavors[0].Resources[2].Nominal
	}
	require.Equal(t, map[string]int64{"sci": 60, "prod": 15, "dev": 5}, got)
	for _, n := range []int64{41, 40} {
		c, err := admission.New(ps)
		require.NoError(t, err)
		require.NoError(t, c.Submit(admission.Workload{ID: 1, Queue: "prod", Requests: []admission.Request{{Resource: "nvidia.com/gpu", Amount: n}}}))
		c.Cycle()
		require.Equal(t, n == 40, c.Admitted(1), "%d GPUs", n)
	}

	mixed := t.TempDir() + "/m.yaml"
	k, _ := os.ReadFile("testdata/kueue/site/single-clusterqueue-setup.yaml")
	v, _ := os.ReadFile("testdata/volcano/deployment-queue.yaml")
	require.NoError(t, os.WriteFile(mixed, append(append(k, []byte("\n---\n")...), v...), 0o644))
	_, err = LoadPolicy([]string{mixed})
	require.ErrorContains(t, err, "mixes Kueue ClusterQueues and Volcano Queues")
}

// A queue's jobs take a PriorityClass of the policy by rule.
func TestPriorityClassesByQueue(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pc.yaml"), []byte("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 5000\npreemptionPolicy: Never\n"), 0o644))
	body, err := os.ReadFile("examples/two-teams/scenario.yaml")
	require.NoError(t, err)
	ex, _ := filepath.Abs("examples/two-teams/policy")
	b := strings.Replace(string(body), "    manifests: [policy/]\n", "    manifests: ["+ex+", "+filepath.Join(dir, "pc.yaml")+"]\n    priorityClasses: {team-b: urgent}\n", 1)
	s, err := Parse("s.yaml", "examples/two-teams", []byte(b))
	require.NoError(t, err)
	built, err := s.Build(Options{})
	require.NoError(t, err)
	defer built.Close()
	var j cluster.JobSpec
	seen := map[string]int32{}
	for {
		ok, err := built.Config.Workload.Next(&j)
		require.NoError(t, err)
		if !ok {
			break
		}
		seen[j.Queue] = j.Priority
		require.Equal(t, j.Queue == "team-b", j.Flags&cluster.FlagPreemptNever != 0)
	}
	require.Equal(t, map[string]int32{"team-a": 0, "team-b": 5000}, seen)

	bad := strings.Replace(b, "{team-b: urgent}", "{team-b: nope}", 1)
	s, err = Parse("s.yaml", "examples/two-teams", []byte(bad))
	require.NoError(t, err)
	_, err = s.Build(Options{})
	require.ErrorContains(t, err, `spec.policy.priorityClasses.team-b: priority class "nope" is not in the policy's manifests`)
}

// Karpenter NodePools in the policy manifests join the cluster: here the
// NodePools gpuplan manifests wrote for its elastic test scenario.
func TestNodePoolsFromManifests(t *testing.T) {
	np, err := filepath.Abs("kube/manifests/testdata/golden/elastic/kubernetes/10-karpenter/nodepools.yaml")
	require.NoError(t, err)
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: imported}
spec:
  horizon: 1h
  policy:
    manifests: [` + np + `]
  workload:
    synthetic:
      classes:
      - name: j
        arrival: {process: fixed, ratePerHour: 1}
        pod: {cpu: "1", memory: 1Gi, gpus: 1}
        duration: 10m
`
	s, err := Parse("s.yaml", "", []byte(body))
	require.NoError(t, err)
	var names []string
	for _, n := range s.Spec.Cluster.NodePools {
		names = append(names, n.Name)
	}
	require.Equal(t, []string{"g5-ca", "burst"}, names)
	// The static NodePool (replicas: 2) is a fixed pool of two p4d nodes.
	require.Len(t, s.Spec.Cluster.Pools, 1)
	static := s.Spec.Cluster.Pools[0]
	require.Equal(t, "a100-mig", static.Name)
	require.Equal(t, 2, static.Count)
	require.Equal(t, "p4d.24xlarge", static.InstanceType)
	require.Equal(t, "on-demand", static.CapacityType)
	burst := s.Spec.Cluster.NodePools[1]
	require.Equal(t, []string{"p5.48xlarge", "p4d.24xlarge"}, burst.InstanceTypes)
	require.Equal(t, []string{"spot", "on-demand"}, burst.CapacityTypes, "as written")
	require.Equal(t, NodePoolLimits{GPUs: 32, Nodes: 4}, burst.Limits)
	require.Equal(t, "WhenEmptyOrUnderutilized", burst.Consolidation.Policy)
	require.Equal(t, "5m0s", burst.Consolidation.ConsolidateAfter.Duration.String())
	require.Equal(t, []TaintSpec{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}, burst.Taints)
	require.Equal(t, "research", burst.Labels["team"])
	m, err := s.Cluster()
	require.NoError(t, err)
	require.Len(t, m.Pools, 1+1+4, "a100-mig and g5-ca one type each, burst two types x two capacity types")
	require.Equal(t, 2, m.Pools[0].Nodes)
	// expireAfter: Never, as gpuplan writes it, is what the simulation
	// does: nothing to note.
	pol, err := LoadPolicy([]string{np})
	require.NoError(t, err)
	require.NotContains(t, strings.Join(pol.Notes, "\n"), "expireAfter")
}

// Hierarchical cohorts: org holds 2 GPUs and parents research (team-a,
// nominal 2) and engineering (team-b, nominal 2). By hand, with no
// limits the tree holds 6 and team-a may use all of them. With
// engineering's lendingLimit 0 its 2 stay in the department: org's subtree
// is 2 + 2 = 4, so team-a gets at most 4 and team-b still its 2. With
// research's borrowingLimit 1, team-a gets its 2 plus 1 from org: 3.
func TestHierarchicalCohorts(t *testing.T) {
	gpuCQ := func(name, cohort string) string {
		return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: " + name + "}\nspec:\n  cohortName: " + cohort +
			"\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 2}\n---\n"
	}
	cohort := func(name, parent, quota string) string {
		spec := "spec:\n"
		if parent != "" {
			spec += "  parentName: " + parent + "\n"
		}
		if quota != "" {
			spec += "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: nvidia.com/gpu, " + quota + "}\n"
		}
		return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: " + name + "}\n" + spec + "---\n"
	}
	policy := func(research, engineering string) string {
		return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n" +
			cohort("org", "", "nominalQuota: 2") + cohort("research", "org", research) + cohort("engineering", "org", engineering) +
			gpuCQ("team-a", "research") + gpuCQ("team-b", "engineering") +
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: a}\nspec: {clusterQueue: team-a}\n---\n" +
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: b}\nspec: {clusterQueue: team-b}\n"
	}
	most := func(body string) int64 {
		t.Helper()
		p, err := ParsePolicy("h.yaml", []byte(body))
		require.NoError(t, err)
		require.Len(t, p.Spec.ClusterQueues, 2)
		require.Len(t, p.Spec.Cohorts, 3)
		// The largest one-workload team-a can be admitted with.
		for n := int64(8); n > 0; n-- {
			c, err := admission.New(p.Spec)
			require.NoError(t, err)
			require.NoError(t, c.Submit(admission.Workload{ID: 1, Queue: "a", Requests: []admission.Request{{Resource: "nvidia.com/gpu", Amount: n}}}))
			c.Cycle()
			if c.Admitted(1) {
				// team-b's 2 are still there for it.
				require.NoError(t, c.Submit(admission.Workload{ID: 2, Queue: "b", Requests: []admission.Request{{Resource: "nvidia.com/gpu", Amount: 2}}}))
				c.Cycle()
				if n == 6 {
					require.False(t, c.Admitted(2), "team-a holds the whole tree")
				} else {
					require.True(t, c.Admitted(2), "team-b's quota stays in engineering")
				}
				return n
			}
		}
		return 0
	}
	require.Equal(t, int64(6), most(policy("", "")))
	require.Equal(t, int64(4), most(policy("", "nominalQuota: 0, lendingLimit: 0")))
	require.Equal(t, int64(3), most(policy("nominalQuota: 0, borrowingLimit: 1", "")))

	// The reports name the tree by its root and list org's own quota.
	p, err := ParsePolicy("h.yaml", []byte(policy("", "")))
	require.NoError(t, err)
	c, err := admission.New(p.Spec)
	require.NoError(t, err)
	var names, cohorts []string
	for _, q := range c.Queues() {
		names, cohorts = append(names, q.Name), append(cohorts, q.Cohort)
	}
	require.Equal(t, []string{"team-a", "team-b", "cohort/org"}, names)
	require.Equal(t, []string{"org", "org", "org"}, cohorts)

	bad := strings.Replace(policy("", ""), "metadata: {name: org}\nspec:\n", "metadata: {name: org}\nspec:\n  parentName: research\n", 1)
	_, err = ParsePolicy("h.yaml", []byte(bad))
	require.ErrorContains(t, err, "is in a cycle of parents")
	bad = strings.Replace(policy("", ""), "nominalQuota: 2}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}", "nominalQuota: 2, lendingLimit: 1}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}", 1)
	_, err = ParsePolicy("h.yaml", []byte(bad))
	require.ErrorContains(t, err, "Cohort org: borrowingLimit and lendingLimit need a parent Cohort")
}

// Kueue's own controller configuration: as shipped, fair sharing is off
// and the settings gpuplan does not model are named; with its
// commented-out fairSharing block restored, fair sharing is on with the
// two strategies. A ClusterQueue weight reads as thousandths (0.5 is 500,
// 0 an explicit zero), and a weight without fair sharing is noted.
func TestKueueConfiguration(t *testing.T) {
	const cfg = "testdata/kueue/config/controller_manager_config.yaml"
	const queues = "examples/fair-sharing/policy/kueue.yaml"
	p, err := LoadPolicy([]string{cfg, queues})
	require.NoError(t, err)
	require.Nil(t, p.Spec.FairSharing)
	require.Contains(t, strings.Join(p.Notes, "\n"), cfg+":1: Kueue Configuration: health, metrics, webhook, leaderElection, controller, clientConnection, integrations read but not modelled")

	body, err := os.ReadFile(cfg)
	require.NoError(t, err)
	on := strings.Replace(string(body), "#fairSharing:\n#  enable: true\n#  preemptionStrategies:", "fairSharing:\n  enable: true\n  preemptionStrategies:", 1)
	qs, err := os.ReadFile(queues)
	require.NoError(t, err)
	weighted := strings.Replace(string(qs), "  name: team-b\nspec:\n", "  name: team-b\nspec:\n  fairSharing:\n    weight: 500m\n", 1)
	weighted = strings.Replace(weighted, "  name: team-c\nspec:\n", "  name: team-c\nspec:\n  fairSharing:\n    weight: \"0\"\n", 1)
	p, err = ParsePolicy("all.yaml", []byte(on+"---\n"+weighted))
	require.NoError(t, err)
	require.Equal(t, &admission.FairSharing{Strategies: []admission.FairStrategy{admission.LessThanOrEqualToFinalShare, admission.LessThanInitialShare}}, p.Spec.FairSharing)
	w := map[string]int64{}
	for _, q := range p.Spec.ClusterQueues {
		w[q.Name] = q.FairWeight
	}
	require.Equal(t, map[string]int64{"team-a": 0, "team-b": 500, "team-c": admission.ZeroWeight}, w)

	// The same weights with fair sharing off are noted.
	p, err = ParsePolicy("q.yaml", []byte(weighted))
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Notes, "\n"), "spec.fairSharing.weight has no effect while fair sharing is off")

	// A bad strategy is named with its place; a ConfigMap without a
	// Kueue Configuration is noted as not read.
	bad := strings.Replace(on, "[LessThanOrEqualToFinalShare, LessThanInitialShare]", "[Fairest]", 1)
	_, err = ParsePolicy("bad.yaml", []byte(bad+"---\n"+weighted))
	require.ErrorContains(t, err, `bad.yaml:65:26: fairSharing.preemptionStrategies[0]: preemption strategy "Fairest" is not one of LessThanOrEqualToFinalShare, LessThanInitialShare`)
	p, err = ParsePolicy("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n---\n"+weighted))
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Notes, "\n"), "cm.yaml:1: ConfigMap other is not read: it holds no Kueue Configuration")

	// waitForPodsReady, commented out as shipped: enabled with its
	// requeuing strategy it is read with Kueue's defaults filled in.
	wait := strings.Replace(string(body), "#waitForPodsReady:\n#  enable: false\n#  timeout: 5m\n#  blockAdmission: false\n#  requeuingStrategy:\n#    timestamp: Eviction\n#    backoffLimitCount: null # null indicates infinite requeuing\n#    backoffBaseSeconds: 60\n#    backoffMaxSeconds: 3600\n",
		"waitForPodsReady:\n  enable: true\n  timeout: 10m\n  blockAdmission: true\n  requeuingStrategy:\n    timestamp: Creation\n    backoffLimitCount: 5\n", 1)
	require.NotEqual(t, string(body), wait)
	p, err = ParsePolicy("w.yaml", []byte(wait+"---\n"+string(qs)))
	require.NoError(t, err)
	require.Equal(t, &admission.WaitForPodsReady{Timeout: 10 * 60 * 1000, BlockAdmission: true, RequeueAtCreation: true, BackoffLimit: 5, BackoffBase: 60 * 1000, BackoffMax: 3600 * 1000}, p.Spec.WaitForPodsReady)
	p, err = ParsePolicy("w.yaml", []byte(strings.Replace(wait, "  enable: true\n", "  enable: false\n", 1)+"---\n"+string(qs)))
	require.NoError(t, err)
	require.Nil(t, p.Spec.WaitForPodsReady)

	// The example's ConfigMap, as Kueue ships it, turns fair sharing on.
	p, err = LoadPolicy([]string{"examples/fair-sharing/policy-fair/"})
	require.NoError(t, err)
	require.NotNil(t, p.Spec.FairSharing)
}

// A NodePool inside a v1 List (at any depth) is resolved against
// Karpenter's AWS catalog like a top-level one: the catalog is read once
// for all of a policy's NodePools before any is read. By the catalog's
// table, the types whose instance-gpu-name is a100 are p4d.24xlarge and
// p4de.24xlarge.
func TestNodePoolInListResolvedFromCatalog(t *testing.T) {
	np := `{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a100},
  spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default},
    requirements: [{key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [a100]}]}},
    limits: {nvidia.com/gpu: "16"}}}`
	for name, doc := range map[string]string{
		"top level":   np,
		"in a List":   "apiVersion: v1\nkind: List\nitems:\n- " + np,
		"nested List": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [" + np + "]}",
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePolicy("np.yaml", []byte(doc))
			require.NoError(t, err)
			require.Len(t, p.NodePools, 1)
			require.Equal(t, []string{"p4d.24xlarge", "p4de.24xlarge"}, p.NodePools[0].InstanceTypes)
		})
	}
}

// A policy of PriorityClasses alone (the AKS guide's s2-12: the API
// server takes it) is no queue policy: it gives the queues named in
// spec.policy.priorityClasses their priority and Never flag, and jobs
// run without admission.
func TestPriorityClassesAlone(t *testing.T) {
	pc, err := filepath.Abs("kube/seeds/testdata/s2-12-priorityclasses.yaml")
	require.NoError(t, err)
	pol, err := LoadPolicy([]string{pc})
	require.NoError(t, err)
	require.Equal(t, map[string]int32{"training-batch": 10000, "inference-critical": 100000}, pol.PriorityClasses)
	require.True(t, pol.PreemptNever["training-batch"])
	body := `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: pcs}
spec:
  horizon: 6h
  cluster:
    pools:
    - {name: gpu, count: 1, gpuModel: T4, gpusPerNode: 1, cpu: "4", memory: 28Gi}
  policy:
    manifests: [` + pc + `]
    priorityClasses: {batch: training-batch, serve: inference-critical}
  workload:
    synthetic:
      classes:
      - {name: batch, queue: batch, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "1", memory: 1Gi, gpus: 1}, duration: 30m}
      - {name: serve, queue: serve, arrival: {process: fixed, ratePerHour: 1}, pod: {cpu: "1", memory: 1Gi, gpus: 1}, duration: 10m}
`
	s, err := Parse("s.yaml", t.TempDir(), []byte(body))
	require.NoError(t, err)
	built, err := s.Build(Options{})
	require.NoError(t, err)
	defer built.Close()
	require.Nil(t, built.Config.Admission, "no ClusterQueue: nothing admits")
	var j cluster.JobSpec
	seen := map[string]int32{}
	for {
		ok, err := built.Config.Workload.Next(&j)
		require.NoError(t, err)
		if !ok {
			break
		}
		seen[j.Queue] = j.Priority
		require.Equal(t, j.Queue == "batch", j.Flags&cluster.FlagPreemptNever != 0)
	}
	require.Equal(t, map[string]int32{"batch": 10000, "serve": 100000}, seen)
}

// A Kueue Configuration's featureGates turn off the two gates that change
// admission (on by default in Kueue v0.19.2, as gpuplan models it); other
// gates are noted as not modelled.
func TestKueueConfigFeatureGates(t *testing.T) {
	const queues = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
`
	p, err := ParsePolicy("q.yaml", []byte(queues))
	require.NoError(t, err)
	require.Equal(t, admission.Gates{}, p.Spec.Gates, "Kueue v0.19.2's defaults: both on")
	for _, api := range []string{"v1beta1", "v1beta2"} {
		p, err := ParsePolicy("q.yaml", []byte(queues+`---
apiVersion: config.kueue.x-k8s.io/`+api+`
kind: Configuration
featureGates:
  SchedulingEquivalenceHashing: false
  FlavorFungibilityPreserveScanProgress: false
  TopologyAwareScheduling: true
`))
		require.NoError(t, err, api)
		require.Equal(t, admission.Gates{NoEquivalenceHashing: true, NoPreserveScanProgress: true}, p.Spec.Gates, api)
		require.Contains(t, strings.Join(p.Notes, "\n"), "featureGates TopologyAwareScheduling=true read but not modelled", api)
	}
}
