package hpa

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	autoscalingdefaults "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
)

const (
	ns       = "default"
	name     = "web"
	selector = "app=web"
	// The kube-controller-manager's defaults for the HPA controller.
	defaultTolerance       = 0.1
	downscaleStabilization = 5 * time.Minute
	cpuInitialization      = 5 * time.Minute
	initialReadiness       = 30 * time.Second
)

// manifest is the HorizontalPodAutoscaler a case describes, as a user
// writes it (no API defaults applied).
func (c *hpaCase) manifest() *autoscalingv2.HorizontalPodAutoscaler {
	min := c.min
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    &min,
			MaxReplicas:    c.max,
			Behavior:       c.behavior.DeepCopy(),
		},
	}
	q := resource.NewMilliQuantity(c.target, resource.DecimalSI)
	switch c.kind {
	case cpuUtilization:
		u := int32(c.target)
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}}}}
	case podsAverage, podsLoad:
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType,
			Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "load"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q}}}}
	case objectValue:
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType,
			Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: name},
				Metric:          autoscalingv2.MetricIdentifier{Name: "rate"},
				Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q}}}}
	}
	return h
}

// world is the cluster the real controller sees: a Deployment's scale
// subresource, its pods (all running and ready since long before the
// first sync, each requesting 1 cpu) and a metrics source reporting the
// case's series.
type world struct {
	c      *hpaCase
	client *fake.Clientset

	mu       sync.Mutex
	replicas int32
	pods     []string
	next     int
	first    time.Time // the first sync
	syncs    int
	timeline []int32    // replicas after each sync
	listed   func() int // the pods the controller's informer holds
	err      error
}

func (w *world) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// index is the sync the controller is in (its time.Now(), virtual).
func (w *world) index() int {
	return int(time.Since(w.first) / (syncSeconds * time.Second))
}

var longAgo = metav1.NewTime(time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC))

func (w *world) addPod(ctx context.Context) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + strconv.Itoa(w.next), Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &longAgo,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: longAgo}}},
	}
	w.next++
	if _, err := w.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		w.fail("create pod: %v", err)
	}
	w.pods = append(w.pods, p.Name)
}

func (w *world) scaleTo(ctx context.Context, n int32) {
	for int32(len(w.pods)) < n {
		w.addPod(ctx)
	}
	for int32(len(w.pods)) > n {
		last := w.pods[len(w.pods)-1]
		if err := w.client.CoreV1().Pods(ns).Delete(ctx, last, metav1.DeleteOptions{}); err != nil {
			w.fail("delete pod: %v", err)
		}
		w.pods = w.pods[:len(w.pods)-1]
	}
	w.replicas = n
}

func (w *world) scale() *autoscalingv1.Scale {
	return &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:   autoscalingv1.ScaleSpec{Replicas: w.replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: w.replicas, Selector: selector}}
}

// The metrics source (metricsclient.MetricsClient).

// checkInformer fails the run where the controller's pod informer does
// not hold the pods the Deployment has: the controller would count pods
// that are gone (what a harness race looks like, never a cluster's state
// 15 s after a scale).
func (w *world) checkInformer(k int) {
	if n := w.listed(); n != len(w.pods) {
		w.fail("at sync %d the controller's informer holds %d pods, the Deployment %d", k, n, len(w.pods))
	}
}

func (w *world) podMetrics(scale int64) metricsclient.PodMetricsInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.index()
	w.checkInformer(k)
	if k >= len(w.c.series) {
		w.fail("a metric asked for at sync %d of %d", k, len(w.c.series))
		k = len(w.c.series) - 1
	}
	info := metricsclient.PodMetricsInfo{}
	v := w.c.perPod(k, int32(len(w.pods)))
	for _, p := range w.pods {
		info[p] = metricsclient.PodMetric{Timestamp: time.Now(), Window: time.Minute, Value: v * scale}
	}
	return info
}

func (w *world) GetResourceMetric(_ context.Context, r corev1.ResourceName, _ string, _ labels.Selector, _ string) (metricsclient.PodMetricsInfo, time.Time, error) {
	// series[k] percent of a 1 cpu (1000m) request.
	return w.podMetrics(10), time.Now(), nil
}

func (w *world) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	return w.podMetrics(1), time.Now(), nil
}

func (w *world) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkInformer(w.index())
	return w.c.series[min(w.index(), len(w.c.series)-1)], time.Now(), nil
}

func (w *world) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("no external metrics in this check")
}

// runReal runs Kubernetes' HorizontalController on the case and returns
// the replicas after each of its syncs.
func runReal(t *testing.T, c *hpaCase) (timeline []int32, err error) {
	synctest.Test(t, func(t *testing.T) {
		timeline, err = runRealInBubble(c)
	})
	return timeline, err
}

func runRealInBubble(c *hpaCase) ([]int32, error) {
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	w := &world{c: c, client: fake.NewSimpleClientset()}
	w.scaleTo(ctx, c.initial)

	scales := &scalefake.FakeScaleClient{}
	scales.AddReactor("get", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		now := time.Now()
		if w.syncs == 0 {
			w.first = now
		} else if d := now.Sub(w.first); d != time.Duration(w.syncs)*syncSeconds*time.Second {
			w.fail("sync %d came %v after the first, not %d x %d s", w.syncs, d, w.syncs, syncSeconds)
		}
		w.syncs++
		w.timeline = append(w.timeline, w.replicas)
		return true, w.scale(), nil
	})
	scales.AddReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		s := a.(clienttesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		w.scaleTo(ctx, s.Spec.Replicas)
		w.timeline[len(w.timeline)-1] = w.replicas
		return true, w.scale(), nil
	})

	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, apimeta.RESTScopeNamespace)

	// As the kube-controller-manager: a long resync for the factory, the
	// sync period for the HPA informer's handler.
	factory := informers.NewSharedInformerFactory(w.client, 12*time.Hour)
	ctrl := podautoscaler.NewHorizontalController(ctx, w.client.CoreV1(), scales, w.client.AutoscalingV2(), mapper, w,
		factory.Autoscaling().V2().HorizontalPodAutoscalers(), factory.Core().V1().Pods(),
		syncSeconds*time.Second, downscaleStabilization, defaultTolerance, cpuInitialization, initialReadiness)
	pods := factory.Core().V1().Pods().Lister()
	w.listed = func() int {
		l, _ := pods.List(labels.Everything())
		return len(l)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// The informers have listed; wait until their watches are open too.
	// The fake clientset replays nothing a watch missed, so a pod deleted
	// between the list and the watch would stay in the controller's cache
	// for the whole run (the check flaked 1 run in 40 on such cases).
	synctest.Wait()

	// The HorizontalPodAutoscaler as the API server stores it: with its
	// defaults (k8s.io/kubernetes pkg/apis/autoscaling/v2).
	h := c.manifest()
	autoscalingdefaults.SetDefaults_HorizontalPodAutoscaler(h)
	if _, err := w.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, h, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		ctrl.Run(ctx, 1)
		close(done)
	}()
	for {
		synctest.Wait()
		w.mu.Lock()
		n, err := w.syncs, w.err
		w.mu.Unlock()
		if n >= len(c.series) || err != nil {
			break
		}
		time.Sleep(time.Second)
	}
	cancel()
	<-done
	factory.Shutdown()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timeline[:min(len(w.timeline), len(c.series))], w.err
}
