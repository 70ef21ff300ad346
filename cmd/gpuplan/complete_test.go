package main

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/reports/outdir"
	"gpuplan.dev/gpuplan/scenarios/pipeline/sweep"
)

// completions runs cobra's hidden __complete command (what the shell
// scripts of gpuplan completion call) and returns the candidates.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := gpuplan(t, append([]string{"__complete"}, args...)...)
	require.Equal(t, 0, code, errOut)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") { // the directive
			break
		}
		got = append(got, strings.SplitN(line, "\t", 2)[0])
	}
	return got
}

// allowedIn reads the values a refusal says the flag takes: the list
// after "want one of", "want", "is not one of" or "placement policy (",
// "a, b or c" and "a, b, c" alike; a value may be a version ("1.3").
var allowedIn = regexp.MustCompile(`(?:want one of|is not one of|placement policy \(|[;:] want(?: one of)?) ?([A-Za-z0-9-]+(?:\.[0-9]+)*(?:(?:, | or )[A-Za-z0-9-]+(?:\.[0-9]+)*)*)`)

func allowedValues(t *testing.T, msg string) []string {
	t.Helper()
	m := allowedIn.FindStringSubmatch(msg)
	require.NotNil(t, m, "no list of values in %q", msg)
	return strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
}

// Each flag with a fixed set of values completes exactly the values its
// check accepts: the refusal of a bad value (exit 2) lists the values it
// takes, and the shell's candidates are that list, no more, no fewer.
// Every flag the commands mark as an enumeration is in the table, so a
// new one cannot go untested.
func TestCompletionOfEnumFlagsIsTheValidatedList(t *testing.T) {
	tmp := t.TempDir()
	scenario := "testdata/cost-two-nodes.yaml"
	pods := "../../testdata/openb/openb_pod_list_default.csv"
	nodes := "../../testdata/openb/openb_node_list_gpu_node.csv"
	cases := []struct {
		cmd  []string // the command, and what it needs to reach the flag's check
		flag string
	}{
		{[]string{"simulate"}, "output"},
		{[]string{"simulate"}, "progress"},
		{[]string{"simulate"}, "spot-sensitivity"},
		{[]string{"simulate"}, "focus-version"},
		{[]string{"simulate"}, "cluster"},
		{[]string{"simulate"}, "policy"},
		{[]string{"simulate"}, "tie-break"},
		{[]string{"simulate", "--trace", "t.csv"}, "trace-format"},
		{[]string{"simulate", "--trace", "t.csv", "--trace-format", "openb"}, "pending-pods"},
		{[]string{"compare", "a.json", "b.json"}, "output"},
		{[]string{"inflate", "--nodes", nodes, "--pods", pods}, "output"},
		{[]string{"inflate", "--nodes", nodes, "--pods", pods}, "policy"},
		{[]string{"inflate", "--nodes", nodes, "--pods", pods}, "tie-break"},
		{[]string{"advise", "checkpoint", "--mtbf", "4h", "--checkpoint-cost", "5m"}, "output"},
		{[]string{"calibrate"}, "output"},
		{[]string{"calibrate", "parse", "x.txt"}, "output"},
		{[]string{"calibrate", "vllm", "x.json", "--gpu", "H100-80GB"}, "model"},
		{[]string{"calibrate", "vllm", "x.json", "--model", "llama-3-8b"}, "gpu"},
		{[]string{"version"}, "output"},
		{[]string{"validate", "--baseline", "a.yaml", "--candidate", "b.yaml", "--assert", "r.yaml"}, "progress"},
		{[]string{"sweep", "testdata/sweep-two-nodes.yaml"}, "progress"},
		{[]string{"recommend", "testdata/cost-two-nodes.yaml", "--vary", "cluster.pools[0].count=1..3"}, "progress"},
		{[]string{"trace", "stats", pods}, "format"},
		{[]string{"trace", "stats", pods, "--format", "openb"}, "output"},
		{[]string{"trace", "stats", pods, "--format", "openb"}, "progress"},
		{[]string{"trace", "convert", pods, "--out", tmp + "/c.csv"}, "format"},
		{[]string{"trace", "convert", pods, "--format", "openb", "--out", tmp + "/c.csv"}, "progress"},
		{[]string{"trace", "sort", pods, "--out", tmp + "/s.csv"}, "format"},
		{[]string{"trace", "sort", pods, "--out", tmp + "/s.csv"}, "trace-format"},
		{[]string{"trace", "sort", pods, "--format", "openb", "--out", tmp + "/s.csv"}, "progress"},
		{[]string{"trace", "generate", "--jobs", "1", "--out", tmp + "/g.csv"}, "progress"},
		{[]string{"manifests", scenario, "--out", tmp + "/m"}, "access-mode"},
		{[]string{"manifests", scenario, "--out", tmp + "/m"}, "training-api"},
		{[]string{"manifests", scenario, "--out", tmp + "/m"}, "provider"},
		{[]string{"manifests", scenario, "--out", tmp + "/m"}, "fixed-pools"},
		{[]string{"manifests", scenario, "--out", tmp + "/m"}, "gpus"},
	}
	tested := map[string]bool{}
	for _, c := range cases {
		path := commandPath(c.cmd)
		tested[path+" --"+c.flag] = true
		got := completions(t, append(append([]string{}, c.cmd...), "--"+c.flag, "")...)
		require.NotEmpty(t, got, "%s --%s completes nothing", path, c.flag)
		code, _, errOut := gpuplan(t, append(append([]string{}, c.cmd...), "--"+c.flag, "not-a-value")...)
		require.Equal(t, 2, code, "%s --%s not-a-value: %s", path, c.flag, errOut)
		named := c.flag
		if path == "trace sort" && c.flag == "trace-format" {
			named = "format" // "the same as --format", checked as it
		}
		require.Contains(t, errOut, "--"+named)
		want := allowedValues(t, errOut)
		sort.Strings(got)
		sort.Strings(want)
		require.Equal(t, want, got, "%s --%s: completion against %q", path, c.flag, errOut)
	}
	// Every flag marked as an enumeration has its row above.
	walkFlags(t, func(c *cobra.Command, f *pflag.Flag) {
		if _, ok := f.Annotations[enumAnnotation]; ok {
			require.True(t, tested[commandPath(strings.Fields(c.CommandPath())[1:])+" --"+f.Name], "%s --%s: an enumeration with no row in this test", c.CommandPath(), f.Name)
		}
	})
}

// commandPath is the command words of args (those before the first
// argument that is not a command name).
func commandPath(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || strings.ContainsAny(a, "./") {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// walkFlags calls f for every flag of every command but help and the
// completion commands' own.
func walkFlags(t *testing.T, f func(*cobra.Command, *pflag.Flag)) {
	t.Helper()
	root := newRootCmd(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, &outdir.Tracker{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Name != "help" && fl.Name != "version" {
				f(c, fl)
			}
		})
		for _, sub := range c.Commands() {
			if sub.Name() != "completion" && sub.Name() != "help" {
				walk(sub)
			}
		}
	}
	walk(root)
}

// Every flag that takes a value says how it completes: from a fixed
// list, from the scenario, as files or folders, or explicitly nothing (a
// free value: a size, a name, a number). A flag added without one (an
// enumeration whose values would not complete) fails here.
func TestEveryFlagDeclaresItsCompletion(t *testing.T) {
	n := 0
	walkFlags(t, func(c *cobra.Command, f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			return
		}
		n++
		_, fn := c.GetFlagCompletionFunc(f.Name)
		_, file := f.Annotations[cobra.BashCompFilenameExt]
		_, dir := f.Annotations[cobra.BashCompSubdirsInDir]
		require.True(t, fn || file || dir, "%s --%s declares no completion (enumFlag, fileFlag, dirFlag, scenarioFlag or freeFlag)", c.CommandPath(), f.Name)
	})
	// simulate alone has 19 flags that take a value (counted in
	// newSimulateCmd): the walk saw them and the other commands'.
	require.Greater(t, n, 19)
}

// --variant completes the variants of the scenario file on the command
// line: spot-what-if.yaml's spec.variants are all-spot-tight,
// all-spot-advisor and mix-tight (read off the file, in its order).
func TestCompletionOfVariantsFromTheScenario(t *testing.T) {
	want := []string{"all-spot-tight", "all-spot-advisor", "mix-tight"}
	for _, cmd := range []string{"simulate", "manifests"} {
		require.Equal(t, want, completions(t, cmd, "../../scenarios/examples/spot-what-if.yaml", "--variant", ""), cmd)
	}
	// No scenario file: nothing to offer.
	require.Empty(t, completions(t, "simulate", "--variant", ""))
}

// recommend's --minimize and --subject-to offer metric names that its
// parser takes, the scenario's pools spelled out; --vary its pools'
// settings.
func TestCompletionOfRecommendMetrics(t *testing.T) {
	got := completions(t, "recommend", "testdata/cost-two-nodes.yaml", "--minimize", "")
	require.Contains(t, got, "cost.total")
	require.Contains(t, got, "completed")
	require.Contains(t, got, "wait.p95")
	for _, m := range got {
		_, err := sweep.ParseMetric(m)
		require.NoError(t, err, "completion offers %q, which --minimize refuses", m)
	}
	vary := completions(t, "recommend", "testdata/cost-two-nodes.yaml", "--vary", "")
	require.True(t, slices.ContainsFunc(vary, func(s string) bool { return strings.HasPrefix(s, "cluster.pools[") && strings.HasSuffix(s, "].count=") }), "%v", vary)
}

// File flags complete files of their kind: the shell is told to filter
// by these extensions (cobra's directive 8, FilterFileExt).
func TestCompletionOfFileFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		exts []string
	}{
		{[]string{"validate", "--junit", ""}, []string{"xml"}},
		{[]string{"validate", "--baseline", ""}, []string{"yaml", "yml"}},
		{[]string{"inflate", "--nodes", ""}, []string{"csv"}},
		{[]string{"simulate", ""}, []string{"yaml", "yml"}},
	} {
		code, out, errOut := gpuplan(t, append([]string{"__complete"}, c.args...)...)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, ":8\n", "%v: %s", c.args, out)
		for _, e := range c.exts {
			require.Contains(t, out, e+"\n", c.args)
		}
	}
}
