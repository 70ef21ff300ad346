package sim

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A run's records array reserved from a hint of 100,000 jobs (20.8 MB of
// 208-byte records) is marked for huge pages: the mapping of /proc/self/
// smaps holding its first whole 2 MiB page carries the "hg" flag
// (VM_HUGEPAGE, set by madvise(MADV_HUGEPAGE)). Without it each 4 KiB page
// of the array is faulted twice (read by the collector, then written).
func TestRecordsArrayAdvisedHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skip("no transparent huge pages in this kernel")
	}
	var s recStore
	s.reserve(100_000)
	require.Len(t, s.all, 100_352, "whole chunks of 1,024")
	const huge = 2 << 20
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s.all)))
	lo := (start + huge - 1) &^ (huge - 1)
	flags := vmFlags(t, lo)
	require.Contains(t, strings.Fields(flags), "hg", "VmFlags of the mapping at %#x: %s", lo, flags)
}

// vmFlags is the VmFlags line of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) string {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var a, b uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &a, &b); n == 2 && !strings.Contains(line[:strings.IndexByte(line, ' ')], ":") {
			in = a <= addr && addr < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimPrefix(line, "VmFlags:")
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}
