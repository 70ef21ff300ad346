package capacity

import (
	"fmt"
	"slices"
	"testing"

	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// A fake Host: it keeps the controller's events in a queue ordered by
// (time, sequence), logs what the controller asks of it, hands out the
// waiting jobs it is given and calls nodes movable as told. It binds no
// pods itself; a test binds them with bind, and Evict releases them.

const (
	sec    = Time(1000)
	minute = 60 * sec
	hour   = 60 * minute
)

type due struct {
	at  Time
	seq int
	ev  Event
}

var _ Host = (*fakeHost)(nil)

type fakeHost struct {
	c       *cluster.Cluster
	k       *Controller
	queue   []due
	seq     int
	log     []string
	waiting []*scheduler.JobInfo
	movable map[int32]bool
	placed  map[int32][]cluster.Placement
	pods    map[int32][]*cluster.PodSpec
}

func (h *fakeHost) Schedule(at Time, ev Event) {
	h.queue = append(h.queue, due{at, h.seq, ev})
	h.seq++
}

func (h *fakeHost) Notice(now Time, n int32, reclaim Time, cause Cause) error {
	h.log = append(h.log, fmt.Sprintf("%v: notice node %d, goes at %v (%v)", now, n, reclaim, cause))
	return nil
}

func (h *fakeHost) Evict(now Time, n int32, cause Cause) error {
	h.log = append(h.log, fmt.Sprintf("%v: evict node %d (%v)", now, n, cause))
	for i, pl := range h.placed[n] {
		if err := h.c.Release(now, pl, h.pods[n][i]); err != nil {
			return err
		}
	}
	delete(h.placed, n)
	delete(h.pods, n)
	return nil
}

func (h *fakeHost) CapacityChanged() {}

func (h *fakeHost) Waiting(fn func(job *scheduler.JobInfo) bool) {
	for _, j := range h.waiting {
		if !fn(j) {
			return
		}
	}
}

func (h *fakeHost) EligiblePools(job *scheduler.JobInfo, dst []int32) []int32 {
	for i := range h.c.Pools {
		if h.c.FitsEmpty(i, &job.Spec.Pod) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

func (h *fakeHost) Movable(now Time, n int32) bool { return h.movable[n] }

// bind places a pod on node n, as the scheduler would, and tells the
// controller.
func (h *fakeHost) bind(t *testing.T, now Time, n int32, pod cluster.PodSpec) {
	t.Helper()
	pl, err := h.c.Allocate(now, n, &pod, -1)
	if err != nil {
		t.Fatal(err)
	}
	h.placed[n] = append(h.placed[n], pl)
	h.pods[n] = append(h.pods[n], &pod)
	h.k.PodsChanged(now, n)
}

// run hands the controller its due events, in order, up to until.
func (h *fakeHost) run(t *testing.T, until Time) {
	t.Helper()
	for {
		if len(h.queue) == 0 {
			return
		}
		i := 0
		for j, d := range h.queue {
			if d.at < h.queue[i].at || (d.at == h.queue[i].at && d.seq < h.queue[i].seq) {
				i = j
			}
		}
		d := h.queue[i]
		if d.at > until {
			return
		}
		h.queue = slices.Delete(h.queue, i, i+1)
		if err := h.k.Handle(d.at, d.ev); err != nil {
			t.Fatalf("at %v, %+v: %v", d.at, d.ev, err)
		}
	}
}

// next is the time of the first queued event of a kind (-1: none).
func (h *fakeHost) next(kind EventKind) Time {
	at := Time(-1)
	for _, d := range h.queue {
		if d.ev.Kind == kind && (at < 0 || d.at < at) {
			at = d.at
		}
	}
	return at
}

// setup builds the cluster of the pools, the controller of the spec over
// it (seed 1) and the host, and starts the controller.
func setup(t *testing.T, pools []cluster.PoolSpec, spec Spec) *fakeHost {
	t.Helper()
	c, err := cluster.New(pools)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{c: c, movable: map[int32]bool{}, placed: map[int32][]cluster.Placement{}, pods: map[int32][]*cluster.PodSpec{}}
	k, err := New(spec, c, h, 1)
	if err != nil {
		t.Fatal(err)
	}
	h.k = k
	k.Start()
	return h
}

// poolSpec is a pool of nodes with gpus GPUs, cpu cores and mem GiB.
func poolSpec(name string, nodes, maxNodes int, gpus int32, cpu, memGiB int64) cluster.PoolSpec {
	return cluster.PoolSpec{Name: name, InstanceType: name, Nodes: nodes, MaxNodes: maxNodes, GPUsPerNode: gpus, MilliCPU: cpu * 1000, MemoryMiB: memGiB * 1024}
}

// job is a waiting job of replicas pods of gpus GPUs, cpu cores and mem GiB.
func job(id int32, replicas, gpus int32, cpu, memGiB int64) *scheduler.JobInfo {
	return &scheduler.JobInfo{ID: id, Spec: &cluster.JobSpec{Replicas: replicas, Pod: cluster.PodSpec{GPUs: gpus, MilliCPU: cpu * 1000, MemoryMiB: memGiB * 1024}}}
}

// states counts the pool's present nodes in each state.
func states(c *cluster.Cluster, p int) map[cluster.NodeState]int {
	out := map[cluster.NodeState]int{}
	pl := &c.Pools[p]
	for n := pl.First; n < pl.First+pl.Count; n++ {
		if s := c.Nodes[n].State; s != cluster.NodeAbsent {
			out[s]++
		}
	}
	return out
}
