package karpenter

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	kscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// pendingPod is one pod of the batch, as both sides read it.
type pendingPod struct {
	name     string
	gpus     int64
	milliCPU int64
	memMiB   int64
	selector map[string]string
}

// offer is one pool gpuplan built for the NodePool: an instance type on
// one capacity type, its allocatable and price.
type offer struct {
	pool         int32
	instanceType string
	capacityType string
	price        float64
	spec         cluster.PoolSpec
}

// outcome is what a provisioner decided for a batch: nodes and pods per
// offering ("g6.48xlarge/on-demand"), pods left pending, $/h.
type outcome struct {
	nodes   map[string]int
	pods    map[string]int
	pending int
	perHour float64
}

func (o outcome) String() string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range o.nodes {
			if !yield(k) {
				return
			}
		}
	})
	s := ""
	for _, k := range keys {
		if o.nodes[k] == 0 && o.pods[k] == 0 {
			continue
		}
		s += fmt.Sprintf("%d x %s (%d pods), ", o.nodes[k], k, o.pods[k])
	}
	return fmt.Sprintf("%s%d pending, $%.4f/h", s, o.pending, o.perHour)
}

// same reports whether two outcomes agree exactly (prices to 1e-6 $/h).
func same(a, b outcome) bool {
	eq := func(x, y map[string]int) bool {
		for k, v := range x {
			if v != 0 && y[k] != v {
				return false
			}
		}
		for k, v := range y {
			if v != 0 && x[k] != v {
				return false
			}
		}
		return true
	}
	return eq(a.nodes, b.nodes) && eq(a.pods, b.pods) && a.pending == b.pending && math.Abs(a.perHour-b.perHour) < 1e-6
}

// wellKnown are the catalog's labels a pod may select on; Karpenter
// accepts a requirement on a label only if it is well known or the
// NodePool defines it (the AWS provider registers these).
var wellKnown = []string{
	"karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-family",
	"karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-size",
	"karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-memory",
	"karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count",
	"karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-memory",
}

func init() { v1.WellKnownLabels.Insert(wellKnown...) }

const zone = "zone-a"

// instanceTypes turns gpuplan's offers into Karpenter instance types: one
// per instance type, an offering per capacity type at gpuplan's price,
// capacity = gpuplan's allocatable, no overhead (the catalog's figures
// are already allocatable), the pool's labels as requirements.
func instanceTypes(offers []offer) []*cloudprovider.InstanceType {
	byName := map[string]*cloudprovider.InstanceType{}
	var order []string
	for _, o := range offers {
		it, ok := byName[o.instanceType]
		if !ok {
			res := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(o.spec.MilliCPU, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(o.spec.MemoryMiB<<20, resource.BinarySI),
				corev1.ResourcePods:   resource.MustParse("110"),
			}
			if o.spec.GPUsPerNode > 0 {
				res["nvidia.com/gpu"] = *resource.NewQuantity(int64(o.spec.GPUsPerNode), resource.DecimalSI)
			}
			reqs := kscheduling.NewRequirements(
				kscheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, o.instanceType),
				kscheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"),
				kscheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux"),
				kscheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
			)
			for _, k := range wellKnown {
				if v, ok := o.spec.Labels[k]; ok {
					reqs.Add(kscheduling.NewRequirement(k, corev1.NodeSelectorOpIn, v))
				} else {
					reqs.Add(kscheduling.NewRequirement(k, corev1.NodeSelectorOpDoesNotExist))
				}
			}
			it = &cloudprovider.InstanceType{
				Name: o.instanceType, Requirements: reqs, Capacity: res,
				Overhead: &cloudprovider.InstanceTypeOverhead{},
			}
			byName[o.instanceType] = it
			order = append(order, o.instanceType)
		}
		it.Offerings = append(it.Offerings, &cloudprovider.Offering{
			Available: true, Price: o.price,
			Requirements: kscheduling.NewLabelRequirements(map[string]string{
				v1.CapacityTypeLabelKey: o.capacityType, corev1.LabelTopologyZone: zone,
			}),
		})
	}
	var out []*cloudprovider.InstanceType
	for _, n := range order {
		it := byName[n]
		cts := lo.Uniq(lo.Map(it.Offerings, func(o *cloudprovider.Offering, _ int) string { return o.CapacityType() }))
		it.Requirements.Add(kscheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, cts...))
		out = append(out, it)
	}
	return out
}

func corePods(batch []pendingPod) []*corev1.Pod {
	var pods []*corev1.Pod
	for i, p := range batch {
		req := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(p.milliCPU, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(p.memMiB<<20, resource.BinarySI),
		}
		if p.gpus > 0 {
			req["nvidia.com/gpu"] = *resource.NewQuantity(p.gpus, resource.DecimalSI)
		}
		pods = append(pods, test.Pod(test.PodOptions{
			ObjectMeta: metav1.ObjectMeta{
				Name: p.name, UID: types.UID(fmt.Sprintf("pod-%05d", i)),
				CreationTimestamp: metav1.Unix(1_700_000_000, 0),
			},
			NodeSelector:         p.selector,
			ResourceRequirements: corev1.ResourceRequirements{Requests: req, Limits: lo.PickByKeys(req, []corev1.ResourceName{"nvidia.com/gpu"})},
		}))
	}
	return pods
}

// solve runs Karpenter's provisioning scheduler on the batch with one
// NodePool offering the instance types on the given capacity types, and
// launches each NodeClaim as the AWS provider does: among its instance
// type options' offerings compatible with the claim, spot ones priced
// above the cheapest on-demand one dropped (its filterUnwantedSpot), the
// cheapest.
func solve(offers []offer, capacityTypes []string, limitGPUs int64, batch []pendingPod) (outcome, error) {
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	limits := v1.Limits{
		corev1.ResourceCPU:    resource.MustParse("10000000"),
		corev1.ResourceMemory: resource.MustParse("10000000Gi"),
	}
	if limitGPUs > 0 {
		limits["nvidia.com/gpu"] = *resource.NewQuantity(limitGPUs, resource.DecimalSI)
	}
	nodePool := test.NodePool(v1.NodePool{Spec: v1.NodePoolSpec{Limits: limits}})
	nodePool.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{
		Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: capacityTypes,
	}}
	its := instanceTypes(offers)
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = its
	client := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cl := state.NewCluster(clk, client, cp)
	pods := corePods(batch)
	byPool := map[string][]*cloudprovider.InstanceType{nodePool.Name: its}
	topo, err := scheduling.NewTopology(ctx, client, cl, nil, []*v1.NodePool{nodePool}, byPool, pods)
	if err != nil {
		return outcome{}, err
	}
	s := scheduling.NewScheduler(ctx, client, []*v1.NodePool{nodePool}, cl, nil, topo, byPool, nil,
		events.NewRecorder(&record.FakeRecorder{}), clk, nil)
	res, err := s.Solve(ctx, pods)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{nodes: map[string]int{}, pods: map[string]int{}, pending: len(res.PodErrors)}
	for _, nc := range res.NewNodeClaims {
		it, o := launch(nc)
		if o == nil {
			return outcome{}, fmt.Errorf("a NodeClaim of %d pods has no compatible offering", len(nc.Pods))
		}
		k := it.Name + "/" + o.CapacityType()
		out.nodes[k]++
		out.pods[k] += len(nc.Pods)
		out.perHour += o.Price
	}
	return out, nil
}

// launch is the instance type and offering a NodeClaim is launched on.
func launch(nc *scheduling.NodeClaim) (*cloudprovider.InstanceType, *cloudprovider.Offering) {
	type cand struct {
		it *cloudprovider.InstanceType
		o  *cloudprovider.Offering
	}
	var cands []cand
	cheapestOD := math.Inf(1)
	for _, it := range nc.InstanceTypeOptions {
		for _, o := range it.Offerings.Available().Compatible(nc.Requirements) {
			cands = append(cands, cand{it, o})
			if o.CapacityType() == v1.CapacityTypeOnDemand {
				cheapestOD = min(cheapestOD, o.Price)
			}
		}
	}
	cands = lo.Filter(cands, func(c cand, _ int) bool {
		return c.o.CapacityType() != v1.CapacityTypeSpot || c.o.Price <= cheapestOD
	})
	if len(cands) == 0 {
		return nil, nil
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].o.Price != cands[j].o.Price {
			return cands[i].o.Price < cands[j].o.Price
		}
		return cands[i].it.Name < cands[j].it.Name
	})
	return cands[0].it, cands[0].o
}
