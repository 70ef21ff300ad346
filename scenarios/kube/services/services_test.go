package services

import (
	"errors"
	"os"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/sim/autoscale"
	"gpuplan.dev/gpuplan/validate/strict"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadHPA(t *testing.T) {
	set, err := Read("hpa.yaml", read(t, "hpa.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.HPAs) != 1 {
		t.Fatalf("%d HPAs", len(set.HPAs))
	}
	h := set.HPAs[0]
	s := h.Spec
	if h.Target != "Deployment/php-apache" || h.Metric.Name != "cpu" || s.Target != 50 || s.MinReplicas != 1 || s.MaxReplicas != 10 {
		t.Errorf("read %+v", h)
	}
	// The scale-down policies given replace the default ones; the
	// stabilization window, not given, keeps its default 300 s; scale-up
	// keeps all its defaults.
	want := []autoscale.Policy{{Type: autoscale.Pods, Value: 4, PeriodMs: 60_000}, {Type: autoscale.Percent, Value: 10, PeriodMs: 60_000}}
	if len(s.ScaleDown.Policies) != 2 || s.ScaleDown.Policies[0] != want[0] || s.ScaleDown.Policies[1] != want[1] || s.ScaleDown.StabilizationMs != 300_000 {
		t.Errorf("scale-down %+v", s.ScaleDown)
	}
	if s.ScaleUp.StabilizationMs != 0 || len(s.ScaleUp.Policies) != 2 {
		t.Errorf("scale-up %+v", s.ScaleUp)
	}
	// The spec drives the controller: the walkthrough's 305% on one pod
	// asks for ceil(305/50) = 7, the first step limited to 1 + 4 = 5.
	c, _ := autoscale.NewHPA(s)
	if got := c.Sync(0, autoscale.Observation{Replicas: 1, Ready: 1, Metric: 305}); got != 5 {
		t.Errorf("first sync: %d replicas, want 5", got)
	}
}

func TestReadScaledObject(t *testing.T) {
	set, err := Read("scaledobject.yaml", read(t, "scaledobject.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.ScaledObjects) != 1 || len(set.Skipped) != 1 || !strings.Contains(set.Skipped[0], "scaledobject.yaml:1:") {
		t.Fatalf("read %+v", set)
	}
	so := set.ScaledObjects[0]
	s := so.Spec
	if so.Target != "Deployment/bert-classifier" || so.Metric.Source != "prometheus" || !strings.Contains(so.Metric.Query, "ts_queue_latency") {
		t.Errorf("read %+v", so)
	}
	if s.Threshold != 100000 || s.ActivationThreshold != 5000 || s.PollingMs != 15_000 || s.CooldownMs != 600_000 ||
		s.MinReplicaCount != 0 || s.MaxReplicaCount != 8 || s.ScaleDown.StabilizationMs != 60_000 {
		t.Errorf("spec %+v", s)
	}
}

func TestReadTorchServe(t *testing.T) {
	ts, err := ParseTorchServe("config.properties", read(t, "config.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if ts.JobQueueSize != 500 || ts.DefaultResponseTimeoutS != 60 || len(ts.Models) != 1 {
		t.Fatalf("read %+v", ts)
	}
	m := ts.Models[0]
	// The model's name is on line 10 of the file.
	if m.Name != "bert" || m.Version != "1.0" || m.BatchSize != 32 || m.MaxBatchDelayMs != 100 || m.ResponseTimeoutS != 60 ||
		m.MinWorkers != 1 || m.MaxWorkers != 2 || m.Line != 10 {
		t.Errorf("model %+v", m)
	}
	if b := m.Batch(20, 2); b.Validate() != nil || b.Capacity() < 380 || b.Capacity() > 382 {
		t.Errorf("batch %+v: capacity %g, want 32/84 ms = 381/s", b, b.Capacity())
	}
}

// Bad definitions are errors naming the file, line and field.
func TestBadServiceDefinitions(t *testing.T) {
	hpa := string(read(t, "hpa.yaml"))
	so := string(read(t, "scaledobject.yaml"))
	props := string(read(t, "config.properties"))
	na := string(read(t, "nodeaffinity-deployment.yaml"))
	cases := []struct {
		name, file, text, want string
	}{
		{"HPA target 0", "hpa.yaml", strings.Replace(hpa, "averageUtilization: 50", "averageUtilization: 0", 1), "hpa.yaml:14:5: spec.metrics[0]: the target must be positive"},
		{"HPA unknown field", "hpa.yaml", strings.Replace(hpa, "  minReplicas: 1", "  minReplica: 1", 1), `hpa.yaml:11:3: spec.minReplica: unknown field "minReplica"`},
		{"HPA period", "hpa.yaml", strings.Replace(hpa, "periodSeconds: 60\n      - type: Percent", "periodSeconds: 3600\n      - type: Percent", 1), "spec.behavior.scaleDown: policies[0]"},
		{"KEDA threshold 0", "so.yaml", strings.Replace(so, `threshold: "100000"`, `threshold: "0"`, 1), `so.yaml:41:18: spec.triggers[0].metadata["threshold"]: must be positive`},
		{"KEDA threshold text", "so.yaml", strings.Replace(so, `threshold: "100000"`, `threshold: "lots"`, 1), `"lots" is not a number`},
		{"batchSize 0", "config.properties", strings.Replace(props, `"batchSize": 32`, `"batchSize": 0`, 1), `config.properties:16: models["bert"]["1.0"].batchSize: must be from 1`},
		{"queue size", "config.properties", strings.Replace(props, "job_queue_size=500", "job_queue_size=-1", 1), `config.properties:7: job_queue_size: "-1" is not a whole number`},
		{"node affinity operator", "d.yaml", strings.Replace(na, "operator: In, values: [serve]", "operator: Among, values: [serve]", 1), `d.yaml:22:39: spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: "Among" is not In, NotIn, Exists, DoesNotExist, Gt or Lt`},
		{"node affinity In without values", "d.yaml", strings.Replace(na, "operator: In, values: [serve]", "operator: In", 1), `nodeSelectorTerms[0].matchExpressions[0].values: In needs values`},
		{"models JSON", "config.properties", strings.Replace(props, `"maxWorkers": 2,\`, `"maxWorkers": 2,,\`, 1), `config.properties:15: models: not the JSON`},
	}
	for _, c := range cases {
		var err error
		switch {
		case strings.HasSuffix(c.file, ".properties"):
			_, err = ParseTorchServe(c.file, []byte(c.text))
		case c.file == "d.yaml":
			_, _, err = ReadServing(c.file, []byte(c.text))
		default:
			_, err = Read(c.file, []byte(c.text))
		}
		var ie *strict.InputError
		if !errors.As(err, &ie) || ie.ExitCode() != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant an InputError containing %q", c.name, err, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, n := range []string{"hpa.yaml", "scaledobject.yaml"} {
		b, _ := os.ReadFile("testdata/" + n)
		f.Add(b)
	}
	f.Add([]byte("apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nspec: {triggers: [{type: cpu, metadata: {value: '1e400'}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Read("f.yaml", data); err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
		}
	})
}

func FuzzTorchServe(f *testing.F) {
	b, _ := os.ReadFile("testdata/config.properties")
	f.Add(b)
	f.Add([]byte("models={\"a\":{\"1\":{\"batchSize\":-3}}}\n"))
	f.Add([]byte("a\\\n\\\n\\"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseTorchServe("c.properties", data); err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
		}
	})
}

// An HPA that gives no spec.behavior is stored without one, and
// Kubernetes' controller then takes its older path: a scale-up goes at
// most to max(2 x current, 4) replicas in one sync
// (normalizeDesiredReplicas), not the documented default behavior's
// max(current + 4, 2 x current). At 1000% CPU on a 50% target from one
// replica: 1 -> max(2, 4) = 4 -> max(8, 4) = 8; the default behavior
// would give 1 -> 5 -> 10. (Found by the HPA cross-check, issue 26.)
func TestHPAWithoutBehaviorTakesTheControllersOlderPath(t *testing.T) {
	const doc = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`
	set, err := Read("hpa.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := set.HPAs[0].Spec
	if !s.NoBehavior {
		t.Fatalf("an HPA without behavior read as %+v, want NoBehavior", s)
	}
	c, _ := autoscale.NewHPA(s)
	var got []int
	for i, cur := range []int{1, 4} {
		got = append(got, c.Sync(int64(i)*15_000, autoscale.Observation{Replicas: cur, Ready: cur, Metric: 500}))
	}
	if got[0] != 4 || got[1] != 8 {
		t.Errorf("replicas after two syncs %v, want [4 8]", got)
	}
}

// A behavior's explicit tolerance of 0 is a tolerance: the controller
// compares exactly, so 52% CPU on a 50% target at 10 replicas
// (ratio 1.04, inside the cluster's 0.1) asks for ceil(10.4) = 11. Read
// as unset it kept 10.
func TestHPAToleranceZeroComparesExactly(t *testing.T) {
	const doc = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleUp: {tolerance: "0"}
`
	set, err := Read("hpa.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := set.HPAs[0].Spec
	c, _ := autoscale.NewHPA(s)
	if got := c.Sync(0, autoscale.Observation{Replicas: 10, Ready: 10, Metric: 52}); got != 11 {
		t.Errorf("52%% on a 50%% target at 10 replicas with tolerance 0: %d replicas, want 11", got)
	}
}
