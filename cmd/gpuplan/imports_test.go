package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The commands are thin: flags, a library call, a printer. They reach the
// engine only through the run pipeline, never sim or its internals.
func TestCommandsImportNoEngine(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == "gpuplan.dev/gpuplan/sim" || strings.HasPrefix(p, "gpuplan.dev/gpuplan/sim/") {
				t.Errorf("%s imports %s: commands go through scenarios/pipeline", f, p)
			}
		}
	}
}
