// Package compare sets two runs' key figures side by side, with the
// change: the result of gpuplan compare and its printers (table, Markdown,
// JSON). It reads only the runs' summaries (reports.Summary), never a
// scenario or a result of the engine.
package compare
