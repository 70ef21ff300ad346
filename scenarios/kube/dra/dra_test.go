package dra_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/services"
	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// job is a Job of two pods whose container names claim "gpu", from the
// ResourceClaimTemplate (or ResourceClaim, by ref) given before it.
func job(claimDoc, ref string) string {
	return claimDoc + `
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        command: [sleep, "60"]
        resources:
          requests: {cpu: "1", memory: 1Gi}
          claims: [{name: gpu}]
      resourceClaims:
      - {name: gpu, ` + ref + `}
`
}

// rct is a ResourceClaimTemplate "t" in namespace ml with one request.
func rct(request string) string {
	return `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: r
` + request
}

func parse(t *testing.T, doc string, pools []cluster.PoolSpec) (workloads.Object, error) {
	t.Helper()
	objs, _, err := workloads.ParseIn("w.yaml", []byte(doc), pools)
	if err != nil {
		return workloads.Object{}, err
	}
	require.Len(t, objs, 1)
	return objs[0], nil
}

func inputErr(t *testing.T, err error) *strict.InputError {
	t.Helper()
	var ie *strict.InputError
	require.True(t, errors.As(err, &ie), "want an input error, got %v", err)
	require.Equal(t, 2, ie.ExitCode())
	return ie
}

// The CEL selectors users write for GPUs, each against the models gpuplan
// knows (NVIDIA's driver's attributes: productName and architecture as
// NVML names them, capacity memory from the data sheet's GiB).
func TestSelectorsNarrowGPUModels(t *testing.T) {
	for _, c := range []struct {
		name, request string
		gpus          int32
		mig           string
		models        []string // nil: any model
	}{
		// No selector: any NVIDIA GPU, no affinity.
		{"class alone", "        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n", 2, "", nil},
		// One product: the A100 80GB only.
		{"productName", "        exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n          - cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\"'}\n", 1, "", []string{"A100-80GB"}},
		// Hopper: H100 (generic and 80GB) and H200.
		{"architecture", "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 4\n          selectors:\n          - cel: {expression: \"device.attributes['gpu.nvidia.com'].architecture == 'Hopper'\"}\n", 4, "", []string{"H100", "H100-80GB", "H200-141GB"}},
		// At least 80Gi: A100-80GB and H100-80GB (80), H200 (141), B200
		// (180), GB200 (186), B300 (269), GB300 (278); not the generic
		// A100/H100 (no memory known).
		{"memory compareTo", "        exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n          - cel: {expression: \"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0\"}\n", 1, "", []string{"A100-80GB", "B200", "B300", "GB200", "GB300", "H100-80GB", "H200-141GB"}},
		// More than 140Gi and Blackwell: B200 (180), GB200 (186), B300 (269)
		// and GB300 (278).
		{"isGreaterThan and", "        exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n          - cel: {expression: \"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('140Gi')) && device.attributes['gpu.nvidia.com'].architecture in ['Blackwell']\"}\n", 1, "", []string{"B200", "B300", "GB200", "GB300"}},
		// MIG through DRA: the 1g.10gb profile is on A100-40GB (its
		// 1g.10gb is the double-memory one-slice profile) and on
		// A100-80GB and H100-80GB: every model that has it, so no
		// affinity beyond the profile itself.
		{"MIG profile", "        exactly:\n          deviceClassName: mig.nvidia.com\n          selectors:\n          - cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'\"}\n", 1, "1g.10gb", nil},
		// The same profile on the H100 only.
		{"MIG profile and product", "        exactly:\n          deviceClassName: mig.nvidia.com\n          count: 2\n          selectors:\n          - cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.10gb' && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'\"}\n", 2, "1g.10gb", []string{"H100-80GB"}},
	} {
		o, err := parse(t, job(rct(c.request), "resourceClaimTemplateName: t"), nil)
		require.NoError(t, err, c.name)
		g := o.Groups[0]
		require.Equal(t, c.gpus, g.Pod.GPUs, c.name)
		require.Equal(t, c.mig, g.Pod.MIG, c.name)
		if c.models == nil {
			require.Nil(t, g.Constraints, c.name)
			continue
		}
		require.Equal(t, []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: c.models}}}, g.Constraints.Affinity, c.name)
	}
}

// A selector outside the subset, or matching no GPU, is an input error at
// the expression's file:line:field naming it; none is dropped.
func TestSelectorErrors(t *testing.T) {
	sel := func(e string) string {
		return "        exactly:\n          deviceClassName: gpu.nvidia.com\n          selectors:\n          - cel: {expression: \"" + e + "\"}\n"
	}
	for _, c := range []struct{ expr, says string }{
		{"device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(version('8.0.0'))", "a method on attribute cudaComputeCapability"},
		{"'productName' in device.attributes['gpu.nvidia.com']", "a has() or key-in-map test is outside the subset"},
		{"device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')", "CEL has no >= between quantities"},
		{"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')", "a method on attribute productName"},
		{"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-PCIE-40GB'", "matches none of the"},
	} {
		_, err := parse(t, job(rct(sel(c.expr)), "resourceClaimTemplateName: t"), nil)
		ie := inputErr(t, err)
		// rct's selector expression is on line 12 of the file (line 8
		// "- name: r", 9 exactly, 10 deviceClassName, 11 selectors).
		require.Equal(t, "w.yaml", ie.File, c.expr)
		require.Equal(t, 12, ie.Line, c.expr)
		require.Equal(t, "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression", ie.Field, c.expr)
		require.Contains(t, ie.Msg, c.says, c.expr)
		require.Contains(t, ie.Msg, `ResourceClaimTemplate "t"`, c.expr)
	}
}

// firstAvailable takes the first subrequest the cluster's pools serve,
// and says so; without pools, the first gpuplan can place.
func TestFirstAvailable(t *testing.T) {
	req := `        firstAvailable:
        - name: big
          deviceClassName: gpu.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"}}]
        - name: small
          deviceClassName: mig.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}]
`
	doc := job(rct(req), "resourceClaimTemplateName: t")
	o, err := parse(t, doc, nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), o.Groups[0].Pod.GPUs)
	require.Equal(t, "", o.Groups[0].Pod.MIG)
	require.Contains(t, strings.Join(o.Notes, "\n"), `takes firstAvailable[0] "big", the first gpuplan can place: 1 whole GPU(s) of H200-141GB`)
	// A cluster of A100-80GB nodes cut into 3g.40gb instances has no H200.
	pools := []cluster.PoolSpec{{Name: "a100", GPUModel: "A100-80GB", GPUsPerNode: 8, Sharing: cluster.Sharing{MIGStrategy: cluster.MIGMixed, MIGLayout: []string{"3g.40gb", "3g.40gb"}}}}
	o, err = parse(t, doc, pools)
	require.NoError(t, err)
	require.Equal(t, int32(1), o.Groups[0].Pod.GPUs)
	require.Equal(t, "3g.40gb", o.Groups[0].Pod.MIG)
	require.Contains(t, strings.Join(o.Notes, "\n"), `takes firstAvailable[1] "small", the first the cluster's node pools serve: 1 MIG instance(s) 3g.40gb; passed over [0] "big" (1 whole GPU(s) of H200-141GB): no node pool of spec.cluster has it`)
	// Pools of L4s serve neither: a provisioner may launch either, so the
	// first gpuplan can place is taken, and said so.
	o, err = parse(t, doc, []cluster.PoolSpec{{Name: "l4", GPUModel: "L4", GPUsPerNode: 4}})
	require.NoError(t, err)
	require.Equal(t, int32(1), o.Groups[0].Pod.GPUs)
	require.Equal(t, "", o.Groups[0].Pod.MIG)
	require.Contains(t, strings.Join(o.Notes, "\n"), `no node pool of spec.cluster serves any firstAvailable subrequest`)
	require.Contains(t, strings.Join(o.Notes, "\n"), `taken as firstAvailable[0] "big", the first gpuplan can place (a provisioner may launch it): 1 whole GPU(s) of H200-141GB`)
}

// One ResourceClaim named by the Job's two pods is one GPU, shared: each
// pod a 500/1000 share (1000 / 2), not a GPU each.
func TestSharedClaim(t *testing.T) {
	claim := `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu.nvidia.com}
`
	o, err := parse(t, job(claim, "resourceClaimName: shared"), nil)
	require.NoError(t, err)
	require.Equal(t, int32(0), o.Groups[0].Pod.GPUs)
	require.Equal(t, int32(500), o.Groups[0].Pod.GPUMilli)
	require.Contains(t, strings.Join(o.Notes, "\n"), `ResourceClaim "shared" (w.yaml:1) holds 1 GPU shared by the 2 pods of the file that name it`)
	// The template gives each pod its own claim: a GPU each.
	o, err = parse(t, job(rct("        exactly: {deviceClassName: gpu.nvidia.com}\n"), "resourceClaimTemplateName: t"), nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), o.Groups[0].Pod.GPUs)
}

// allocationMode All takes the matching GPUs of a node, which needs the
// pools: 8 on an 8-GPU H100 pool.
func TestAllocationModeAll(t *testing.T) {
	doc := job(rct("        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}\n"), "resourceClaimTemplateName: t")
	_, err := parse(t, doc, nil)
	require.Contains(t, inputErr(t, err).Msg, "allocationMode All takes every matching GPU of the node")
	o, err := parse(t, doc, []cluster.PoolSpec{{Name: "h100", GPUModel: "H100-80GB", GPUsPerNode: 8}})
	require.NoError(t, err)
	require.Equal(t, int32(8), o.Groups[0].Pod.GPUs)
}

// A user DeviceClass whose selector names NVIDIA's driver is a GPU class;
// its extendedResourceName backs that resource (KEP-5004).
func TestUserDeviceClassAndExtendedResource(t *testing.T) {
	doc := `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: big-gpu}
spec:
  extendedResourceName: example.org/big-gpu
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('141Gi')) >= 0"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        command: [sleep, "60"]
        resources: {limits: {example.org/big-gpu: 2}}
`
	o, err := parse(t, doc, nil)
	require.NoError(t, err)
	// 141Gi or more: H200 (141), B200 (180), GB200 (186), B300 (269),
	// GB300 (278).
	require.Equal(t, int32(2), o.Groups[0].Pod.GPUs)
	require.Equal(t, []string{"B200", "B300", "GB200", "GB300", "H200-141GB"}, o.Groups[0].Constraints.Affinity[0][0].Values)
}

// A Deployment's replicas get their GPUs by claim as a Job's pods do: a
// template of 2 Hopper GPUs gives each replica 2 GPUs on the Hopper
// models; a 1g.10gb template one MIG slice; a ResourceClaim all replicas
// name (one device for all) is refused at its field.
func TestServiceReplicasByClaim(t *testing.T) {
	deploy := func(claims string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: "4"}, claims: [{name: g}]}
      resourceClaims: [` + claims + `]
`
	}
	tmpl := func(name, class, expr string) string {
		return `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: ` + name + `, namespace: ml}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: ` + class + `, count: 2, selectors: [{cel: {expression: "` + expr + `"}}]}}]}}}
---
`
	}
	ws, _, err := services.ReadServing("s.yaml", []byte(tmpl("hopper", "gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'")+deploy("{name: g, resourceClaimTemplateName: hopper}")))
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, int64(2), ws[0].Pod.GPUs)
	require.Equal(t, []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: []string{"H100", "H100-80GB", "H200-141GB"}}}}, ws[0].Pod.NodeAffinity)
	mig := strings.Replace(tmpl("slice", "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"), "count: 2", "count: 1", 1)
	ws, _, err = services.ReadServing("s.yaml", []byte(mig+deploy("{name: g, resourceClaimTemplateName: slice}")))
	require.NoError(t, err)
	require.Equal(t, "1g.10gb", ws[0].Pod.MIG)
	require.Equal(t, int64(0), ws[0].Pod.GPUs)
	shared := `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: ml}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.nvidia.com}}]}}
---
`
	_, _, err = services.ReadServing("s.yaml", []byte(shared+deploy("{name: g, resourceClaimName: one}")))
	ie := inputErr(t, err)
	require.Equal(t, "spec.template.spec.resourceClaims[0].resourceClaimName", ie.Field)
	require.Contains(t, ie.Msg, "shared by every replica")
}

// A template given without a namespace serves a Job of namespace ml (kubectl
// apply puts both in the context's namespace); one in another namespace
// does not.
func TestClaimNamespaces(t *testing.T) {
	req := "        exactly: {deviceClassName: gpu.nvidia.com}\n"
	o, err := parse(t, job(strings.Replace(rct(req), "namespace: ml", "", 1), "resourceClaimTemplateName: t"), nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), o.Groups[0].Pod.GPUs)
	_, err = parse(t, job(strings.Replace(rct(req), "namespace: ml", "namespace: other", 1), "resourceClaimTemplateName: t"), nil)
	require.Contains(t, inputErr(t, err).Msg, `ResourceClaimTemplate "t" is not in the file (namespace "ml")`)
}

// What a claim says that gpuplan does not model is noted, each with what
// it was taken as: constraints, config (an MPS share set there), a
// request's tolerations, adminAccess (which holds no device).
func TestClaimFieldsNotModelledAreNoted(t *testing.T) {
	claim := `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: r
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          tolerations: [{key: k, operator: Exists}]
      - name: watch
        exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}
      constraints:
      - {requests: [r], matchAttribute: resource.kubernetes.io/pcieRoot}
      config:
      - requests: [r]
        opaque:
          driver: gpu.nvidia.com
          parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: MPS}}
`
	o, err := parse(t, job(claim, "resourceClaimTemplateName: t"), nil)
	require.NoError(t, err)
	// r's 2 GPUs; watch (adminAccess) holds none.
	require.Equal(t, int32(2), o.Groups[0].Pod.GPUs)
	notes := strings.Join(o.Notes, "\n")
	for _, w := range []string{
		`devices.constraints[0] (matchAttribute) is not modelled (line 16)`,
		`devices.config[0] (driver "gpu.nvidia.com"'s parameters; line 18) is not modelled: the devices are held whole (MPS or time-slicing set in a claim's config is not modelled)`,
		`tolerations (line 12): device taints are not modelled`,
		`adminAccess (line 14): the devices are reached without being allocated; taken as holding none`,
	} {
		require.Contains(t, notes, w)
	}
}
