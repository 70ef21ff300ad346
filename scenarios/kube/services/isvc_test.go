package services

import (
	"errors"
	"os"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/validate/strict"
)

func TestReadInferenceServices(t *testing.T) {
	ws, skipped, err := ReadServing("isvc.yaml", read(t, "isvc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || len(skipped) != 0 {
		t.Fatalf("%d workloads, skipped %v", len(ws), skipped)
	}
	r := ws[0]
	// Serverless on concurrency: Knative's KPA, target 10 per replica at
	// the default 70% utilization = 7; the 120 s window; scale to zero.
	if r.Mode != "Serverless" || r.KPA == nil || r.KPA.Target != 7 || r.KPA.StableWindowMs != 120_000 ||
		r.KPA.MinScale != 0 || r.KPA.MaxScale != 5 || r.HPA != nil {
		t.Errorf("recommender: %+v KPA %+v", r, r.KPA)
	}
	if r.Pod.MilliCPU != 4000 || r.Pod.MemoryMiB != 16384 || r.Pod.GPUs != 1 || r.Pod.PriorityClassName != "inference-high" || len(r.Pod.Tolerations) != 1 {
		t.Errorf("recommender pod %+v", r.Pod)
	}
	c := ws[1]
	// RawDeployment: an HPA on CPU at 60%, 2 to 6 replicas.
	if c.Mode != "RawDeployment" || c.HPA == nil || c.HPA.Target != 60 || c.HPA.MinReplicas != 2 || c.HPA.MaxReplicas != 6 || c.KPA != nil {
		t.Errorf("classifier: %+v HPA %+v", c, c.HPA)
	}
	if c.Pod.MilliCPU != 500 || c.Pod.MemoryMiB != 1024 || c.Pod.GPUs != 0 || c.Model != "sklearn" {
		t.Errorf("classifier pod %+v", c.Pod)
	}
}

func TestReadDeployment(t *testing.T) {
	ws, skipped, err := ReadServing("scaledobject.yaml", read(t, "scaledobject.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || len(skipped) != 1 || ws[0].Replicas != 1 || ws[0].Pod.GPUs != 1 || ws[0].Name != "bert-classifier" {
		t.Errorf("read %+v, skipped %v", ws, skipped)
	}
}

// The InferenceService is checked against KServe's published CRD schema:
// a field it does not have, or a value of the wrong type, is an error at
// its line and field.
func TestBadInferenceServices(t *testing.T) {
	isvc := string(read(t, "isvc.yaml"))
	cases := []struct{ name, text, want string }{
		{"unknown field", strings.Replace(isvc, "    maxReplicas: 5", "    maxReplica: 5", 1), `isvc.yaml:11:5: spec.predictor.maxReplica: unknown field "maxReplica"`},
		{"wrong type", strings.Replace(isvc, "    maxReplicas: 5", "    maxReplicas: five", 1), `isvc.yaml:11:18: spec.predictor.maxReplicas:`},
		{"raw to zero", strings.Replace(isvc, "    minReplicas: 2", "    minReplicas: 0", 1), `isvc.yaml:38:18: spec.predictor.minReplicas: RawDeployment scales with an HPA`},
		{"GPU fraction", strings.Replace(isvc, `nvidia.com/gpu: "1"`, `nvidia.com/gpu: "0.5"`, 1), `spec.predictor.containers[0].resources: nvidia.com/gpu must be a whole number`},
	}
	for _, c := range cases {
		_, _, err := ReadServing("isvc.yaml", []byte(c.text))
		var ie *strict.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant an InputError containing %q", c.name, err, c.want)
		}
	}
}

func FuzzReadServing(f *testing.F) {
	for _, n := range []string{"isvc.yaml", "scaledobject.yaml", "kserve-llmisvc/single-node-gpu_llm-inference-service-qwen2-7b-gpu.yaml"} {
		b, _ := os.ReadFile("testdata/" + n)
		f.Add(b)
	}
	f.Add([]byte(llamaISVC))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := ReadServing("f.yaml", data); err != nil {
			var ie *strict.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
		}
	})
}
