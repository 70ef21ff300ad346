package kubescheduler

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

const resourceGPU v1.ResourceName = "nvidia.com/gpu"

// realProfile is kube-scheduler's default profile (latest.Default, the
// component config's defaults) adjusted to p: under MostAllocated and
// LeastAllocated, NodeResourcesFit's scoringStrategy is that type over
// cpu, memory and nvidia.com/gpu, weight 1 each (gpuplan's resources and
// weights), and NodeResourcesBalancedAllocation is disabled (gpuplan's
// default profile has no such plugin); kubeDefault is left as it is.
func realProfile(p profileKind) (config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return config.KubeSchedulerProfile{}, err
	}
	prof := cfg.Profiles[0]
	if p == kubeDefault {
		return prof, nil
	}
	typ := config.MostAllocated
	if p == leastAllocated {
		typ = config.LeastAllocated
	}
	found := false
	for i := range prof.PluginConfig {
		if args, ok := prof.PluginConfig[i].Args.(*config.NodeResourcesFitArgs); ok {
			args.ScoringStrategy = &config.ScoringStrategy{Type: typ, Resources: []config.ResourceSpec{
				{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}, {Name: string(resourceGPU), Weight: 1}}}
			found = true
		}
	}
	if !found {
		return prof, fmt.Errorf("the default profile has no NodeResourcesFitArgs")
	}
	prof.Plugins.Score.Disabled = append(prof.Plugins.Score.Disabled, config.Plugin{Name: names.NodeResourcesBalancedAllocation})
	return prof, nil
}

// nodeName is node j of type k.
func nodeName(k, j int) string { return fmt.Sprintf("t%d-%d", k, j) }

func realNodes(cc *clusterCase) []*v1.Node {
	var out []*v1.Node
	for k, t := range cc.types {
		for j := range t.count {
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName(k, j), UID: types.UID(nodeName(k, j)), Labels: map[string]string{"kubernetes.io/hostname": nodeName(k, j)}}}
			for key, val := range t.labels {
				n.Labels[key] = val
			}
			for _, tt := range t.taints {
				n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: tt.Key, Value: tt.Value, Effect: v1.TaintEffect(tt.Effect)})
			}
			rl := v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(t.milliCPU, resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(t.memMiB<<20, resource.BinarySI),
				resourceGPU:       *resource.NewQuantity(int64(t.gpus), resource.DecimalSI),
				v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
			}
			n.Status.Capacity, n.Status.Allocatable = rl, rl
			n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
			out = append(out, n)
		}
	}
	return out
}

func realPod(cc *clusterCase, i int) *v1.Pod {
	p := cc.pods[i]
	name := fmt.Sprint("p", i)
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(p.milliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(p.memMiB<<20, resource.BinarySI),
		resourceGPU:       *resource.NewQuantity(int64(p.gpus), resource.DecimalSI),
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			NodeSelector:  p.selector,
			Containers: []v1.Container{{Name: "c", Image: "registry.example/train:1",
				Resources: v1.ResourceRequirements{Requests: rl, Limits: rl}}},
		},
	}
	for _, t := range p.tolerations {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: t.Key,
			Operator: v1.TolerationOperator(t.Operator), Value: t.Value, Effect: v1.TaintEffect(t.Effect)})
	}
	return pod
}

// decision is the real scheduler's answer for one pod: the node it was
// bound to, or "" when it was marked unschedulable.
type decision struct{ pod, node string }

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// runReal runs kube-scheduler on the case under profile p: the nodes
// first, then each pod created once the scheduler has decided the one
// before it (bound, or PodScheduled=False). It returns the node of each
// pod ("" where none).
func runReal(cc *clusterCase, p profileKind) ([]string, error) {
	prof, err := realProfile(p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset()
	decided := make(chan decision, 16)
	send := func(d decision) {
		select {
		case decided <- d:
		case <-ctx.Done():
		}
	}
	var mu sync.Mutex
	bound := map[string]string{}
	// The fake clientset stores a pods/binding create as nothing; set
	// spec.nodeName through the tracker (the client's lock is held while
	// reactors run).
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := a.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		obj, err := client.Tracker().Get(podsGVR, b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		if err := client.Tracker().Update(podsGVR, pod, b.Namespace); err != nil {
			return true, nil, err
		}
		mu.Lock()
		bound[b.Name] = b.Target.Name
		mu.Unlock()
		send(decision{b.Name, b.Target.Name})
		return true, b, nil
	})
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && bytes.Contains(a.(clienttesting.PatchAction).GetPatch(), []byte(v1.PodReasonUnschedulable)) {
			send(decision{a.(clienttesting.PatchAction).GetName(), ""})
		}
		return false, nil, nil
	})
	// The fake clientset replays nothing a watch missed: a pod created
	// before the scheduler's pod watch is open would never be seen. Know
	// when it opens.
	podsWatched := make(chan struct{})
	var watchOnce sync.Once
	client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(clienttesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		watchOnce.Do(func() { close(podsWatched) })
		return true, w, nil
	})
	for _, n := range realNodes(cc) {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	factory := scheduler.NewInformerFactory(client, 0, nil)
	sched, err := scheduler.New(ctx, client, factory, nil,
		func(string) events.EventRecorderLogger { return &events.FakeRecorder{} },
		scheduler.WithProfiles(prof))
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// The informers' stores are synced; the scheduler's own cache is fed
	// by their event handlers and may still lack nodes.
	for deadline := time.Now().Add(30 * time.Second); sched.Cache.NodeCount() < cc.nodes(); {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: the scheduler's cache has %d of %d nodes after 30 s", cc.name, sched.Cache.NodeCount(), cc.nodes())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case <-podsWatched:
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s: the scheduler's pod informer opened no watch in 30 s", cc.name)
	}
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; factory.Shutdown() }()

	out := make([]string, len(cc.pods))
	for i := range cc.pods {
		pod := realPod(cc, i)
		if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case d := <-decided:
				if d.pod == pod.Name {
					out[i] = d.node
					break wait
				}
			case <-timeout:
				return nil, fmt.Errorf("%s: pod %s: no decision in 30 s", cc.name, pod.Name)
			}
		}
	}
	// A pod marked unschedulable and bound later (it cannot be: nothing
	// frees capacity) would show here.
	mu.Lock()
	defer mu.Unlock()
	for i := range out {
		if n := bound[fmt.Sprint("p", i)]; n != out[i] {
			return nil, fmt.Errorf("%s: pod p%d decided %q, then bound to %q", cc.name, i, out[i], n)
		}
	}
	return out, nil
}
