package traces

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Every parser must turn any input into jobs that validate or an
// *InputError, never a panic. The seed corpora run in make test.

func requireInputError(t *testing.T, err error) {
	t.Helper()
	var ie *strict.InputError
	if err != nil && !errors.As(err, &ie) {
		t.Fatalf("error is not an strict.InputError: %T %v", err, err)
	}
	if ie != nil && ie.File == "" {
		t.Fatalf("error names no file: %v", err)
	}
}

func drain(t *testing.T, src interface {
	Next(*cluster.JobSpec) (bool, error)
}) {
	t.Helper()
	for i := 0; i < 1<<16; i++ {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		if err != nil {
			requireInputError(t, err)
			return
		}
		if !ok {
			return
		}
		if err := j.Validate(); err != nil {
			t.Fatalf("parser produced an invalid job %+v: %v", j, err)
		}
	}
}

func seed(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func nop() error { return nil }

func FuzzNativeCSV(f *testing.F) {
	seed(f, "../testdata/native.csv")
	f.Add([]byte("submit,duration\n1,2\n0,1\n"))
	f.Add([]byte("submit,duration,gpus,cpu,memory,tolerations,node_selector\n1,2,0.5,1,1Gi,a:NoSchedule,b=c\n"))
	f.Add([]byte("submit,duration\n\"1,2\n"))
	// Bad input of issue 13: a byte order mark, a line over MaxLineBytes,
	// a quoted field running over lines, quantities past any node, a MIG
	// profile no GPU has, rows a little out of order.
	f.Add([]byte("\xef\xbb\xbfname,submit,duration\na,0,10\n"))
	f.Add([]byte("submit,duration\n0," + strings.Repeat("9", strict.MaxLineBytes+1) + "\n"))
	f.Add([]byte("submit,duration,name\n0,1,\"" + strings.Repeat("x\n", 1000) + "\"\n"))
	f.Add([]byte("name,submit,duration,gpus,cpu,memory\na,0,10,1,1e16,1e20\n"))
	f.Add([]byte("name,submit,duration,gpus,cpu,gpu_memory,replicas\na,0,10,1,8Ei,8Ei,1000000000\n"))
	f.Add([]byte("submit,duration,gpus,mig\n0,60,1,mig-9g.99gb\n"))
	f.Add([]byte("name,submit,duration\nb,5,10\na,0,10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := newCSVSource("fuzz.csv", bytes.NewReader(data), nop)
		if err != nil {
			requireInputError(t, err)
			return
		}
		drain(t, src)
	})
}

func FuzzNativeJSONL(f *testing.F) {
	seed(f, "../testdata/native.jsonl")
	f.Add([]byte(`{"submit": 1e300, "duration": -1}`))
	f.Add([]byte(`{"submit": 1, "duration": 1, "cpu": "1e9999"}`))
	f.Add([]byte("\xef\xbb\xbf" + `{"submit": 1, "duration": 1}`))
	f.Add([]byte(`{"submit": 1, "duration": 1, "name": "` + strings.Repeat("x", strict.MaxLineBytes) + `"}`))
	f.Add([]byte(`{"submit": 1, "duration": 1, "cpu": "8Ei", "memory": 1e20, "gpuMemory": "1Ei", "replicas": 1000000000}`))
	f.Add([]byte(`{"submit": 5, "duration": 1}` + "\n" + `{"submit": 1, "duration": 1, "gpus": 1, "mig": "9g.99gb"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		drain(t, newJSONLSource("fuzz.jsonl", bytes.NewReader(data), nop))
	})
}

func FuzzOpenbPods(f *testing.F) {
	seed(f, "../testdata/openb_pods.csv")
	f.Add([]byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,99,1000,,LS,Running,0,1,0\n"))
	f.Add([]byte("\xef\xbb\xbfname,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,99999999999,99999999999,1,1000,9223372036854775,9223372036854775,\n"))
	f.Add([]byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\nb,1,1,1,1000,4,9,4\na,1,1,1,1000,3,9,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := newOpenbSource("fuzz.csv", bytes.NewReader(data), nop, TraceOptions{})
		if err != nil {
			requireInputError(t, err)
			return
		}
		drain(t, src)
	})
}

func FuzzOpenbNodes(f *testing.F) {
	seed(f, "../testdata/openb_nodes.csv")
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,65,X\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pools, err := parseOpenbNodes("fuzz.csv", io.Reader(bytes.NewReader(data)))
		requireInputError(t, err)
		for _, p := range pools {
			if err := p.Validate(); err != nil {
				t.Fatalf("invalid pool %+v: %v", p, err)
			}
		}
	})
}

func fuzzTrace(f *testing.F, format string, seeds ...string) {
	seed(f, seeds...)
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := openTraceReader("fuzz", format, bytes.NewReader(data), TraceOptions{})
		if err != nil {
			requireInputError(t, err)
			return
		}
		drain(t, src)
	})
}

func FuzzPhilly(f *testing.F) {
	f.Add([]byte("timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,65537\n"))
	f.Add([]byte("\xef\xbb\xbftimestamp,duration,num_gpus\n" + strings.Repeat("2", strict.MaxLineBytes+1)))
	fuzzTrace(f, FormatPhilly, "../testdata/philly.csv")
}

func FuzzHelios(f *testing.F) {
	f.Add([]byte("job_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,7,3,5,2020-04-01 00:00:00,5\n"))
	f.Add([]byte("\xef\xbb\xbfjob_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,8,1000000,1,2020-04-01 00:00:00,1e300\n"))
	fuzzTrace(f, FormatHelios, "../testdata/helios.csv")
}

func FuzzPhillyRaw(f *testing.F) {
	f.Add([]byte(`[{"submitted_time": "2017-10-03 00:00:00", "attempts": [{"start_time": "2017-10-03 00:00:00", "end_time": "2017-10-02 00:00:00"}]}]`))
	f.Add([]byte("\xef\xbb\xbf" + `[{"submitted_time": "2017-10-03 00:00:00", "attempts": [{"start_time": "0001-01-01 00:00:00", "end_time": "9999-12-31 23:59:59"}, {"start_time": "0001-01-01 00:00:00", "end_time": "9999-12-31 23:59:59"}]}]`))
	fuzzTrace(f, FormatPhillyRaw, "../testdata/philly_raw.json")
}

func FuzzPAITasks(f *testing.F) {
	f.Add([]byte("\xef\xbb\xbfjob_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1e9,0,10,1e7,1e6,100\n"))
	fuzzTrace(f, FormatPAI, "../testdata/pai_task_table.csv")
}

func FuzzPAIMachines(f *testing.F) {
	seed(f, "../testdata/pai_machine_spec.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		pools, err := parsePAIMachines("fuzz.csv", bytes.NewReader(data))
		requireInputError(t, err)
		for _, p := range pools {
			if err := p.Validate(); err != nil {
				t.Fatalf("invalid pool %+v: %v", p, err)
			}
		}
	})
}
