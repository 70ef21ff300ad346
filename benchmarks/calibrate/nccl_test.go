package calibrate

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/models"
)

const ncclDir = "../../testdata/nccl"

func parseFile(t *testing.T, name string) *Run {
	t.Helper()
	f, err := os.Open(filepath.Join(ncclDir, name))
	require.NoError(t, err)
	defer f.Close()
	r, err := ParseOutput(name, f)
	require.NoError(t, err)
	return r
}

// Every shipped output, against values read off the files by hand.
func TestParseEveryFile(t *testing.T) {
	for _, c := range []struct {
		file                string
		rows, ranks, hosts  int
		first, last         int64
		lastTime, lastBusBW float64
		lastInBusBW, avg    float64
		skipped             int
		collective, version string
		wrongNA             bool
	}{
		{"a100_80gb_8gpu_single_proc_g8_to4G.txt", 30, 8, 1, 8, 4 << 30, 32336, 232.44, 231.59, 66.2058, 0, "", "", false},
		{"a100_80gb_8gpu_mpirun_np8_with_noise_lines.txt", 30, 8, 1, 8, 4 << 30, 32285, 232.81, 232.93, 72.7724, 2, "", "", false},
		{"a100_80gb_8gpu_nccltests_2.19.4_format.txt", 25, 8, 1, 8, 128 << 20, 1295.41, 181.32, 182.90, 34.9024, 0, "all_reduce", "2.19.4", false},
		{"h100_8gpu_single_node_nvls_issue290.txt", 6, 8, 1, 128 << 20, 4 << 30, 15870, 473.60, 476.53, 439.369, 0, "", "", false},
		{"h100_2node_16gpu_ib_ndr_default_issue290.txt", 11, 16, 2, 8 << 20, 8 << 30, 103530, 155.57, 155.56, 142.735, 0, "", "", true},
		{"h100_2node_16gpu_ib_ndr_ring_issue290.txt", 11, 16, 2, 8 << 20, 8 << 30, 179148, 89.90, 89.40, 85.5294, 0, "", "", true},
		{"h100_8gpu_nvls_json_v2.json", 6, 8, 1, 128 << 20, 4 << 30, 15870, 473.60, 476.53, 439.369, 0, "all_reduce", "", false},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := parseFile(t, c.file)
			require.Len(t, r.Points, c.rows)
			require.Len(t, r.Devices, c.ranks)
			require.Equal(t, c.hosts, r.Hosts())
			last := r.Points[len(r.Points)-1]
			require.Equal(t, [2]int64{c.first, c.last}, [2]int64{r.Points[0].Bytes, last.Bytes})
			require.Equal(t, [3]float64{c.lastTime, c.lastBusBW, c.lastInBusBW}, [3]float64{last.TimeUS, last.BusBWGBps, last.InBusBWGBp})
			require.Equal(t, c.skipped, r.Skipped, "MPI noise lines skipped")
			require.Equal(t, c.collective, r.Collective)
			require.Equal(t, c.version, r.Version)
			require.Equal(t, c.wrongNA, r.WrongNA)
			require.True(t, r.HasAvg)
			require.Equal(t, c.avg, r.AvgBusBW)
			// The footer is the mean busbw over every row, both columns.
			var sum float64
			for _, p := range r.Points {
				sum += p.BusBWGBps + p.InBusBWGBp
			}
			require.InDelta(t, c.avg, sum/float64(2*len(r.Points)), 0.002)
			for _, d := range r.Devices {
				require.Contains(t, d.Name, "NVIDIA")
			}
		})
	}
}

// Fitted bandwidth within 5% of the peak measured busbw on the A100 and
// H100 single-node files.
func TestFitNearPeak(t *testing.T) {
	for _, file := range []string{"a100_80gb_8gpu_single_proc_g8_to4G.txt", "a100_80gb_8gpu_mpirun_np8_with_noise_lines.txt", "h100_8gpu_single_node_nvls_issue290.txt"} {
		f, err := parseFile(t, file).Fabric(file)
		require.NoError(t, err)
		require.Equal(t, models.FabricNVLink, f.Kind)
		require.Equal(t, 8, f.Ranks)
		require.InEpsilon(t, f.PeakBusBWGBps, f.BusBWGBps, 0.05, file)
	}
	// Small messages set the latency: ~20-40 us on the A100 node.
	f, err := parseFile(t, "a100_80gb_8gpu_mpirun_np8_with_noise_lines.txt").Fabric("a")
	require.NoError(t, err)
	require.InDelta(t, 24, f.AlphaUS, 5)
	g, err := parseFile(t, "h100_2node_16gpu_ib_ndr_default_issue290.txt").Fabric("net")
	require.NoError(t, err)
	require.Equal(t, models.FabricNetwork, g.Kind)
	require.Equal(t, [2]int{16, 2}, [2]int{g.Ranks, g.Nodes})
}

// The built-in defaults are these files' fits.
func TestDefaultFabricsAreTheFits(t *testing.T) {
	d := models.DefaultFabrics()
	for name, file := range map[string]string{"a100-nvswitch": "a100_80gb_8gpu_single_proc_g8_to4G.txt", "h100-nvls": "h100_8gpu_single_node_nvls_issue290.txt", "ib-ndr-400": "h100_2node_16gpu_ib_ndr_default_issue290.txt"} {
		f, err := parseFile(t, file).Fabric(name)
		require.NoError(t, err)
		require.Equal(t, f.BusBWGBps, d[name].BusBWGBps, name)
		require.Equal(t, f.PeakBusBWGBps, d[name].PeakBusBWGBps, name)
		require.Equal(t, f.Kind, d[name].Kind, name)
		require.Equal(t, [2]int{f.Ranks, f.Nodes}, [2]int{d[name].Ranks, d[name].Nodes}, name)
	}
	require.Equal(t, d["a100-nvswitch"].AlphaUS, mustFab(t, "a100_80gb_8gpu_single_proc_g8_to4G.txt").AlphaUS)
}

func mustFab(t *testing.T, file string) models.Fabric {
	f, err := parseFile(t, file).Fabric(file)
	require.NoError(t, err)
	return f
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "x.txt: the file is empty"},
		{"# nThread 1\n# nothing else\n", "x.txt: no result rows"},
		{"  8  2  float  sum  -1  20.26  0.00  0.00  0  17.74  0.00  -3  0\n", "x.txt:1: in-place busbw: \"-3\" is not a non-negative number"},
		{"  16  4  float  sum  -1  1  0  0  0  1  0  0  0\n  8  2  float  sum  -1  1  0  0  0  1  0  0  0\n", "x.txt:2: size: 8 does not grow"},
		{"{\"results\": [{\"size\": 8, \"out_of_place\": {\"time\": \"nan\", \"alg_bw\": 0, \"bus_bw\": 0}}]}", "not nccl-tests JSON output"},
		// A line over 1 MiB names its line; a value is quoted to 80 bytes.
		{"# nccl-tests\n" + strings.Repeat("x", 1<<20+1) + "\n", "x.txt:2: the line is longer than 1 MiB"},
		{"  8  2  float  sum  -1  " + strings.Repeat("9", 500) + "x  0.00  0.00  0  17.74  0.00  0  0\n", `x.txt:1: out-of-place time: "99999`},
		{"\xef\xbb\xbf{\"results\": [{\"size\": -8}]}", "x.txt: results[0].size: -8 is not positive"},
		{"{\"results\": [{\"size\": \"" + strings.Repeat("s", 1000) + "\"}]}", "x.txt:1: results.size: not nccl-tests JSON output: expected int64, got a JSON string"},
		{"# Avg bus bandwidth : lots\n", "x.txt:1: Avg bus bandwidth: \"lots\" is not a non-negative number"},
	} {
		_, err := ParseOutput("x.txt", strings.NewReader(c.in))
		require.Error(t, err, c.in)
		require.Contains(t, err.Error(), c.want)
		var pe *ParseError
		require.True(t, errors.As(err, &pe))
		require.Less(t, len(err.Error()), 400, "the error quotes at most 80 bytes of input")
	}
}

// A device, a pipe or a folder is refused before anything is read.
func TestParseOutputRefusesNonRegularFiles(t *testing.T) {
	for _, p := range []string{"/dev/zero", t.TempDir()} {
		f, err := os.Open(p)
		if err != nil {
			t.Skip(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = ParseOutput(p, f)
		runtime.ReadMemStats(&after)
		f.Close()
		require.ErrorContains(t, err, p+": is not a regular file")
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(50<<20))
	}
}

func FuzzParseOutput(f *testing.F) {
	entries, _ := os.ReadDir(ncclDir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ncclDir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 3000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseOutput("fuzz", bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		for _, p := range r.Points {
			if p.Bytes <= 0 || math.IsNaN(p.TimeUS) || p.TimeUS < 0 {
				t.Fatalf("bad point %+v", p)
			}
		}
		_, _ = r.Fabric("fuzz") // may fail to fit; must not panic
	})
}
