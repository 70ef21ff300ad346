package compose

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ScenarioFile is the scenario's name in the folder Render's files go to.
const ScenarioFile = "scenario.yaml"

// Render writes the composition as the files a user writes, by path
// relative to their folder: scenario.yaml and whatever it names (policy
// manifests, workload manifests, interruption traces).
func (c *Composition) Render() map[string][]byte {
	files := map[string][]byte{}
	classes := c.classes()
	cluster := c.renderCluster(files)
	spec := map[string]any{"seed": c.Seed, "cluster": cluster}
	if c.Horizon != "" {
		spec["horizon"] = c.Horizon
	}
	workload := c.renderWorkload(classes, files)
	if svcs := c.renderServices(); len(svcs) > 0 {
		workload["services"] = svcs
	}
	spec["workload"] = workload
	variants := c.renderVariants(classes)
	if len(variants) > 0 {
		spec["variants"] = variants
	}
	if c.Preemption {
		spec["scheduler"] = map[string]any{"preemption": true}
	}
	if c.Backfill {
		spec["queueing"] = map[string]any{"backfill": true}
	}
	if p := c.Policy; p != nil {
		files["policy/"+p.Kind+".yaml"] = c.renderPolicy(classes)
		pol := map[string]any{"manifests": []string{"policy/"}}
		if p.Kind == "kueue" && p.BatchClass {
			pol["priorityClasses"] = map[string]any{"team-b": "batch"}
		}
		spec["policy"] = pol
	}
	doc := map[string]any{"apiVersion": "gpuplan.dev/v1alpha1", "kind": "Scenario",
		"metadata": map[string]any{"name": "composed", "description": "A scenario the composer wrote (scenarios/compose)."},
		"spec":     spec}
	files[ScenarioFile] = mustYAML(doc)
	return files
}

// renderCluster is spec.cluster: the pools and Karpenter NodePools,
// their interruption traces added to files.
func (c *Composition) renderCluster(files map[string][]byte) map[string]any {
	pools := []any{}
	for _, p := range c.Pools {
		m := map[string]any{"name": p.Name, "count": p.Count, "instanceType": p.InstanceType, "provisioning": "4m"}
		switch p.Kind {
		case "spot":
			m["capacityType"] = "spot"
			if p.Interruptions != nil {
				m["interruptions"] = renderInterruptions(p.Interruptions, p.Name, files)
			}
		case "mig":
			m["gpuModel"], m["gpusPerNode"], m["cpu"], m["memory"] = "H100-80GB", 8, "192", "2048Gi"
			m["sharing"] = map[string]any{"mig": map[string]any{"strategy": "mixed", "layout": "all-balanced"}}
			if p.MIGSingle != "" {
				m["sharing"] = map[string]any{"mig": map[string]any{"strategy": "single", "profiles": []string{p.MIGSingle}}}
			}
		case "time-sliced":
			m["sharing"] = map[string]any{"timeSlicing": map[string]any{"replicas": p.Replicas}}
		}
		if p.MaxNodes > 0 {
			m["autoscaling"] = map[string]any{"minNodes": 0, "maxNodes": p.MaxNodes, "scaleDownUnneededTime": "10m"}
		}
		if p.Failures != "" {
			m["failures"] = map[string]any{"mtbf": p.Failures}
		}
		pools = append(pools, m)
	}
	cluster := map[string]any{}
	if len(pools) > 0 {
		cluster["pools"] = pools
	}
	var nodePools []any
	for _, n := range c.NodePools {
		m := map[string]any{"name": n.Name, "instanceTypes": n.InstanceTypes, "limits": map[string]any{"nvidia.com/gpu": n.LimitGPUs}, "provisioning": "3m"}
		if n.Spot {
			m["capacityTypes"] = []string{"spot", "on-demand"}
			if n.Interruptions != nil {
				m["interruptions"] = renderInterruptions(n.Interruptions, n.Name, files)
			}
		}
		if n.Consolidation {
			m["consolidation"] = map[string]any{"policy": "WhenEmpty", "consolidateAfter": "5m"}
		}
		if n.Failures != "" {
			m["failures"] = map[string]any{"mtbf": n.Failures}
		}
		nodePools = append(nodePools, m)
	}
	if len(nodePools) > 0 {
		cluster["nodePools"] = nodePools
	}
	return cluster
}

// renderWorkload is spec.workload but its services: CronJob manifests, a
// trace or synthetic classes (the manifests and trace added to files),
// recovery and Volcano's job settings.
func (c *Composition) renderWorkload(classes []Class, files map[string][]byte) map[string]any {
	workload := map[string]any{}
	if len(c.CronJobs) > 0 {
		files["workloads/cronjobs.yaml"] = c.renderCronJobs()
		workload["manifests"] = []any{map[string]any{"path": "workloads/cronjobs.yaml", "queue": "team-a"}}
	} else if len(classes) > 0 && c.Trace {
		files["trace.csv"] = c.renderTrace(classes)
		workload["trace"] = map[string]any{"path": "trace.csv", "format": "csv"}
	} else if len(classes) > 0 {
		var cls []any
		for _, cl := range classes {
			pod := map[string]any{"cpu": "2", "memory": "8Gi", "gpus": cl.GPUs}
			if cl.MIG != "" {
				pod["mig"] = cl.MIG
			}
			m := map[string]any{"name": cl.Name, "queue": cl.Queue,
				"arrival":  map[string]any{"process": "poisson", "ratePerHour": cl.RatePerHour},
				"pod":      pod,
				"duration": map[string]any{"distribution": "lognormal", "median": cl.Median, "sigma": 0.6, "max": "4h"}}
			if cl.Replicas > 1 {
				m["replicas"] = cl.Replicas
			}
			if cl.Priority != 0 {
				m["priority"] = cl.Priority
			}
			if cl.PreemptNever {
				m["preemptionPolicy"] = "Never"
			}
			if cl.Pool != "" {
				m["nodeSelector"] = map[string]any{"gpuplan.dev/pool": cl.Pool}
			}
			cls = append(cls, m)
		}
		workload["synthetic"] = map[string]any{"jobs": c.Jobs, "classes": cls}
	}
	if c.Checkpoint || (c.IgnoreDisruptions && c.Volcano == nil) {
		rec := map[string]any{}
		if c.Checkpoint {
			rec["checkpoint"] = map[string]any{"interval": "20m", "cost": "1m", "restore": "1m"}
		}
		// A Volcano Job restarts by its own policies.
		if c.IgnoreDisruptions && c.Volcano == nil {
			rec["ignoreDisruptions"] = true
		}
		workload["recovery"] = rec
	}
	if v := c.Volcano; v != nil {
		m := map[string]any{"maxRetry": v.MaxRetry}
		if v.Policy != "" {
			m["policies"] = []any{map[string]any{"event": "PodEvicted", "action": v.Policy}}
		}
		if v.MinAvailable > 0 {
			m["minAvailable"] = v.MinAvailable
		}
		workload["volcano"] = m
	}
	return workload
}

// renderServices is spec.workload.services.
func (c *Composition) renderServices() []any {
	var svcs []any
	for _, s := range c.Services {
		m := map[string]any{"name": s.Name, "pod": map[string]any{"cpu": "2", "memory": "8Gi", "gpus": 1},
			"replicas": map[string]any{"min": s.Min, "max": s.max()},
			"load":     map[string]any{"constant": s.Rate},
			"batching": map[string]any{"batchSize": 8, "maxBatchDelay": "20ms"}}
		if c.Policy != nil {
			m["queue"] = "team-a"
		}
		if s.Priority != 0 {
			if c.priorityClasses() && s.PriorityClass {
				m["priorityClass"] = priorityClassName(s.Priority)
			} else {
				m["priority"] = s.Priority
			}
		}
		switch s.Scaler {
		case "hpa":
			m["autoscaler"] = map[string]any{"hpa": map[string]any{"metric": "requestsPerReplica", "target": 60}}
		case "keda":
			m["autoscaler"] = map[string]any{"keda": map[string]any{"metric": "requestsPerReplica", "threshold": 60}}
		case "kpa":
			m["autoscaler"] = map[string]any{"kpa": map[string]any{"target": 4}}
		}
		svcs = append(svcs, m)
	}
	return svcs
}

// renderVariants is spec.variants: each variant's patch.
func (c *Composition) renderVariants(classes []Class) []any {
	var variants []any
	for _, v := range c.variants() {
		var patch map[string]any
		switch v {
		case "more-nodes":
			patch = map[string]any{"cluster": map[string]any{"pools": []any{map[string]any{"name": c.Pools[0].Name, "count": c.Pools[0].Count + 1}}}}
		case "double-rate":
			cl := classes[0]
			patch = map[string]any{"workload": map[string]any{"synthetic": map[string]any{"classes": []any{
				map[string]any{"name": cl.Name, "arrival": map[string]any{"ratePerHour": 2 * cl.RatePerHour}}}}}}
		case "no-failures":
			patch = map[string]any{"cluster": map[string]any{"pools": []any{map[string]any{"name": c.Pools[0].Name, "failures": nil}}}}
		}
		variants = append(variants, map[string]any{"name": v, "patch": patch})
	}
	return variants
}

// max is the replicas' maximum as rendered: the minimum without an
// autoscaler.
func (s Service) max() int {
	if s.Scaler == "none" {
		return max(s.Min, 1)
	}
	return max(s.Max, s.Min, 1)
}

// renderInterruptions writes one interruption process; a trace file it
// names goes into files.
func renderInterruptions(in *Interruptions, owner string, files map[string][]byte) map[string]any {
	m := map[string]any{}
	switch in.Model {
	case "rate":
		m["ratePerHour"] = jsonNumber(in.Value)
	case "mtbf":
		m["mtbf"] = in.Value
	case "band":
		m["band"] = in.Value
	case "times":
		m["times"] = strings.Split(in.Value, ",")
	case "path":
		var b bytes.Buffer
		b.WriteString("time\n")
		for _, t := range strings.Split(in.Value, ",") {
			fmt.Fprintf(&b, "%d\n", seconds(t))
		}
		name := "interruptions-" + owner + ".csv"
		files[name] = b.Bytes()
		m["path"] = name
	case "skypilot":
		name := "skypilot-" + owner + ".json"
		files[name] = []byte(`{"metadata": {"gap_seconds": 600}, "data": [2, 2, 1, 1, 2, 2, 0, 2, 2, 2, 1, 2]}` + "\n")
		m["skypilot"] = name
	}
	if in.Notice != "" {
		m["notice"] = in.Notice
	}
	return m
}

// renderCronJobs writes the CronJobs as batch/v1 manifests.
func (c *Composition) renderCronJobs() []byte {
	var docs [][]byte
	for _, cj := range c.CronJobs {
		meta := map[string]any{"annotations": map[string]any{"gpuplan.dev/duration": cj.Duration}}
		tmpl := map[string]any{"metadata": map[string]any{}}
		if c.Policy != nil && c.Policy.Kind == "kueue" {
			tmpl["metadata"] = map[string]any{"labels": map[string]any{"kueue.x-k8s.io/queue-name": "team-a"}}
		}
		tmpl["spec"] = map[string]any{"completions": cj.Parallelism, "parallelism": cj.Parallelism, "backoffLimit": 6,
			"template": map[string]any{"metadata": meta, "spec": map[string]any{"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "work", "image": "example/work:1",
					"resources": map[string]any{"requests": map[string]any{"cpu": "2", "memory": "8Gi"},
						"limits": map[string]any{"nvidia.com/gpu": 1}}}}}}}
		ns := "batch"
		if c.Policy != nil {
			ns = "team-a"
		}
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
			"metadata": map[string]any{"name": cj.Name, "namespace": ns},
			"spec":     map[string]any{"schedule": cj.Schedule, "concurrencyPolicy": "Forbid", "jobTemplate": tmpl}}))
	}
	return bytes.Join(docs, []byte("---\n"))
}

// renderPolicy writes the Kueue or Volcano manifests.
func (c *Composition) renderPolicy(classes []Class) []byte {
	p := c.Policy
	var docs [][]byte
	if p.Kind == "volcano" {
		for _, q := range p.Queues {
			docs = append(docs, mustYAML(map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
				"metadata": map[string]any{"name": q.Name},
				"spec": map[string]any{"weight": q.Weight, "reclaimable": true,
					"capability": map[string]any{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": fmt.Sprint(q.GPUs)}}}))
		}
		return bytes.Join(docs, []byte("---\n"))
	}
	// One flavor for every node; the resources the pods ask for.
	covered := []string{"cpu", "memory", "nvidia.com/gpu"}
	migs := map[string]bool{}
	for _, cl := range classes {
		if cl.MIG != "" && len(c.CronJobs) == 0 {
			migs["nvidia.com/mig-"+cl.MIG] = true
		}
	}
	for m := range migs {
		covered = append(covered, m)
	}
	sort.Strings(covered[3:])
	// The flavors: one for every node, or one per pool and NodePool.
	type flavor struct {
		name   string
		labels map[string]any
	}
	flavors := []flavor{{name: "default"}}
	if p.Flavors && len(c.Pools)+len(c.NodePools) > 0 {
		flavors = nil
		for _, pl := range c.Pools {
			flavors = append(flavors, flavor{pl.Name, map[string]any{"gpuplan.dev/pool": pl.Name}})
		}
		for _, np := range c.NodePools {
			flavors = append(flavors, flavor{np.Name, map[string]any{"karpenter.sh/nodepool": np.Name}})
		}
	}
	quota := func(gpus, borrow int) []any {
		var fs []any
		for _, f := range flavors {
			var rs []any
			for _, name := range covered {
				r := map[string]any{"name": name}
				switch name {
				case "cpu":
					r["nominalQuota"] = 64
				case "memory":
					r["nominalQuota"] = "256Gi"
				default:
					r["nominalQuota"] = gpus
					if borrow >= 0 {
						r["borrowingLimit"] = borrow
					}
				}
				rs = append(rs, r)
			}
			fs = append(fs, map[string]any{"name": f.name, "resources": rs})
		}
		return []any{map[string]any{"coveredResources": covered, "flavors": fs}}
	}
	for _, f := range flavors {
		spec := map[string]any{}
		if f.labels != nil {
			spec["nodeLabels"] = f.labels
		}
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": f.name}, "spec": spec}))
	}
	if p.Cohort && p.CohortQuota > 0 {
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
			"metadata": map[string]any{"name": "research"}, "spec": map[string]any{"resourceGroups": quota(p.CohortQuota, -1)}}))
	}
	for _, q := range p.Queues {
		spec := map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": quota(q.GPUs, q.BorrowingLimit)}
		if p.Cohort {
			spec["cohortName"] = "research"
		}
		if p.StrictFIFO {
			spec["queueingStrategy"] = "StrictFIFO"
		}
		if p.Preemption {
			spec["preemption"] = map[string]any{"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
		}
		if p.FairSharing {
			spec["fairSharing"] = map[string]any{"weight": q.Weight}
		}
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
			"metadata": map[string]any{"name": q.Name}, "spec": spec}))
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
			"metadata": map[string]any{"name": q.Name, "namespace": q.Name}, "spec": map[string]any{"clusterQueue": q.Name}}))
	}
	if c.priorityClasses() {
		// scheduling.k8s.io/v1 PriorityClasses: the services' and the
		// batch class team-b's jobs take.
		vals := map[int32]bool{}
		for _, s := range c.Services {
			if s.PriorityClass && s.Priority != 0 {
				vals[s.Priority] = true
			}
		}
		var sorted []int32
		for v := range vals {
			sorted = append(sorted, v)
		}
		slices.Sort(sorted)
		for _, v := range sorted {
			docs = append(docs, mustYAML(map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
				"metadata": map[string]any{"name": priorityClassName(v)}, "value": v, "description": "online inference"}))
		}
		if p.BatchClass {
			docs = append(docs, mustYAML(map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
				"metadata": map[string]any{"name": "batch"}, "value": 100, "preemptionPolicy": "PreemptLowerPriority"}))
		}
	}
	if p.FairSharing || p.WaitForPodsReady {
		conf := map[string]any{"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
		if p.FairSharing {
			conf["fairSharing"] = map[string]any{"preemptionStrategies": []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}}
		}
		if p.WaitForPodsReady {
			conf["waitForPodsReady"] = map[string]any{"timeout": "5m", "blockAdmission": false,
				"requeuingStrategy": map[string]any{"timestamp": "Eviction", "backoffLimitCount": 3, "backoffBaseSeconds": 60}}
		}
		docs = append(docs, mustYAML(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "kueue-manager-config", "namespace": "kueue-system"},
			"data":     map[string]any{"controller_manager_config.yaml": string(mustYAML(conf))}}))
	}
	return bytes.Join(docs, []byte("---\n"))
}

// renderTrace writes the classes' jobs as a native CSV trace: Jobs rows,
// the classes' in turn, each class's k-th job at k times its mean
// spacing (3600/ratePerHour seconds), running its median.
func (c *Composition) renderTrace(classes []Class) []byte {
	var b bytes.Buffer
	b.WriteString("name,queue,submit,duration,replicas,gpus,cpu,memory,priority,mig,node_selector\n")
	type row struct {
		at  float64
		k   int
		cl  Class
		seq int
	}
	var rows []row
	for i := range c.Jobs {
		cl := classes[i%len(classes)]
		k := i / len(classes)
		rows = append(rows, row{float64(k) * 3600 / cl.RatePerHour, k, cl, i})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].at < rows[j].at })
	for _, r := range rows {
		sel := ""
		if r.cl.Pool != "" {
			sel = "gpuplan.dev/pool=" + r.cl.Pool
		}
		fmt.Fprintf(&b, "%s-%d,%s,%.1f,%d,%d,%d,2,8Gi,%d,%s,%s\n", r.cl.Name, r.k, r.cl.Queue, r.at, seconds(r.cl.Median),
			r.cl.Replicas, r.cl.GPUs, r.cl.Priority, r.cl.MIG, sel)
	}
	return b.Bytes()
}

// priorityClasses is whether the policy carries PriorityClass objects:
// a Kueue policy with a service or the batch class that names one.
func (c *Composition) priorityClasses() bool {
	p := c.Policy
	if p == nil || p.Kind != "kueue" {
		return false
	}
	if p.BatchClass {
		return true
	}
	for _, s := range c.Services {
		if s.PriorityClass && s.Priority != 0 {
			return true
		}
	}
	return false
}

// priorityClassName names the PriorityClass of a service's priority.
func priorityClassName(v int32) string { return fmt.Sprintf("serving-%d", v) }

// WriteFiles writes files into dir (created as needed).
func WriteFiles(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func mustYAML(v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("compose: marshalling a composed document: %v", err)) // maps of plain values always marshal
	}
	return b
}

// jsonNumber keeps a number given as text a number in the YAML.
type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// seconds reads one of the composer's own durations (NhNm, Nm, Nh).
func seconds(d string) int {
	total, n := 0, 0
	for _, ch := range d {
		switch {
		case ch >= '0' && ch <= '9':
			n = n*10 + int(ch-'0')
		case ch == 'h':
			total, n = total+3600*n, 0
		case ch == 'm':
			total, n = total+60*n, 0
		case ch == 's':
			total, n = total+n, 0
		}
	}
	return total
}
