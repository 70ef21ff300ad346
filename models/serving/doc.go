// Package serving is the queueing and batching math of inference
// replicas: how long a request waits and how long its batch takes.
//
//   - Batch: TorchServe-style dynamic batching. A batch starts when
//     batchSize requests wait or the oldest has waited maxBatchDelay; it
//     takes base + perItem x n. Throughput at batch size n is
//     n / (base + perItem x n).
//   - M/M/c: waiting-time and response-time distributions of c replicas
//     sharing one queue with exponential service (Erlang C): P(W > t) =
//     C(c, a) exp(-(c mu - lambda) t), their quantiles and means.
//   - Simulate: an exact request-level simulator of c replicas with a
//     shared queue, dynamic batching, a queue limit and a timeout, over a
//     time-varying Poisson arrival rate. It is for short windows and for
//     holding the fast per-interval model to: a week of thousands of
//     requests a second is never simulated request by request inside a
//     cluster run.
//
// Times are in milliseconds, rates per second unless named otherwise.
// Everything random takes an explicit *rand.Rand.
package serving
