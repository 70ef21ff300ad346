package sim

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"
	"os"
	"sync"

	"gpuplan.dev/gpuplan/sim/cluster"
)

// Records past Config.RecordsInMemory go to a temporary file as their
// chunks fill, so that a run of millions of jobs holds the records of the
// jobs in flight rather than every record (208 bytes a job in memory; 40
// to 60 in the file). The file is unlinked once made (on systems that
// allow it): the result holds its only handle and the space goes when
// the result does. Result.Records reads it back a chunk at a time, in
// job order, into one chunk of records reused along the way.
//
// A record's strings and pointers become indexes into tables the file
// keeps in memory: the queues, the pod requests (already one copy a
// distinct request) and the rare parts (few); the name is written whole.

// DefaultRecordsInMemory is the records a run keeps in memory before it
// moves finished ones to a temporary file (Config.RecordsInMemory 0).
const DefaultRecordsInMemory = 1 << 20

// recordFile is the records a run moved to its temporary file.
type recordFile struct {
	f *os.File
	// at[k] and size[k]: where chunk k of records is in the file.
	at   []int64
	size []int32
	end  int64
	n    int   // records in all
	err  error // the first write error
	// The tables the records' indexes point into.
	queues []string
	qidx   map[string]uint32
	pods   []*cluster.PodSpec
	pidx   map[*cluster.PodSpec]uint32
	rares  []*recordRare
	ridx   map[*recordRare]uint32
	buf    []byte
	names  []byte
	// mu guards rerr, the first failure to read the file back.
	mu   sync.Mutex
	rerr error
}

// failed keeps err as the first read failure.
func (w *recordFile) failed(err error) {
	w.mu.Lock()
	if w.rerr == nil {
		w.rerr = err
	}
	w.mu.Unlock()
}

// readErr is the first read failure.
func (w *recordFile) readErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rerr
}

// newRecordFile makes the temporary file in dir ("": the system's).
func newRecordFile(dir string) (*recordFile, error) {
	f, err := os.CreateTemp(dir, "gpuplan-records-*")
	if err != nil {
		return nil, fmt.Errorf("records of a large run: %w", err)
	}
	// Unlinked at once where the system allows it: nothing to clean up.
	_ = os.Remove(f.Name())
	return &recordFile{f: f, qidx: map[string]uint32{}, pidx: map[*cluster.PodSpec]uint32{}, ridx: map[*recordRare]uint32{}}, nil
}

// queue is q's index in the queue table.
func (w *recordFile) queue(q string) uint32 {
	if n := len(w.queues); n > 0 && w.queues[n-1] == q {
		return uint32(n - 1)
	}
	return intern(&w.queues, w.qidx, q)
}

// intern is x's index in *tab, appended (and indexed in idx) the first
// time it is seen.
func intern[T comparable](tab *[]T, idx map[T]uint32, x T) uint32 {
	i, ok := idx[x]
	if !ok {
		i = uint32(len(*tab))
		*tab = append(*tab, x)
		idx[x] = i
	}
	return i
}

// pod is p's index in the pod table plus one (0: nil).
func (w *recordFile) pod(p *cluster.PodSpec) uint32 {
	if p == nil {
		return 0
	}
	return intern(&w.pods, w.pidx, p) + 1
}

// rare is x's index in the rare table plus one (0: nil).
func (w *recordFile) rare(x *recordRare) uint32 {
	if x == nil {
		return 0
	}
	return intern(&w.rares, w.ridx, x) + 1
}

// write appends chunk k, records recs, to the file.
func (w *recordFile) write(k int, recs []JobRecord) {
	if w.err != nil {
		return
	}
	// A chunk: its record count, its names one after another, then the
	// records.
	w.names = w.names[:0]
	body := w.buf[:0]
	prev := Time(0)
	for i := range recs {
		body = w.encode(body, &recs[i], k*recChunk+i, prev)
		prev = recs[i].Submit
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(w.names)+len(body))
	b = binary.AppendUvarint(b, uint64(len(recs)))
	b = binary.AppendUvarint(b, uint64(len(w.names)))
	b = append(b, w.names...)
	b = append(b, body...)
	w.buf = body
	for len(w.at) <= k {
		w.at = append(w.at, -1)
		w.size = append(w.size, 0)
	}
	if _, err := w.f.Write(b); err != nil {
		w.err = fmt.Errorf("records of a large run: %w", err)
		return
	}
	w.at[k], w.size[k] = w.end, int32(len(b))
	w.end += int64(len(b))
}

// A record in the file is a mask of the fields that differ from what
// is expected of them, then those differences as zigzag varints: most
// jobs ran once from their start to their end, in pool 0 and queue 0,
// holding what their pods ask for all along, so that most of their
// fields cost nothing. Expected: the ID its position, the submit the
// previous record's, the end the start plus the duration, the usage's
// pool the job's, its GPU, CPU and memory time the pods' requests over
// start to end, one attempt, never admitted, and 0 otherwise.
const (
	fID = iota
	fReason
	fNameLen
	fQueue
	fPriority
	fReplicas
	fPodsBound
	fMinAvailable
	fPod
	fSubmit
	fStart
	fEnd
	fDuration
	fDeadline
	fFlags
	fPool
	fHeld
	fAlloc
	fAttempts
	fDisruptions
	fFailures
	fUsePool
	fLost
	fCheckpoint
	fUseGPU
	fUseCPU
	fUseMem
	fRare
	fAdmitted
	fPreemptions
	fPreemptionsCaused
	numFields
)

// expectedUse is the GPU, CPU and memory time a job's pods ask for over
// span (wrapping, as the differences from it do).
func expectedUse(r *JobRecord, span Time) (gpu, cpu, mem int64) {
	if r.Pod == nil {
		return 0, 0, 0
	}
	n := int64(r.Replicas) * span
	return r.AllocMilli * span, r.Pod.MilliCPU * n, r.Pod.MemoryMiB * n
}

// encode appends record r, at position id of the run, after a record
// submitted at prev.
func (w *recordFile) encode(b []byte, r *JobRecord, id int, prev Time) []byte {
	var d [numFields]int64
	slowed := int64(0)
	if r.Slowed {
		slowed = 1
	}
	span := r.End - r.Start
	gpu, cpu, mem := expectedUse(r, span)
	d[fID] = int64(r.ID) - int64(id)
	d[fReason] = int64(r.Reason) + 1
	d[fNameLen] = int64(len(r.Name))
	d[fQueue] = int64(w.queue(r.Queue))
	d[fPriority] = int64(r.Priority)
	d[fReplicas] = int64(r.Replicas) - 1
	d[fPodsBound] = int64(r.PodsBound) - int64(r.Replicas)
	d[fMinAvailable] = int64(r.MinAvailable)
	d[fPod] = int64(w.pod(r.Pod)) - 1
	d[fSubmit] = r.Submit - prev
	d[fStart] = r.Start - r.Submit
	d[fEnd] = span - r.Duration
	d[fDuration] = r.Duration
	d[fDeadline] = r.Deadline
	d[fFlags] = int64(r.Flags) | int64(r.Outcome)<<8 | slowed<<16
	d[fPool] = int64(r.Pool)
	d[fHeld] = r.HeldMilliMs - r.useHeld[ResGPU]
	d[fAlloc] = r.AllocMilli
	d[fAttempts] = int64(r.Attempts) - 1
	d[fDisruptions] = int64(r.Disruptions)
	d[fFailures] = int64(r.Failures)
	d[fUsePool] = int64(r.usePool) - int64(r.Pool) - 1
	d[fLost] = r.LostMs
	d[fCheckpoint] = r.CheckpointMs
	d[fUseGPU] = r.useHeld[ResGPU] - gpu
	d[fUseCPU] = r.useHeld[ResCPU] - cpu
	d[fUseMem] = r.useHeld[ResMem] - mem
	d[fRare] = int64(w.rare(r.rare))
	d[fAdmitted] = r.Admitted + 1
	d[fPreemptions] = int64(r.Preemptions)
	d[fPreemptionsCaused] = int64(r.PreemptionsCaused)
	var mask uint64
	for f, x := range d {
		if x != 0 {
			mask |= 1 << f
		}
	}
	b = binary.AppendUvarint(b, mask)
	for _, x := range d {
		if x != 0 {
			b = binary.AppendUvarint(b, uint64(x<<1)^uint64(x>>63))
		}
	}
	w.names = append(w.names, r.Name...)
	return b
}

// uvarint reads the varint at b[p:] and the position after it; past the
// end, or on a bad varint, the position is len(b)+1 (and stays there).
func uvarint(b []byte, p int) (uint64, int) {
	if p < len(b) {
		if c := b[p]; c < 0x80 {
			return uint64(c), p + 1
		}
	}
	return uvarintSlow(b, p)
}

func uvarintSlow(b []byte, p int) (uint64, int) {
	if p >= len(b) {
		return 0, len(b) + 1
	}
	x, n := binary.Uvarint(b[p:])
	if n <= 0 {
		return 0, len(b) + 1
	}
	return x, p + n
}

// decode reads the record at b[p:], at position id after a record
// submitted at prev, into r, its name the next of *names, and returns the
// position after it (len(b)+1: the chunk is bad).
func (w *recordFile) decode(b []byte, p int, r *JobRecord, id int, prev Time, names *string) int {
	var d [numFields]int64
	mask, p := uvarint(b, p)
	if mask>>numFields != 0 {
		return len(b) + 1
	}
	for m := mask; m != 0; m &= m - 1 {
		var u uint64
		u, p = uvarint(b, p)
		d[bits.TrailingZeros64(m)] = int64(u>>1) ^ -int64(u&1)
	}
	if p > len(b) {
		return p
	}
	nl := uint64(d[fNameLen])
	q := uint64(d[fQueue])
	pod := uint64(d[fPod] + 1)
	rare := uint64(d[fRare])
	if nl > uint64(len(*names)) || q >= uint64(len(w.queues)) || pod > uint64(len(w.pods)) || rare > uint64(len(w.rares)) {
		return len(b) + 1
	}
	r.ID = int32(int64(id) + d[fID])
	r.Reason = int32(d[fReason] - 1)
	r.Name, *names = (*names)[:nl], (*names)[nl:]
	r.Queue = w.queues[q]
	r.Priority = int32(d[fPriority])
	r.Replicas = int32(d[fReplicas] + 1)
	r.PodsBound = int32(d[fPodsBound] + int64(r.Replicas))
	r.MinAvailable = int32(d[fMinAvailable])
	r.Pod = nil
	if pod > 0 {
		r.Pod = w.pods[pod-1]
	}
	r.Submit = prev + d[fSubmit]
	r.Start = r.Submit + d[fStart]
	r.Duration = d[fDuration]
	span := r.Duration + d[fEnd]
	r.End = r.Start + span
	r.Deadline = d[fDeadline]
	f := d[fFlags]
	r.Flags, r.Outcome, r.Slowed = cluster.JobFlag(f), Outcome(f>>8), f>>16&1 == 1
	r.Pool = int32(d[fPool])
	r.AllocMilli = d[fAlloc]
	r.Attempts = int32(d[fAttempts] + 1)
	r.Disruptions = int32(d[fDisruptions])
	r.Failures = int32(d[fFailures])
	r.usePool = int32(d[fUsePool] + int64(r.Pool) + 1)
	r.LostMs = d[fLost]
	r.CheckpointMs = d[fCheckpoint]
	gpu, cpu, mem := expectedUse(r, span)
	r.useHeld = [3]int64{gpu + d[fUseGPU], cpu + d[fUseCPU], mem + d[fUseMem]}
	r.HeldMilliMs = r.useHeld[ResGPU] + d[fHeld]
	r.rare = nil
	if rare > 0 {
		r.rare = w.rares[rare-1]
	}
	r.Admitted = d[fAdmitted] - 1
	r.Preemptions = int32(d[fPreemptions])
	r.PreemptionsCaused = int32(d[fPreemptionsCaused])
	return p
}

// all yields every record in order; a read failure stops it and is kept
// (readErr).
func (w *recordFile) all() iter.Seq2[int, *JobRecord] {
	return func(yield func(int, *JobRecord) bool) {
		var raw []byte
		recs := make([]JobRecord, recChunk)
		id := 0
		for k := range w.at {
			if w.at[k] < 0 {
				w.failed(fmt.Errorf("records of a large run: chunk %d was never written", k))
				return
			}
			if cap(raw) < int(w.size[k]) {
				raw = make([]byte, w.size[k])
			}
			raw = raw[:w.size[k]]
			if _, err := w.f.ReadAt(raw, w.at[k]); err != nil {
				w.failed(fmt.Errorf("records of a large run: %w", err))
				return
			}
			// One string a chunk holds its records' names (they are cut
			// from it): the names outlive the reused records safely.
			m, p := uvarint(raw, 0)
			nl, p := uvarint(raw, p)
			bad := m > recChunk || p > len(raw) || nl > uint64(len(raw)-p)
			var names string
			if !bad {
				names = string(raw[p : p+int(nl)])
				p += int(nl)
			}
			prev := Time(0)
			for i := 0; i < int(m) && !bad; i++ {
				p = w.decode(raw, p, &recs[i], id+i, prev, &names)
				bad = p > len(raw)
				prev = recs[i].Submit
			}
			if bad {
				w.failed(fmt.Errorf("records of a large run: chunk %d is corrupt", k))
				return
			}
			for i := 0; i < int(m); i++ {
				if !yield(id, &recs[i]) {
					return
				}
				id++
			}
		}
	}
}
