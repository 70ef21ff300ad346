package karpenter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func names(ts []*InstanceType) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func aws(t *testing.T) *Catalog {
	t.Helper()
	c, err := AWS()
	require.NoError(t, err)
	return c
}

// The embedded catalog is Karpenter's whole reference: 1,363 types, and
// the rows read as the CSV gives them (g6.xlarge: 4 vCPUs, 16384 MiB, one
// 22888 MiB L4, allocatable 3920m CPU, 14162Mi memory and one GPU).
func TestCatalogRows(t *testing.T) {
	c := aws(t)
	require.Len(t, c.Types, 1363)
	g6, ok := c.Lookup("g6.xlarge")
	require.True(t, ok)
	require.Equal(t, int64(4), g6.VCPUs)
	require.Equal(t, int64(16384), g6.MemoryMiB)
	require.Equal(t, int32(1), g6.GPUs)
	require.Equal(t, int64(1), g6.AllocGPUs)
	require.Equal(t, int64(3920), g6.AllocMilliCPU)
	require.Equal(t, int64(14162), g6.AllocMemoryMiB)
	require.Equal(t, "L4", g6.GPUModel())
	require.Equal(t, 0.8048, g6.OnDemandPerHour)
	require.Equal(t, "g6", g6.Labels[LabelFamily])
	require.Equal(t, "g6.xlarge", g6.Labels[LabelInstanceType])
	p4d, _ := c.Lookup("p4d.24xlarge")
	require.Equal(t, "A100-40GB", p4d.GPUModel())
	p4de, _ := c.Lookup("p4de.24xlarge")
	require.Equal(t, "A100-80GB", p4de.GPUModel())
	m5, _ := c.Lookup("m5.large")
	require.False(t, m5.HasGPU())
	_, has := m5.Labels[LabelGPUName]
	require.False(t, has, "a type without GPUs has no instance-gpu-name")
	g4ad, _ := c.Lookup("g4ad.xlarge")
	require.False(t, g4ad.HasGPU(), "AMD GPUs are not nvidia.com/gpu")
}

// Hand-worked from the CSV rows: families g5 and g6, fewer than 4 GPUs,
// not 16xlarge. g5 and g6 each have xlarge, 2xlarge, 4xlarge, 8xlarge and
// 16xlarge with one GPU, 12xlarge and 24xlarge with 4 and 48xlarge with 8:
// the 4- and 8-GPU sizes fail Lt 4 and 16xlarge fails NotIn, leaving four
// sizes of each family in the reference's order.
func TestResolveHandWorked(t *testing.T) {
	c := aws(t)
	r, err := c.Resolve([]Requirement{
		{Key: LabelFamily, Operator: OpIn, Values: []string{"g5", "g6"}},
		{Key: LabelGPUCount, Operator: OpLt, Values: []string{"4"}},
		{Key: LabelSize, Operator: OpNotIn, Values: []string{"16xlarge"}},
		{Key: LabelCapacityType, Operator: OpIn, Values: []string{"on-demand", "spot"}},
		{Key: "team", Operator: OpIn, Values: []string{"research"}},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6.8xlarge"}, names(r.Types))
	require.Equal(t, []string{OnDemand, Spot}, r.CapacityTypes)
	require.Equal(t, map[string]string{"team": "research"}, r.Labels)
	require.Equal(t, 8, r.GPUTypes())
	require.Nil(t, r.NoGPU)
	// The general-purpose NodePool: instance-category c, m, r has no
	// GPU type (the 54 amd64 types with NVIDIA GPUs: g4dn 7, g5 8, g6 8, g6e 8, g7 6,
	// g7e 6, gr6 2, p3dn, p4d, p4de, p5e, p5en, p6-b200, p6-b300 1 each and
	// p5 2, of categories g, gr and p), which says so.
	gp, err := c.Resolve([]Requirement{{Key: LabelArch, Operator: OpIn, Values: []string{"amd64"}}, {Key: LabelCategory, Operator: OpIn, Values: []string{"c", "m", "r"}}})
	require.NoError(t, err)
	require.Equal(t, 0, gp.GPUTypes())
	require.Equal(t, 1, gp.NoGPU.Index)
	require.Contains(t, gp.NoGPU.Error(), "requirements[1]: karpenter.k8s.aws/instance-category In [c, m, r] leaves no type with an NVIDIA GPU: the 54 types left before it have karpenter.k8s.aws/instance-category g, gr, p")

	var od []Offer
	for _, ty := range r.Types {
		od = append(od, Offer{Type: ty, CapacityType: OnDemand, PerHour: ty.OnDemandPerHour})
	}
	// One GPU, 2 CPUs, 8 GiB: every type fits; the cheapest is g6.xlarge
	// at $0.8048 (g5.xlarge $1.006, g6.2xlarge $0.9776).
	best, ok := Cheapest(od, Pod{MilliCPU: 2000, MemoryMiB: 8192, GPUs: 1})
	require.True(t, ok)
	require.Equal(t, "g6.xlarge", best.Type.Name)
	// 6 CPUs and 20 GiB: the xlarge sizes (4 vCPUs, 16 GiB) are too small;
	// of the 2xlarge and up, g6.2xlarge at $0.9776 beats g5.2xlarge at
	// $1.212 and g6.4xlarge at $1.3232.
	best, _ = Cheapest(od, Pod{MilliCPU: 6000, MemoryMiB: 20480, GPUs: 1})
	require.Equal(t, "g6.2xlarge", best.Type.Name)
	require.Equal(t, 0.9776, best.PerHour)
	// 40 CPUs: nothing here has more than 32.
	_, ok = Cheapest(od, Pod{MilliCPU: 40000, GPUs: 1})
	require.False(t, ok)
	// Spot before on-demand: a spot g5.4xlarge at $0.90 is launched for the
	// small pod although on-demand g6.xlarge is cheaper.
	g54, _ := c.Lookup("g5.4xlarge")
	best, _ = Cheapest(append(od, Offer{Type: g54, CapacityType: Spot, PerHour: 0.90}), Pod{MilliCPU: 2000, MemoryMiB: 8192, GPUs: 1})
	require.Equal(t, Offer{Type: g54, CapacityType: Spot, PerHour: 0.90}, best)
}

// Each operator on a label the catalog has, counted over the reference.
func TestResolveOperators(t *testing.T) {
	c := aws(t)
	count := func(reqs ...Requirement) int {
		r, err := c.Resolve(reqs)
		require.NoError(t, err)
		return len(r.Types)
	}
	all := len(c.Types)
	withGPU := 0
	for i := range c.Types {
		if _, ok := c.Types[i].Labels[LabelGPUName]; ok {
			withGPU++
		}
	}
	require.Equal(t, withGPU, count(Requirement{Key: LabelGPUName, Operator: OpExists}))
	require.Equal(t, all-withGPU, count(Requirement{Key: LabelGPUName, Operator: OpDoesNotExist}))
	// NotIn passes types without the label.
	require.Equal(t, all-1, count(Requirement{Key: LabelGPUName, Operator: OpNotIn, Values: []string{"b300"}}))
	// p5.48xlarge, p5en, p6-b200, p6-b300, p4d, p4de, p3dn, p5e and the
	// 8-GPU g4dn/g5/g6/g6e/g7/g7e: Gte 8 and Gt 7 agree, Lt 8 is the rest
	// of the GPU types.
	require.Equal(t, count(Requirement{Key: LabelGPUCount, Operator: OpGt, Values: []string{"7"}}), count(Requirement{Key: LabelGPUCount, Operator: OpGte, Values: []string{"8"}}))
	require.Equal(t, count(Requirement{Key: LabelGPUCount, Operator: OpExists}),
		count(Requirement{Key: LabelGPUCount, Operator: OpGte, Values: []string{"8"}})+count(Requirement{Key: LabelGPUCount, Operator: OpLt, Values: []string{"8"}}))
	require.Equal(t, 2, count(Requirement{Key: LabelFamily, Operator: OpIn, Values: []string{"p5"}}))
	require.Equal(t, 1, count(Requirement{Key: LabelFamily, Operator: OpIn, Values: []string{"p5"}}, Requirement{Key: LabelGPUCount, Operator: OpLte, Values: []string{"1"}}))
}

func TestResolveOfferings(t *testing.T) {
	c := aws(t)
	r, err := c.Resolve(nil)
	require.NoError(t, err)
	require.Equal(t, []string{OnDemand}, r.CapacityTypes, "on-demand when not given, Karpenter's default")
	require.Nil(t, r.Zones)
	r, err = c.Resolve([]Requirement{{Key: LabelCapacityType, Operator: OpNotIn, Values: []string{"on-demand"}}, {Key: LabelZone, Operator: OpIn, Values: []string{"us-east-1a", "us-east-1b"}}, {Key: LabelZone, Operator: OpNotIn, Values: []string{"us-east-1a"}}})
	require.NoError(t, err)
	require.Equal(t, []string{Spot}, r.CapacityTypes)
	require.Equal(t, []string{"us-east-1b"}, r.Zones)
}

// A requirement that leaves nothing is named, with what was there before.
func TestResolveErrors(t *testing.T) {
	c := aws(t)
	for _, tc := range []struct {
		reqs []Requirement
		want string
	}{
		{[]Requirement{{Key: LabelOS, Operator: OpIn, Values: []string{"windows"}}}, `requirements[0]: kubernetes.io/os In [windows] leaves no instance type: the 1363 types left before it have kubernetes.io/os linux`},
		{[]Requirement{{Key: LabelFamily, Operator: OpIn, Values: []string{"p5"}}, {Key: LabelGPUCount, Operator: OpGt, Values: []string{"8"}}}, `requirements[1]: karpenter.k8s.aws/instance-gpu-count Gt [8] leaves no instance type: the 2 types left before it have karpenter.k8s.aws/instance-gpu-count 1, 8`},
		{[]Requirement{{Key: LabelFamily, Operator: OpIn, Values: []string{"g5", "g6"}}, {Key: LabelFamily, Operator: OpExists, MinValues: 5}}, `requirements[1]: minValues 5: the instance types the requirements allow have 2 distinct karpenter.k8s.aws/instance-family (g5, g6)`},
		{[]Requirement{{Key: LabelCPU, Operator: OpGt, Values: []string{"four"}}}, `requirements[0]: karpenter.k8s.aws/instance-cpu Gt: "four" is not a non-negative integer`},
		{[]Requirement{{Key: LabelCPU, Operator: OpIn}}, `requirements[0]: karpenter.k8s.aws/instance-cpu In needs at least one value`},
		{[]Requirement{{Key: LabelCPU, Operator: "Near"}}, `requirements[0]: operator "Near" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte`},
		{[]Requirement{{Key: LabelCapacityType, Operator: OpIn, Values: []string{"reserved"}}}, `requirements[0]: karpenter.sh/capacity-type In [reserved] allows no capacity type gpuplan models (on-demand, spot)`},
		{[]Requirement{{Key: LabelZone, Operator: OpDoesNotExist}}, `requirements[0]: topology.kubernetes.io/zone DoesNotExist: every node has a zone`},
	} {
		_, err := c.Resolve(tc.reqs)
		require.EqualError(t, err, tc.want)
	}
}

// Prune, by hand: m5.large and m6a.large are both 2 vCPUs and 8 GiB, at
// $0.096 and $0.0864; m6a.large wins. m5.xlarge (4 vCPUs, 16 GiB, $0.192)
// is bigger, so it stays; g5.xlarge has a GPU and stays.
func TestPrune(t *testing.T) {
	c := aws(t)
	var in []*InstanceType
	for _, n := range []string{"m5.large", "m6a.large", "m5.xlarge", "g5.xlarge"} {
		ty, ok := c.Lookup(n)
		require.True(t, ok)
		in = append(in, ty)
	}
	require.Equal(t, []string{"m6a.large", "m5.xlarge", "g5.xlarge"}, names(Prune(in, nil)))
	// A workload that selects by family keeps both families apart.
	require.Equal(t, []string{"m5.large", "m6a.large", "m5.xlarge", "g5.xlarge"}, names(Prune(in, []string{LabelFamily})))
	// Whatever the pod, the cheapest pick over the pruned general-purpose
	// set is the cheapest over the whole set.
	r, err := c.Resolve([]Requirement{{Key: LabelCategory, Operator: OpIn, Values: []string{"c", "m", "r"}}, {Key: LabelGeneration, Operator: OpGt, Values: []string{"2"}}, {Key: LabelArch, Operator: OpIn, Values: []string{"amd64"}}})
	require.NoError(t, err)
	offers := func(ts []*InstanceType) []Offer {
		var out []Offer
		for _, ty := range ts {
			if ty.OnDemandPerHour > 0 {
				out = append(out, Offer{Type: ty, CapacityType: OnDemand, PerHour: ty.OnDemandPerHour})
			}
		}
		return out
	}
	full, pruned := offers(r.Types), offers(Prune(r.Types, nil))
	require.Less(t, len(pruned), len(full)/5)
	for _, cpu := range []int64{500, 1000, 2000, 3500, 7000, 15000, 30000, 60000, 100000} {
		for _, mem := range []int64{512, 4096, 16384, 65536, 262144} {
			p := Pod{MilliCPU: cpu, MemoryMiB: mem}
			a, okA := Cheapest(full, p)
			b, okB := Cheapest(pruned, p)
			require.Equal(t, okA, okB)
			require.Equal(t, a.PerHour, b.PerHour, "pod %+v: %s against %s", p, a.Type.Name, b.Type.Name)
		}
	}
}
