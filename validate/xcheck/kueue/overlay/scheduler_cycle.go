// Added to the vendored sigs.k8s.io/kueue/pkg/scheduler by the cross-check
// (go build -overlay, see overlay.json); no line of Kueue is edited. It
// exports one scheduling cycle and the admission-routine wrapper, so that
// the driver runs cycles itself in virtual time instead of Start's loop.

package scheduler

import (
	"context"

	"sigs.k8s.io/kueue/pkg/util/routine"
	"sigs.k8s.io/kueue/pkg/util/wait"
)

// ScheduleOnce runs one scheduling cycle (the body of Start's loop).
func (s *Scheduler) ScheduleOnce(ctx context.Context) wait.SpeedSignal {
	return s.schedule(ctx)
}

// SetAdmissionRoutineWrapper replaces the wrapper that runs the admission
// of each admitted workload (by default a new goroutine).
func (s *Scheduler) SetAdmissionRoutineWrapper(w routine.Wrapper) {
	s.setAdmissionRoutineWrapper(w)
}
