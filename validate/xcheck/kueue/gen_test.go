package kueue

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// randomCase writes a random policy (Kueue manifests), a gpuplan scenario
// whose pools carry the flavors' node labels and taints (12 nodes of 8
// GPUs a flavor, more than any quota lets in: quota, not nodes, is what
// the check is about) and a trace, and
// returns the paths and the jobs. Seeded by i.
func randomCase(dir string, i int) (scenario, policyDir, trace string, jobs []job, err error) {
	r := rand.New(rand.NewPCG(26, uint64(i)))
	base := filepath.Join(dir, fmt.Sprintf("r%03d", i))
	policyDir = filepath.Join(base, "policy")
	if err = os.MkdirAll(policyDir, 0o755); err != nil {
		return
	}
	var y strings.Builder
	doc := func(format string, a ...any) { fmt.Fprintf(&y, "---\n"+format, a...) }

	nf := 1 + r.IntN(3)
	tainted := make([]bool, nf)
	var pools strings.Builder
	for f := range nf {
		tainted[f] = r.IntN(3) == 0
		taints := ""
		ptaints := ""
		if tainted[f] {
			taints = fmt.Sprintf("  nodeTaints:\n  - {key: dedicated, value: f%d, effect: NoSchedule}\n", f)
			ptaints = fmt.Sprintf("      taints:\n      - {key: dedicated, value: f%d, effect: NoSchedule}\n", f)
		}
		doc("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: f%d\nspec:\n  nodeLabels:\n    gpuplan.dev/flavor: f%d\n%s", f, f, taints)
		fmt.Fprintf(&pools, "    - name: f%d\n      count: 12\n      instanceType: g6.48xlarge\n      labels:\n        gpuplan.dev/flavor: f%d\n%s", f, f, ptaints)
	}
	fair := r.IntN(4) == 0
	nested := r.IntN(2) == 0
	doc("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: root\n")
	if nested {
		doc("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: mid\nspec:\n  parentName: root\n")
	}
	ncq := 2 + r.IntN(3)
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	var queues []string
	for q := range ncq {
		name := fmt.Sprintf("cq%d", q)
		queues = append(queues, name)
		var cq strings.Builder
		fmt.Fprintf(&cq, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: %s\nspec:\n  namespaceSelector: {}\n", name)
		inCohort := true
		switch {
		case nested && r.IntN(2) == 0:
			cq.WriteString("  cohortName: mid\n")
		case r.IntN(6) != 0:
			cq.WriteString("  cohortName: root\n")
		default:
			inCohort = false // Kueue refuses borrowing and lending limits here
		}
		fmt.Fprintf(&cq, "  queueingStrategy: %s\n", pick("BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"))
		if fair {
			fmt.Fprintf(&cq, "  fairSharing:\n    weight: %d\n", 1+r.IntN(3))
		}
		reclaim := pick("Never", "LowerPriority", "Any")
		fmt.Fprintf(&cq, "  preemption:\n    withinClusterQueue: %s\n    reclaimWithinCohort: %s\n",
			pick("Never", "LowerPriority", "LowerOrNewerEqualPriority"), reclaim)
		// Kueue's CRD refuses borrowWithinCohort without reclaimWithinCohort.
		if !fair && reclaim != "Never" {
			fmt.Fprintf(&cq, "    borrowWithinCohort:\n      policy: %s\n", pick("Never", "LowerPriority"))
		}
		cq.WriteString("  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n    flavors:\n")
		perm := r.Perm(nf)[:1+r.IntN(nf)]
		for _, f := range perm {
			nominal := r.IntN(7)
			fmt.Fprintf(&cq, "    - name: f%d\n      resources:\n      - name: cpu\n        nominalQuota: 1000\n      - name: memory\n        nominalQuota: 4000Gi\n      - name: nvidia.com/gpu\n        nominalQuota: %d\n", f, nominal)
			if inCohort && r.IntN(3) == 0 {
				fmt.Fprintf(&cq, "        borrowingLimit: %d\n", r.IntN(5))
			}
			if inCohort && r.IntN(3) == 0 {
				fmt.Fprintf(&cq, "        lendingLimit: %d\n", r.IntN(min(nominal, 3)+1)) // at most nominalQuota, as Kueue validates
			}
		}
		doc("%s", cq.String())
		doc("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  namespace: ns-%s\n  name: lq-%s\nspec:\n  clusterQueue: %s\n", name, name, name)
	}
	var cfg strings.Builder
	if fair {
		cfg.WriteString("    fairSharing:\n      preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n")
	}
	if len(kueueGates) > 0 {
		cfg.WriteString("    featureGates:\n")
		for _, k := range slices.Sorted(maps.Keys(kueueGates)) {
			fmt.Fprintf(&cfg, "      %s: %t\n", k, kueueGates[k])
		}
	}
	if cfg.Len() > 0 {
		doc("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\ndata:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta2\n    kind: Configuration\n%s", cfg.String())
	}
	if err = os.WriteFile(filepath.Join(policyDir, "kueue.yaml"), []byte(y.String()), 0o644); err != nil {
		return
	}
	// Jobs: arrivals in distinct seconds, even ones, and odd durations,
	// so that an arrival never shares its second with a finish of a job
	// admitted on arrival.
	t := int64(0)
	for j := range 30 + r.IntN(31) {
		t += 2 * (1 + r.Int64N(900))
		jb := job{name: fmt.Sprintf("j%03d", j), queue: "lq-" + queues[r.IntN(ncq)], priority: int32([]int{0, 10, 100}[r.IntN(3)]),
			submit: t, duration: 2*(30+r.Int64N(3600)) + 1, replicas: int32(1 + r.IntN(2)), gpus: int32(1 + r.IntN(3)),
			milliCPU: 1000, memMiB: 4096}
		if r.IntN(4) == 0 {
			jb.selector = map[string]string{"gpuplan.dev/flavor": fmt.Sprintf("f%d", r.IntN(nf))}
		}
		if r.IntN(2) == 0 {
			for f := range nf {
				if tainted[f] {
					jb.tolerates = append(jb.tolerates, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual,
						Value: fmt.Sprintf("f%d", f), Effect: corev1.TaintEffectNoSchedule})
				}
			}
		}
		jobs = append(jobs, jb)
	}
	trace = filepath.Join(base, "trace.csv")
	if err = writeTrace(trace, jobs); err != nil {
		return
	}
	scenario = filepath.Join(base, "scenario.yaml")
	scen := fmt.Sprintf("apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: r%03d\nspec:\n  seed: %d\n  cluster:\n    pools:\n%s  policy:\n    manifests: [policy/]\n  workload:\n    trace: {path: trace.csv, format: csv}\n", i, i+1, pools.String())
	err = os.WriteFile(scenario, []byte(scen), 0o644)
	return
}
