package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const sweepTestdata = "../../scenarios/pipeline/sweep/testdata"

// sweepVolume copies the sweep test inputs into a fresh folder, as they
// would be copied onto a Job's volume.
func sweepVolume(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"small.yaml", "small-sweep.yaml", "slow-sweep.yaml"} {
		b, err := os.ReadFile(filepath.Join(sweepTestdata, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	return dir
}

func TestSweepKilledAndRestartedLosesAndDoublesNothing(t *testing.T) {
	vol := sweepVolume(t)
	spec := filepath.Join(vol, "slow-sweep.yaml")
	out := filepath.Join(vol, "killed")
	// A real gpuplan process, killed with SIGKILL once a point is
	// written.
	p := gpuplanProcess(t, "sweep", spec, "--out", out, "--workers", "1", "--progress", "never")
	require.NoError(t, p.Start())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		m, _ := filepath.Glob(filepath.Join(out, "points", "*.json"))
		if len(m) >= 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no points written")
		time.Sleep(2 * time.Millisecond)
	}
	require.NoError(t, p.Process.Signal(syscall.SIGKILL))
	_ = p.Wait()
	done, _ := filepath.Glob(filepath.Join(out, "points", "*.json"))
	require.Less(t, len(done), 24, "the sweep finished before the kill; the test needs a slower sweep")
	_, err := os.Stat(filepath.Join(out, "sweep.csv"))
	require.True(t, os.IsNotExist(err), "a killed sweep writes no table")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"sweep", spec, "--out", out, "--workers", "2"}, nil, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), fmt.Sprintf("24 points (%d found done, %d run now", len(done), 24-len(done)))

	ref := filepath.Join(vol, "ref")
	stdout.Reset()
	require.Equal(t, 0, run([]string{"sweep", spec, "--out", ref, "--workers", "2"}, nil, &stdout, &stderr), stderr.String())
	require.Equal(t, tree(t, ref), tree(t, out))
}

func TestSweepShardsAsJobPodsMergeToTheSingleProcessBytes(t *testing.T) {
	vol := sweepVolume(t)
	// Paths in the Job are relative to the volume: emit it from there.
	t.Chdir(vol)
	// The Job, as gpuplan emits it, decoded strictly as batch/v1.
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"sweep", "small-sweep.yaml", "--emit-job", "--shards", "4", "--parallelism", "2",
		"--image", "registry.example/gpuplan:v1", "--cpus", "2", "--memory", "3Gi"}, nil, &stdout, &stderr), stderr.String())
	var job batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict(stdout.Bytes(), &job), stdout.String())
	require.Equal(t, "batch/v1", job.APIVersion)
	require.Equal(t, "Job", job.Kind)
	s := job.Spec
	require.Equal(t, batchv1.IndexedCompletion, *s.CompletionMode)
	require.EqualValues(t, 4, *s.Completions)
	require.EqualValues(t, 2, *s.Parallelism)
	require.EqualValues(t, 2, *s.BackoffLimitPerIndex)
	require.Equal(t, corev1.RestartPolicyNever, s.Template.Spec.RestartPolicy)
	rules := s.PodFailurePolicy.Rules
	require.Equal(t, batchv1.PodFailurePolicyActionFailJob, rules[0].Action)
	require.Equal(t, []int32{2, 4}, rules[0].OnExitCodes.Values)
	require.Equal(t, batchv1.PodFailurePolicyActionIgnore, rules[1].Action)
	c := s.Template.Spec.Containers[0]
	require.Equal(t, "3Gi", c.Resources.Limits.Memory().String())
	require.Equal(t, "2", c.Resources.Requests.Cpu().String())
	require.Equal(t, "/work", c.VolumeMounts[0].MountPath)
	require.Equal(t, "gpuplan-sweep", s.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)

	// Each pod as a local process in the volume's folder, with
	// JOB_COMPLETION_INDEX set and $(JOB_COMPLETION_INDEX) expanded as the
	// kubelet does.
	type pod struct {
		p      *exec.Cmd
		stderr *bytes.Buffer
	}
	var pods []pod
	for i := range 4 {
		idx := fmt.Sprint(i)
		var args []string
		for _, a := range c.Args {
			args = append(args, strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", idx))
		}
		p := gpuplanProcess(t, args...)
		p.Dir = vol
		p.Env = append(p.Env, "JOB_COMPLETION_INDEX="+idx)
		perr := &bytes.Buffer{}
		p.Stderr = perr
		require.NoError(t, p.Start())
		pods = append(pods, pod{p, perr})
	}
	for i, p := range pods {
		require.NoError(t, p.p.Wait(), "shard %d: %s", i, p.stderr.String())
	}
	merged := filepath.Join(vol, "merged")
	shards, _ := filepath.Glob(filepath.Join(vol, "results", "shard-*"))
	require.Len(t, shards, 4)
	stdout.Reset()
	require.Equal(t, 0, run(append([]string{"sweep", "merge", "--out", merged}, shards...), nil, &stdout, &stderr), stderr.String())
	single := filepath.Join(vol, "single")
	require.Equal(t, 0, run([]string{"sweep", filepath.Join(vol, "small-sweep.yaml"), "--out", single}, nil, &stdout, &stderr), stderr.String())
	for _, f := range []string{"sweep.csv", "sweep.json", "sweep.html"} {
		a, err := os.ReadFile(filepath.Join(single, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(merged, f))
		require.NoError(t, err)
		require.Equal(t, string(a), string(b), f)
	}
	// Three of the four shards: refused, naming what is missing.
	stderr.Reset()
	require.Equal(t, 2, run(append([]string{"sweep", "merge", "--out", merged}, shards[:3]...), nil, &stdout, &stderr))
	require.Contains(t, stderr.String(), "4 of the sweep's 16 points are missing (first: [3 7 11 15])")
}

func TestSweepMalformedSpecExits2WithFileLineField(t *testing.T) {
	vol := sweepVolume(t)
	spec := filepath.Join(vol, "bad.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(`apiVersion: gpuplan.dev/v1alpha1
kind: Sweep
metadata: {name: bad}
spec:
  scenario: small.yaml
  metrics: [cost.total]
  parameters:
  - name: nodes
    path: cluster.pools[t4].count
    range: {from: 8, to: 2, step: 2}
`), 0o644))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, run([]string{"sweep", spec, "--out", filepath.Join(vol, "o")}, nil, &stdout, &stderr))
	require.Contains(t, stderr.String(), spec+":10:12: spec.parameters[0].range: is empty: to (2) is below from (8)")
}
