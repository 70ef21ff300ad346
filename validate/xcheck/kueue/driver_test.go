package kueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/util/expectations"
	"sigs.k8s.io/kueue/pkg/util/routine"
	"sigs.k8s.io/kueue/pkg/workload"
	"sigs.k8s.io/kueue/pkg/workload/evict"
	"sigs.k8s.io/kueue/pkg/workload/finish"
)

// policy is a Kueue policy as API objects.
type policy struct {
	flavors    []*kueue.ResourceFlavor
	cohorts    []*kueue.Cohort
	queues     []*kueue.ClusterQueue
	local      []*kueue.LocalQueue
	priorities []*kueue.WorkloadPriorityClass
	// fairSharing is Kueue's configuration's (nil: fair sharing off).
	fairSharing *config.FairSharing
}

// job is one job of the trace, times in whole seconds.
type job struct {
	name      string
	queue     string // LocalQueue name
	priority  int32
	submit    int64
	duration  int64
	replicas  int32
	milliCPU  int64
	memMiB    int64
	gpus      int32
	selector  map[string]string
	tolerates []corev1.Toleration
	uid       string // the Workload's UID (runGpuplan sets it)
}

// verdict is what happened to one job: first admission and end (seconds,
// -1: never) and the times it was preempted.
type verdict struct {
	admitted, end int64
	preemptions   int
}

// ssaAsMerge applies Kueue's server-side-apply status patches as merge
// patches, as Kueue's own unit tests do: the fake client has no field
// manager.
type ssaAsMerge struct{ client.Patch }

func (ssaAsMerge) Type() types.PatchType { return types.MergePatchType }

func subResourcePatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	var keep []client.SubResourcePatchOption
	for _, o := range opts {
		if o != client.ForceOwnership {
			keep = append(keep, o)
		}
	}
	if patch.Type() == types.ApplyPatchType {
		patch = ssaAsMerge{patch}
	}
	return c.SubResource(sub).Patch(ctx, obj, patch, keep...)
}

// traceOn prints Kueue's admissions and evictions (XCHECK_TRACE set), to
// find where the two sides part.
var traceOn = os.Getenv("XCHECK_TRACE") != ""

// errNoSettle: Kueue's cycles at one moment never end, workloads evicting
// each other in turn (more than maxCycles cycles without the clock moving).
var errNoSettle = errors.New("Kueue's scheduling cycles do not settle: workloads preempt each other in turn")

const maxCycles = 2000

// inline runs the admission routine in the caller (Kueue's default wrapper
// starts a goroutine, whose status patch would land at an unknown later
// moment of virtual time).
type inline struct{}

func (inline) Run(f func()) { f() }

var _ routine.Wrapper = inline{}

// fieldIndexer adds Kueue's indexes to the fake client's builder.
type fieldIndexer struct{ b *fake.ClientBuilder }

func (f *fieldIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	f.b = f.b.WithIndex(obj, field, fn)
	return nil
}

// runKueue replays jobs through Kueue's scheduler in virtual time.
func runKueue(p policy, jobs []job) (map[string]verdict, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	// dirty names the workloads written since the handlers last saw them
	// (the fake client's List decodes every object, too slow to call each
	// cycle).
	dirty := map[types.NamespacedName]bool{}
	mark := func(obj client.Object, err error) error {
		if _, ok := obj.(*kueue.Workload); ok && err == nil {
			dirty[client.ObjectKeyFromObject(obj)] = true
		}
		return err
	}
	idx := &fieldIndexer{b: fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&kueue.Workload{}, &kueue.ClusterQueue{}, &kueue.LocalQueue{}, &kueue.Cohort{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				return mark(obj, subResourcePatch(ctx, c, sub, obj, patch, opts...))
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				return mark(obj, c.SubResource(sub).Update(ctx, obj, opts...))
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return mark(obj, c.Create(ctx, obj, opts...))
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				return mark(obj, c.Update(ctx, obj, opts...))
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				return mark(obj, c.Patch(ctx, obj, patch, opts...))
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return mark(obj, c.Delete(ctx, obj, opts...))
			},
		})}
	if err := indexer.Setup(ctx, idx); err != nil {
		return nil, err
	}
	cl := idx.b.Build()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	recorder := &events.FakeRecorder{} // events thrown away
	// One store of in-flight preemptions, shared as Kueue's manager shares
	// it between the scheduler, the queues and the workload handlers.
	expect := expectations.NewStore("preemption")
	cache := schdcache.New(cl, schdcache.WithFairSharing(p.fairSharing != nil))
	queues, requeuer := qcache.NewManagerForUnitTestsWithRequeuer(cl, cache, qcache.WithClock(clk),
		qcache.WithPreemptionExpectations(expect))
	opts := []scheduler.Option{scheduler.WithClock(nil, clk), scheduler.WithPreemptionExpectations(expect)}
	if p.fairSharing != nil {
		opts = append(opts, scheduler.WithFairSharing(p.fairSharing))
	}
	sched := scheduler.New(queues, cache, cl, recorder, opts...)
	// Admissions are written at once, not in a goroutine: the cycle's
	// effects are all in the store when ScheduleOnce returns.
	sched.SetAdmissionRoutineWrapper(inline{})
	wlr := core.NewWorkloadReconciler(cl, queues, cache, recorder, core.WithPreemptionExpectations(expect))

	for _, pc := range p.priorities {
		if err := cl.Create(ctx, pc); err != nil {
			return nil, err
		}
	}
	for _, rf := range p.flavors {
		if err := cl.Create(ctx, rf); err != nil {
			return nil, err
		}
		cache.AddOrUpdateResourceFlavor(logr.Discard(), rf)
	}
	for _, co := range p.cohorts {
		if err := cl.Create(ctx, co); err != nil {
			return nil, err
		}
		if err := cache.AddOrUpdateCohort(co); err != nil {
			return nil, err
		}
		queues.AddOrUpdateCohort(ctx, co)
	}
	for _, cq := range p.queues {
		defaultCQ(cq)
		if err := cl.Create(ctx, cq); err != nil {
			return nil, err
		}
		if err := cache.AddClusterQueue(ctx, cq); err != nil {
			return nil, err
		}
		if err := queues.AddClusterQueue(ctx, cq); err != nil {
			return nil, err
		}
	}
	lqNS := map[string]string{}
	for _, lq := range p.local {
		// Kueue matches the ClusterQueue's namespaceSelector against the
		// workload's Namespace object: it has to exist.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lq.Namespace}}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(ns), ns); err != nil {
			if err := cl.Create(ctx, ns); err != nil {
				return nil, err
			}
		}
		if err := cl.Create(ctx, lq); err != nil {
			return nil, err
		}
		if err := cache.AddLocalQueue(lq); err != nil {
			return nil, err
		}
		if err := queues.AddLocalQueue(ctx, lq); err != nil {
			return nil, err
		}
		lqNS[lq.Name] = lq.Namespace
	}
	prio := map[int32]string{}
	for _, pc := range p.priorities {
		prio[pc.Value] = pc.Name
	}

	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].submit < jobs[order[b]].submit })
	out := map[string]verdict{}
	seen := map[string]*kueue.Workload{} // last version handed to the handlers, by name
	byName := map[string]*job{}
	runEnd := map[string]int64{} // when each running job finishes
	next := 0
	now := int64(0)

	// observe hands every workload changed since the last call to the
	// WorkloadReconciler's Create and Update handlers, as its informer
	// would, and returns how many changed.
	// observe hands every workload changed since the last call to the
	// WorkloadReconciler's Create and Update handlers, as its informer
	// would, in name order, and returns how many changed; it notes the
	// ones Kueue has just evicted.
	var evicted []types.NamespacedName
	observe := func() (int, error) {
		keys := make([]types.NamespacedName, 0, len(dirty))
		for k := range dirty {
			keys = append(keys, k)
		}
		clear(dirty)
		sort.Slice(keys, func(a, b int) bool {
			if keys[a].Namespace != keys[b].Namespace {
				return keys[a].Namespace < keys[b].Namespace
			}
			return keys[a].Name < keys[b].Name
		})
		changed := 0
		for _, k := range keys {
			w := &kueue.Workload{}
			if err := cl.Get(ctx, k, w); err != nil {
				return 0, err
			}
			old := seen[w.Name]
			if old != nil && old.ResourceVersion == w.ResourceVersion {
				continue
			}
			cur := w.DeepCopy()
			seen[w.Name] = cur
			changed++
			if workload.HasQuotaReservation(cur) && evict.IsEvicted(cur) {
				evicted = append(evicted, k)
			}
			if old == nil {
				wlr.Create(event.TypedCreateEvent[*kueue.Workload]{Object: cur.DeepCopy()})
				continue
			}
			v := out[w.Name]
			wasReserved := workload.HasQuotaReservation(old)
			if !wasReserved && workload.HasQuotaReservation(cur) && !finish.IsFinished(cur) {
				if v.admitted < 0 {
					v.admitted = now
				}
				runEnd[w.Name] = now + byName[w.Name].duration
				if traceOn {
					fmt.Fprintf(os.Stderr, "kueue %d admit %s\n", now, w.Name)
				}
			}
			out[w.Name] = v
			wlr.Update(event.TypedUpdateEvent[*kueue.Workload]{ObjectOld: old.DeepCopy(), ObjectNew: cur.DeepCopy()})
		}
		return changed, nil
	}
	// release evicts: a workload marked Evicted gives its quota back at
	// once (its pods stop) and goes back to its queue.
	release := func() (int, error) {
		todo := evicted
		evicted = nil
		n := 0
		for _, k := range todo {
			w := &kueue.Workload{}
			if err := cl.Get(ctx, k, w); err != nil {
				return 0, err
			}
			if !workload.HasQuotaReservation(w) || !evict.IsEvicted(w) {
				continue
			}
			workload.UnsetQuotaReservationWithCondition(w, "Pending", "Preempted", clk.Now())
			if err := cl.Status().Update(ctx, w); err != nil {
				return 0, err
			}
			if traceOn {
				fmt.Fprintf(os.Stderr, "kueue %d evict %s\n", now, w.Name)
			}
			v := out[w.Name]
			v.preemptions++
			out[w.Name] = v
			delete(runEnd, w.Name)
			n++
		}
		return n, nil
	}

	for {
		// The next moment: an arrival or a finish.
		t := int64(-1)
		if next < len(order) {
			t = jobs[order[next]].submit
		}
		for _, e := range runEnd {
			if t < 0 || e < t {
				t = e
			}
		}
		if t < 0 {
			break
		}
		now = t
		clk.SetTime(start.Add(time.Duration(now) * time.Second))
		// Finishes first, then arrivals.
		var due []string
		for n, e := range runEnd {
			if e == now {
				due = append(due, n)
			}
		}
		sort.Strings(due)
		for _, n := range due {
			var w kueue.Workload
			if err := cl.Get(ctx, types.NamespacedName{Namespace: lqNS[byName[n].queue], Name: n}, &w); err != nil {
				return nil, err
			}
			if err := finish.Finish(ctx, cl, &w, "JobFinished", "done", clk); err != nil {
				return nil, err
			}
			v := out[n]
			v.end = now
			out[n] = v
			delete(runEnd, n)
		}
		for next < len(order) && jobs[order[next]].submit == now {
			j := &jobs[order[next]]
			next++
			byName[j.name] = j
			out[j.name] = verdict{admitted: -1, end: -1}
			w := newWorkload(j, lqNS[j.queue], prio[j.priority], j.priority, clk.Now())
			if err := cl.Create(ctx, w); err != nil {
				return nil, err
			}
		}
		if _, err := observe(); err != nil {
			return nil, err
		}
		requeuer.ProcessRequeues(ctx)
		// Cycles until one neither admits, evicts nor parks anything (a
		// StrictFIFO head that cannot fit stays active).
		for cycles := 0; ; cycles++ {
			before := queues.ActivePending()
			if before == 0 {
				break
			}
			if cycles > maxCycles {
				return nil, fmt.Errorf("at %ds: %w", now, errNoSettle)
			}
			sched.ScheduleOnce(ctx)
			changed, err := observe()
			if err != nil {
				return nil, err
			}
			n, err := release()
			if err != nil {
				return nil, err
			}
			if n > 0 {
				if _, err := observe(); err != nil {
					return nil, err
				}
			}
			requeuer.ProcessRequeues(ctx)
			if changed == 0 && n == 0 && queues.ActivePending() == before {
				break
			}
		}
	}
	for _, j := range jobs {
		if _, ok := out[j.name]; !ok {
			return nil, fmt.Errorf("job %s never arrived", j.name)
		}
	}
	return out, nil
}

// defaultCQ applies the ClusterQueue CRD's defaults (the fake client
// applies none).
func defaultCQ(cq *kueue.ClusterQueue) {
	if cq.Spec.QueueingStrategy == "" {
		cq.Spec.QueueingStrategy = kueue.BestEffortFIFO
	}
	if cq.Spec.FlavorFungibility == nil {
		cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{}
	}
	if cq.Spec.FlavorFungibility.WhenCanBorrow == "" {
		cq.Spec.FlavorFungibility.WhenCanBorrow = kueue.MayStopSearch
	}
	if cq.Spec.FlavorFungibility.WhenCanPreempt == "" {
		cq.Spec.FlavorFungibility.WhenCanPreempt = kueue.TryNextFlavor
	}
	if cq.Spec.Preemption == nil {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{}
	}
	pr := cq.Spec.Preemption
	if pr.ReclaimWithinCohort == "" {
		pr.ReclaimWithinCohort = kueue.PreemptionPolicyNever
	}
	if pr.WithinClusterQueue == "" {
		pr.WithinClusterQueue = kueue.PreemptionPolicyNever
	}
	if pr.BorrowWithinCohort == nil {
		pr.BorrowWithinCohort = &kueue.BorrowWithinCohort{}
	}
	if pr.BorrowWithinCohort.Policy == "" {
		pr.BorrowWithinCohort.Policy = kueue.BorrowWithinCohortPolicyNever
	}
	if cq.Spec.StopPolicy == nil {
		none := kueue.None
		cq.Spec.StopPolicy = &none
	}
}

// newWorkload is the Workload of a job: one podset of its replicas.
func newWorkload(j *job, ns, priorityClass string, priority int32, now time.Time) *kueue.Workload {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(j.milliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(j.memMiB<<20, resource.BinarySI),
	}
	if j.gpus > 0 {
		req["nvidia.com/gpu"] = *resource.NewQuantity(int64(j.gpus), resource.DecimalSI)
	}
	w := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: ns, CreationTimestamp: metav1.NewTime(now),
			UID: types.UID(j.uid)},
		Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(j.queue),
			PodSets: []kueue.PodSet{{
				Name:  kueue.DefaultPodSetName,
				Count: j.replicas,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					NodeSelector: j.selector,
					Tolerations:  j.tolerates,
					Containers:   []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}},
				}},
			}},
		},
	}
	p := priority
	w.Spec.Priority = &p
	if priorityClass != "" {
		w.Spec.PriorityClassRef = kueue.NewWorkloadPriorityClassRef(priorityClass)
	}
	active := true
	w.Spec.Active = &active
	return w
}
