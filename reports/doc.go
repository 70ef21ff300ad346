// Package reports turns a sim.Result into what people and programs read:
// the summary (summary.json, with a schemaVersion), the per-job table
// (jobs.csv), the allocation timeline (timeline.csv), a Markdown report and
// a terminal table. Inference services have their own section (requests,
// latency against the SLO, replicas, cold starts, cost per million
// requests; for an LLM service its TTFT, TPOT and end-to-end latency,
// KV-cache share, tokens served and cost per million tokens:
// llmservices.go), plots and metric series, and the bill splits between
// training and inference; their replica pods are never jobs. It computes statistics from the result's records and
// never re-runs or reaches into the simulation. A run's output folder is
// written as independent pieces (each chart, each file: see Folder) that a
// pool of workers may write at once, the same bytes whatever their number;
// the folder is built aside and put in place whole (reports/outdir). A
// single file outside a folder is written atomically (WriteFileAtomic).
package reports
