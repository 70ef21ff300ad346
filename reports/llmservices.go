package reports

import (
	"fmt"
	"io"
	"slices"

	"gpuplan.dev/gpuplan/sim"
)

// LLMServiceSummary is an LLM service's token figures: TTFT and TPOT
// against their targets, the tokens its replicas served per GPU and
// what a million tokens cost. The service's own latency figures (p50Ms,
// p95Ms, p99Ms, sloMs, sloAttainment) are its TTFT's.
type LLMServiceSummary struct {
	// Time to first token and time per output token, ms (2% buckets).
	TTFTMeanMs float64 `json:"ttftMeanMs"`
	TTFTP50Ms  float64 `json:"ttftP50Ms"`
	TTFTP95Ms  float64 `json:"ttftP95Ms"`
	TTFTP99Ms  float64 `json:"ttftP99Ms"`
	TPOTMeanMs float64 `json:"tpotMeanMs"`
	TPOTP50Ms  float64 `json:"tpotP50Ms"`
	TPOTP95Ms  float64 `json:"tpotP95Ms"`
	TPOTP99Ms  float64 `json:"tpotP99Ms"`
	// End-to-end latency, arrival to last token, ms (2% buckets).
	E2EMeanMs float64 `json:"e2eMeanMs"`
	E2EP50Ms  float64 `json:"e2eP50Ms"`
	E2EP95Ms  float64 `json:"e2eP95Ms"`
	E2EP99Ms  float64 `json:"e2eP99Ms"`
	// The share of a replica's KV-cache blocks in use: the mean over the
	// ready replicas' time and the highest of any interval (the fast
	// model's mean at the interval's rate, cached prefixes included);
	// KVCacheBlocks is a replica's cache.
	KVCacheMean   float64 `json:"kvCacheMean"`
	KVCachePeak   float64 `json:"kvCachePeak"`
	KVCacheBlocks int64   `json:"kvCacheBlocks"`
	// PrefixHitRate is the share of the prompt tokens served found in
	// the replicas' prefix cache (shared prefixes only; absent without).
	PrefixHitRate float64 `json:"prefixHitRate,omitempty"`
	// Recompute preemptions (vLLM preempts a running request when the KV
	// cache has no block for its next token): the fast model's count per
	// 1,000 requests served and the mean latency they add to a request,
	// ms (not in TTFT, TPOT or E2E).
	PreemptionsPer1k  float64 `json:"preemptionsPer1k"`
	PreemptionDelayMs float64 `json:"preemptionDelayMs"`
	// The targets (0: none) and the share of arrived requests served
	// within each.
	TTFTSLOMs      float64 `json:"ttftSloMs,omitempty"`
	TPOTSLOMs      float64 `json:"tpotSloMs,omitempty"`
	TTFTAttainment float64 `json:"ttftSloAttainment,omitempty"`
	TPOTAttainment float64 `json:"tpotSloAttainment,omitempty"`
	// Prompt and output tokens served, and per second of the GPU time
	// the replica pods held (output alone, and both).
	InputTokens              float64 `json:"inputTokens"`
	OutputTokens             float64 `json:"outputTokens"`
	OutputTokensPerGPUSecond float64 `json:"outputTokensPerGpuSecond"`
	TokensPerGPUSecond       float64 `json:"tokensPerGpuSecond"`
	// GPUsPerReplica is the tensor parallel; CapacityPerReplica the
	// requests a second one replica serves (the fast model's).
	GPUsPerReplica     int     `json:"gpusPerReplica"`
	CapacityPerReplica float64 `json:"capacityPerReplica"`
	// What the replicas cost per million output tokens, and per million
	// tokens (prompt and output), when the run is priced.
	CostPerMillionOutputTokens float64 `json:"costPerMillionOutputTokens,omitempty"`
	CostPerMillionTokens       float64 `json:"costPerMillionTokens,omitempty"`
	// Disaggregation is a disaggregated service's two pools (absent
	// otherwise).
	Disaggregation *LLMDisaggSummary `json:"disaggregation,omitempty"`
}

// LLMDisaggSummary is a disaggregated replica's pools: the prefill and
// decode engines in one replica and the GPUs of each, the KV cache's
// transfer between them (GB/s, ms a transfer), and the mean over the
// requests served of the prefill pool's TTFT (its queue and the prefill)
// and of the transfer: the service's TTFT is their sum (and the first
// token's streaming), its TPOT the decode pool's, its KV cache figures
// the decode pool's.
type LLMDisaggSummary struct {
	PrefillReplicas     int     `json:"prefillReplicas"`
	PrefillGPUs         int     `json:"prefillGpusPerReplica"`
	DecodeReplicas      int     `json:"decodeReplicas"`
	DecodeGPUs          int     `json:"decodeGpusPerReplica"`
	KVTransferGBps      float64 `json:"kvTransferGBps"`
	KVTransferLatencyMs float64 `json:"kvTransferLatencyMs"`
	PrefillTTFTMeanMs   float64 `json:"prefillTtftMeanMs"`
	KVTransferMeanMs    float64 `json:"kvTransferMeanMs"`
}

// llmSummary is an LLM service's figures (nil for a batch server); cost
// is what its replicas paid (priced: cost >= 0, else -1).
func llmSummary(r *sim.ServiceResult, gpuHours, cost float64) *LLMServiceSummary {
	x := r.LLM
	if x == nil {
		return nil
	}
	l := &LLMServiceSummary{TTFTMeanMs: round(x.TTFTMeanMs, 2), TTFTP50Ms: round(x.TTFTP50Ms, 2), TTFTP95Ms: round(x.TTFTP95Ms, 2), TTFTP99Ms: round(x.TTFTP99Ms, 2),
		TPOTMeanMs: round(x.TPOTMeanMs, 2), TPOTP50Ms: round(x.TPOTP50Ms, 2), TPOTP95Ms: round(x.TPOTP95Ms, 2), TPOTP99Ms: round(x.TPOTP99Ms, 2),
		E2EMeanMs: round(x.E2EMeanMs, 1), E2EP50Ms: round(x.E2EP50Ms, 1), E2EP95Ms: round(x.E2EP95Ms, 1), E2EP99Ms: round(x.E2EP99Ms, 1),
		KVCacheMean: round(x.KVCacheMean, 4), KVCachePeak: round(x.KVCachePeak, 4), KVCacheBlocks: x.KVCacheBlocks, PrefixHitRate: round(x.PrefixHitRate, 4),
		PreemptionsPer1k: round(x.PreemptionsPer1k, 3), PreemptionDelayMs: round(x.PreemptionDelayMs, 2),
		TTFTSLOMs: x.TTFTSLOMs, TPOTSLOMs: x.TPOTSLOMs, InputTokens: round(x.InputTokens, 0), OutputTokens: round(x.OutputTokens, 0),
		GPUsPerReplica: x.GPUsPerReplica, CapacityPerReplica: round(x.CapacityPerReplica, 3)}
	if d := x.Disagg; d != nil {
		l.Disaggregation = &LLMDisaggSummary{PrefillReplicas: d.PrefillReplicas, PrefillGPUs: d.PrefillTP, DecodeReplicas: d.DecodeReplicas, DecodeGPUs: d.DecodeTP,
			KVTransferGBps: round(d.KVTransferGBps, 2), KVTransferLatencyMs: round(d.KVTransferLatencyMs, 4),
			PrefillTTFTMeanMs: round(d.PrefillTTFTMeanMs, 2), KVTransferMeanMs: round(d.KVTransferMeanMs, 3)}
	}
	if x.TTFTSLOMs > 0 {
		l.TTFTAttainment = round(x.TTFTAttainment, 4)
	}
	if x.TPOTSLOMs > 0 {
		l.TPOTAttainment = round(x.TPOTAttainment, 4)
	}
	if gpuHours > 0 {
		l.OutputTokensPerGPUSecond = round(x.OutputTokens/(gpuHours*3600), 1)
		l.TokensPerGPUSecond = round((x.InputTokens+x.OutputTokens)/(gpuHours*3600), 1)
	}
	if cost >= 0 {
		l.CostPerMillionOutputTokens = round(perMillion(cost, x.OutputTokens), 4)
		l.CostPerMillionTokens = round(perMillion(cost, x.InputTokens+x.OutputTokens), 4)
	}
	return l
}

// llmServicesNote says what the LLM tables count.
const llmServicesNote = "LLM services: TTFT, TPOT and end-to-end latency (arrival to last token) from the fast engine model per interval (the services table's latency is their TTFT); within SLO is the share of arrived requests served within each target; tokens per GPU-second divide the tokens served by the GPU time the replica pods held; KV cache is the share of a replica's blocks in use, the mean over the ready replicas' time and the highest interval's (an interval's mean, not a step's peak); preempt/1k is the recompute preemptions per 1,000 requests served where the KV cache fills, +ms the mean latency they add to a request (not in the E2E figures)."

// llmPrefixNote says what the prefix hits column counts.
const llmPrefixNote = "Prefix hits: the share of the prompt tokens served found in the replicas' prefix cache (vLLM's automatic prefix caching of the services' shared prefixes) instead of prefilled; a prefix's first request on a replica, a miss, is not counted."

// hasLLM says the run has an LLM service.
func hasLLM(s *Summary) bool {
	for _, v := range s.Services {
		if v.LLM != nil {
			return true
		}
	}
	return false
}

// llmTables are the LLM services' two tables, header first: token
// latencies against their targets, throughput and cost; end-to-end
// latency, KV cache and tokens served.
func llmTables(s *Summary) (lat, eng [][]string) {
	h := []string{"LLM service", "TTFT p50", "p95", "p99", "within", "TPOT p50", "p95", "p99", "within", "out tok/s/GPU", "tok/s/GPU"}
	priced := hasServiceCost(s)
	if priced {
		h = append(h, "$/M out", "$/M tok")
	}
	lat = [][]string{h}
	eng = [][]string{{"LLM service", "E2E mean", "p50", "p95", "p99", "KV cache mean", "peak", "of blocks", "preempt/1k", "+ms", "input tokens", "output tokens"}}
	within := func(att, slo float64) string {
		if slo <= 0 {
			return "-"
		}
		return pct(att) + " of " + msText2(slo)
	}
	hits := false
	for _, v := range s.Services {
		hits = hits || v.LLM != nil && v.LLM.PrefixHitRate > 0
	}
	if hits {
		// A column of prefix-cache hits where a service shares prefixes.
		eng[0] = append(eng[0][:8:8], append([]string{"prefix hits"}, eng[0][8:]...)...)
	}
	var rows, rows2 [][]any
	for _, v := range s.Services {
		l := v.LLM
		if l == nil {
			continue
		}
		row := []any{v.Name, millis(l.TTFTP50Ms), millis(l.TTFTP95Ms), millis(l.TTFTP99Ms), within(l.TTFTAttainment, l.TTFTSLOMs),
			millis(l.TPOTP50Ms), millis(l.TPOTP95Ms), millis(l.TPOTP99Ms), within(l.TPOTAttainment, l.TPOTSLOMs),
			fmt.Sprintf("%.0f", l.OutputTokensPerGPUSecond), fmt.Sprintf("%.0f", l.TokensPerGPUSecond)}
		if priced {
			row = append(row, usd(l.CostPerMillionOutputTokens), usd(l.CostPerMillionTokens))
		}
		rows = append(rows, row)
		row2 := []any{v.Name, millis(l.E2EMeanMs), millis(l.E2EP50Ms), millis(l.E2EP95Ms), millis(l.E2EP99Ms),
			pct(l.KVCacheMean), pct(l.KVCachePeak), fmt.Sprint(l.KVCacheBlocks)}
		if hits {
			row2 = append(row2, pct(l.PrefixHitRate))
		}
		rows2 = append(rows2, append(row2, fmt.Sprintf("%.2f", l.PreemptionsPer1k), fmt.Sprintf("%.2f", l.PreemptionDelayMs),
			requests(l.InputTokens), requests(l.OutputTokens)))
	}
	return append(lat, columns(rows)...), append(eng, columns(rows2)...)
}

// llmDisaggTable is the disaggregated LLM services' pools, header first
// (nil without one): each pool's engines x GPUs, the transfer's
// bandwidth, and the means of TTFT's parts (prefill, transfer) and of
// TPOT (the decode pool's), with the decode pool's KV cache.
func llmDisaggTable(s *Summary) [][]string {
	var rows [][]any
	for _, v := range s.Services {
		l := v.LLM
		if l == nil || l.Disaggregation == nil {
			continue
		}
		d := l.Disaggregation
		rows = append(rows, []any{v.Name, fmt.Sprintf("%d x %d GPU", d.PrefillReplicas, d.PrefillGPUs), fmt.Sprintf("%d x %d GPU", d.DecodeReplicas, d.DecodeGPUs),
			fmt.Sprintf("%g GB/s", d.KVTransferGBps), millis(d.PrefillTTFTMeanMs), millis(d.KVTransferMeanMs), millis(l.TTFTMeanMs), millis(l.TPOTMeanMs),
			pct(l.KVCacheMean), fmt.Sprint(l.KVCacheBlocks)})
	}
	if len(rows) == 0 {
		return nil
	}
	h := []string{"LLM service (P/D)", "prefill engines", "decode engines", "KV transfer", "prefill TTFT mean", "transfer mean", "TTFT mean", "decode TPOT mean", "decode KV mean", "of blocks"}
	return append([][]string{h}, columns(rows)...)
}

// llmDisaggNote says what the pools' table counts.
const llmDisaggNote = "Prefill/decode pools: each replica of a disaggregated LLM service is a pool of prefill engines and a pool of decode engines in one pod; a request's TTFT is the prefill pool's (queue and prefill) and its KV cache's transfer to a decode engine, its TPOT the decode pool's; KV cache figures are the decode pool's blocks."

// writeLLMTable writes the terminal's LLM services block, when the run
// has one.
func writeLLMTable(w io.Writer, s *Summary) {
	if !hasLLM(s) {
		return
	}
	lat, eng := llmTables(s)
	for _, t := range [][][]string{lat, eng} {
		fmt.Fprintln(w)
		termTable(w, t[0], t[1:])
	}
	fmt.Fprintln(w, llmServicesNote)
	if len(eng) > 0 && slices.Contains(eng[0], "prefix hits") {
		fmt.Fprintln(w, llmPrefixNote)
	}
	if pd := llmDisaggTable(s); pd != nil {
		fmt.Fprintln(w)
		termTable(w, pd[0], pd[1:])
		fmt.Fprintln(w, llmDisaggNote)
	}
}

// LLMFigures are an LLM service's figures set beside each run's (what-if
// variants): p95 TTFT, TPOT and E2E, the KV cache's peak share, the
// recompute preemptions per 1,000 requests, and the cost per million
// output tokens and per million tokens (0: unpriced).
type LLMFigures struct {
	TTFTP95Ms                  float64 `json:"ttftP95Ms"`
	TPOTP95Ms                  float64 `json:"tpotP95Ms"`
	E2EP95Ms                   float64 `json:"e2eP95Ms"`
	KVCachePeak                float64 `json:"kvCachePeak"`
	PreemptionsPer1k           float64 `json:"preemptionsPer1k"`
	CostPerMillionOutputTokens float64 `json:"costPerMillionOutputTokens,omitempty"`
	CostPerMillionTokens       float64 `json:"costPerMillionTokens,omitempty"`
}

// llmFigures are l's figures for the runs' table (nil without).
func llmFigures(l *LLMServiceSummary) *LLMFigures {
	if l == nil {
		return nil
	}
	return &LLMFigures{TTFTP95Ms: l.TTFTP95Ms, TPOTP95Ms: l.TPOTP95Ms, E2EP95Ms: l.E2EP95Ms, KVCachePeak: l.KVCachePeak,
		PreemptionsPer1k: l.PreemptionsPer1k, CostPerMillionOutputTokens: l.CostPerMillionOutputTokens, CostPerMillionTokens: l.CostPerMillionTokens}
}

// variantLLMHeader and variantLLMRows set each run's LLM services side by
// side: one row per run and LLM service (none without one).
func variantLLMHeader() []string {
	return []string{"run", "LLM service", "TTFT p95", "TPOT p95", "E2E p95", "KV cache peak", "preempt/1k", "$/M out tokens", "$/M tokens"}
}

func variantLLMRows(vs []RunFigures) [][]string {
	var rows [][]any
	for _, f := range vs {
		for _, v := range f.Services {
			l := v.LLM
			if l == nil {
				continue
			}
			var out, all any = "-", "-"
			if l.CostPerMillionTokens > 0 {
				out, all = usd(l.CostPerMillionOutputTokens), usd(l.CostPerMillionTokens)
			}
			rows = append(rows, []any{f.Name, v.Name, millis(l.TTFTP95Ms), millis(l.TPOTP95Ms), millis(l.E2EP95Ms), pct(l.KVCachePeak), fmt.Sprintf("%.2f", l.PreemptionsPer1k), out, all})
		}
	}
	return columns(rows)
}
