// Package queuesort orders the pending queue: higher priority first, then
// earlier submission, then lower job id (kube-scheduler's PrioritySort with
// a deterministic tie-break).
package queuesort

import "gpuplan.dev/gpuplan/sim/scheduler"

// Name is the plugin's registered name.
const Name = "PrioritySort"

// PrioritySort is the QueueSort plugin.
type PrioritySort struct{}

var (
	_ scheduler.QueueSortPlugin = &PrioritySort{}
	_ scheduler.PriorityFirst   = &PrioritySort{}
)

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &PrioritySort{}, nil
}

func (*PrioritySort) Name() string { return Name }

// PriorityFirst: a job comes before every job of lower priority.
func (*PrioritySort) PriorityFirst() {}

func (*PrioritySort) Less(a, b *scheduler.JobInfo) bool {
	if a.Spec.Priority != b.Spec.Priority {
		return a.Spec.Priority > b.Spec.Priority
	}
	if a.Spec.Submit != b.Spec.Submit {
		return a.Spec.Submit < b.Spec.Submit
	}
	return a.ID < b.ID
}
