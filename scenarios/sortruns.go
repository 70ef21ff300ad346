package scenarios

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// A sorted run of an external sort is a temporary file of rows in a
// compact binary form (varints and length-prefixed texts), read back in
// the merge: far cheaper to write and read than a native trace, and it
// keeps every field of a row (its flags and full node affinity too). The
// last run stays in memory.

// appendRow appends a row in the run format.
func appendRow(b []byte, a *absJob) ([]byte, error) {
	j := &a.job
	if j.Recovery != nil || j.Training != nil || j.MinAvailable != 0 {
		return b, fmt.Errorf("job %s: recovery, training and gang size are not trace fields", Quote(j.Name))
	}
	for _, v := range []int64{a.at, int64(a.seq), int64(a.line), j.Duration, j.Deadline, int64(j.Replicas), int64(j.Priority), int64(j.Flags),
		j.Pod.MilliCPU, j.Pod.MemoryMiB, int64(j.Pod.GPUs), int64(j.Pod.GPUMilli), j.Pod.GPUMemMiB} {
		b = binary.AppendVarint(b, v)
	}
	b = appendText(appendText(appendText(b, j.Name), j.Queue), j.Pod.MIG)
	c := j.Constraints
	if c == nil {
		return append(b, 0), nil
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(c.NodeSelector)))
	for _, k := range sortedKeys(c.NodeSelector) {
		b = appendText(appendText(b, k), c.NodeSelector[k])
	}
	b = binary.AppendUvarint(b, uint64(len(c.Affinity)))
	for _, t := range c.Affinity {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, r := range t {
			b = appendText(appendText(b, r.Key), string(r.Op))
			b = binary.AppendUvarint(b, uint64(len(r.Values)))
			for _, v := range r.Values {
				b = appendText(b, v)
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(c.Tolerations)))
	for _, t := range c.Tolerations {
		b = appendText(appendText(appendText(appendText(b, t.Key), t.Operator), t.Value), string(t.Effect))
	}
	return b, nil
}

func appendText(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// runReader reads rows back from a run file.
type runReader struct {
	r    *bufio.Reader
	err  error
	text []byte
}

func (rr *runReader) int() int64 {
	if rr.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(rr.r)
	rr.err = err
	return v
}

func (rr *runReader) count() int {
	if rr.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(rr.r)
	if err == nil && v > MaxLineBytes {
		err = errors.New("a count out of range")
	}
	rr.err = err
	return int(v)
}

func (rr *runReader) string() string {
	n := rr.count()
	if rr.err != nil {
		return ""
	}
	if cap(rr.text) < n {
		rr.text = make([]byte, n)
	}
	rr.text = rr.text[:n]
	if _, err := io.ReadFull(rr.r, rr.text); err != nil {
		rr.err = err
		return ""
	}
	return string(rr.text)
}

// read reads the next row; false at the end of the run.
func (rr *runReader) read(a *absJob) (bool, error) {
	if _, err := rr.r.Peek(1); errors.Is(err, io.EOF) {
		return false, nil
	}
	*a = absJob{}
	j := &a.job
	a.at, a.seq, a.line = rr.int(), int(rr.int()), int(rr.int())
	j.Duration, j.Deadline, j.Replicas, j.Priority, j.Flags = rr.int(), rr.int(), int32(rr.int()), int32(rr.int()), cluster.JobFlag(rr.int())
	j.Pod.MilliCPU, j.Pod.MemoryMiB, j.Pod.GPUs, j.Pod.GPUMilli, j.Pod.GPUMemMiB = rr.int(), rr.int(), int32(rr.int()), int32(rr.int()), rr.int()
	j.Name, j.Queue, j.Pod.MIG = rr.string(), rr.string(), rr.string()
	if rr.err == nil {
		var has byte
		has, rr.err = rr.r.ReadByte()
		if has == 1 {
			c := &cluster.Constraints{}
			if n := rr.count(); n > 0 {
				c.NodeSelector = make(map[string]string, n)
				for range n {
					k := rr.string()
					c.NodeSelector[k] = rr.string()
				}
			}
			for range rr.count() {
				var t cluster.NodeSelectorTerm
				for range rr.count() {
					r := cluster.Requirement{Key: rr.string(), Op: cluster.SelectorOp(rr.string())}
					for range rr.count() {
						r.Values = append(r.Values, rr.string())
					}
					t = append(t, r)
				}
				c.Affinity = append(c.Affinity, t)
			}
			for range rr.count() {
				c.Tolerations = append(c.Tolerations, cluster.Toleration{Key: rr.string(), Operator: rr.string(), Value: rr.string(), Effect: cluster.TaintEffect(rr.string())})
			}
			j.Constraints = c
		}
	}
	if rr.err != nil {
		return false, fmt.Errorf("reading back a sorted run: %w", rr.err)
	}
	j.Submit = a.at
	return true, nil
}

// sortRun is one sorted run: a file, or (the last) rows in memory.
type sortRun struct {
	path string
	f    *os.File
	rr   runReader
	mem  *rowChunks
	keys []lateKey
	next int
}

// writeRun sorts buf and writes it as run n in dir.
func writeRun(dir string, n int, buf *rowChunks) (sortRun, error) {
	keys := sortOrder(buf, nil)
	r := sortRun{path: filepath.Join(dir, "run-"+strconv.Itoa(n))}
	f, err := os.Create(r.path)
	if err != nil {
		return r, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	var b []byte
	for _, k := range keys {
		if b, err = appendRow(b[:0], buf.at(k.slot)); err != nil {
			break
		}
		if _, err = bw.Write(b); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return r, fmt.Errorf("writing a sorted run to %s: %w", r.path, err)
	}
	return r, nil
}

// memoryRun sorts buf as the last run, kept in memory.
func memoryRun(buf *rowChunks) sortRun {
	return sortRun{mem: buf, keys: sortOrder(buf, nil)}
}

func (r *sortRun) open() error {
	if r.mem != nil {
		return nil
	}
	f, err := os.Open(r.path)
	if err != nil {
		return err
	}
	r.f = f
	r.rr = runReader{r: bufio.NewReaderSize(f, 1<<16)}
	return nil
}

// nextRow reads the run's next row.
func (r *sortRun) nextRow(a *absJob) (bool, error) {
	if r.mem != nil {
		if r.next >= len(r.keys) {
			return false, nil
		}
		*a = *r.mem.at(r.keys[r.next].slot)
		r.next++
		return true, nil
	}
	return r.rr.read(a)
}

func (r *sortRun) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}
