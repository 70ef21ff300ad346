// Package autoscale holds the replica controllers of inference services as
// their projects document them, each a pure state machine on the virtual
// clock (integer milliseconds): it is given what its metrics source would
// report at a sync and answers how many replicas the workload should have.
//
//   - HPA: the HorizontalPodAutoscaler (autoscaling/v2). desired =
//     ceil(ready x metric / target), skipped within the tolerance (0.1);
//     not-yet-ready pods counted as using nothing on a scale-up; the
//     stabilization windows (scale-down 300 s by default: the highest
//     recommendation in the window wins; scale-up 0 s) and the scaling
//     policies (Pods or Percent per period, selectPolicy Max, Min or
//     Disabled; defaults: up 100% or 4 pods per 15 s, down 100% per 15 s)
//     applied as the controller applies them; a sync every 15 s. Checked
//     sync by sync against Kubernetes' own controller by
//     validate/xcheck/hpa.
//   - KEDA: a ScaledObject, which owns the 0 <-> 1 step (a trigger is active
//     above its activationThreshold; the last replica goes after
//     cooldownPeriod without activity, polled every pollingInterval) and
//     hands 1 <-> N to an HPA on the trigger's metric (AverageValue: desired
//     = ceil(metric / threshold); Value: ceil(current x metric / threshold)).
//   - KPA: Knative's pod autoscaler (KServe's serverless mode): the
//     average concurrency over the stable window (60 s) and the panic window
//     (10% of it) against a per-pod target; panic mode when the panic window
//     asks for at least twice the ready pods, in which it never scales
//     down, left after a stable window without cause; scale-up and
//     scale-down rate limits (1000x, 2x); scale to zero after a stable
//     window with no traffic and the grace period (30 s).
//
// The controllers hold no pods and know nothing of nodes: the service model
// creates and removes replica pods (which then wait for the scheduler, a
// node, the image and the model like any pod) and reports which are ready.
package autoscale
