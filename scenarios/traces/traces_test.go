package traces

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

func readAll(t *testing.T, path, format string, opts TraceOptions) ([]cluster.JobSpec, TraceSource) {
	t.Helper()
	src, err := OpenTrace(path, format, opts)
	require.NoError(t, err)
	defer src.Close()
	var out []cluster.JobSpec
	for {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		require.NoError(t, err)
		if !ok {
			return out, src
		}
		out = append(out, j)
	}
}

func TestNativeFormatsAgree(t *testing.T) {
	csvJobs, _ := readAll(t, "../testdata/native.csv", FormatCSV, TraceOptions{})
	jsonJobs, _ := readAll(t, "../testdata/native.jsonl", FormatJSONL, TraceOptions{})
	require.Len(t, csvJobs, 5)
	require.Len(t, jsonJobs, 5)
	train := csvJobs[0]
	require.Equal(t, "train-a", train.Name)
	require.Equal(t, int32(4), train.Replicas)
	require.Equal(t, cluster.PodSpec{MilliCPU: 90000, MemoryMiB: 900 * 1024, GPUs: 8}, train.Pod)
	require.Equal(t, int64(3600_000), train.Duration)
	require.Equal(t, map[string]string{"gpuplan.dev/tier": "training"}, train.Constraints.NodeSelector)
	require.Equal(t, []cluster.Toleration{{Key: "gpuplan.dev/dedicated", Operator: "Equal", Value: "training", Effect: cluster.NoSchedule}}, train.Constraints.Tolerations)
	require.Same(t, csvJobs[0].Constraints, csvJobs[4].Constraints, "identical constraints are shared")

	share := csvJobs[2]
	require.Equal(t, cluster.PodSpec{MilliCPU: 500, MemoryMiB: 2048, GPUMilli: 250}, share.Pod)
	require.Equal(t, int64(20_000), share.Submit)
	require.Equal(t, int64(60_250), share.Duration)
	require.Equal(t, int64(1_000_000), share.Deadline)
	require.Equal(t, "default", csvJobs[3].Queue)
	require.Equal(t, int32(1), csvJobs[3].Replicas)
	require.Equal(t, int64(12_500), csvJobs[1].Submit)

	for i := range csvJobs {
		a, b := csvJobs[i], jsonJobs[i]
		require.Equal(t, a.Constraints.Key(), b.Constraints.Key(), a.Name)
		a.Constraints, b.Constraints = nil, nil
		require.Equal(t, a, b, "row %d", i)
	}
}

func TestGzipTraces(t *testing.T) {
	data, err := os.ReadFile("../testdata/native.csv")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "native.csv.gz")
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	jobs, _ := readAll(t, p, FormatCSV, TraceOptions{})
	require.Len(t, jobs, 5)
}

func firstError(t *testing.T, format, body string) error {
	t.Helper()
	p := tempFile(t, "trace."+format, body)
	src, err := OpenTrace(p, format, TraceOptions{})
	if err != nil {
		return err
	}
	defer src.Close()
	for {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
}

func TestMalformedTraceRowsNameFileAndLine(t *testing.T) {
	cases := []struct{ format, body, want string }{
		{FormatCSV, "submit,duration,gpus\n0,10,1\n5,1\n", ":3:1: wrong number of fields"},
		{FormatCSV, "submit,duration,gpus\n0,10,1\n5,abc,1\n", `:3:3: duration: "abc" is not a number of seconds`},
		{FormatCSV, "submit,duration,gpus\n0,10,1.5\n", ":2:6: gpus: 1.5 GPUs: ask for whole GPUs"},
		{FormatCSV, "submit,duration,gpu\n", ":1:17: gpu: unknown column"},
		{FormatCSV, "submit,gpus\n", ":1: duration: required column is missing"},
		{FormatCSV, "submit,duration\n10,0\n", ":2:4: duration: must be positive"},
		{FormatCSV, "submit,duration,cpu\n10,1,lots\n", `:2:6: cpu: "lots" is not a CPU quantity`},
		{FormatCSV, "submit,duration,tolerations\n10,1,a=b:Sometimes\n", `tolerations: toleration "a=b:Sometimes"`},
		{FormatCSV, "", ":1: the trace is empty"},
		{FormatJSONL, `{"submit": 1, "duration": 2}` + "\n" + `{"submit": 3, "duraton": 2}`, `:2: duraton: unknown field`},
		{FormatJSONL, `{"submit": "soon", "duration": 2}`, `:1: submit: expected float64, got a JSON string`},
		{FormatJSONL, `{"submit": 1, "duration": 2`, `:1: not a JSON object`},
		{FormatJSONL, `{"submit": 1}`, `:1: duration: is required`},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1000,10,1,x,,LS,Running,0,1,0\n", `:2:13: gpu_milli: "x" is not a non-negative whole number`},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1000\n", "creation_time: column is missing"},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1000,10,1,1000,,LS,Running,5,1,5\n", "deletion_time: is before creation_time"},
	}
	for _, c := range cases {
		err := firstError(t, c.format, c.body)
		require.Error(t, err, c.body)
		var ie *strict.InputError
		require.ErrorAs(t, err, &ie, c.body)
		require.Contains(t, err.Error(), c.want, c.body)
		require.True(t, strings.HasPrefix(err.Error(), ie.File), err.Error())
	}
}

func TestOpenbMapping(t *testing.T) {
	jobs, src := readAll(t, "../testdata/openb_pods.csv", FormatOpenb, TraceOptions{})
	require.Len(t, jobs, 6)
	require.Equal(t, cluster.JobSpec{Name: "p0", Queue: "LS", Submit: 0, Duration: 100_000, Replicas: 1,
		Pod: cluster.PodSpec{MilliCPU: 12000, MemoryMiB: 16384, GPUs: 1}}, jobs[0])
	// Runs from scheduled_time: 110 - 20 s; a 460-milli share of one GPU.
	require.Equal(t, int64(90_000), jobs[1].Duration)
	require.Equal(t, int32(460), jobs[1].Pod.GPUMilli)
	require.Equal(t, int32(0), jobs[1].Pod.GPUs)
	require.Equal(t, int32(0), jobs[2].Pod.GPUs+jobs[2].Pod.GPUMilli)
	require.Equal(t, []cluster.NodeSelectorTerm{{{Key: cluster.LabelGPUModel, Op: cluster.OpIn, Values: []string{"V100M16", "V100M32"}}}}, jobs[3].Constraints.Affinity)
	pending := jobs[4]
	require.Equal(t, int64(60_000), pending.Duration, "creation to deletion bounds its run")
	require.Equal(t, int64(100_000), pending.Deadline)
	require.NotZero(t, pending.Flags&cluster.FlagNoRecordedRun)
	require.Equal(t, int64(1), jobs[5].Duration, "zero-second pod gets 1 ms")
	notes := strings.Join(src.Notes(), "\n")
	require.Contains(t, notes, "6 pods read, 5 of them ask for GPUs")
	require.Contains(t, notes, "1 pods never ran")
	require.Contains(t, notes, "1 pods with a zero-second run")

	excl, src := readAll(t, "../testdata/openb_pods.csv", FormatOpenb, TraceOptions{PendingPods: PendingExclude})
	require.Len(t, excl, 5)
	require.Contains(t, strings.Join(src.Notes(), "\n"), "were excluded")
}

func TestOpenbNodesGroupIntoPools(t *testing.T) {
	pools, err := ReadOpenbNodes("../testdata/openb_nodes.csv")
	require.NoError(t, err)
	require.Equal(t, []cluster.PoolSpec{
		{Name: "g2-8gpu-96cpu-384gi", GPUModel: "G2", Nodes: 3, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 393216},
		{Name: "p100-2gpu-64cpu-256gi", GPUModel: "P100", Nodes: 1, GPUsPerNode: 2, MilliCPU: 64000, MemoryMiB: 262144},
		{Name: "cpu-0gpu-32cpu-128gi", Nodes: 1, MilliCPU: 32000, MemoryMiB: 131072},
	}, pools)

	// The real node list: 1,213 nodes and 6,212 GPUs (PROVENANCE.md).
	pools, err = ReadOpenbNodes("../../testdata/openb/openb_node_list_gpu_node.csv")
	require.NoError(t, err)
	nodes, gpus := 0, 0
	for _, p := range pools {
		nodes += p.Nodes
		gpus += p.Nodes * int(p.GPUsPerNode)
	}
	require.Equal(t, 1213, nodes)
	require.Equal(t, 6212, gpus)

	_, err = parseOpenbNodes("n.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,x,8,G2\n"))
	require.ErrorContains(t, err, `n.csv:2:10: memory_mib: "x" is not a non-negative whole number`)
}

func TestNativeMIGAndGPUMemoryColumns(t *testing.T) {
	p := tempFile(t, "mig.csv", "submit,duration,gpus,mig,gpu_memory\n0,60,2,1g.10gb,\n1,60,1,,8Gi\n")
	jobs, _ := readAll(t, p, FormatCSV, TraceOptions{})
	require.Equal(t, cluster.PodSpec{GPUs: 2, MIG: "1g.10gb"}, jobs[0].Pod)
	require.Equal(t, cluster.PodSpec{GPUs: 1, GPUMemMiB: 8192}, jobs[1].Pod)
	p = tempFile(t, "mig.jsonl", `{"submit": 0, "duration": 60, "gpus": 1, "mig": "3g.40gb", "gpuMemory": "20Gi"}`)
	jobs, _ = readAll(t, p, FormatJSONL, TraceOptions{})
	require.Equal(t, cluster.PodSpec{GPUs: 1, MIG: "3g.40gb", GPUMemMiB: 20480}, jobs[0].Pod)
	err := firstError(t, FormatCSV, "submit,duration,mig\n0,60,1g.10gb\n")
	require.ErrorContains(t, err, "mig: a pod asking for MIG instances asks for at least one in gpus")
}
