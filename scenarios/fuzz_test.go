package scenarios

import (
	"errors"
	"os"
	"testing"
)

// Every parser must turn any input into jobs that validate or an
// *InputError, never a panic. The seed corpora run in make test.

func requireInputError(t *testing.T, err error) {
	t.Helper()
	var ie *InputError
	if err != nil && !errors.As(err, &ie) {
		t.Fatalf("error is not an InputError: %T %v", err, err)
	}
	if ie != nil && ie.File == "" {
		t.Fatalf("error names no file: %v", err)
	}
}

func seed(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzScenario(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add(defaultYAML)
	seed(f, "examples/openb-replay.yaml", "examples/gpu-sharing.yaml", "examples/spot-what-if.yaml", "examples/volcano-jobs.yaml", "examples/fair-sharing/scenario.yaml")
	f.Add([]byte(capacityScenario))
	f.Add([]byte("apiVersion: gpuplan.dev/v1alpha1\nkind: Scenario\nspec: {cluster: {pools: [{name: a, count: -1}]}}\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte("spec:\n  horizon: 3q\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", "", data)
		requireInputError(t, err)
		if err == nil && s.Spec.Cluster.NodeList == nil && s.Spec.Workload.Trace == nil && !readsFiles(s) {
			if _, err := s.Build(Options{}); err != nil {
				requireInputError(t, err)
			}
		}
	})
}

// readsFiles reports whether building s would read files it names (the
// fuzzer must not open whatever path it makes up).
func readsFiles(s *Scenario) bool {
	if len(s.Spec.Pricing.Catalogs) > 0 {
		return true
	}
	for _, p := range s.Spec.Cluster.Pools {
		if p.Interruptions != nil && p.Interruptions.Path != "" {
			return true
		}
	}
	for _, p := range s.Spec.Cluster.NodePools {
		if p.Interruptions != nil && p.Interruptions.Path != "" {
			return true
		}
	}
	for _, v := range s.Spec.Workload.Services {
		if v.Load.CSV != nil || v.TorchServe != nil || len(v.Manifests) > 0 || (v.Autoscaler != nil && len(v.Autoscaler.Manifests) > 0) {
			return true
		}
	}
	return false
}

func FuzzPolicy(f *testing.F) {
	seed(f, "testdata/kueue/site/single-clusterqueue-setup.yaml", "testdata/kueue/site/shared-quota-setup.yaml",
		"testdata/kueue/site/minimal-cq.yaml", "testdata/kueue/kueueviz/01-cluster-queues.yaml", "testdata/kueue/kueueviz/01.5-cohorts.yaml",
		"examples/two-teams/policy-cohort/kueue.yaml", "examples/fair-sharing/policy-fair/kueue.yaml", "testdata/kueue/config/controller_manager_config.yaml", "testdata/volcano/dequeue-strategies-queues.yaml", "testdata/volcano/hierarchical-jobs-queues.yaml", "testdata/volcano/scheduler-ci-configmap.yaml", "kube/manifests/testdata/golden/elastic/kubernetes/10-karpenter/nodepools.yaml")
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: []\n"))
	f.Add([]byte("--- \n- a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := ParsePolicy("fuzz.yaml", data)
		requireInputError(t, err)
	})
}
