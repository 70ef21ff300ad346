package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"gpuplan.dev/gpuplan/scenarios/kube/gpuop"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// applyGPUConfigs reads spec.cluster.gpuConfigs and gives each pool
// without sharing what the GPU Operator would give its nodes: the MIG
// layout its nvidia.com/mig.config label names (through mig-parted's
// configs read, or the operator's default all-* ones) and the
// time-slicing (or MPS) replicas of its device plugin config.
func (s *Scenario) applyGPUConfigs() error {
	files := s.Spec.Cluster.GPUConfigs
	if len(files) == 0 {
		return nil
	}
	cfg := gpuop.New()
	for _, f := range files {
		path := s.path(f)
		data, err := strict.ReadFileBounded(path)
		if err != nil {
			return err
		}
		if err := cfg.Add(path, data); err != nil {
			return err
		}
	}
	s.nodeNotes = append(s.nodeNotes, cfg.Notes...)
	for i := range s.Spec.Cluster.Pools {
		p := &s.Spec.Cluster.Pools[i]
		if p.Sharing != nil {
			continue
		}
		model, gpus := p.GPUModel, p.GPUsPerNode
		if p.InstanceType != "" && (model == "" || gpus == 0) {
			res, err := builder{s}.instance(p.InstanceType)
			if err != nil {
				return err
			}
			if model == "" {
				model = res.it.GPUModel
			}
			if gpus == 0 {
				gpus = res.it.GPUs
			}
		}
		if model == "" || gpus == 0 {
			continue // no GPUs to share
		}
		at := fmt.Sprintf("spec.cluster.pools[%d]", i)
		ps, key, ok, err := cfg.PluginFor(p.Labels)
		if err != nil {
			return s.errAt(at+".labels["+strconv.Quote(gpuop.LabelDevicePluginConfig)+"]", "%v", err)
		}
		name, hasMIG := p.Labels[gpuop.LabelMIGConfig]
		var layout []string
		if hasMIG {
			if layout, err = cfg.MIGLayout(model, gpus, name); err != nil {
				return s.errAt(at+".labels["+strconv.Quote(gpuop.LabelMIGConfig)+"]", "%v", err)
			}
		}
		if layout != nil {
			// The device plugin's strategy: the pool's
			// nvidia.com/mig.strategy label (as GPU feature discovery sets
			// it), else its config's flags.migStrategy, else the GPU
			// Operator's default, single.
			strategy, from := p.Labels[gpuop.LabelMIGStrategy], gpuop.LabelMIGStrategy+" label"
			if strategy == "" && ok && ps.MIGStrategy != "" {
				strategy, from = ps.MIGStrategy, "device plugin config "+strconv.Quote(key)
			}
			if strategy == "" {
				strategy, from = cluster.MIGSingle, "the GPU Operator's default"
			}
			if strategy != cluster.MIGSingle && strategy != cluster.MIGMixed {
				return s.errAt(at+".labels["+strconv.Quote(gpuop.LabelMIGStrategy)+"]", "is %s; with MIG on, the strategies are single and mixed", Quote(strategy))
			}
			if ok && ps.Replicas > 0 {
				return s.errAt(at+".labels", "pool %s has MIG (%s) and time-slicing (device plugin config %s); gpuplan shares a pool's GPUs one way", p.Name, name, strconv.Quote(key))
			}
			p.Sharing = &SharingSpec{MIG: &MIGSpec{Strategy: strategy, Profiles: layout}}
			s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("pool %s: MIG %s (%s) from mig-parted's %s, %s strategy (%s)", p.Name, name, strings.Join(layout, ", "), strconv.Quote(name), strategy, from))
			continue
		}
		if ok && ps.Replicas > 0 {
			p.Sharing = &SharingSpec{TimeSlicing: &TimeSlicingSpec{Replicas: ps.Replicas}}
			how := "time-slicing"
			if ps.MPS {
				how = "MPS, modelled as time-slicing (each of the sharers at its share of the GPU)"
			}
			s.nodeNotes = append(s.nodeNotes, fmt.Sprintf("pool %s: each GPU shared %d ways by %s, the device plugin config %s (%s)", p.Name, ps.Replicas, how, strconv.Quote(key), ps.Where))
		}
	}
	return nil
}
