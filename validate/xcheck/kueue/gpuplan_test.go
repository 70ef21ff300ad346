package kueue

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/sim"
)

// synthesize runs a scenario's own workload through gpuplan once, to get
// its jobs, and returns them with times rounded to whole seconds (Kueue's
// timestamps have 1 s resolution).
func synthesize(scenario string) ([]job, error) {
	res, err := runScenario(scenario, scenarios.Options{})
	if err != nil {
		return nil, err
	}
	jobs := make([]job, 0, len(res.Jobs))
	for _, r := range res.Jobs {
		d := (int64(r.Duration) + 500) / 1000
		if d < 1 {
			d = 1
		}
		jobs = append(jobs, job{name: r.Name, queue: r.Queue, priority: r.Priority,
			submit: (int64(r.Submit) + 500) / 1000, duration: d, replicas: r.Replicas,
			milliCPU: r.Pod.MilliCPU, memMiB: r.Pod.MemoryMiB, gpus: r.Pod.GPUs})
	}
	return jobs, nil
}

func runScenario(scenario string, o scenarios.Options) (*sim.Result, error) {
	body, err := os.ReadFile(scenario)
	if err != nil {
		return nil, err
	}
	s, err := scenarios.Parse(filepath.Base(scenario), filepath.Dir(scenario), body)
	if err != nil {
		return nil, err
	}
	b, err := s.Build(o)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return sim.Run(b.Config)
}

// writeTrace writes jobs as a native CSV trace (seconds).
func writeTrace(path string, jobs []job) error {
	var sb strings.Builder
	sb.WriteString("name,queue,submit,duration,replicas,gpus,cpu,memory,priority,node_selector,tolerations\n")
	for _, j := range jobs {
		var sel []string
		for k, v := range j.selector {
			sel = append(sel, k+"="+v)
		}
		var tol []string
		for _, t := range j.tolerates {
			s := t.Key
			if t.Value != "" {
				s += "=" + t.Value
			}
			if t.Effect != "" {
				s += ":" + string(t.Effect)
			}
			tol = append(tol, s)
		}
		fmt.Fprintf(&sb, "%s,%s,%d,%d,%d,%d,%dm,%dMi,%d,%s,%s\n", j.name, j.queue, j.submit, j.duration,
			j.replicas, j.gpus, j.milliCPU, j.memMiB, j.priority, strings.Join(sel, ";"), strings.Join(tol, ";"))
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// runGpuplan replays the trace through gpuplan with the policy and
// returns each job's first admission, end and preemptions (seconds); it
// sets each job's Workload UID to one that sorts as gpuplan's job ID does
// (where Kueue falls back to the UID, gpuplan falls back to the ID; a real
// cluster's UIDs are random).
func runGpuplan(scenario, trace string, policyPaths []string, jobs []job) (map[string]verdict, error) {
	res, err := runScenario(scenario, scenarios.Options{
		Trace:           &scenarios.TraceSpec{Path: trace, Format: "csv"},
		PolicyManifests: policyPaths,
	})
	if err != nil {
		return nil, err
	}
	ids := map[string]int32{}
	out := map[string]verdict{}
	for _, r := range res.Jobs {
		ids[r.Name] = r.ID
		v := verdict{admitted: -1, end: -1, preemptions: int(r.Preemptions)}
		if r.Admitted >= 0 {
			v.admitted = int64(r.Admitted) / 1000
		}
		if r.End > 0 && r.Outcome == sim.Completed {
			v.end = int64(r.End) / 1000
		}
		out[r.Name] = v
	}
	for i := range jobs {
		id, ok := ids[jobs[i].name]
		if !ok {
			return nil, fmt.Errorf("job %s is not in gpuplan's result", jobs[i].name)
		}
		jobs[i].uid = fmt.Sprintf("uid-%08d", id)
	}
	return out, nil
}
