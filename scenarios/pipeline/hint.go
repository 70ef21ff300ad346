package pipeline

import (
	"bytes"
	"io"
	"os"
	"strings"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
)

// jobsHint is about how many jobs a run's trace holds, for
// sim.Config.JobsHint (0: not known cheaply): the rows of a trace read
// whole when opened, or the lines of an uncompressed streamed file (one
// pass of a newline count, no parsing). Rows set aside or past the
// horizon make it an overestimate, which costs address space only.
func jobsHint(w sim.JobSource) int {
	src, ok := w.(interface{ Info() traces.TraceInfo })
	if !ok {
		return 0
	}
	info := src.Info()
	if info.Rows > 0 {
		return info.Rows // read whole when opened
	}
	if info.File == "" || strings.HasSuffix(info.File, ".gz") {
		return 0
	}
	f, err := os.Open(info.File)
	if err != nil {
		return 0 // the reader reports its own errors
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n := 1
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			break
		}
		if err != nil || n > sim.MaxJobs {
			return 0
		}
	}
	return n
}
