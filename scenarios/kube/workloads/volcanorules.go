package workloads

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"gpuplan.dev/gpuplan/validate/strict"
)

// Volcano's admission webhook for Jobs (volcano-sh/volcano
// pkg/webhooks/admission/jobs/validate: validateJobCreate,
// validatePolicies) denies these Jobs on creation; gpuplan refuses them
// with the webhook's reason.

// volcanoTaskRules: task names unique and DNS-1123 labels (an empty name
// is defaulted by the mutating webhook).
func volcanoTaskRules(d *doc, tasks []volcanoTaskSpec) error {
	seen := map[string]int{}
	for i, t := range tasks {
		at := fmt.Sprintf("spec.tasks[%d].name", i)
		if t.Name == "" {
			continue
		}
		if j, ok := seen[t.Name]; ok {
			return d.errAt(at, "duplicated task name %s (also spec.tasks[%d]): Volcano's admission webhook denies the Job", t.Name, j)
		}
		seen[t.Name] = i
		if errs := validation.IsDNS1123Label(t.Name); len(errs) > 0 {
			return d.errAt(at, "%s: %s: Volcano's admission webhook denies the Job", strict.Quote(t.Name), strings.Join(errs, "; "))
		}
	}
	return nil
}

// volcanoPolicyRules: each policy gives an event (or events) or an exit
// code, not both; no event twice across the policies of one list; "*"
// alone; exit code not 0 and not twice.
func volcanoPolicyRules(d *doc, ps []volcanoLifecyclePolicy, at string) error {
	events := map[string]int{}
	codes := map[int32]int{}
	for i, p := range ps {
		pat := fmt.Sprintf("%s[%d]", at, i)
		hasEvent := p.Event != "" || len(p.Events) > 0
		switch {
		case hasEvent && p.ExitCode != nil:
			return d.errAt(pat, "must not specify event and exitCode simultaneously: Volcano's admission webhook denies the Job")
		case !hasEvent && p.ExitCode == nil:
			return d.errAt(pat, "either event and exitCode should be specified: Volcano's admission webhook denies the Job")
		case p.ExitCode != nil:
			if *p.ExitCode == 0 {
				return d.errAt(pat+".exitCode", "0 is not a valid error code: Volcano's admission webhook denies the Job")
			}
			if j, ok := codes[*p.ExitCode]; ok {
				return d.errAt(pat+".exitCode", "duplicate exitCode %d (also %s[%d]): Volcano's admission webhook denies the Job", *p.ExitCode, at, j)
			}
			codes[*p.ExitCode] = i
			continue
		}
		list := p.Events
		field := pat + ".events"
		if p.Event != "" {
			list = append([]string{p.Event}, list...)
			field = pat + ".event"
		}
		for _, e := range list {
			if j, ok := events[e]; ok {
				return d.errAt(field, "duplicate event %s across different policy (also %s[%d]): Volcano's admission webhook denies the Job", e, at, j)
			}
			events[e] = i
		}
	}
	if _, any := events["*"]; any && len(events) > 1 {
		return d.errAt(at, "if there's * here, no other policy should be here: Volcano's admission webhook denies the Job")
	}
	return nil
}
