package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
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

// layers is the import direction between the project's top-level folders:
// a folder imports only folders after it (cmd -> scenarios -> validate ->
// reports -> sim -> models; the benchmarks sit above scenarios, which they
// drive, and below the commands, which run the calibration). The order is
// the architecture page's.
var layers = []string{"cmd", "benchmarks", "scenarios", "validate", "reports", "sim", "models"}

// folderArrows lists the imports that climb against layers in go list's
// output (lines "importer imported..."): importer and imported in
// different top-level folders, the imported one not after the importer's.
func folderArrows(module string, lines []string) []string {
	rank := func(pkg string) (string, int) {
		rest, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			return "", -1
		}
		top, _, _ := strings.Cut(rest, "/")
		for i, l := range layers {
			if l == top {
				return top, i
			}
		}
		return top, len(layers)
	}
	var bad []string
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		from, fr := rank(f[0])
		if fr < 0 {
			continue
		}
		for _, im := range f[1:] {
			to, tr := rank(im)
			if tr < 0 || to == from {
				continue
			}
			if fr == len(layers) || tr == len(layers) || tr <= fr {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s -> %s climbs against %s", f[0], im, from, to, strings.Join(layers, " -> ")))
			}
		}
	}
	sort.Strings(bad)
	return slices.Compact(bad)
}

// One direction between folders, for every package of the module and its
// in-package tests: nothing imports back up the layers. External test
// packages (package x_test) are left out: they are packages of their own
// that may drive a package from above (sim's tests check their runs with
// validate.Invariants).
func TestFoldersImportOneDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list found %d packages; want the whole module", len(lines))
	}
	for _, b := range folderArrows("gpuplan.dev/gpuplan", lines) {
		t.Error(b)
	}
}

// The check itself: a climb is found, a descent and an arrow inside one
// folder are not, and a new top-level folder must be placed in layers.
func TestFolderArrowsFindsClimbs(t *testing.T) {
	m := "example.dev/m"
	got := folderArrows(m, []string{
		m + "/scenarios/pipeline " + m + "/reports " + m + "/validate " + m + "/scenarios fmt",
		m + "/reports/manifests " + m + "/scenarios " + m + "/sim/cluster",
		m + "/validate " + m + "/scenarios/strict",
		m + "/sim " + m + "/sim/engine " + m + "/models",
		m + "/models",
		m + "/tools/x " + m + "/models",
	})
	want := []string{
		m + "/reports/manifests imports " + m + "/scenarios: reports -> scenarios climbs against cmd -> benchmarks -> scenarios -> validate -> reports -> sim -> models",
		m + "/tools/x imports " + m + "/models: tools -> models climbs against cmd -> benchmarks -> scenarios -> validate -> reports -> sim -> models",
		m + "/validate imports " + m + "/scenarios/strict: validate -> scenarios climbs against cmd -> benchmarks -> scenarios -> validate -> reports -> sim -> models",
	}
	if !slices.Equal(got, want) {
		t.Errorf("folderArrows:\n got %q\nwant %q", got, want)
	}
}
