// Package services is an inference service as the cluster run sees it:
// replicas that are pods of the same scheduler, a request load that
// arrives whatever the replicas, a per-interval fluid model of what the
// ready replicas serve (models/serving.BalancedCycle: one shared queue, or
// with random balancing each replica its own share) with a backlog carried
// across intervals when they fall behind (held while no replica is ready
// with a shared queue, refused with random balancing), the metrics an autoscaler
// watches (requests per second, concurrency by Little's law, queue
// latency, utilization), and the autoscaler itself (sim/autoscale's HPA,
// KEDA or KPA, or none).
//
// A Service never creates pods: the run asks it, at each of the
// autoscaler's periods, how many replicas it wants, creates or deletes
// replica pods, and tells it at each accounting step how many are ready
// (bound, image pulled, model loaded). Requests are never simulated one
// by one: each step costs the same whatever the rate. A step may be long
// (Advance cuts it into pieces where the rate moves), and a scaler that
// reads only the rate tells the run, through KeepBand, the rates at which
// it would keep its replicas, so that the run can do the periods of a
// steady stretch in one step (SkipPeriods). An LLM service with no backlog
// has metrics that are a function of the rate too (its steady state at
// the rate per replica), so SettledBand gives such a band for its HPA or
// KEDA on the queue, in-flight requests, queue latency or utilization.
// A scaler on a quantile of vLLM's latency histograms (LatencyQuantile,
// a Prometheus histogram_quantile over a rate window) reads the requests
// served in its window instead, so its periods are never settled.
package services
