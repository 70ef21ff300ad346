package manifests

import (
	"fmt"
	"maps"
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
// selector and no config (Kueue v0.17's DRA integration refused both;
// v0.19.2 counts them), and Kueue charges each class's devices, through
// the Kueue Configuration's resources.deviceClassMappings, as the
// resource the device-plugin form asks for (the ClusterQueue's quota is
// unchanged).

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

// gpuClaim is the ResourceClaimTemplate OWNER-gpus in namespace ns whose
// one request asks for n devices of the DeviceClass of the MIG profile mig
// ("": whole GPUs), charged to Kueue as the device plugin's resource res;
// and the words for the comment, where naming the file it is written in.
func (g *gen) gpuClaim(owner, ns, where, mig string, res corev1.ResourceName, n int64) (*resourcev1.ResourceClaimTemplate, string, error) {
	class, err := g.useDRA(mig, res)
	if err != nil {
		return nil, "", err
	}
	tmpl := owner + "-" + claimName
	what := fmt.Sprintf("%d whole GPU(s)", n)
	if mig != "" {
		what = fmt.Sprintf("%d MIG instance(s) %s", n, mig)
	}
	words := fmt.Sprintf("ResourceClaimTemplate %s (%s) asks for %s of DeviceClass %s (%s), where the device plugin's form asks for %s.", tmpl, where, what, class, PathDRA, res)
	return &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: dra.APIVersion, Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: tmpl, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": owner}},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: claimName, Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: n,
			}}},
		}}},
	}, words, nil
}

// podClaims are what a pod asks for to have the template's claim: its
// spec.resourceClaims entry naming the template, and its container's
// resources.claims.
func podClaims(tmpl *resourcev1.ResourceClaimTemplate) ([]corev1.PodResourceClaim, []corev1.ResourceClaim) {
	return []corev1.PodResourceClaim{{Name: claimName, ResourceClaimTemplateName: ptr(tmpl.Name)}}, []corev1.ResourceClaim{{Name: claimName}}
}

// claimGPUs turns a class's GPU request into a DRA claim: the resource
// res (count n) leaves the container's requests and limits, the pod names
// the class's ResourceClaimTemplate, which goes in the objects the class's
// jobs share.
func (j *jobFile) claimGPUs(pod *corev1.PodTemplateSpec, res corev1.ResourceName, n int64) error {
	tmpl, words, err := j.gpuClaim(j.c.Name, j.ns, DirJobs+j.c.Name+".yaml", j.c.Pod.MIG, res, n)
	if err != nil {
		return err
	}
	ctr := &pod.Spec.Containers[0]
	delete(ctr.Resources.Requests, res)
	delete(ctr.Resources.Limits, res)
	pod.Spec.ResourceClaims, ctr.Resources.Claims = podClaims(tmpl)
	j.shared = append(j.shared, tmpl)
	j.comment = append(j.comment, "Its pods' GPUs come by DRA: each pod's claim from "+words)
	return nil
}

// deviceClasses is the DRA file: the DeviceClasses the classes use, and
// the policy's as read.
func (g *gen) deviceClasses() (File, error) {
	f := File{Path: PathDRA}
	var policy []resourcev1.DeviceClass
	pol := g.pol
	if pol == nil {
		pol = g.classPol
	}
	if pol != nil {
		for _, dc := range pol.DeviceClasses {
			if !slices.ContainsFunc(g.draClasses, func(c draClass) bool { return c.name == dc.Name }) {
				policy = append(policy, dc)
			}
		}
	}
	if len(g.draClasses) == 0 && len(policy) == 0 {
		return f, nil
	}
	if len(g.draClasses) > 0 {
		f.Comment = g.header(
			"Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 on): the DeviceClasses the job",
			"classes' ResourceClaimTemplates name. Each selects devices of NVIDIA's DRA driver",
			"(k8s-dra-driver-gpu, driver "+dra.DriverNVIDIA+"; install it with the device plugin off on these",
			"nodes) by their type attribute and, for MIG, profile: the GPUs and MIG instances the device plugin",
			"would hand out. gpuplan's names, so they apply beside the driver's own classes.",
		)
	} else {
		f.Comment = g.header("Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 on): DeviceClasses.")
	}
	if len(policy) > 0 {
		f.Comment = append(f.Comment, "The policy's DeviceClasses, written back as read (name, labels, annotations and spec), from "+strings.Join(g.relFiles(pol), ", ")+".")
	}
	for _, dc := range policy {
		f.Objects = append(f.Objects, &resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: dra.APIVersion, Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: dc.Name, Labels: dc.Labels, Annotations: dc.Annotations},
			Spec:       *dc.Spec.DeepCopy(),
		})
	}
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

// deviceClassMappings are the Kueue Configuration's mappings of
// DeviceClasses to the resources the ClusterQueue's quota names: the
// policy's (its Configuration's resources.deviceClassMappings, as read)
// and those of gpuplan's DeviceClasses the pods claim, each resource's
// classes sorted.
func (g *gen) deviceClassMappings() []kueuecfg.DeviceClassMapping {
	byRes := map[corev1.ResourceName][]corev1.ResourceName{}
	add := func(res corev1.ResourceName, class string) {
		if !slices.Contains(byRes[res], corev1.ResourceName(class)) {
			byRes[res] = append(byRes[res], corev1.ResourceName(class))
		}
	}
	if g.pol != nil {
		for class, res := range g.pol.DeviceClassMappings {
			add(corev1.ResourceName(res), class)
		}
	}
	for _, c := range g.draClasses {
		if g.pol != nil {
			if _, ok := g.pol.DeviceClassMappings[c.name]; ok {
				continue // the policy maps it already
			}
		}
		add(c.resource, c.name)
	}
	var out []kueuecfg.DeviceClassMapping
	for _, r := range slices.Sorted(maps.Keys(byRes)) {
		classes := byRes[r]
		slices.Sort(classes)
		out = append(out, kueuecfg.DeviceClassMapping{Name: r, DeviceClassNames: classes})
	}
	return out
}

// draGPUs writes the class's GPU request req as a DRA claim when the
// options ask for DRA and the request is one DRA gives alike (byDRA).
func (j *jobFile) draGPUs(pod *corev1.PodTemplateSpec, req gpuRequest) error {
	if j.o.GPUs != GPUsDRA || req.gpus == 0 {
		return nil
	}
	res := gpuResource(req.res)
	ok, warning := j.byDRA("class", j.c.Name, "pods", req.shared, j.c.Pod.MIG, res)
	if !ok {
		j.comment = append(j.comment, warning)
		return nil
	}
	return j.claimGPUs(pod, res, req.gpus)
}

// gpuResource is the GPU resource of a container's requests (neither CPU
// nor memory).
func gpuResource(rl corev1.ResourceList) corev1.ResourceName {
	var res corev1.ResourceName
	for r := range rl {
		if r != corev1.ResourceCPU && r != corev1.ResourceMemory {
			res = r
		}
	}
	return res
}

// byDRA says whether the pods of a class or service (kind, name; what
// they are called: pods, replicas) asking for the GPU resource res are written with a DRA claim instead: whole GPUs or MIG
// instances are. A time-sliced share keeps the device plugin's resource
// (NVIDIA's DRA driver shares a GPU through a claim's config, which
// gpuplan does not model), and so do whole GPUs where a pool time-slices
// (the device plugin's nvidia.com/gpu there is a share); the warning says
// so.
func (g *gen) byDRA(kind, name, pods string, shared bool, mig string, res corev1.ResourceName) (bool, string) {
	sliced := slices.ContainsFunc(g.pools, func(q pool) bool { return q.sharing.TimeSlicing > 1 })
	switch {
	case shared:
		return false, g.warn("%s %s: its %s ask for a time-sliced share of a GPU, which stays the device plugin's %s (NVIDIA's DRA driver shares a GPU through a claim's config, which gpuplan does not model)", kind, name, pods, res)
	case mig == "" && sliced:
		return false, g.warn("%s %s: its %s ask for whole GPUs and a pool time-slices its GPUs, where the device plugin's %s is a share of one: the %s keeps the device plugin's resource", kind, name, pods, res, kind)
	}
	return true, ""
}
