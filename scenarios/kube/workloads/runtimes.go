package workloads

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/validate/strict"
)

// trainerRelease is the Kubeflow trainer release whose built-in
// ClusterTrainingRuntimes are embedded (runtimes/PROVENANCE.md).
const trainerRelease = "v2.3.0"

// builtinFiles are the trainer's manifests/base/runtimes at trainerRelease
// (read-only).
//
//go:embed runtimes/*.yaml runtimes/torchtune
var builtinFiles embed.FS

// builtinFile is how errors and notes name an embedded runtime file.
func builtinFile(name string) string {
	return "kubeflow/trainer@" + trainerRelease + ":manifests/base/runtimes/" + strings.TrimPrefix(name, "runtimes/")
}

// builtinRuntimes decodes the embedded runtimes, keyed as runtimeKey
// keys them. They are decoded on each call: nothing is cached.
func builtinRuntimes() (map[string]*runtimeDoc, error) {
	var names []string
	err := fs.WalkDir(builtinFiles, "runtimes", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && path.Ext(p) == ".yaml" {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := map[string]*runtimeDoc{}
	for _, n := range names {
		b, err := builtinFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		file := builtinFile(n)
		docs, err := strict.Manifests(file, b)
		if err != nil {
			return nil, err
		}
		if _, _, err := readRuntimes(file, docs, out, "built in"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BuiltinRuntimes lists the names of the embedded ClusterTrainingRuntimes
// in name order.
func BuiltinRuntimes() ([]string, error) {
	rts, err := builtinRuntimes()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rts {
		out = append(out, r.x.Name)
	}
	sort.Strings(out)
	return out, nil
}
