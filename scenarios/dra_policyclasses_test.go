package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim"
)

// policyClassesScenario: two H100 nodes and one A100-80GB node, 8 whole
// GPUs each; the workload is JOBS submitted three times at 0; the policy
// is the folder policy/ (its DeviceClasses are the cluster's), or none.
const policyClassesScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata: {name: policy-classes}
spec:
  seed: 1
  cluster:
    pools:
    - {name: h100, count: 2, instanceType: p5.48xlarge, gpuModel: H100-80GB, gpusPerNode: 8, cpu: "192", memory: 2048Gi}
    - {name: a100, count: 1, instanceType: p4de.24xlarge, gpuModel: A100-80GB, gpusPerNode: 8, cpu: "96", memory: 1152Gi}
  policy: {manifests: [policy/]}
  workload:
    manifests:
    - {path: jobs.yaml, count: 3}
`

// a100Class is a user's DeviceClass selecting NVIDIA's DRA driver's whole
// A100 80GB GPUs by the productName the driver publishes (NVML's name).
func a100Class(name string) string {
	return `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: ` + name + `}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
  - cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"}
`
}

// claimJob is a Job of one pod for an hour claiming 4 devices of class
// through a ResourceClaimTemplate, whose request adds the CEL selector sel
// ("" for none).
func claimJob(class, sel string) string {
	selectors := ""
	if sel != "" {
		selectors = "\n          selectors: [{cel: {expression: \"" + sel + "\"}}]"
	}
	return `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly:
          deviceClassName: ` + class + `
          count: 4` + selectors + `
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    metadata: {annotations: {gpuplan.dev/duration: 1h}}
    spec:
      restartPolicy: Never
      resourceClaims: [{name: g, resourceClaimTemplateName: four}]
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: "4", memory: 16Gi}, claims: [{name: g}]}
`
}

const priorityClass = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 100
`

// policyClassesRun writes the scenario with the policy's files (name:
// body) and the jobs, and builds and runs it.
func policyClassesRun(t *testing.T, policy map[string]string, jobs string) (*sim.Result, error) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "policy"), 0o755))
	for name, body := range policy {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "policy", name), []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(jobs), 0o644))
	path := filepath.Join(dir, "scenario.yaml")
	body := policyClassesScenario
	if len(policy) == 0 {
		body = strings.Replace(body, "  policy: {manifests: [policy/]}\n", "", 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	s, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	b, err := s.Build(Options{})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { b.Close() })
	res, err := sim.Run(b.Config)
	require.NoError(t, err)
	return res, nil
}

// A DeviceClass given in the policy is the cluster's: the claims naming
// it resolve to it, a policy class replacing the driver's class of its
// name. The policy redefines gpu.nvidia.com to select the A100 80GB only
// (the cluster's administrator's class, selecting by productName). By
// hand: three copies of a one-pod Job claiming 4 devices of
// gpu.nvidia.com, each for an hour; only the A100 node's 8 GPUs are of
// the class, so two run 0-1 h and the third 1-2 h, every pod on pool
// a100. Before, the claims resolved to the driver's built-in
// gpu.nvidia.com (any whole GPU): all three started at 0 on 24 free GPUs
// (12 asked).
func TestPolicyDeviceClassResolvesClaims(t *testing.T) {
	// A PriorityClass beside it: a policy of DeviceClasses alone was
	// refused before ("the policy has no ClusterQueue ...").
	res, err := policyClassesRun(t, map[string]string{"classes.yaml": a100Class("gpu.nvidia.com"), "priority.yaml": priorityClass}, claimJob("gpu.nvidia.com", ""))
	require.NoError(t, err)
	require.Len(t, res.Jobs, 3)
	var starts, ends []int64
	for _, j := range res.Jobs {
		starts, ends = append(starts, j.Start), append(ends, j.End)
		require.Equal(t, []string{"a100"}, jobPools(res, &j), j.Name)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	const hour = int64(3600_000)
	require.Equal(t, []int64{0, 0, hour}, starts)
	require.Equal(t, []int64{hour, hour, 2 * hour}, ends)
}

// The class's selectors and the request's are ANDed, as the Kubernetes
// allocator checks a device (k8s.io/dynamic-resource-allocation
// structured allocator isSelectable: the class's selectors, then the
// request's): a request asking for Hopper from the policy's A100-only
// class matches no device, an input error at the request's selector
// (alone, either would match: the A100s, or the H100s). A class named
// by a claim and defined nowhere (not the file, not the policy, not a
// driver's) is an input error at the request's deviceClassName; defined
// only in the policy, it resolves (before, the policy's class was not
// used: the same error).
func TestPolicyDeviceClassSelectorsAndNowhere(t *testing.T) {
	hopper := "device.attributes['gpu.nvidia.com'].architecture == 'Hopper'"
	_, err := policyClassesRun(t, map[string]string{"classes.yaml": a100Class("gpu.nvidia.com")}, claimJob("gpu.nvidia.com", hopper))
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression", ie.Field)
	require.Contains(t, ie.Msg, "matches none of the 1 devices of DeviceClass \"gpu.nvidia.com\"")
	// Without the policy's class: the driver's gpu.nvidia.com, Hopper
	// selects the H100s.
	res, err := policyClassesRun(t, nil, claimJob("gpu.nvidia.com", hopper))
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, []string{"h100"}, jobPools(res, &j), j.Name)
	}

	_, err = policyClassesRun(t, nil, claimJob("a100-80gb", ""))
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "spec.spec.devices.requests[0].exactly.deviceClassName", ie.Field)
	require.Contains(t, ie.Msg, "DeviceClass \"a100-80gb\" is defined neither in the file, nor in the scenario's policy files")
	require.True(t, strings.HasSuffix(ie.File, "jobs.yaml"), ie.File)
	res, err = policyClassesRun(t, map[string]string{"classes.yaml": a100Class("a100-80gb")}, claimJob("a100-80gb", ""))
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, []string{"a100"}, jobPools(res, &j), j.Name)
	}
}

// A class defined both in the policy and in the workload's file: the
// same spec is one class (it resolves); a different spec is an input
// error at the file's class naming the policy's, as the cluster holds
// one DeviceClass of a name and gpuplan cannot tell which was applied
// last.
func TestPolicyDeviceClassDefinedTwice(t *testing.T) {
	same := a100Class("a100-80gb") + "---\n" + claimJob("a100-80gb", "")
	res, err := policyClassesRun(t, map[string]string{"classes.yaml": a100Class("a100-80gb")}, same)
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, []string{"a100"}, jobPools(res, &j), j.Name)
	}
	other := strings.Replace(a100Class("a100-80gb"), "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", 1) + "---\n" + claimJob("a100-80gb", "")
	_, err = policyClassesRun(t, map[string]string{"classes.yaml": a100Class("a100-80gb")}, other)
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.True(t, strings.HasSuffix(ie.File, "jobs.yaml"), ie.File)
	require.Equal(t, 1, ie.Line)
	require.Contains(t, ie.Msg, "DeviceClass \"a100-80gb\" is defined here and, with a different spec, in the policy (")
	require.Contains(t, ie.Msg, filepath.Join("policy", "classes.yaml")+":1)")
}

// jobPools is the pools a job's pods held GPUs in, sorted, once each.
func jobPools(res *sim.Result, j *sim.JobRecord) []string {
	var out []string
	for u := range j.Usage() {
		if p := res.Pools[u.Pool].Spec.Name; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
