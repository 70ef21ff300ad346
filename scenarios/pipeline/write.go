package pipeline

import (
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
// that this one does not write are gone.
func (o *Outcome) WriteDir(dir string, t *outdir.Tracker) error {
	return outdir.Write(dir, OutputFolder(t), func(staging string) error {
		for _, v := range o.Variants {
			if err := reports.WriteDir(filepath.Join(staging, DirVariants, v.Name), v.Result, v.Summary); err != nil {
				return err
			}
		}
		// The main run last: its summary.json is the last file written.
		return reports.WriteDir(staging, o.Main.Result, o.Main.Summary)
	})
}
