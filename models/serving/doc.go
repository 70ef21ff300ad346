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
//   - FluidCycle: the fast per-interval model the cluster run uses. At a
//     given rate and replica count, requests are a fluid: batches gather
//     for the delay (Timeout), fill first (Fill), or wait for a replica
//     that is always busy (Busy), or arrivals exceed full batches
//     (Overload); a request's wait is uniform over its batch's gathering
//     (with the first request's full delay as an atom), plus the G/D/c
//     queueing of ready batches near capacity (Allen-Cunneen). Its p95
//     is within 5% of the request-level simulator from 10% to 98% of
//     capacity on 4 replicas and to 80% on one (conservative above), and
//     over an hour of a diurnal curve; each interval costs one evaluation
//     whatever the request rate.
//   - Balancing: how requests reach the replicas. LeastRequest is one
//     shared queue (Knative's activator, least-request proxies): batches
//     form from the total rate, and unbatched it is Erlang C. Random is
//     kube-proxy behind a Kubernetes Service: each replica queues and
//     batches its own Poisson(lambda/c) share, so BalancedCycle is one
//     replica's FluidCycle at lambda/c with c times its throughput, and
//     unbatched it is c M/M/1 queues; batches fill c times slower.
//   - Simulate: an exact request-level simulator of c replicas with a
//     shared queue or a queue each (random dispatch), dynamic batching, a queue limit and a timeout, over a
//     time-varying Poisson arrival rate. It is for short windows and for
//     holding the fast per-interval model to: a week of thousands of
//     requests a second is never simulated request by request inside a
//     cluster run.
//   - Engine: an LLM serving engine's step (llm.go): the GPU time of one
//     continuous-batching step of prefill chunks and decodes from the
//     model's shape (Transformer: Llama 3 8B and 70B as published) and a
//     roofline of the GPU (each matrix multiply a kernel's fixed time plus
//     the larger of its bytes over the bandwidth and its FLOPs over the
//     rate; H200Roofline fitted to a measured H200, RooflineFor the other
//     GPUs from published peaks), tensor parallelism, pipeline parallelism
//     (Engine.PP: vLLM's layer split, PP micro-batches in flight a step,
//     the activations sent between stages), and the KV cache's capacity
//     in blocks; WholeStep is BLIS's single-crossover roofline,
//     for comparing with it (times there in seconds); Fitted a step time
//     fitted to measured steps (StepFit, BLIS's trained-physics form:
//     corrected roofline terms and fixed overheads), with LLMConfig's
//     API-server overheads beside it.
//   - SimulateLLM: the exact request- and step-level model of one
//     vLLM-style replica (llmsim.go): continuous batching within the
//     token budget and max_num_seqs, chunked prefill, KV blocks and
//     preemption by recompute, and vLLM's automatic prefix caching (a
//     request naming a shared prefix skips the prefill of the prefix's
//     full blocks a replica still holds; unread cached prefixes give
//     their blocks up, least recently used first). SimulateLLMRouted
//     runs several replicas behind a router (llmroute.go): round robin,
//     least outstanding, or the llm-d endpoint picker's default
//     prefix-aware scoring, which the fast model behind a router
//     (SteadyLLMRouted, llmroutefast.go) is held to.
//   - SteadyLLM: the fast model of one LLM replica at a steady rate
//     (llmfast.go): the fixed point of the mean step over the prompts a
//     step gathers and the requests decoding (Little's law), with TTFT
//     and TPOT percentiles from a grid; within 5% of SimulateLLM up to
//     63-80% of capacity. End-to-end latency (e2e.go) is a mixture over
//     a fine grid of output lengths of TTFT and the output's tokens at
//     the request's TPOT, held to SimulateLLM as the others are. The
//     cluster run's LLM services (sim/services) are accounted with it.
//     SteadyLLMRouted is one of c replicas behind a router: round
//     robin's Erlang-c arrivals, least outstanding's pooled decoding
//     count, and their peakedness; within 10% of SimulateLLMRouted on
//     TTFT and 5% on TPOT and E2E from 27% to 80% of capacity. Behind
//     the prefix-aware picker with shared prefixes (llmprefixroute.go)
//     each prefix stays on the replica it first went to: a replica
//     serves and caches only its groups (more groups than replicas
//     placed as the picker's fewest-outstanding rule places them,
//     llmprefixplace.go), the service's latencies the mixture of its
//     kinds of replica and its capacity the expected busiest's
//     (PrefixAwareCapacity); within 5% of SimulateLLMRouted with no
//     more groups than replicas at 10-80% of capacity, and with more
//     of its mean over seeds at 30-70% but for three figures (up to
//     11%: TestPrefixPlacementAgainstExactOverSeeds). Its
//     recompute preemptions (llmpreempt.go) are the pushes of the
//     decoding requests' drift against the cache's blocks, within a
//     factor of 2 of SimulateLLM's where they pass a few per 1,000.
//   - Disagg: prefill/decode disaggregation (llmdisagg.go): a prefill
//     pool runs each prompt to its first token, its KV cache (2 x layers
//     x KV heads x head dimension x bytes a token) crosses the fabric to
//     a decode pool, which decodes the rest: TTFT is the prefill pool's
//     queue and prefill and the transfer, TPOT the decode pool's alone.
//     SimulateLLMDisagg is its exact model (the two pools' routed
//     simulators, a decode pool's requests arriving Prefilled) and
//     SteadyLLMDisagg its fast model (a prefill replica's TTFT from the
//     chain of its steps' prompt counts), held to it within 5% on mean
//     and p95 TTFT, TPOT and E2E from 30% to 70% of capacity. With
//     shared prefixes the prefill engines cache them (skipping their
//     prefill) and the transfer still carries the whole prompt's KV.
//   - SizeLLM: the fewest replicas meeting p95 TTFT and TPOT targets at a
//     rate (the fast model's count, confirmed by the exact model), and
//     the cost per million tokens (llmsize.go).
//
// Times are in milliseconds, rates per second unless named otherwise.
// Everything random takes an explicit *rand.Rand.
package serving
