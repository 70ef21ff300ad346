package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"gpuplan.dev/gpuplan/scenarios"
)

// restrictPathsHelp is --restrict-paths' help, the same on every command
// that loads scenarios.
const restrictPathsHelp = "refuse any path a scenario names (traces, policies, manifests, rate files, node lists, catalogs) that resolves, symbolic links followed, outside the scenario file's folder; special files (/proc, /sys, devices, FIFOs) are refused whatever this says"

// addRestrictPaths adds --restrict-paths to a command that loads scenarios,
// on or off by default.
func addRestrictPaths(f *pflag.FlagSet, p *bool, def bool) {
	help := restrictPathsHelp + " (default off)"
	if def {
		help = restrictPathsHelp + " (default on, as a CI gate wants: --restrict-paths=false to turn it off)"
	}
	f.BoolVar(p, "restrict-paths", def, help)
}

// loadOptions are the scenario load options of --restrict-paths.
func loadOptions(restrict bool) scenarios.LoadOptions {
	return scenarios.LoadOptions{RestrictPaths: restrict}
}

// outputFolderError is an output file whose folder is not there: the
// environment's failure, exit 3, found before any work.
type outputFolderError struct{ error }

func (outputFolderError) ExitCode() int { return 3 }

// checkOutputFile refuses, before any work, an output file given to flag
// whose folder does not exist or is not a folder.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil && os.IsNotExist(err):
		return outputFolderError{fmt.Errorf("--%s %s: the folder %s does not exist; create it first (nothing was run)", flag, q(path), q(dir))}
	case err != nil:
		return outputFolderError{fmt.Errorf("--%s %s: the folder %s cannot be read: %v (nothing was run)", flag, q(path), q(dir), err)}
	case !st.IsDir():
		return outputFolderError{fmt.Errorf("--%s %s: %s is not a folder (nothing was run)", flag, q(path), q(dir))}
	}
	return nil
}
