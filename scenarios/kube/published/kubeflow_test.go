package published_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/scenarios/kube/workloads"
)

// The training operator's PaddleJob and XGBoostJob (kubeflow.org/v1) read
// as their published examples say, each one gang:
//   - Kueue's sample-xgboostjob.yaml: Master 1 + Worker 2 pods, each
//     requesting cpu 0.5 and memory 256Mi, no GPU: 3 pods of 500m CPU,
//     256 MiB, in Kueue queue user-queue;
//   - the training operator's paddlepaddle/simple-gpu.yaml: 2 Workers
//     with nvidia.com/gpu: 2 each: 2 pods, 4 GPUs.
func TestPaddleAndXGBoostJobsAsPublished(t *testing.T) {
	type pods struct {
		n, gpus            int32
		milliCPU, memoryMi int64
	}
	for _, c := range []struct {
		file, kind, queue string
		want              pods
	}{
		{"kueue/site/static/examples/jobs/sample-xgboostjob.yaml", "XGBoostJob", "user-queue", pods{3, 0, 500, 256}},
		{"training-operator/examples/paddlepaddle/simple-gpu.yaml", "PaddleJob", "", pods{2, 2, 0, 0}},
	} {
		objs, _, err := workloads.Load(filepath.Join("testdata", c.file))
		require.NoError(t, err, c.file)
		require.Len(t, objs, 1, c.file)
		o := objs[0]
		require.Equal(t, c.kind, o.Kind)
		require.Equal(t, c.queue, o.Queue)
		// Replica types asking for the same pod: one gang of one shape.
		var n int32
		for _, g := range o.Groups {
			require.Equal(t, o.Groups[0].Pod, g.Pod, c.file)
			n += g.Pods
		}
		g := o.Groups[0]
		require.Equal(t, c.want, pods{n, g.Pod.GPUs, g.Pod.MilliCPU, g.Pod.MemoryMiB}, c.file)
	}
}

// Refused as the training operator's webhook refuses them
// (pkg/webhooks/xgboost, pkg/webhooks/paddlepaddle): an XGBoostJob's
// Master is required and single; replica types are Master and Worker.
func TestPaddleAndXGBoostJobRefusals(t *testing.T) {
	xgb, err := os.ReadFile("testdata/kueue/site/static/examples/jobs/sample-xgboostjob.yaml")
	require.NoError(t, err)
	paddle, err := os.ReadFile("testdata/training-operator/examples/paddlepaddle/simple-gpu.yaml")
	require.NoError(t, err)
	for _, c := range []struct {
		name, in, from, to, want string
	}{
		{"two masters", string(xgb), "    Master:\n      replicas: 1\n", "    Master:\n      replicas: 2\n",
			`x.yaml:11:17: spec.xgbReplicaSpecs["Master"].replicas: is 2; an XGBoostJob has exactly one Master`},
		{"no master", string(xgb), "    Master:\n", "    Worker2:\n",
			`x.yaml:11:7: spec.xgbReplicaSpecs["Worker2"]: "Worker2" is not a replica type of a XGBoostJob (it takes Master, Worker)`},
		{"paddle PS", string(paddle), "    Worker:\n", "    PS:\n",
			`x.yaml:9:7: spec.paddleReplicaSpecs["PS"]: "PS" is not a replica type of a PaddleJob (it takes Master, Worker)`},
		{"pytorch field in a PaddleJob", string(paddle), "  paddleReplicaSpecs:\n", "  pytorchReplicaSpecs:\n",
			`x.yaml:8:5: spec.pytorchReplicaSpecs: is not a field of a PaddleJob`},
	} {
		bad := strings.Replace(c.in, c.from, c.to, 1)
		require.NotEqual(t, c.in, bad, c.name)
		_, _, err := workloads.Parse("x.yaml", []byte(bad))
		require.EqualError(t, err, c.want, c.name)
	}
	// Without a Master at all (only Workers), the webhook's "must be
	// present".
	noMaster := strings.Replace(string(xgb), "    Master:\n", "    Worker:\n", 1)
	noMaster = noMaster[:strings.Index(noMaster, "    Worker:\n      replicas: 2")]
	_, _, err = workloads.Parse("x.yaml", []byte(noMaster))
	require.ErrorContains(t, err, `x.yaml:10:5: spec.xgbReplicaSpecs: an XGBoostJob needs a Master replica spec, as the training operator's webhook requires`)
}
