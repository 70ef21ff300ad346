// Package gang is all-or-nothing placement for multi-pod jobs
// (coscheduling, Volcano's gang plugin): every remaining pod of a job is
// placed in the same cycle or none is, so a half-placed job never holds
// GPUs it cannot use. A job with a MinAvailable below its size (a
// PodGroup's minMember) needs that many placed together; its other pods
// then bind as they fit. Without this plugin pods bind one by one as they fit
// and a job starts once its last pod is bound.
package gang

import (
	"gpuplan.dev/gpuplan/sim/scheduler"
)

// Name is the plugin's registered name.
const Name = "Gang"

// Gang is a MinMember and Permit plugin.
type Gang struct{ reject *scheduler.Status }

var (
	_ scheduler.PermitPlugin    = &Gang{}
	_ scheduler.MinMemberPlugin = &Gang{}
)

// New returns the plugin.
func New(scheduler.PluginConfig, *scheduler.Handle) (scheduler.Plugin, error) {
	return &Gang{reject: scheduler.NewStatus(scheduler.Unschedulable, Name,
		"gang: not every pod of the job fits at once")}, nil
}

func (*Gang) Name() string { return Name }

// MinMember is the whole job (every remaining pod), or with the job's
// MinAvailable (a PodGroup's minMember) what is missing of it.
func (*Gang) MinMember(job *scheduler.JobInfo) int32 { return job.GangNeed() }

// Permit rejects a placement short of the gang. When no pod fits at all
// the framework reports why the first pod did not fit instead.
func (g *Gang) Permit(_ *scheduler.CycleState, job *scheduler.JobInfo, placed int32) *scheduler.Status {
	if placed > 0 && placed < job.GangNeed() {
		return g.reject
	}
	return nil
}
