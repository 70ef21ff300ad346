package scenarios

import (
	"fmt"
	"slices"

	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
)

// importWorkspaces adds, for each KAITO Workspace among the workload
// manifests, the nodes KAITO provisions for it: a pool of resource.count
// nodes of its instance type, labelled with its labelSelector's
// matchLabels, named kaito-<workspace>.
func (s *Scenario) importWorkspaces() error {
	if len(s.Spec.Workload.Manifests) == 0 {
		return nil
	}
	// The files' claims may name the policy's DeviceClasses.
	pol, err := builder{s}.kueuePolicy(nil)
	if err != nil {
		return err
	}
	for i, m := range s.Spec.Workload.Manifests {
		if m.Path == "" {
			continue // validation says so
		}
		objs, _, err := workloads.LoadWith(s.path(m.Path), nil, pol.Devices)
		if err != nil {
			return err
		}
		for _, o := range objs {
			ws := o.Workspace
			if ws == nil {
				continue
			}
			name := "kaito-" + o.Name
			if slices.ContainsFunc(s.Spec.Cluster.Pools, func(p PoolSpec) bool { return p.Name == name }) {
				continue // the same Workspace in another entry
			}
			res, err := builder{s}.instance(ws.InstanceType)
			if err != nil {
				return err
			}
			if !res.ok || res.it.GPUs == 0 {
				return &InputError{File: o.File, Line: o.Line, Field: "resource.instanceType",
					Msg: fmt.Sprintf("%s is not a GPU instance type of the price catalog: KAITO provisions a VM size with GPUs", Quote(ws.InstanceType))}
			}
			if lc, ok := s.pos[fmt.Sprintf("spec.workload.manifests[%d]", i)]; ok {
				s.pos[fmt.Sprintf("spec.cluster.pools[%d]", len(s.Spec.Cluster.Pools))] = lc
			}
			// KAITO runs on AKS: priced in the scenario's region when it
			// names one, else in Azure's eastus.
			region := s.Spec.Pricing.Region
			if region == "" {
				region = "eastus"
			}
			s.Spec.Cluster.Pools = append(s.Spec.Cluster.Pools, PoolSpec{Name: name, Count: ws.Count, InstanceType: ws.InstanceType, Labels: ws.Labels,
				CapacitySpec: CapacitySpec{Region: region}})
			s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("%s:%d: Workspace %s: pool %s of the nodes KAITO provisions for it (%s), priced in %s", o.File, o.Line, o.Name, name, ws, region))
		}
	}
	return nil
}

// fillWorkspacePods gives each KAITO Workspace's tuning pod every GPU of
// its instance type.
func (s builder) fillWorkspacePods(objs []workloads.Object) error {
	for i := range objs {
		o := &objs[i]
		if o.Workspace == nil {
			continue
		}
		res, err := s.instance(o.Workspace.InstanceType)
		if err != nil {
			return err
		}
		for g := range o.Groups {
			o.Groups[g].Pod.GPUs = res.it.GPUs
		}
	}
	return nil
}
