package traces

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Helios job with GPUs on 0 nodes is refused at its row and column; a
// CPU-only row of 0 nodes, as the source has, still reads.
func TestHeliosGPUJobOnNoNodeRefused(t *testing.T) {
	head := "job_id,vc,gpu_num,cpu_num,node_num,submit_time,duration\n"
	p := tempFile(t, "h.csv", head+"1,a,8,4,0,2020-04-01 00:00:00,5\n")
	_, err := readTraceFile(p, FormatHelios)
	requireBadInput(t, err, p, p+":2:9: node_num: is 0 for a job of 8 GPUs; a job with GPUs runs on at least one node")
	_, err = SizeTrace(p, FormatHelios, TraceOptions{}, nil)
	requireBadInput(t, err, p, p+":2:9: node_num: is 0 for a job of 8 GPUs")
	jobs, err := readTraceFile(tempFile(t, "c.csv", head+"1,a,0,4,0,2020-04-01 00:00:00,5\n"), FormatHelios)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
}

// A trace that is not text (NUL bytes: a binary file, a copy of
// /proc/self/environ, UTF-16 without a mark) is refused by name and
// reason; the message quotes none of its bytes.
func TestBinaryTraceQuotesNothing(t *testing.T) {
	secret := "SECRET_TOKEN=s3cr3t-value"
	dir := t.TempDir()
	p := filepath.Join(dir, "env.csv")
	require.NoError(t, os.WriteFile(p, []byte("PATH=/bin\x00"+secret+"\x00"), 0o644))
	for _, format := range []string{FormatCSV, FormatHelios, FormatPhilly, FormatOpenb} {
		_, err := readTraceFile(p, format)
		requireBadInput(t, err, p, p+": is not a text file: it has a NUL byte at byte 9")
		require.NotContains(t, err.Error(), "SECRET", format)
		require.NotContains(t, err.Error(), "PATH=", format)
	}
	// UTF-16 with its mark is named as such.
	u := filepath.Join(dir, "u.csv")
	require.NoError(t, os.WriteFile(u, []byte("\xff\xfen\x00a\x00"), 0o644))
	_, err := readTraceFile(u, FormatCSV)
	requireBadInput(t, err, u, "is UTF-16")
	require.False(t, strings.Contains(err.Error(), "n\x00"))
}
