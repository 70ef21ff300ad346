package services

import (
	"fmt"

	"gpuplan.dev/gpuplan/scenarios/kube/gpufields"
	"gpuplan.dev/gpuplan/validate/strict"
)

// gpuFields turns a serving workload's gpufields findings into the first
// refusal (an input error at its field) or notes, each with its line.
func gpuFields(file string, line int, pos strict.Positions, w *Workload, fs []gpufields.Finding) ([]string, error) {
	var notes []string
	for _, f := range fs {
		if f.Err {
			return nil, strict.At(file, line, pos, f.Field, "%s", f.Msg)
		}
		l := line
		if p, ok := pos[f.Field]; ok {
			l = p[0]
		}
		notes = append(notes, fmt.Sprintf("%s:%d: %s %s: %s: %s", file, l, w.Kind, w.Name, f.Field, f.Msg))
	}
	return notes, nil
}
