package manifests

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kueuecfg "sigs.k8s.io/kueue/apis/config/v1beta2"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
)

// GPUs by Dynamic Resource Allocation (Options.GPUs dra): each class's
// whole GPUs or MIG instances are a ResourceClaimTemplate's request of one
// of gpuplan's DeviceClasses (resource.k8s.io/v1), and its pods name the
// template in spec.resourceClaims and their container's resources.claims,
// instead of asking for the device plugin's nvidia.com/gpu or
// nvidia.com/mig-PROFILE. The DeviceClasses select NVIDIA's DRA driver's
// devices (gpu.nvidia.com) by its type attribute (gpu, mig) and, for a MIG
// instance, its profile: the same devices the device plugin hands out, so
// the same placements. They carry gpuplan's names, not the driver's own
// gpu.nvidia.com and mig.nvidia.com classes, so that they apply beside the
// driver's Helm chart. A ResourceClaimTemplate's request has no CEL
// selector and no config: Kueue's DRA integration (v0.17) refuses both,
// and charges each class's devices, through the Kueue Configuration's
// resources.deviceClassMappings, as the resource the device-plugin form
// asks for (the ClusterQueue's quota is unchanged).

// Values of Options.GPUs.
const (
	GPUsDevicePlugin = "device-plugin"
	GPUsDRA          = "dra"
)

// GPUKinds are the values Options.GPUs takes.
func GPUKinds() []string { return []string{GPUsDevicePlugin, GPUsDRA} }

// Names of the DRA objects gpuplan writes.
const (
	// DeviceClassGPU selects whole GPUs of NVIDIA's DRA driver.
	DeviceClassGPU = "gpuplan-gpu"
	// deviceClassMIG prefixes a MIG profile's DeviceClass.
	deviceClassMIG = "gpuplan-mig-"
	// claimName is the pod's name for its claim, and the template's
	// request's.
	claimName = "gpus"
)

// PathDRA holds the DeviceClasses (cluster-scoped, before the claim
// templates that name them).
const PathDRA = Applied + "/04-dra-deviceclasses.yaml"

// deviceClassOf is the DeviceClass of a MIG profile ("": whole GPUs).
func deviceClassOf(mig string) (string, error) {
	if mig == "" {
		return DeviceClassGPU, nil
	}
	b := []byte(strings.ToLower(mig))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' {
			b[i] = '-'
		}
	}
	name := deviceClassMIG + strings.Trim(string(b), "-.")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("MIG profile %q gives no DeviceClass name: %s", mig, strings.Join(errs, "; "))
	}
	return name, nil
}

// deviceClassCEL is the selector of a DeviceClass: NVIDIA's driver's
// devices of type gpu, or mig of the profile.
func deviceClassCEL(mig string) string {
	const attr = "device.attributes['" + dra.DriverNVIDIA + "']"
	if mig == "" {
		return "device.driver == '" + dra.DriverNVIDIA + "' && " + attr + ".type == 'gpu'"
	}
	return "device.driver == '" + dra.DriverNVIDIA + "' && " + attr + ".type == 'mig' && " + attr + ".profile == '" + mig + "'"
}

// draClass is one DeviceClass the classes use, and the device-plugin
// resource its devices are charged as.
type draClass struct {
	name, mig string
	resource  corev1.ResourceName
}

// useDRA records that a class's pods claim the GPU resource res (whole
// GPUs, or a MIG profile) by DRA, and returns the DeviceClass.
func (g *gen) useDRA(mig string, res corev1.ResourceName) (string, error) {
	name, err := deviceClassOf(mig)
	if err != nil {
		return "", err
	}
	for _, c := range g.draClasses {
		if c.name == name {
			return name, nil
		}
	}
	g.draClasses = append(g.draClasses, draClass{name: name, mig: mig, resource: res})
	slices.SortFunc(g.draClasses, func(a, b draClass) int { return strings.Compare(a.name, b.name) })
	return name, nil
}

// claimGPUs turns a class's GPU request into a DRA claim: the resource
// res (count n) leaves the container's requests and limits, the pod names
// the class's ResourceClaimTemplate, which goes in the objects the class's
// jobs share.
func (j *jobFile) claimGPUs(pod *corev1.PodTemplateSpec, res corev1.ResourceName, n int64) error {
	class, err := j.useDRA(j.c.Pod.MIG, res)
	if err != nil {
		return err
	}
	ctr := &pod.Spec.Containers[0]
	delete(ctr.Resources.Requests, res)
	delete(ctr.Resources.Limits, res)
	ctr.Resources.Claims = []corev1.ResourceClaim{{Name: claimName}}
	tmpl := j.c.Name + "-" + claimName
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: claimName, ResourceClaimTemplateName: ptr(tmpl)}}
	j.shared = append(j.shared, &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: dra.APIVersion, Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: tmpl, Namespace: j.ns, Labels: map[string]string{"app.kubernetes.io/name": j.c.Name}},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: claimName, Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: n,
			}}},
		}}},
	})
	what := fmt.Sprintf("%d whole GPU(s)", n)
	if j.c.Pod.MIG != "" {
		what = fmt.Sprintf("%d MIG instance(s) %s", n, j.c.Pod.MIG)
	}
	j.comment = append(j.comment, fmt.Sprintf("Its pods' GPUs come by DRA: each pod's claim from ResourceClaimTemplate %s (%s%s.yaml) asks for %s of DeviceClass %s (%s), where the device plugin's form asks for %s.", tmpl, DirJobs, j.c.Name, what, class, PathDRA, res))
	return nil
}

// deviceClasses is the DRA file: the DeviceClasses the classes use.
func (g *gen) deviceClasses() (File, error) {
	f := File{Path: PathDRA}
	if len(g.draClasses) == 0 {
		return f, nil
	}
	f.Comment = g.header(
		"Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 on): the DeviceClasses the job",
		"classes' ResourceClaimTemplates name. Each selects devices of NVIDIA's DRA driver",
		"(k8s-dra-driver-gpu, driver "+dra.DriverNVIDIA+"; install it with the device plugin off on these",
		"nodes) by their type attribute and, for MIG, profile: the GPUs and MIG instances the device plugin",
		"would hand out. gpuplan's names, so they apply beside the driver's own classes.",
	)
	for _, c := range g.draClasses {
		f.Objects = append(f.Objects, &resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: dra.APIVersion, Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: c.name},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: deviceClassCEL(c.mig)},
			}}},
		})
	}
	return f, nil
}

// deviceClassMappings are the Kueue Configuration's mappings of the
// DeviceClasses to the resources the ClusterQueue's quota names.
func (g *gen) deviceClassMappings() []kueuecfg.DeviceClassMapping {
	byRes := map[corev1.ResourceName][]corev1.ResourceName{}
	var order []corev1.ResourceName
	for _, c := range g.draClasses {
		if _, ok := byRes[c.resource]; !ok {
			order = append(order, c.resource)
		}
		byRes[c.resource] = append(byRes[c.resource], corev1.ResourceName(c.name))
	}
	slices.Sort(order)
	var out []kueuecfg.DeviceClassMapping
	for _, r := range order {
		out = append(out, kueuecfg.DeviceClassMapping{Name: r, DeviceClassNames: byRes[r]})
	}
	return out
}

// draGPUs writes the class's GPU request req as a DRA claim when the
// options ask for DRA and the request is one DRA gives alike: whole GPUs
// or MIG instances. A time-sliced share keeps the device plugin's
// resource (NVIDIA's DRA driver shares a GPU through a claim's config,
// which gpuplan does not model), and so do whole GPUs where a pool
// time-slices (the device plugin's nvidia.com/gpu there is a share).
func (j *jobFile) draGPUs(pod *corev1.PodTemplateSpec, req gpuRequest) error {
	if j.o.GPUs != GPUsDRA || req.gpus == 0 {
		return nil
	}
	var res corev1.ResourceName
	for r := range req.res {
		if r != corev1.ResourceCPU && r != corev1.ResourceMemory {
			res = r
		}
	}
	sliced := slices.ContainsFunc(j.pools, func(q pool) bool { return q.sharing.TimeSlicing > 1 })
	switch {
	case req.shared:
		j.comment = append(j.comment, j.warn("class %s: its pods ask for a time-sliced share of a GPU, which stays the device plugin's %s (NVIDIA's DRA driver shares a GPU through a claim's config, which gpuplan does not model)", j.c.Name, res))
		return nil
	case j.c.Pod.MIG == "" && sliced:
		j.comment = append(j.comment, j.warn("class %s: its pods ask for whole GPUs and a pool time-slices its GPUs, where the device plugin's %s is a share of one: the class keeps the device plugin's resource", j.c.Name, res))
		return nil
	}
	return j.claimGPUs(pod, res, req.gpus)
}
