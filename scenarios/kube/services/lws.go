package services

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/scenarios/kube/dra"
	"gpuplan.dev/gpuplan/validate/strict"
)

// lws is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, as
// sigs.k8s.io/lws api/leaderworkerset/v1 declares it) serving: replicas
// groups of a leader and size-1 workers, each group one engine across
// its pods (vLLM's multi-node serving, as vLLM's docs deploy it with LWS).
type lws struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas             *int32 `json:"replicas,omitempty"`
		LeaderWorkerTemplate struct {
			LeaderTemplate                       *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
			WorkerTemplate                       corev1.PodTemplateSpec  `json:"workerTemplate"`
			Size                                 *int32                  `json:"size,omitempty"`
			RestartPolicy                        string                  `json:"restartPolicy,omitempty"`
			SubGroupPolicy                       any                     `json:"subGroupPolicy,omitempty"`
			VolumeClaimTemplates                 any                     `json:"volumeClaimTemplates,omitempty"`
			PersistentVolumeClaimRetentionPolicy any                     `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
		} `json:"leaderWorkerTemplate"`
		RolloutStrategy any    `json:"rolloutStrategy,omitempty"`
		StartupPolicy   string `json:"startupPolicy,omitempty"`
		NetworkConfig   any    `json:"networkConfig,omitempty"`
	} `json:"spec,omitempty"`
	Status any `json:"status,omitempty"`
}

// maxLWSSize bounds a group (sim's bound on a replica's pods).
const maxLWSSize = 1024

// readLWS reads a LeaderWorkerSet as a service's replicas: each of its
// spec.replicas groups is one replica of size pods (Workload.Size), the
// leader's pod template the replica's pod; the workers must ask for the
// same GPUs (the run places a group's pods alike). The leader's vLLM
// server is the engine, with the environment LWS gives its pods
// (LWS_GROUP_SIZE, LWS_WORKER_INDEX 0, LWS_LEADER_ADDRESS, LWS_NAME)
// expanded in its command as Kubernetes expands $(VAR); its
// --pipeline-parallel-size is the engine's pipeline stages.
func readLWS(file string, m strict.Manifest, devices *dra.Set) (Workload, error) {
	var x lws
	pos, err := m.Decode(file, &x, strict.Options{What: "a LeaderWorkerSet"})
	if err != nil {
		return Workload{}, err
	}
	at := func(field, format string, args ...any) error {
		return strict.At(file, m.Line, pos, field, format, args...)
	}
	t := &x.Spec.LeaderWorkerTemplate
	w := Workload{File: file, Line: m.Line, Kind: m.Kind, Name: x.Name, Namespace: x.Namespace, Replicas: 1, Size: 1}
	if t.Size != nil {
		if *t.Size < 1 || *t.Size > maxLWSSize {
			return w, at("spec.leaderWorkerTemplate.size", "is %d; a group is 1 to %d pods (the CRD's minimum is 1)", *t.Size, maxLWSSize)
		}
		w.Size = int(*t.Size)
	}
	if r := x.Spec.Replicas; r != nil {
		if *r < 0 {
			return w, at("spec.replicas", "%d is negative; a LeaderWorkerSet runs 0 or more groups", *r)
		}
		w.Replicas = int(*r)
	}
	where := fmt.Sprintf("%s:%d: LeaderWorkerSet %s", file, m.Line, w.Name)
	switch t.RestartPolicy {
	case "", "RecreateGroupOnPodRestart":
	case "None", "Default":
		return w, at("spec.leaderWorkerTemplate.restartPolicy", "%s (a pod restarted alone, its group kept) is not modelled: a replica's pods stop and start together (RecreateGroupOnPodRestart)", t.RestartPolicy)
	default:
		return w, at("spec.leaderWorkerTemplate.restartPolicy", "is %s; want RecreateGroupOnPodRestart", strict.Quote(t.RestartPolicy))
	}
	switch x.Spec.StartupPolicy {
	case "", "LeaderCreated":
	case "LeaderReady":
		w.Notes = append(w.Notes, where+": spec.startupPolicy LeaderReady: the workers start with their leader (one gang), not once it is ready")
	default:
		return w, at("spec.startupPolicy", "is %s; want LeaderCreated or LeaderReady", strict.Quote(x.Spec.StartupPolicy))
	}
	leader, leaderAt := &t.WorkerTemplate, "spec.leaderWorkerTemplate.workerTemplate"
	if t.LeaderTemplate != nil {
		leader, leaderAt = t.LeaderTemplate, "spec.leaderWorkerTemplate.leaderTemplate"
	}
	tpl := leader.DeepCopy()
	env := lwsEnv(x.Name, x.Namespace, w.Size)
	for i := range tpl.Spec.Containers {
		c := &tpl.Spec.Containers[i]
		c.Command, c.Args = expandEnv(c.Command, env), expandEnv(c.Args, env)
	}
	if err := templatePod(file, m, pos, &w, tpl, leaderAt, devices); err != nil {
		return w, err
	}
	if w.Pod.GPUs == 0 {
		return w, at(leaderAt+".spec.containers", "ask for no nvidia.com/gpu: an LLM replica's pods hold whole GPUs")
	}
	if w.Size > 1 && t.LeaderTemplate != nil {
		worker, err := podOf(file, m.Line, pos, "spec.leaderWorkerTemplate.workerTemplate.spec", t.WorkerTemplate.Spec.Containers, nil, nil, "")
		if err != nil {
			return w, err
		}
		if worker.GPUs != w.Pod.GPUs || worker.MIG != w.Pod.MIG {
			return w, at("spec.leaderWorkerTemplate.workerTemplate.spec.containers", "ask for %d GPUs and the leader for %d: a group's pods are placed alike (each the leader's pod); give the workers the leader's GPUs", worker.GPUs, w.Pod.GPUs)
		}
		if worker.MilliCPU != w.Pod.MilliCPU || worker.MemoryMiB != w.Pod.MemoryMiB {
			w.Notes = append(w.Notes, where+": the workers' CPU and memory differ from the leader's: each pod of a group is placed as the leader's")
		}
	}
	if t.SubGroupPolicy != nil {
		w.Notes = append(w.Notes, where+": spec.leaderWorkerTemplate.subGroupPolicy: sub-groups are not modelled (the group is one gang)")
	}
	return w, nil
}

// lwsEnv is the environment LWS gives a group's leader (its index 0 of
// group 0).
func lwsEnv(name, ns string, size int) map[string]string {
	if ns == "" {
		ns = "default"
	}
	return map[string]string{"LWS_GROUP_SIZE": strconv.Itoa(size), "LWS_WORKER_INDEX": "0", "LWS_NAME": name,
		"LWS_LEADER_ADDRESS": fmt.Sprintf("%s-0.%s.%s", name, name, ns)}
}

// expandEnv expands $(VAR) of env in a container's command or args as
// Kubernetes does ($$ an escaped $; an unknown variable is left as it is).
func expandEnv(ss []string, env map[string]string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		var b strings.Builder
		for k := 0; k < len(s); k++ {
			if s[k] == '$' && k+1 < len(s) {
				if s[k+1] == '$' {
					b.WriteByte('$')
					k++
					continue
				}
				if s[k+1] == '(' {
					if end := strings.IndexByte(s[k+2:], ')'); end >= 0 {
						if v, ok := env[s[k+2:k+2+end]]; ok {
							b.WriteString(v)
							k += 2 + end
							continue
						}
					}
				}
			}
			b.WriteByte(s[k])
		}
		out[i] = b.String()
	}
	return out
}
