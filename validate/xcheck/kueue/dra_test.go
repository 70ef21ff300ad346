package kueue

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueuedra "sigs.k8s.io/kueue/pkg/dra"
	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// draFixtures are gpuplan's Kueue DRA fixtures (one Job and its
// ResourceClaimTemplates each), whose counts scenarios/kube/dra's
// TestKueueCountsAsV0192 works out by hand.
const draFixtures = "../../../scenarios/kube/dra/testdata/kueue"

// draPools are the node pools the fixtures are read in, as
// scenarios/kube/dra's kueue_test.go gives them: one node of 8 whole
// H100s and one of 8 H100s cut all-1g.10gb; selectors-short.yaml one node
// of 8 A100s.
func draPools(file string) []cluster.PoolSpec {
	if file == "selectors-short.yaml" {
		return []cluster.PoolSpec{{Name: "a100", Nodes: 1, GPUModel: "A100-80GB", GPUsPerNode: 8}}
	}
	mig := make([]string, 7)
	for i := range mig {
		mig[i] = "1g.10gb"
	}
	return []cluster.PoolSpec{
		{Name: "h100", Nodes: 1, GPUModel: "H100-80GB", GPUsPerNode: 8},
		{Name: "h100-mig", Nodes: 1, GPUModel: "H100-80GB", GPUsPerNode: 8, Sharing: cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: mig}},
	}
}

// draProducts are the productName NVIDIA's DRA driver publishes for the
// fixtures' models (NVML's names, as scenarios/kube/dra's catalog has them).
var draProducts = map[string]string{"H100-80GB": "NVIDIA H100 80GB HBM3", "A100-80GB": "NVIDIA A100-SXM4-80GB"}

// draSlices are the ResourceSlices NVIDIA's DRA driver publishes for the
// pools' nodes: one slice a node, a device per whole GPU, or per MIG
// instance of a GPU cut by MIG, with the attributes its DeviceClasses and
// the fixtures' selectors read (type, productName, profile).
func draSlices(pools []cluster.PoolSpec) []client.Object {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	var out []client.Object
	for _, p := range pools {
		for n := range p.Nodes {
			node := p.Name + "-" + string(rune('a'+n))
			var devs []resourcev1.Device
			for g := range int(p.GPUsPerNode) {
				gpu := "gpu-" + string(rune('0'+g))
				if p.Sharing.MIGStrategy == "" {
					devs = append(devs, resourcev1.Device{Name: gpu, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
						"type": str("gpu"), "productName": str(draProducts[p.GPUModel])}})
					continue
				}
				for i, prof := range p.Sharing.MIGLayout {
					devs = append(devs, resourcev1.Device{Name: gpu + "-mig-" + string(rune('0'+i)), Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
						"type": str("mig"), "profile": str(prof), "productName": str(draProducts[p.GPUModel])}})
				}
			}
			out = append(out, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com"}, Spec: resourcev1.ResourceSliceSpec{
				Driver: dra.DriverNVIDIA, NodeName: &node, Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}, Devices: devs}})
		}
	}
	return out
}

// draClasses are NVIDIA's DRA driver's DeviceClasses, as gpuplan builds
// them in (scenarios/kube/dra's builtin).
func draClasses() []client.Object {
	class := func(name, expr string) client.Object {
		return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}}}
	}
	return []client.Object{
		class("gpu.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`),
		class("mig.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'`),
	}
}

// draDefaults sets what the API server defaults in a request Kueue reads
// back (k8s.io/kubernetes pkg/apis/resource/v1 SetDefaults_ExactDeviceRequest:
// allocationMode ExactCount, and then count 1).
func draDefaults(t *resourcev1.ResourceClaimTemplate) {
	for i := range t.Spec.Spec.Devices.Requests {
		ex := t.Spec.Spec.Devices.Requests[i].Exactly
		if ex == nil {
			continue
		}
		if ex.AllocationMode == "" {
			ex.AllocationMode = resourcev1.DeviceAllocationModeExactCount
		}
		if ex.AllocationMode == resourcev1.DeviceAllocationModeExactCount && ex.Count == 0 {
			ex.Count = 1
		}
	}
}

// TestDRACountsAsKueue gives each of gpuplan's Kueue DRA fixtures to
// Kueue v0.19.2's own pkg/dra (GetResourceRequestsForResourceClaimTemplates,
// which runs countDevicesPerClass and checks CEL-selected requests against
// the cluster's ResourceSlices) on a fake client holding the fixture's
// ResourceClaimTemplates, NVIDIA's DeviceClasses and the slices of the
// pools' nodes, each class mapped to a quota resource of its own name,
// and compares with what gpuplan says Kueue counts of the same pod
// (dra.KueueView): the same devices per class, or both refusing, Kueue's
// error carrying the message gpuplan quotes.
func TestDRACountsAsKueue(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(draFixtures, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", draFixtures, err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := kueuedra.NewResourceMapper()
	if err := mapper.PopulateFromConfiguration([]configapi.DeviceClassMapping{
		{Name: "gpu.nvidia.com", DeviceClassNames: []corev1.ResourceName{"gpu.nvidia.com"}},
		{Name: "mig.nvidia.com", DeviceClassNames: []corev1.ResourceName{"mig.nvidia.com"}},
	}); err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`\("([^"]+)"`)
	for _, path := range files {
		file := filepath.Base(path)
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pools := draPools(file)
			objs, _, err := workloads.ParseIn(file, data, pools)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 || len(objs[0].Groups) != 1 || objs[0].Groups[0].DRA == nil {
				t.Fatalf("want one Job of one pod group whose GPUs come by claim, got %+v", objs)
			}
			view := objs[0].Groups[0].DRA.KueueView

			held := append(draClasses(), draSlices(pools)...)
			var job *batchv1.Job
			for _, doc := range strings.Split(string(data), "\n---\n") {
				var tm metav1.TypeMeta
				if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
					t.Fatal(err)
				}
				switch tm.Kind {
				case "ResourceClaimTemplate":
					var rct resourcev1.ResourceClaimTemplate
					if err := yaml.UnmarshalStrict([]byte(doc), &rct); err != nil {
						t.Fatal(err)
					}
					draDefaults(&rct)
					held = append(held, &rct)
				case "Job":
					job = &batchv1.Job{}
					if err := yaml.UnmarshalStrict([]byte(doc), job); err != nil {
						t.Fatal(err)
					}
				default:
					t.Fatalf("unexpected %s", tm.Kind)
				}
			}
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(held...).Build()
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: job.Namespace},
				Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: job.Spec.Template}}}}
			got, errs := kueuedra.GetResourceRequestsForResourceClaimTemplates(context.Background(), cl, kueuedra.NewResourceSliceCache(cl), mapper, wl)

			if view.Unsupported != "" {
				if len(errs) == 0 {
					t.Fatalf("gpuplan says Kueue refuses %s; Kueue counts %v", view.Unsupported, got)
				}
				m := quoted.FindStringSubmatch(view.Unsupported)
				if m == nil || !strings.Contains(errs.ToAggregate().Error(), m[1]) {
					t.Fatalf("gpuplan says Kueue refuses %s; Kueue: %v", view.Unsupported, errs.ToAggregate())
				}
				t.Logf("both refuse: %v", errs.ToAggregate())
				return
			}
			if len(errs) > 0 {
				t.Fatalf("Kueue refuses it: %v; gpuplan says it counts %v", errs.ToAggregate(), view.Counts)
			}
			var kueueCounts []dra.ClassCount
			for name, q := range got["main"] {
				kueueCounts = append(kueueCounts, dra.ClassCount{Class: string(name), Count: q.Value()})
			}
			sort.Slice(kueueCounts, func(i, j int) bool { return kueueCounts[i].Class < kueueCounts[j].Class })
			if len(kueueCounts) != len(view.Counts) {
				t.Fatalf("Kueue counts %v, gpuplan %v", kueueCounts, view.Counts)
			}
			for i := range kueueCounts {
				if kueueCounts[i] != view.Counts[i] {
					t.Fatalf("Kueue counts %v, gpuplan %v", kueueCounts, view.Counts)
				}
			}
			t.Logf("both count %v", view.Counts)
		})
	}
}
