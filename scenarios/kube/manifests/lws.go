package manifests

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/models/serving"
)

// LWSAPIVersion is LeaderWorkerSet's API.
const LWSAPIVersion = "leaderworkerset.x-k8s.io/v1"

// vllmMultiNodeScript is vLLM's helper that starts (leader) or joins
// (worker) the Ray cluster of a multi-node engine, as the vllm-openai
// image ships it (vllm examples/online_serving/multi-node-serving.sh).
const vllmMultiNodeScript = "/vllm-workspace/examples/online_serving/multi-node-serving.sh"

// LeaderWorkerSet is a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), the
// fields gpuplan writes.
type LeaderWorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              LeaderWorkerSetSpec `json:"spec"`
}

// LeaderWorkerSetSpec is its spec: the groups and each group's template.
type LeaderWorkerSetSpec struct {
	Replicas             *int32               `json:"replicas,omitempty"`
	LeaderWorkerTemplate LeaderWorkerTemplate `json:"leaderWorkerTemplate"`
}

// LeaderWorkerTemplate is a group: its leader's and workers' pods, its
// size and restart policy.
type LeaderWorkerTemplate struct {
	LeaderTemplate *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
	WorkerTemplate corev1.PodTemplateSpec  `json:"workerTemplate"`
	Size           *int32                  `json:"size,omitempty"`
	RestartPolicy  string                  `json:"restartPolicy,omitempty"`
}

// leaderWorkerSet writes an LLM service whose replica is a group of pods
// as vLLM's multi-node serving on a LeaderWorkerSet (vLLM's LWS guide):
// the leader (pod, the replica's, with container c as written for one
// pod) starts the Ray head and vllm serve; each worker joins the Ray
// cluster with the same resources. The engine's tensor and pipeline
// parallel are written as the run modelled them (pipeline parallel
// $(LWS_GROUP_SIZE) where it is a stage a pod), so they read back alike.
func leaderWorkerSet(name, ns string, labels, ann map[string]string, replicas int32, size int, pod corev1.PodTemplateSpec, c serving.LLMConfig) (*LeaderWorkerSet, []string) {
	leader := pod.DeepCopy()
	ctr := &leader.Spec.Containers[0]
	tp, pp := max(c.Engine.TP, 1), max(c.Engine.PP, 1)
	var args []string
	for i := 0; i < len(ctr.Args); i++ {
		if ctr.Args[i] == "--pipeline-parallel-size" && i+1 < len(ctr.Args) {
			i++ // written beside the tensor parallel below
			continue
		}
		args = append(args, ctr.Args[i])
		if ctr.Args[i] == "--tensor-parallel-size" && i+1 < len(ctr.Args) {
			args = append(args, strconv.Itoa(tp))
			switch {
			case pp == size:
				args = append(args, "--pipeline-parallel-size", "$(LWS_GROUP_SIZE)")
			case pp > 1:
				args = append(args, "--pipeline-parallel-size", strconv.Itoa(pp))
			}
			i++
		}
	}
	model := args[1] // --model MODEL first (vllmContainer)
	serve := append([]string{"vllm", "serve", model}, args[2:]...)
	ctr.Command = []string{"sh", "-c", fmt.Sprintf("bash %s leader --ray_cluster_size=$(LWS_GROUP_SIZE) && %s", vllmMultiNodeScript, strings.Join(serve, " "))}
	ctr.Args = nil
	worker := pod.DeepCopy()
	w := &worker.Spec.Containers[0]
	w.Name = "vllm-worker"
	w.Command = []string{"sh", "-c", fmt.Sprintf("bash %s worker --ray_address=$(LWS_LEADER_ADDRESS)", vllmMultiNodeScript)}
	w.Args, w.Ports, w.ReadinessProbe = nil, nil, nil
	worker.Annotations = nil // vLLM's metrics are the leader's
	x := &LeaderWorkerSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: LWSAPIVersion, Kind: "LeaderWorkerSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: ann},
		Spec: LeaderWorkerSetSpec{Replicas: &replicas, LeaderWorkerTemplate: LeaderWorkerTemplate{
			LeaderTemplate: leader, WorkerTemplate: *worker, Size: ptr(int32(size)), RestartPolicy: "RecreateGroupOnPodRestart"}},
	}
	engine := fmt.Sprintf("tensor parallel %d over the group's GPUs, its all-reduces on the nodes' network, as the run modelled it", tp)
	if pp > 1 {
		engine = fmt.Sprintf("pipeline parallel %d of tensor parallel %d, as the run modelled it", pp, tp)
	}
	notes := []string{
		fmt.Sprintf("A LeaderWorkerSet: each replica is a group of %d pods (a leader and %d workers) of %d GPUs, one vLLM engine across them as vLLM's multi-node serving runs it (Ray): %s.",
			size, size-1, c.Engine.GPUs()/size, engine),
		"restartPolicy RecreateGroupOnPodRestart (LWS's default): a pod lost or preempted recreates its whole group, as the run did.",
		"Kubernetes expands $(LWS_GROUP_SIZE) and $(LWS_LEADER_ADDRESS) from the variables LWS gives each pod.",
	}
	return x, notes
}
