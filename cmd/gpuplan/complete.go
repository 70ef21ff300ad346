package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/validate"
)

// choices is the fixed set of values a flag takes: the one list both its
// check (exit 2 on any other value) and its shell completion read, so the
// two cannot drift apart.
type choices []string

// The flags' value lists that live in this package; the others are the
// library's own (traces.TraceFormats, pipeline.PolicyNames,
// scenarios.TieBreaks, the manifests options' lists).
var (
	outputsTable    = func() choices { return choices{"table", "json", "yaml", "markdown"} }
	outputsTJY      = func() choices { return choices{"table", "json", "yaml"} }
	outputsProfile  = func() choices { return choices{"yaml", "json"} }
	progressModes   = func() choices { return choices{"auto", "always", "never"} }
	onOff           = func() choices { return choices{string(scenarios.Off), string(scenarios.On)} }
	clusterSources  = func() choices { return choices{"scenario", "derive"} }
	pendingPodModes = func() choices { return choices{traces.PendingReplay, traces.PendingExclude} }
	llmModels       = func() choices { return slices.Sorted(maps.Keys(scenarios.LLMModels())) }
	llmGPUModels    = func() choices { return scenarios.LLMGPUs() }
)

// has reports whether v is one of the values.
func (c choices) has(v string) bool { return slices.Contains(c, v) }

// words is the list as a sentence: "a, b or c".
func (c choices) words() string {
	switch len(c) {
	case 0:
		return ""
	case 1:
		return c[0]
	}
	return strings.Join(c[:len(c)-1], ", ") + " or " + c[len(c)-1]
}

// check refuses (exit 2) a value of flag that is not one of the list.
func (c choices) check(flag, v string) error {
	if c.has(v) {
		return nil
	}
	return usageError{fmt.Errorf("--%s is %s; want %s", flag, q(v), c.words())}
}

// enumAnnotation marks a flag whose values come from a fixed list, for the
// test that runs each one's completion against its list.
const enumAnnotation = "gpuplan_enum"

// enumFlag makes flag of c complete the values of list (read when asked,
// the same function its check reads).
func enumFlag(c *cobra.Command, flag string, list func() []string) {
	must(c.Flags().SetAnnotation(flag, enumAnnotation, []string{"true"}))
	must(c.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return list(), cobra.ShellCompDirectiveNoFileComp
	}))
}

// choicesOf adapts a choices list to enumFlag.
func choicesOf(c func() choices) func() []string { return func() []string { return c() } }

// fileFlag makes flag complete file names ending in one of exts (none:
// any file).
func fileFlag(c *cobra.Command, flag string, exts ...string) {
	if len(exts) == 0 {
		must(c.Flags().SetAnnotation(flag, cobra.BashCompFilenameExt, []string{}))
		return
	}
	must(c.MarkFlagFilename(flag, exts...))
}

// dirFlag makes flag complete folder names.
func dirFlag(c *cobra.Command, flags ...string) {
	for _, f := range flags {
		must(c.MarkFlagDirname(f))
	}
}

// freeFlag declares flags whose values are free (a name, a size, an
// image, a duration): they complete nothing, said out loud so that the
// test walking every flag knows none was forgotten.
func freeFlag(c *cobra.Command, flags ...string) {
	for _, f := range flags {
		must(c.RegisterFlagCompletionFunc(f, cobra.NoFileCompletions))
	}
}

// scenarioFlag makes flag complete values read from the scenario file
// given as the command's first argument (values of sc); nothing without
// one or when it does not load.
func scenarioFlag(c *cobra.Command, flag string, values func(sc *scenarios.Scenario) []string) {
	must(c.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		sc, err := scenarios.LoadFileWith(args[0], scenarios.LoadOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return values(sc), cobra.ShellCompDirectiveNoFileComp
	}))
}

// scenarioOrDefault completes values read from the scenario file given as
// the first argument, or from the built-in default scenario without one.
func scenarioOrDefault(values func(sc *scenarios.Scenario) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		var sc *scenarios.Scenario
		var err error
		if len(args) == 0 {
			sc, err = scenarios.Default()
		} else {
			sc, err = scenarios.LoadFileWith(args[0], scenarios.LoadOptions{})
		}
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return values(sc), cobra.ShellCompDirectiveNoFileComp
	}
}

// recommendMetrics are the metrics recommend optimises and constrains:
// validate's, and completed.
func recommendMetrics(sc *scenarios.Scenario) []string {
	return append(metricNames(sc), "completed")
}

// scenarioArgs completes a command's scenario argument: YAML files.
func scenarioArgs(c *cobra.Command) {
	c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
}

// variantNames are a scenario's what-if variants.
func variantNames(sc *scenarios.Scenario) []string { return sc.VariantNames() }

// metricNames are the metrics validate (and recommend's --minimize and
// --subject-to) read, spelled out: braces expanded, SERVICE and POOL
// replaced by the scenario's services and pools; a name still holding a
// placeholder (QUEUE, <outcome>) is left out.
func metricNames(sc *scenarios.Scenario) []string {
	var services, pools []string
	if sc != nil {
		for _, s := range sc.Spec.Workload.Services {
			services = append(services, s.Name)
		}
		for _, p := range sc.Spec.Cluster.Pools {
			pools = append(pools, p.Name)
		}
	}
	var out []string
	for _, m := range validate.Metrics() {
		for _, name := range expandBraces(m) {
			for _, n := range substitute(name, map[string][]string{"SERVICE": services, "POOL": pools}) {
				if !strings.ContainsAny(n, "<{") && !hasPlaceholder(n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// hasPlaceholder reports whether a metric name still holds an upper-case
// placeholder word (QUEUE).
func hasPlaceholder(n string) bool {
	for _, part := range strings.Split(n, ".") {
		if part != "" && strings.ToUpper(part) == part && strings.ToLower(part) != part {
			return true
		}
	}
	return false
}

// expandBraces spells out one {a,b,c} group of a name ("wait.{p50,p95}"
// is wait.p50 and wait.p95); "{...}" stays as it is.
func expandBraces(n string) []string {
	i, j := strings.Index(n, "{"), strings.Index(n, "}")
	if i < 0 || j < i || n[i+1:j] == "..." {
		return []string{n}
	}
	var out []string
	for _, alt := range strings.Split(n[i+1:j], ",") {
		out = append(out, expandBraces(n[:i]+alt+n[j+1:])...)
	}
	return out
}

// substitute replaces a placeholder segment of a name by each of its
// values (none: the name as it is).
func substitute(n string, by map[string][]string) []string {
	for ph, vals := range by {
		if !strings.Contains(n, "."+ph+".") || len(vals) == 0 {
			continue
		}
		var out []string
		for _, v := range vals {
			out = append(out, strings.Replace(n, "."+ph+".", "."+v+".", 1))
		}
		return out
	}
	return []string{n}
}

// varyCompletions are the settings recommend's --vary names in a
// scenario: each pool's count and its spot share.
func varyCompletions(sc *scenarios.Scenario) []string {
	var out []string
	for _, p := range sc.Spec.Cluster.Pools {
		out = append(out, fmt.Sprintf("cluster.pools[%s].count=", p.Name), "spot:"+p.Name+"=")
	}
	return out
}

// must panics on a flag registration that names no flag: a programming
// error of this package, caught by every test that builds the commands.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
