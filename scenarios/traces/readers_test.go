package traces

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Bad input to the trace readers (price and profile files: the
// scenarios package's readers_test.go): every error is an
// InputError naming the file, line and field, quoting at most MaxQuote
// bytes, and nothing is allocated in proportion to what the input claims.

func tempFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// readTraceFile reads a whole trace file; it returns the jobs and the
// first error.
func readTraceFile(path, format string) ([]cluster.JobSpec, error) {
	src, err := OpenTrace(path, format, TraceOptions{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var out []cluster.JobSpec
	for {
		var j cluster.JobSpec
		ok, err := src.Next(&j)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, j)
	}
}

// requireBadInput checks err is an InputError whose text starts with the
// file and contains want, and quotes no more than MaxQuote bytes.
func requireBadInput(t *testing.T, err error, file, want string) {
	t.Helper()
	require.Error(t, err, want)
	var ie *strict.InputError
	require.True(t, errors.As(err, &ie), "%T %v", err, err)
	require.Equal(t, 2, ie.ExitCode())
	require.True(t, strings.HasPrefix(err.Error(), file), "%q does not start with %s", err.Error(), file)
	require.Contains(t, err.Error(), want)
	require.Less(t, len(err.Error())-len(file), 600, "error too long: %s", err)
}

// allocated is the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Reproduction 1: quantities are bounded before they are converted, and
// refused with file:line:column: field.
func TestTraceQuantitiesAreBounded(t *testing.T) {
	for _, c := range []struct{ format, body, want string }{
		{FormatCSV, "name,submit,duration,gpus,cpu,memory\na,0,10,1,1e16,1e20\n", `:2:10: cpu: cpu "1e16" is more than any node holds (at most 4096 cores)`},
		{FormatCSV, "name,submit,duration,gpus,cpu\na,0,10,1,1e15\n", `:2:10: cpu: cpu "1e15" is more than any node holds`},
		{FormatCSV, "name,submit,duration,gpus,cpu\na,0,10,1,8Ei\n", `:2:10: cpu: cpu "8Ei" is more than any node holds`},
		{FormatCSV, "name,submit,duration,gpus,memory\na,0,10,1,1e20\n", `:2:10: memory: memory "1e20" is more than any node holds (at most 64 TiB)`},
		{FormatCSV, "name,submit,duration,gpus,memory\na,0,10,1,-1Gi\n", `:2:10: memory: memory "-1Gi" is negative`},
		{FormatCSV, "name,submit,duration,gpus,gpu_memory\na,0,10,1,1e20\n", `:2:10: gpu_memory: GPU memory "1e20" is more than any node holds`},
		{FormatCSV, "name,submit,duration,replicas\na,0,10,1000000000\n", `:2:8: replicas: "1000000000" is not a whole number in 1..100000`},
		{FormatCSV, "name,submit,duration,replicas\na,0,10,1e9\n", `:2:8: replicas: "1e9" is not a whole number in 1..100000`},
		{FormatCSV, "name,submit,duration,gpus\na,0,10,65\n", `:2:8: gpus: 65 GPUs is more than a node can have (64)`},
		{FormatCSV, "name,submit,duration\na,1e13,10\n", `:2:3: submit: "1e13" is out of range`},
		{FormatCSV, "name,submit,duration\na,0,1e300\n", `:2:5: duration: "1e300" is out of range`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "cpu": "8Ei"}`, `:1: cpu: cpu "8Ei" is more than any node holds`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "cpu": 1e15}`, `:1: cpu: cpu "1e15" is more than any node holds`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "memory": "1e20"}`, `:1: memory: memory "1e20" is more than any node holds`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "gpus": 1, "gpuMemory": "1Ei"}`, `:1: gpuMemory: GPU memory "1Ei" is more than any node holds`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "replicas": 1000000000}`, `:1: replicas: 1000000000 is not a whole number in 1..100000`},
		{FormatJSONL, `{"submit": 0, "duration": 1e300}`, `:1: duration: "1e+300" is out of range`},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,99999999999,1,1,1000,,LS,Running,0,1,0\n", `:2:3: cpu_milli: 99999999999 is more than 4096000`},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,99999999999,1,1000,,LS,Running,0,1,0\n", `:2:5: memory_mib: 99999999999 is more than`},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,1,1000,,LS,Running,9223372036854775,9223372036854775,\n", `:2:26: creation_time: 9223372036854775 is more than 9000000000000`},
		{FormatHelios, "job_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,8,1000000,1,2020-04-01 00:00:00,5\n", `:2:7: cpu_num: 1000000 CPUs over 1 pods is more than any node holds`},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,0,10,1e7,1,100\n", `:2:12: plan_cpu: "1e7" is not a number in 0..409600`},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,0,10,100,1e6,100\n", `:2:16: plan_mem: "1e6" is not a number in 0..65536`},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1e9,0,10,100,1,100\n", `:2:5: inst_num: "1e9" is not a number in 0..65536`},
		{FormatPhilly, "timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,1e9\n", `:2:23: num_gpus: "1e9" is not a whole number in 0..65536`},
	} {
		p := tempFile(t, "t."+c.format, c.body)
		_, err := readTraceFile(p, c.format)
		requireBadInput(t, err, p, c.want)
	}
	// Nodes: an openb node list and a PAI machine list.
	_, err := parseOpenbNodes("n.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,1e99,8,G2\n"))
	requireBadInput(t, err, "n.csv", `n.csv:2:10: memory_mib: "1e99" is not a non-negative whole number`)
	_, err = parsePAIMachines("m.csv", strings.NewReader("machine,gpu_type,cap_cpu,cap_mem,cap_gpu\nm,V100,100000,512,8\n"))
	requireBadInput(t, err, "m.csv", `m.csv:2:8: cap_cpu: "100000" is not a whole number in 0..4096`)
}

// Reproduction 2: devices, FIFOs and folders are refused before they are
// read, and no line is read past MaxLineBytes, in any reader.
func TestInputsAreRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	paths := []string{"/dev/zero", dir}
	if syscall.Mkfifo(fifo, 0o600) == nil {
		paths = append(paths, fifo)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		for _, format := range TraceFormats() {
			n := allocated(func() {
				_, err := readTraceFile(p, format)
				requireBadInput(t, err, p, p+": is ")
				require.Contains(t, err.Error(), "not a regular file")
			})
			require.Less(t, n, uint64(50<<20), "%s as %s", p, format)
		}
		_, err := ReadOpenbNodes(p)
		requireBadInput(t, err, p, "not a regular file")
		_, err = ReadOpenbPods(p)
		requireBadInput(t, err, p, "not a regular file")
		_, err = ReadPAIMachines(p)
		requireBadInput(t, err, p, "not a regular file")
		_, err = OpenTrace(tempFile(t, "tasks.csv", "job_name\n"), FormatPAI, TraceOptions{JobTable: p})
		requireBadInput(t, err, p, "not a regular file")
	}
}

func TestLongLinesAreRefused(t *testing.T) {
	long := strings.Repeat("9", strict.MaxLineBytes+10)
	cases := []struct{ format, body, want string }{
		{FormatCSV, "submit,duration\n0,1\n1," + long + "\n", ":3: the line is longer than 1 MiB"},
		{FormatCSV, long, ":1: the line is longer than 1 MiB"},
		{FormatCSV, "submit,duration\n0,\"" + strings.Repeat("1\n", strict.MaxLineBytes) + "\"\n", ": a record (a quoted field running over several lines) is longer than 1 MiB"},
		{FormatJSONL, `{"submit": 0, "duration": 1}` + "\n\n" + `{"submit": ` + long + "}\n", ":3: the line is longer than 1 MiB"},
		{FormatOpenb, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n" + long, ":2: the line is longer than 1 MiB"},
		{FormatPhilly, "timestamp,duration,num_gpus\n" + long, ":2: the line is longer than 1 MiB"},
		{FormatHelios, long, ":1: the line is longer than 1 MiB"},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\n" + long, ":2: the line is longer than 1 MiB"},
	}
	for _, c := range cases {
		p := tempFile(t, "long."+c.format, c.body)
		n := allocated(func() {
			_, err := readTraceFile(p, c.format)
			requireBadInput(t, err, p, c.want)
		})
		require.Less(t, n, uint64(50<<20), c.format)
	}
	// A Philly job log is one long line; one job of it is bounded instead.
	p := tempFile(t, "log.json", `[{"jobid": "`+strings.Repeat("x", maxJSONValueBytes+10)+`"}]`)
	n := allocated(func() {
		_, err := readTraceFile(p, FormatPhillyRaw)
		requireBadInput(t, err, p, "a job of the log is larger than 16 MiB")
	})
	require.Less(t, n, uint64(200<<20))

	p = tempFile(t, "rules.yaml", "a: ["+long+"]\n")
	_, err := ReadInput(p)
	requireBadInput(t, err, p, p+":1: the line is longer than 1 MiB")
}

// Reproduction 3: errors quote at most MaxQuote bytes of input.
func TestErrorsQuoteLittleInput(t *testing.T) {
	secret := strings.Repeat("supersecretpassword", 1000)
	p := tempFile(t, "creds", "AKIA"+strings.Repeat("K", 200)+",submit,duration\n")
	_, err := readTraceFile(p, FormatCSV)
	requireBadInput(t, err, p, p+":1:1: \"AKIA")
	require.Contains(t, err.Error(), "... (204 bytes): unknown column")

	for _, c := range []struct{ format, body, want string }{
		{FormatCSV, "submit,duration,cpu\n0,1," + strings.Repeat("x", 5000) + "\n", `is not a CPU quantity`},
		{FormatCSV, "submit,duration,node_selector\n0,1," + strings.Repeat("x", 3000) + "\n", `node_selector: node selector "xxx`},
		{FormatCSV, "submit,duration,name\n0,1," + strings.Repeat("x", 5000) + "\n", `name: "xxx`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "` + strings.Repeat("k", 3000) + `": 1}`, `unknown field`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "cpu": "` + strings.Repeat("9", 3000) + `x"}`, `:1: `},
		{FormatPhilly, "timestamp,duration,num_gpus\n" + strings.Repeat("t", 3000) + ",1,1\n", `timestamp: "ttt`},
		{FormatPhillyRaw, `[{"submitted_time": "` + strings.Repeat("y", 3000) + `"}]`, `[0].submitted_time: "yyy`},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,0,10,100,1," + strings.Repeat("g", 3000) + "\n", `plan_gpu: "ggg`},
	} {
		p := tempFile(t, "q."+c.format, c.body)
		_, err := readTraceFile(p, c.format)
		requireBadInput(t, err, p, c.want)
		require.Less(t, len(err.Error()), len(p)+400, err.Error())
	}
	require.Equal(t, "short", boundMessage("short"))
	b := boundMessage(`expected a mapping, got "` + secret + `" here`)
	require.Contains(t, b, `expected a mapping, got "supersecretpassword`)
	require.Contains(t, b, `... (19000 bytes) here`)
	require.Less(t, len(b), 200)
}

// Reproduction 4: a byte order mark before the header (or the first line)
// is dropped.
func TestByteOrderMarksAreDropped(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	for _, c := range []struct {
		format, body string
		jobs         int
	}{
		{FormatCSV, bom + "name,submit,duration\na,0,10\n", 1},
		{FormatCSV, bom + "# a comment\nname,submit,duration\na,0,10\n", 1},
		{FormatJSONL, bom + `{"submit": 0, "duration": 1}` + "\n", 1},
		{FormatOpenb, bom + "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\np,1,1,1,1000,0,1,0\n", 1},
		{FormatPhilly, bom + "timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,1\n", 1},
		{FormatHelios, bom + "job_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,8,4,1,2020-04-01 00:00:00,5\n", 1},
		{FormatPAI, bom + "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,0,10,100,1,100\n", 1},
		{FormatPhillyRaw, bom + `[{"submitted_time": "2017-10-03 00:00:00", "attempts": [{"start_time": "2017-10-03 00:00:00", "end_time": "2017-10-03 01:00:00"}]}]`, 1},
	} {
		p := tempFile(t, "bom."+c.format, c.body)
		jobs, err := readTraceFile(p, c.format)
		require.NoError(t, err, c.format)
		require.Len(t, jobs, c.jobs, c.format)
	}
}

// Reproduction 5: rows out of order within the reorder window replay as
// the sorted trace does; beyond it, the row is named.
func TestNativeTraceReorders(t *testing.T) {
	sorted := "name,submit,duration,gpus\na,0,10,1\nb,5,10,1\nc,5,20,2\nd,7,10,1\ne,9,10,1\n"
	shuffled := "name,submit,duration,gpus\nb,5,10,1\na,0,10,1\nc,5,20,2\ne,9,10,1\nd,7,10,1\n"
	want, err := readTraceFile(tempFile(t, "sorted.csv", sorted), FormatCSV)
	require.NoError(t, err)
	got, err := readTraceFile(tempFile(t, "shuffled.csv", shuffled), FormatCSV)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, []string{got[0].Name, got[1].Name, got[2].Name, got[3].Name, got[4].Name})
	require.Equal(t, int64(5000), got[1].Submit, "times are kept, not made relative to the first row")

	var js, jsShuffled strings.Builder
	for _, n := range []int{0, 5, 7, 9} {
		fmt.Fprintf(&js, `{"name": "j%d", "submit": %d, "duration": 1}`+"\n", n, n)
	}
	for _, n := range []int{5, 0, 9, 7} {
		fmt.Fprintf(&jsShuffled, `{"name": "j%d", "submit": %d, "duration": 1}`+"\n", n, n)
	}
	want, err = readTraceFile(tempFile(t, "sorted.jsonl", js.String()), FormatJSONL)
	require.NoError(t, err)
	got, err = readTraceFile(tempFile(t, "shuffled.jsonl", jsShuffled.String()), FormatJSONL)
	require.NoError(t, err)
	require.Equal(t, want, got)

	openb := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
	want, err = readTraceFile(tempFile(t, "sorted.openb", openb+"a,1,1,1,1000,3,9,3\nb,1,1,1,1000,4,9,4\n"), FormatOpenb)
	require.NoError(t, err)
	got, err = readTraceFile(tempFile(t, "shuffled.openb", openb+"b,1,1,1,1000,4,9,4\na,1,1,1,1000,3,9,3\n"), FormatOpenb)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(3000), got[0].Submit)

	// Later than the window: no longer refused; the trace is sorted
	// before replay, and the first job is the late row.
	var b bytes.Buffer
	b.WriteString("submit,duration\n100,1\n")
	for i := 0; i < ReorderWindow+1; i++ {
		b.WriteString("200,1\n")
	}
	b.WriteString("50,1\n")
	p := tempFile(t, "late.csv", b.String())
	got, err = readTraceFile(p, FormatCSV)
	require.NoError(t, err)
	require.Len(t, got, ReorderWindow+3)
	require.Equal(t, int64(50_000), got[0].Submit) // the late row, first once sorted
	require.Equal(t, int64(100_000), got[1].Submit)
}

// Reproduction 6: a trace with no jobs names the file and says why.
func TestEmptyTraceNamesTheFile(t *testing.T) {
	for _, c := range []struct{ format, body, want string }{
		{FormatCSV, "name,submit,duration\n", "the trace has a header row and no rows: no jobs to size a cluster for"},
		{FormatCSV, "# only a comment\nname,submit,duration\n# and another\n", "the trace has a header row and no rows"},
		{FormatJSONL, "\n# nothing\n", "the trace has no rows: no jobs to size a cluster for"},
		{FormatPhilly, "timestamp,duration,num_gpus\n", "the trace has a header row and no rows"},
		{FormatPAI, "job_name,task_name,inst_num,start_time,end_time,plan_cpu,plan_mem,plan_gpu\nj,t,1,,,100,1,100\n", "all 1 rows of the trace were set aside"},
	} {
		p := tempFile(t, "empty."+c.format, c.body)
		src, err := OpenTrace(p, c.format, TraceOptions{})
		require.NoError(t, err)
		_, _, err = DeriveCluster(src)
		src.Close()
		requireBadInput(t, err, p, p+": "+c.want)
	}
}

// Reproduction 7: a MIG profile no GPU has is refused with the known ones.
func TestUnknownMIGProfile(t *testing.T) {
	known := strings.Join(MIGProfileNames(), ", ")
	require.Contains(t, known, "1g.10gb")
	require.Contains(t, known, "7g.141gb")
	for _, c := range []struct{ format, body, want string }{
		{FormatCSV, "submit,duration,gpus,mig\n0,60,1,mig-9g.99gb\n", `:2:8: mig: "mig-9g.99gb" is not a MIG profile (known: ` + known + ")"},
		{FormatCSV, "submit,duration,gpus,mig\n0,60,1,nvidia.com/mig-1g.10gb\n", `mig: "nvidia.com/mig-1g.10gb" is not a MIG profile (write it as 1g.10gb)`},
		{FormatJSONL, `{"submit": 0, "duration": 1, "gpus": 1, "mig": "9g.99gb"}`, `:1: mig: "9g.99gb" is not a MIG profile (known: ` + known + ")"},
	} {
		p := tempFile(t, "mig."+c.format, c.body)
		_, err := readTraceFile(p, c.format)
		requireBadInput(t, err, p, c.want)
	}
}

func TestBoundedReader(t *testing.T) {
	// The byte order mark is dropped only at the start; short inputs pass.
	for _, in := range []string{"", "a", "ab", "abc", "\xef\xbb", "x\xef\xbb\xbf"} {
		var out bytes.Buffer
		_, err := out.ReadFrom(newBoundedReader(strings.NewReader(in)))
		require.NoError(t, err)
		require.Equal(t, in, out.String())
	}
	var out bytes.Buffer
	_, err := out.ReadFrom(newBoundedReader(strings.NewReader("\xef\xbb\xbfabc\n")))
	require.NoError(t, err)
	require.Equal(t, "abc\n", out.String())
	// A line of exactly MaxLineBytes is fine, one more byte is not.
	ok := strings.Repeat("a", strict.MaxLineBytes) + "\n" + strings.Repeat("b", strict.MaxLineBytes)
	out.Reset()
	_, err = out.ReadFrom(newBoundedReader(strings.NewReader(ok)))
	require.NoError(t, err)
	_, err = out.ReadFrom(newBoundedReader(strings.NewReader("x\n" + ok + "b")))
	var long *lineTooLong
	require.ErrorAs(t, err, &long)
	require.Equal(t, 3, long.line)
}
