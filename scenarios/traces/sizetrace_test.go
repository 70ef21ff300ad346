package traces

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// sizeByReader is SizeTrace's answer from the reader: OpenTraceSizing and
// DeriveCluster.
func sizeByReader(path, format string, opts TraceOptions) ([]cluster.PoolSpec, []string, error) {
	src, err := OpenTraceSizing(path, format, opts)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	return DeriveCluster(src)
}

// sameSizing fails unless SizeTrace gives what the reader gives (pools,
// notes, or the same error), and, when its light pass read the file, the
// order csvOrder finds. It returns the scan.
func sameSizing(t *testing.T, path, format string, opts TraceOptions) *TraceScan {
	t.Helper()
	pools, notes, werr := sizeByReader(path, format, opts)
	ticks := 0
	sc, err := SizeTrace(path, format, opts, func(n int) { ticks++; require.Equal(t, ticks*4096, n) })
	if werr != nil {
		require.Error(t, err)
		require.Equal(t, werr.Error(), err.Error())
		return nil
	}
	require.NoError(t, err)
	require.Equal(t, pools, sc.Pools)
	require.Equal(t, notes, sc.Notes)
	if sc.known {
		order, ok := csvOrder(path, format)
		require.True(t, ok)
		require.Equal(t, order, sc.order, "order")
	}
	return sc
}

func TestSizeTraceAsTheReader(t *testing.T) {
	dir := t.TempDir()
	sorted, late := filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "late.csv")
	writePhilly(t, sorted, 30000, false)
	writePhilly(t, late, 30000, true)
	for _, c := range []struct {
		path, format string
		order        traceOrder
	}{
		{sorted, FormatPhilly, orderSorted},
		{late, FormatPhilly, orderLate},
		{"../testdata/philly.csv", FormatPhilly, -1},
		{"../testdata/helios.csv", FormatHelios, -1},
	} {
		sc := sameSizing(t, c.path, c.format, TraceOptions{})
		require.True(t, sc.known, "%s: read by the light pass", c.path)
		if c.order >= 0 {
			require.Equal(t, c.order, sc.order, c.path)
		}
		sameSizing(t, c.path, c.format, TraceOptions{GPUsPerNode: 4})
	}

	// Files the light pass leaves to the reader, and files it reads:
	// each sized as the reader sizes it, or refused with its error.
	philly := "timestamp,duration,num_gpus,gpu_time,cluster\n"
	helios := "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
	for i, text := range []string{
		philly + "2017-10-03 00:00:00,10,16,160,vc1\n2017-10-03 00:00:05,0,3,0,vc2\n",
		"\xef\xbb\xbf# a comment\n\n" + philly + "2017-10-03 00:00:00 , 10 ,16,160,vc1\r\n#2017\r\n\r\n2017-10-03 00:00:05,0,,0,vc2\r",
		philly + "2017-10-03 00:00:00,10,16,160,\"vc1\"\n",    // a quote: the reader
		philly + "2017-10-03 00:00:00,10,16,160\n",            // a field short
		philly + "2017-10-03 00:00:00,10,16,160,vc1\n\r\n \n", // a blank row
		philly + "2017-10-03 00:00:00.5,10,1e1,160,vc1\n",     // fractional seconds, 1e1 GPUs
		philly + "2017-02-29 00:00:00,10,16,160,vc1\n",        // no such day
		philly + "2017-10-03 00:00:00,-1,16,160,vc1\n",        // negative duration
		philly + "2017-10-03 00:00:00,10,65537,160,vc1\n",     // too many GPUs
		philly + "2017-10-03 00:00:00,10,2.5,160,vc1\n",       // not whole
		philly, // no rows
		"timestamp,duration,gpu_time,cluster\n2017-10-03 00:00:00,1,1,a\n",  // no num_gpus
		"timestamp,duration,num_gpus,duration\n2017-10-03 00:00:00,1,1,1\n", // duration twice
		helios + "1,u,vc1,8,16,2,COMPLETED,2020-04-01 00:00:00,,,3600,0\n2,u,vc2,0,4,0,FAILED,2020-04-01 00:00:01,,,0,0\n",
		helios + "1,u,vc1,8,2000000,1,COMPLETED,2020-04-01 00:00:00,,,3600,0\n", // CPUs over the bound
		helios + "1,u,vc1,8,1000000,1,COMPLETED,2020-04-01 00:00:00,,,3600,0\n", // more than a pod may have
	} {
		for _, format := range []string{FormatPhilly, FormatHelios} {
			p := filepath.Join(dir, fmt.Sprintf("case%d-%s.csv", i, format))
			require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
			t.Run(fmt.Sprintf("%d-%s", i, format), func(t *testing.T) {
				sc := sameSizing(t, p, format, TraceOptions{})
				light := ((i <= 1 || i == 5) && format == FormatPhilly) || (i == 13 && format == FormatHelios)
				require.Equal(t, light, sc != nil && sc.known, "read by the light pass")
			})
		}
	}
}

func TestOpenTraceTakesTheScansOrder(t *testing.T) {
	// A scan of a late trace says it must be sorted: OpenTrace sorts it
	// with no check of its own; a scan of another file is not taken.
	dir := t.TempDir()
	sorted, late := filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "late.csv")
	writePhilly(t, sorted, 12000, false)
	writePhilly(t, late, 12000, true)
	sc, err := SizeTrace(late, FormatPhilly, TraceOptions{}, nil)
	require.NoError(t, err)
	require.True(t, sc.known)
	require.Equal(t, orderLate, sc.order)
	src, err := OpenTrace(late, FormatPhilly, TraceOptions{Scan: sc})
	require.NoError(t, err)
	_, isSorted := src.(*sortedTrace)
	require.True(t, isSorted)
	require.NoError(t, src.Close())
	// The scan of the late file, given with the sorted one: ignored.
	src, err = OpenTrace(sorted, FormatPhilly, TraceOptions{Scan: sc})
	require.NoError(t, err)
	st, ok := src.(*streamTrace)
	require.True(t, ok)
	require.True(t, st.ro.passThrough)
	require.NoError(t, src.Close())
	// The sorted file's own scan: handed out as read.
	sc, err = SizeTrace(sorted, FormatPhilly, TraceOptions{}, nil)
	require.NoError(t, err)
	src, err = OpenTrace(sorted, FormatPhilly, TraceOptions{Scan: sc})
	require.NoError(t, err)
	require.True(t, src.(*streamTrace).ro.passThrough)
	require.NoError(t, src.Close())
	require.False(t, strings.Contains(sorted, "late"))
}

func FuzzSizeTrace(f *testing.F) {
	seed(f, "../testdata/philly.csv", "../testdata/helios.csv")
	f.Add([]byte("timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,65537\n"))
	f.Add([]byte("\xef\xbb\xbfjob_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n1,a,7,3,5,2020-04-01 00:00:00,5\n"))
	f.Add([]byte("timestamp,duration,num_gpus\n2017-10-03 00:00:00,1,8\r\n2017-10-03 00:00:01,1,8\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The light pass, where it reads the trace, sizes it as the
		// reader does, and finds the order the reader's rows have.
		for _, format := range []string{FormatPhilly, FormatHelios} {
			names, _ := lightColumns(format)
			sc, ok, _ := lightSizeFrom("fuzz", format, bytes.NewReader(data), names, TraceOptions{}, nil, false)
			if !ok {
				continue
			}
			// Streaming, it finds the same, or stops at a job out of order.
			ssc, sok, disorder := lightSizeFrom("fuzz", format, bytes.NewReader(data), names, TraceOptions{}, nil, true)
			if !disorder {
				require.True(t, sok)
				require.Equal(t, sc, ssc)
			}
			src, err := openTraceReader("fuzz", format, bytes.NewReader(data), TraceOptions{})
			require.NoError(t, err)
			pools, notes, err := DeriveCluster(forSizing(src))
			require.NoError(t, err)
			require.Equal(t, pools, sc.Pools)
			require.Equal(t, notes, sc.Notes)
			src, err = openTraceReader("fuzz", format, bytes.NewReader(data), TraceOptions{})
			require.NoError(t, err)
			require.Equal(t, sourceOrder(src), sc.order)
		}
	})
}

// writeNative writes n native jobs in two GPU models (every third job on
// H100s, by the gpu_model column), 1 to 8 GPUs and 1 to 4 replicas
// each, submitted 0 to 4 s apart (ties included), running 1 s to 3 h; with
// late, a tenth of each model's rows come 10 to 1,000 s early.
func writeNative(t *testing.T, path string, n int, late bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(34, uint64(n)))
	var b strings.Builder
	b.WriteString("name,queue,submit,duration,replicas,gpus,cpu,memory,gpu_model\n")
	at := 0.0
	for i := range n {
		at += float64(r.IntN(4001)) / 1000
		submit := at
		if late && r.IntN(10) == 0 {
			submit = max(0, at-10-float64(r.IntN(991)))
		}
		model := ""
		if i%3 == 0 {
			model = "H100"
		}
		fmt.Fprintf(&b, "j%d,q,%.3f,%d,%d,%d,%d,%dGi,%s\n", i, submit, 1+r.IntN(3*3600), 1+r.IntN(4), 1+r.IntN(8), 1+r.IntN(32), 1+r.IntN(256), model)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// A native trace is sized by its reader, the jobs swept as they come when
// each model's come in order (a sizer that streams keeps none of them),
// and sized again keeping them when they do not: the same cluster as
// DeriveCluster's, which keeps and sorts every job.
func TestSizeTraceStreamsSortedJobs(t *testing.T) {
	dir := t.TempDir()
	sorted, late := filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "late.csv")
	writeNative(t, sorted, 20000, false)
	writeNative(t, late, 20000, true)
	for _, path := range []string{sorted, late} {
		sc := sameSizing(t, path, FormatNative, TraceOptions{})
		require.Len(t, sc.Pools, 2, path)
	}

	src, err := OpenTraceSizing(sorted, FormatNative, TraceOptions{})
	require.NoError(t, err)
	z := &clusterSizer{stream: true}
	pools, _, err := deriveCluster(src, z)
	require.NoError(t, err)
	require.NoError(t, src.Close())
	require.False(t, z.disorder)
	want, _, err := sizeByReader(sorted, FormatNative, TraceOptions{})
	require.NoError(t, err)
	require.Equal(t, want, pools)
	jobs := 0
	for _, a := range z.pools {
		require.Zero(t, a.jobs.n, "jobs kept")
		jobs += a.n
	}
	require.Equal(t, 20000, jobs)

	src, err = OpenTraceSizing(late, FormatNative, TraceOptions{})
	require.NoError(t, err)
	z = &clusterSizer{stream: true}
	_, _, err = deriveCluster(src, z)
	require.NoError(t, err)
	require.NoError(t, src.Close())
	require.True(t, z.disorder, "a job out of order stops the streaming sizer")
}
