package pipeline

import (
	"context"
	"path/filepath"

	"gpuplan.dev/gpuplan/reports"
	"gpuplan.dev/gpuplan/reports/outdir"
)

// DirVariants holds each variant's folder, DirVariants/NAME.
const DirVariants = "variants"

// OutputFolder says which folders gpuplan may replace as an output
// folder: those holding a summary.json (an earlier run).
func OutputFolder(t *outdir.Tracker) outdir.Options {
	return outdir.Options{Kind: "output", Tracker: t, Ours: func(names []string) bool {
		for _, n := range names {
			if n == reports.FileSummary {
				return true
			}
		}
		return false
	}}
}

// WriteDir writes the outcome into dir whole: the main run's files, and
// each variant's under variants/NAME. dir holds the earlier run until the
// new one is complete, then the new one only; files of the earlier run
// that this one does not write are gone. The variants' folders are
// written on the run's workers (drawing the charts is most of the time a
// folder takes), each into its own folder, so the files do not depend on
// the number of workers.
func (o *Outcome) WriteDir(dir string, t *outdir.Tracker) error {
	return outdir.Write(dir, OutputFolder(t), func(staging string) error {
		if _, err := Pool(context.Background(), len(o.Variants), o.workers, func(_ context.Context, i int) (struct{}, error) {
			v := &o.Variants[i]
			return struct{}{}, reports.WriteDir(filepath.Join(staging, DirVariants, v.Name), v.Result, v.Summary)
		}); err != nil {
			return err
		}
		// The main run last: its summary.json is the last file written.
		return reports.WriteDir(staging, o.Main.Result, o.Main.Summary)
	})
}
