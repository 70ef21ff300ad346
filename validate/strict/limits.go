package strict

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bounds on what gpuplan reads. Every size taken from input is checked
// against one of these before anything is allocated for it, so that a typo
// (a count with three zeros too many, a quantity in exabytes) is an error
// naming the file, line and field rather than an out-of-memory crash or a
// silent overflow.
const (
	// MaxLineBytes is the longest line any reader accepts (CSV row,
	// JSON line, nccl-tests output line).
	MaxLineBytes = 1 << 20
	// MaxQuote is how many bytes of input an error message quotes.
	MaxQuote = 80
	// MaxFileBytes bounds a scenario, policy, price or profile file read
	// whole (traces stream and have no such bound).
	MaxFileBytes = 64 << 20
	// MaxScenarioBytes bounds the scenario document itself, a hand-written
	// file (the shipped ones are under 20 KiB): its YAML is decoded into a
	// tree of nodes of about a hundred times its size, so a 64 MiB
	// scenario would take gigabytes before a field could be checked.
	// Long data goes in the files a scenario names (rate CSVs, traces).
	MaxScenarioBytes = 1 << 20

	// MaxPodMilliCPU and MaxPodMemoryMiB bound one pod's (or one node's)
	// CPU and memory: well above the largest instances sold (448 vCPU,
	// 24 TiB), far below where milli-units overflow.
	MaxPodMilliCPU  = 4096 * 1000
	MaxPodMemoryMiB = 64 << 20 // 64 TiB
	// MaxPodGPUs bounds the GPUs of one pod or one node.
	MaxPodGPUs = 64
	// MaxReplicas bounds the pods of one job.
	MaxReplicas = 100_000
	// MaxServiceReplicas bounds the replicas of one inference service (and
	// stands for "no limit" where a manifest leaves the maximum open).
	MaxServiceReplicas = 10_000
	// MaxNodes bounds the nodes of one cluster (every pool at its largest).
	MaxNodes = 1_000_000
	// MaxTimelineBuckets bounds the timeline's intervals over the horizon.
	MaxTimelineBuckets = 1_000_000
	// MaxDescriptionBytes bounds free text carried into reports.
	MaxDescriptionBytes = 64 << 10
)

// Quote quotes at most MaxQuote bytes of input, escaped as Go does, with
// the length of what was left out: error messages never carry more of
// what they were given than that.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return strconv.Quote(s)
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// QuantityIn converts a Kubernetes quantity to whole units of 1/scale
// (scale 1000 for milli-units, 1/2^20 for MiB: pass unit), refusing NaN,
// negative values and anything above max before converting, so the
// conversion cannot overflow.
func QuantityIn(q resource.Quantity, milli bool, unitBytes int64, max int64, what string) (int64, error) {
	f := q.AsApproximateFloat64()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s %s is not a finite quantity", what, Quote(q.String()))
	}
	if f < 0 {
		return 0, fmt.Errorf("%s %s is negative", what, Quote(q.String()))
	}
	var v float64
	switch {
	case milli:
		v = f * 1000
	case unitBytes > 1:
		v = f / float64(unitBytes)
	default:
		v = f
	}
	if v > float64(max) {
		return 0, fmt.Errorf("%s %s is more than any node holds (at most %s)", what, Quote(q.String()), maxText(milli, unitBytes, max))
	}
	switch {
	case milli:
		return q.MilliValue(), nil
	case unitBytes > 1:
		return (q.Value() + unitBytes - 1) / unitBytes, nil
	}
	return q.Value(), nil
}

func maxText(milli bool, unitBytes, max int64) string {
	switch {
	case milli:
		return fmt.Sprintf("%d cores", max/1000)
	case unitBytes == 1<<20:
		return fmt.Sprintf("%d TiB", max>>20)
	}
	return strconv.FormatInt(max, 10)
}

// MilliCPU is a CPU quantity in millicores, bounded by MaxPodMilliCPU.
func MilliCPU(q resource.Quantity) (int64, error) {
	return QuantityIn(q, true, 0, MaxPodMilliCPU, "cpu")
}

// MemoryMiB is a memory quantity in MiB (rounded up), bounded by
// MaxPodMemoryMiB.
func MemoryMiB(q resource.Quantity) (int64, error) {
	return QuantityIn(q, false, 1<<20, MaxPodMemoryMiB, "memory")
}

// Open opens path for reading, refusing devices, FIFOs, sockets
// and folders before opening them (opening a FIFO blocks, reading
// /dev/zero never ends).
func Open(path string) (*os.File, error) {
	if err := RegularFile(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() { // replaced between the two looks
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s): gpuplan reads files, not devices, pipes or folders", path, st.Mode().Type())
	}
	return f, nil
}

// RegularFile checks, without opening it, that path is a regular file
// (symbolic links followed): a device, FIFO, socket or folder is bad
// input.
func RegularFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &InputError{File: path, Msg: fmt.Sprintf("is not a regular file (%s): gpuplan reads files, not devices, pipes or folders", st.Mode().Type())}
	}
	if why := special(path); why != "" {
		// /proc/self/environ looks like a regular file and holds secrets.
		return &InputError{File: path, Msg: why + ": gpuplan reads a user's files, not the kernel's"}
	}
	return nil
}

// ReadFileBounded reads a whole regular file of at most MaxFileBytes, as
// text (Text: UTF-16 with a byte-order mark decoded, NUL bytes refused).
func ReadFileBounded(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s is larger than %d MiB; gpuplan reads files of that kind whole and refuses larger ones", path, MaxFileBytes>>20)
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		if st.Size() > MaxFileBytes {
			return nil, tooLarge // known before reading a byte
		}
		size = st.Size()
	}
	// Read into a buffer of the file's size and a byte more, to see the
	// end (as os.ReadFile does): io.ReadAll's doubling copied a 10 MB file
	// several times over.
	data := make([]byte, 0, size+1)
	for len(data) <= MaxFileBytes {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew
		}
		n, err := f.Read(data[len(data):min(cap(data), MaxFileBytes+1)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge
	}
	return Text(path, data)
}

// Text checks that data read from path is text and returns it as UTF-8:
// UTF-16 with a byte-order mark (as Kubernetes reads it) is decoded, a
// UTF-8 byte-order mark is kept for the readers that strip it; a file
// with NUL bytes (binary, or UTF-16 without a byte-order mark) is refused
// with its name and the reason, quoting none of it.
func Text(path string, data []byte) ([]byte, error) {
	switch {
	case len(data) >= 2 && data[0] == 0xff && data[1] == 0xfe:
		return decodeUTF16(path, data[2:], false)
	case len(data) >= 2 && data[0] == 0xfe && data[1] == 0xff:
		return decodeUTF16(path, data[2:], true)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &InputError{File: path, Msg: NotText(i)}
	}
	return data, nil
}

// NotText is why a file with a NUL byte at offset i is refused.
func NotText(i int) string {
	return fmt.Sprintf("is not a text file: it has a NUL byte at byte %d (a binary file, or UTF-16 without a byte-order mark: save it as UTF-8); nothing of it is quoted", i)
}

func decodeUTF16(path string, b []byte, bigEndian bool) ([]byte, error) {
	if len(b)%2 != 0 {
		return nil, &InputError{File: path, Msg: fmt.Sprintf("starts with a UTF-16 byte-order mark but has an odd number of bytes (%d) after it; save it as UTF-8", len(b))}
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	out := []byte(string(utf16.Decode(u)))
	if i := bytes.IndexByte(out, 0); i >= 0 {
		return nil, &InputError{File: path, Msg: NotText(i)}
	}
	return out, nil
}
