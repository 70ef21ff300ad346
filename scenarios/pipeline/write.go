package pipeline

import (
	"context"
	"path/filepath"
	"sort"

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
// that this one does not write are gone. The pieces of every folder (each
// chart, each file) go to the run's workers together, the largest first,
// so that one folder's charts do not wait for another's; each piece
// writes its own file, so the files do not depend on the number of
// workers.
func (o *Outcome) WriteDir(dir string, t *outdir.Tracker) error {
	return outdir.Write(dir, OutputFolder(t), func(staging string) error {
		runs := make([]*Run, 0, 1+len(o.Variants))
		dirs := make([]string, 0, cap(runs))
		for i := range o.Variants {
			runs = append(runs, &o.Variants[i])
			dirs = append(dirs, filepath.Join(staging, DirVariants, o.Variants[i].Name))
		}
		runs, dirs = append(runs, &o.Main), append(dirs, staging)
		folders := make([]*reports.Folder, len(runs))
		var pieces []reports.Piece
		for i, r := range runs {
			f, err := reports.NewFolder(dirs[i], r.Result, r.Summary)
			if err != nil {
				return err
			}
			folders[i] = f
			pieces = append(pieces, f.Pieces()...)
		}
		sort.SliceStable(pieces, func(a, b int) bool { return pieces[a].Cost > pieces[b].Cost })
		if _, err := Pool(context.Background(), len(pieces), o.workers, func(_ context.Context, i int) (struct{}, error) {
			return struct{}{}, pieces[i].Write()
		}); err != nil {
			return err
		}
		// Every report.html (and the variants' summary.json) on the
		// workers, the main run's (the most charts) first; its
		// summary.json last.
		last := len(folders) - 1
		if _, err := Pool(context.Background(), len(folders), o.workers, func(_ context.Context, i int) (struct{}, error) {
			if i == 0 {
				return struct{}{}, folders[last].WriteHTML()
			}
			return struct{}{}, folders[i-1].Finish()
		}); err != nil {
			return err
		}
		return folders[last].WriteSummary()
	})
}
