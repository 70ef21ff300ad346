package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/models/serving"
)

// A one-pod engine of pipeline stages is written with vLLM's
// --pipeline-parallel-size beside its tensor parallel; in a
// LeaderWorkerSet of as many pods the stages are $(LWS_GROUP_SIZE), once.
func TestVLLMPipelineParallelWritten(t *testing.T) {
	cfg := serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_70B(), TP: 4, PP: 2}}.WithDefaults()
	c, _ := serviceWriter{&gen{}}.vllmContainer(cfg, nil)
	args := strings.Join(c.Args, " ")
	require.Contains(t, args, "--tensor-parallel-size 4 --pipeline-parallel-size 2 --max-num-seqs 256")
	one := serving.LLMConfig{Engine: serving.Engine{Model: serving.Llama3_70B(), TP: 8}}.WithDefaults()
	c1, _ := serviceWriter{&gen{}}.vllmContainer(one, nil)
	require.NotContains(t, strings.Join(c1.Args, " "), "--pipeline-parallel-size")

	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	x, _ := leaderWorkerSet("big", "ns", nil, nil, 2, 2, pod, cfg)
	cmd := strings.Join(x.Spec.LeaderWorkerTemplate.LeaderTemplate.Spec.Containers[0].Command, " ")
	require.Contains(t, cmd, "--tensor-parallel-size 4 --pipeline-parallel-size $(LWS_GROUP_SIZE) --max-num-seqs")
	require.Equal(t, 1, strings.Count(cmd, "--pipeline-parallel-size"))
}
