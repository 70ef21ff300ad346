package traces

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// The fixtures in testdata are written by hand in each published schema;
// the expected jobs below are worked out from their rows.

func readTrace(t *testing.T, path, format string, opts TraceOptions) ([]cluster.JobSpec, []string) {
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
			break
		}
		require.NoError(t, j.Validate())
		out = append(out, j)
	}
	return out, src.Notes()
}

func gpuHoursOf(jobs []cluster.JobSpec) float64 {
	var h float64
	for _, j := range jobs {
		h += float64(j.Duration) / 3.6e6 * float64(j.Replicas) * float64(j.Pod.MilliGPUs()) / 1000
	}
	return h
}

const (
	sec  = 1000
	mins = 60 * sec
	hour = 60 * mins
)

func TestPhillyProcessed(t *testing.T) {
	jobs, notes := readTrace(t, "../testdata/philly.csv", FormatPhilly, TraceOptions{})
	require.Len(t, jobs, 4)
	// The third row is 12 s early: the reorder buffer puts it second.
	require.Equal(t, cluster.JobSpec{Name: "philly-1", Queue: "vc1", Submit: 0, Duration: hour, Replicas: 1, Pod: cluster.PodSpec{GPUs: 1}}, jobs[0])
	require.Equal(t, cluster.JobSpec{Name: "philly-3", Queue: "vc1", Submit: 2 * sec, Duration: mins, Replicas: 2, Pod: cluster.PodSpec{GPUs: 6}}, jobs[1], "12 GPUs: 2 pods of 6")
	require.Equal(t, cluster.JobSpec{Name: "philly-2", Queue: "vc2", Submit: 14 * sec, Duration: 2 * hour, Replicas: 2, Pod: cluster.PodSpec{GPUs: 8}}, jobs[2])
	require.Equal(t, int64(7*mins+4*sec), jobs[3].Submit)
	require.Equal(t, int64(1), jobs[3].Duration, "zero duration: 1 ms")
	// 1 + 12 x 1/60 + 16 x 2 + 4 x ~0 GPU-hours.
	require.InDelta(t, 33.2, gpuHoursOf(jobs), 1e-4)
	require.Contains(t, strings.Join(notes, "\n"), "1 jobs with a zero duration were given 1 ms")
}

func TestHelios(t *testing.T) {
	jobs, notes := readTrace(t, "../testdata/helios.csv", FormatHelios, TraceOptions{})
	require.Len(t, jobs, 4)
	require.Equal(t, cluster.JobSpec{Name: "1001", Queue: "vcA", Submit: 0, Duration: hour, Replicas: 1, Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 32000}}, jobs[0])
	require.Equal(t, cluster.JobSpec{Name: "1002", Queue: "vcB", Submit: 53 * sec, Duration: 30 * mins, Replicas: 2, Pod: cluster.PodSpec{GPUs: 8, MilliCPU: 32000}}, jobs[1])
	require.Equal(t, cluster.JobSpec{Name: "1003", Queue: "vcA", Submit: 113 * sec, Duration: 1, Replicas: 1, Pod: cluster.PodSpec{MilliCPU: 4000}}, jobs[2], "a CPU job")
	require.Equal(t, cluster.JobSpec{Name: "1004", Queue: "vcB", Submit: 173 * sec, Duration: 2 * hour, Replicas: 3, Pod: cluster.PodSpec{GPUs: 4, MilliCPU: 8000}}, jobs[3], "12 GPUs on 3 nodes")
	require.InDelta(t, 8+16*0.5+12*2, gpuHoursOf(jobs), 1e-9)
	require.Contains(t, strings.Join(notes, "\n"), "job states in the source: CANCELLED 1, COMPLETED 2, FAILED 1")
}

func TestPhillyRaw(t *testing.T) {
	jobs, notes := readTrace(t, "../testdata/philly_raw.json", FormatPhillyRaw, TraceOptions{})
	require.Len(t, jobs, 2)
	// application_2 was submitted first; its two attempts ran 10 + 20 min.
	require.Equal(t, cluster.JobSpec{Name: "application_2", Queue: "vc2", Submit: 0, Duration: 30 * mins, Replicas: 2, Pod: cluster.PodSpec{GPUs: 8}}, jobs[0])
	require.Equal(t, cluster.JobSpec{Name: "application_1", Queue: "vc1", Submit: 2*mins + 56*sec, Duration: hour, Replicas: 1, Pod: cluster.PodSpec{GPUs: 2}}, jobs[1])
	require.InDelta(t, 16*0.5+2*1, gpuHoursOf(jobs), 1e-9)
	require.Contains(t, strings.Join(notes, "\n"), "1 jobs with no attempt that started and ended were set aside")
}

func TestPAI(t *testing.T) {
	jobs, notes := readTrace(t, "../testdata/pai_task_table.csv", FormatPAI, TraceOptions{JobTable: "../testdata/pai_job_table.csv"})
	require.Len(t, jobs, 4, "j3 never ended")
	require.Equal(t, "j2/tensorflow", jobs[0].Name)
	require.Equal(t, cluster.JobSpec{Name: "j2/tensorflow", Queue: "userB", Submit: 0, Duration: 30 * mins, Replicas: 1,
		Pod: cluster.PodSpec{GPUMilli: 500, MilliCPU: 4000, MemoryMiB: 16384}, Constraints: jobs[0].Constraints}, jobs[0])
	require.Equal(t, []string{"T4"}, jobs[0].Constraints.Affinity[0][0].Values)
	require.Equal(t, cluster.JobSpec{Name: "j1/worker", Queue: "userA", Submit: 500 * sec, Duration: hour, Replicas: 2,
		Pod: cluster.PodSpec{GPUs: 1, MilliCPU: 6000, MemoryMiB: 30000}, Constraints: jobs[1].Constraints}, jobs[1])
	require.Equal(t, cluster.JobSpec{Name: "j1/ps", Queue: "userA", Submit: 500 * sec, Duration: hour, Replicas: 1,
		Pod: cluster.PodSpec{MilliCPU: 2000, MemoryMiB: 10240}}, jobs[2], "no GPU, no affinity")
	require.Equal(t, int32(3), jobs[3].Pod.GPUs, "250% of a GPU: 3 GPUs")
	require.Equal(t, "pai", jobs[3].Queue, "j4 is not in the job table")
	require.InDelta(t, 0.5*0.5+2*1+3.0/6, gpuHoursOf(jobs), 1e-9)
	n := strings.Join(notes, "\n")
	require.Contains(t, n, "1 tasks without both a start and an end time were set aside")
	require.Contains(t, n, "1 tasks asked for more than one GPU but not a whole number; rounded up")

	pools, err := ReadPAIMachines("../testdata/pai_machine_spec.csv")
	require.NoError(t, err)
	require.Equal(t, []cluster.PoolSpec{
		{Name: "pai-v100-0", GPUModel: "V100", Nodes: 2, GPUsPerNode: 8, MilliCPU: 96000, MemoryMiB: 512 << 10},
		{Name: "pai-t4-1", GPUModel: "T4", Nodes: 1, GPUsPerNode: 2, MilliCPU: 64000, MemoryMiB: 256 << 10},
		{Name: "pai-p100-2", GPUModel: "P100", Nodes: 1, GPUsPerNode: 4, MilliCPU: 64000, MemoryMiB: 512 << 10},
		{Name: "pai-cpu-3", Nodes: 1, MilliCPU: 96000, MemoryMiB: 512 << 10},
	}, pools)
}

func TestNativeAlias(t *testing.T) {
	a, _ := readTrace(t, "../testdata/native.csv", FormatNative, TraceOptions{})
	b, _ := readTrace(t, "../testdata/native.csv", FormatCSV, TraceOptions{})
	require.Equal(t, b, a)
	c, _ := readTrace(t, "../testdata/native.jsonl", FormatNative, TraceOptions{})
	d, _ := readTrace(t, "../testdata/native.jsonl", FormatJSONL, TraceOptions{})
	require.Equal(t, d, c)
}

func TestPublicTraceErrors(t *testing.T) {
	for _, c := range []struct{ format, body, want string }{
		{FormatPhilly, "timestamp,duration,num_gpus\n2017-10-03,1,1\n", `p:2:1: timestamp: "2017-10-03" is not a time like 2017-10-03 04:52:56`},
		{FormatPhilly, "timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,1.5\n", `p:2:23: num_gpus: "1.5" is not a whole number`},
		{FormatPhilly, "timestamp,duration\n", "num_gpus: required Philly column is missing"},
		{FormatHelios, "job_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,8,4,1,2020-04-01 00:00:00,-5\n", `p:2:31: duration: "-5" is negative`},
		{FormatPhillyRaw, `{"jobs": []}`, "the job log must be a JSON array of jobs"},
		{FormatPhillyRaw, `[{"submitted_time": "yesterday", "attempts": []}]`, `[0].submitted_time: "yesterday" is not a time`},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,0,10,100,1,-3\n", `p:2:18: plan_gpu: "-3" is not a number`},
	} {
		src, err := openTraceReader("p", c.format, strings.NewReader(c.body), TraceOptions{})
		if err == nil {
			var j cluster.JobSpec
			for ok := true; ok && err == nil; {
				ok, err = src.Next(&j)
			}
		}
		require.Error(t, err, c.body)
		require.Contains(t, err.Error(), c.want)
		requireInputError(t, err)
	}
}

// A trace more out of order than the reorder window is an error naming
// the row.
func TestReorderWindow(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("timestamp,duration,num_gpus\n2017-10-03 05:00:00,1,1\n")
	for i := 0; i < ReorderWindow+1; i++ {
		b.WriteString("2017-10-03 06:00:00,1,1\n")
	}
	b.WriteString("2017-10-03 04:00:00,1,1\n")
	src, err := openTraceReader("late.csv", FormatPhilly, &b, TraceOptions{})
	require.NoError(t, err)
	var j cluster.JobSpec
	for ok := true; ok && err == nil; {
		ok, err = src.Next(&j)
	}
	require.ErrorContains(t, err, "late.csv:4100: timestamp: is 2h0m0s before a job already replayed")
}

// TestSplitPods: GPUs split evenly over the fewest pods that respect the
// node count and the GPUs per node; a job on more nodes than GPUs (a
// Helios row the fuzzer found, which used to loop for ever) gets a pod per
// GPU.
func TestSplitPods(t *testing.T) {
	for _, c := range []struct{ n, nodes, per, pods, each int64 }{
		{16, 1, 8, 2, 8},
		{12, 1, 8, 2, 6},
		{6, 4, 8, 6, 1},
		{8, 2, 8, 2, 4},
		{2, 3, 8, 2, 1},
		{0, 3, 8, 3, 0},
	} {
		pods, each := splitPods(c.n, c.nodes, c.per)
		require.Equal(t, [2]int64{c.pods, c.each}, [2]int64{pods, each}, "%d GPUs over %d nodes", c.n, c.nodes)
	}
}
