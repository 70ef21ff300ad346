package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"gpuplan.dev/gpuplan/models"
)

// Options say how to run nccl-tests.
type Options struct {
	// Dir holds the nccl-tests binaries (all_reduce_perf, ...); empty:
	// look on PATH.
	Dir string
	// GPUs is -g, the GPUs one process drives (0: every GPU found).
	GPUs int
	// MinBytes and MaxBytes bound the size sweep (-b, -e; factor 2).
	MinBytes, MaxBytes string
	// Timeout limits each run.
	Timeout time.Duration
	// Ring adds runs with NCCL_ALGO=RING.
	Ring bool
}

// Collectives the runner tries, all_reduce first.
func Collectives() []string {
	return []string{models.AllReduce, models.AllGather, models.ReduceScatter}
}

// RunNCCL runs the nccl-tests binaries it finds and parses their output.
// A missing or failing binary is a note, not an error; only finding none
// at all is.
func RunNCCL(ctx context.Context, o Options, log io.Writer) ([]*Run, []string, error) {
	var runs []*Run
	var notes []string
	found := 0
	for _, coll := range Collectives() {
		bin := coll + "_perf"
		path, err := findBinary(o.Dir, bin)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not found (%v)", bin, err))
			continue
		}
		found++
		algos := []string{""}
		if o.Ring {
			algos = append(algos, "RING")
		}
		for _, algo := range algos {
			r, err := runOne(ctx, path, o, algo, log)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s%s: %v", bin, ringSuffix(algo), err))
				continue
			}
			if r.Collective == "" {
				r.Collective = coll
			}
			if algo != "" {
				r.File += " (NCCL_ALGO=" + algo + ")"
			}
			runs = append(runs, r)
		}
	}
	if found == 0 {
		where := "PATH"
		if o.Dir != "" {
			where = o.Dir
		}
		return nil, notes, fmt.Errorf("no nccl-tests binary (all_reduce_perf, all_gather_perf, reduce_scatter_perf) in %s: build NVIDIA/nccl-tests and give --nccl-tests DIR", where)
	}
	return runs, notes, nil
}

func ringSuffix(algo string) string {
	if algo == "" {
		return ""
	}
	return " with NCCL_ALGO=" + algo
}

func findBinary(dir, name string) (string, error) {
	if dir == "" {
		return exec.LookPath(name)
	}
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", p)
	}
	return p, nil
}

func runOne(ctx context.Context, path string, o Options, algo string, log io.Writer) (*Run, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	minB, maxB := o.MinBytes, o.MaxBytes
	if minB == "" {
		minB = "8"
	}
	if maxB == "" {
		maxB = "4G"
	}
	args := []string{"-b", minB, "-e", maxB, "-f", "2"}
	if o.GPUs > 0 {
		args = append(args, "-g", strconv.Itoa(o.GPUs))
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = os.Environ()
	if algo != "" {
		cmd.Env = append(cmd.Env, "NCCL_ALGO="+algo)
	}
	cmd.WaitDelay = 5 * time.Second // children (mpirun's) may hold the pipes open
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if log != nil {
		fmt.Fprintf(log, "running %s %s%s\n", path, strings.Join(args, " "), ringSuffix(algo))
	}
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("stopped after the %s limit", timeout)
	}
	if err != nil {
		tail := strings.TrimSpace(errOut.String())
		if len(tail) > 400 {
			tail = "..." + tail[len(tail)-400:]
		}
		return nil, fmt.Errorf("failed: %v %s", err, tail)
	}
	return ParseOutput(filepath.Base(path), &out)
}

// BuildProfile fits every run into a fabric of the profile. Fabrics are
// named by kind (nvlink, pcie, network), then collective when not
// all-reduce, then -ring for NCCL_ALGO=RING runs.
func BuildProfile(node *models.NodeFacts, runs []*Run, notes []string) (*models.CalibrationProfile, error) {
	p := &models.CalibrationProfile{APIVersion: models.ProfileAPIVersion, Kind: models.ProfileKind, Node: node, Notes: notes}
	seen := map[string]int{}
	for _, r := range runs {
		f, err := r.Fabric("")
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %v", r.File, err))
			continue
		}
		name := f.Kind
		if f.Collective != models.AllReduce {
			name += "-" + strings.ReplaceAll(f.Collective, "_", "-")
		}
		if strings.Contains(r.File, "NCCL_ALGO=RING") || strings.Contains(strings.ToLower(r.File), "_ring") {
			name += "-ring"
		}
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		f.Name = name
		p.Fabrics = append(p.Fabrics, f)
	}
	if len(p.Fabrics) == 0 {
		return nil, fmt.Errorf("no run could be fitted: %s", strings.Join(p.Notes, "; "))
	}
	return p, nil
}

// WriteProfile writes a profile as YAML or JSON.
func WriteProfile(w io.Writer, p *models.CalibrationProfile, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// HostFacts are the node facts NVML does not give: host name, CPUs and
// memory (from /proc/meminfo where there is one).
func HostFacts() models.NodeFacts {
	h, _ := os.Hostname()
	f := models.NodeFacts{Hostname: h, CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if fs := strings.Fields(l); len(fs) >= 2 && fs[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(fs[1], 10, 64)
				f.MemoryMiB = kb >> 10
			}
		}
	}
	return f
}
