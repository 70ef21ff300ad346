package workloads

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones the same on every machine, none read from the host

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// Cron is a CronJob's schedule: a standard five-field cron expression
// (or @hourly, @daily, ...) read as Kubernetes reads it, in a time zone.
type Cron struct {
	Expr     string
	Location *time.Location
	// Policy is the concurrencyPolicy: Allow, Forbid or Replace.
	Policy batchv1.ConcurrencyPolicy
	// StartingDeadline (ms; -1: none) is how late a missed run may still
	// start.
	StartingDeadline int64
	// Suspend stops new runs.
	Suspend bool
	sched   cron.Schedule
}

// ParseSchedule reads a cron expression as a CronJob's spec.schedule in a
// time zone (an IANA name; "" is UTC), as Kubernetes' CronJob controller
// does (robfig/cron's standard parser). A TZ= or CRON_TZ= prefix is
// refused, as Kubernetes refuses it: the zone goes in timeZone.
func ParseSchedule(expr, zone string) (*Cron, error) {
	if strings.Contains(expr, "TZ") {
		return nil, fmt.Errorf("%s: a time zone in the schedule is refused (as Kubernetes does); give it as timeZone", strict.Quote(expr))
	}
	sched, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("%s is not a cron schedule: %v", strict.Quote(expr), err)
	}
	loc := time.UTC
	if zone != "" {
		if loc, err = time.LoadLocation(zone); err != nil || zone == "Local" {
			return nil, fmt.Errorf("%s is not a time zone of the IANA database (examples: UTC, Europe/Berlin, America/New_York)", strict.Quote(zone))
		}
	}
	return &Cron{Expr: expr, Location: loc, Policy: batchv1.AllowConcurrent, StartingDeadline: -1, sched: sched}, nil
}

// Next is the first scheduled time after t (the zero time when there is
// none within five years, as for "0 0 30 2 *").
func (c *Cron) Next(t time.Time) time.Time {
	return c.sched.Next(t.In(c.Location))
}

// parseCron reads a CronJob's schedule, time zone and policies.
func parseCron(d *doc, s *batchv1.CronJobSpec) (*Cron, error) {
	zone := ""
	if s.TimeZone != nil {
		zone = *s.TimeZone
	}
	c, err := ParseSchedule(s.Schedule, zone)
	if err != nil {
		field := "spec.schedule"
		if zone != "" && !strings.Contains(err.Error(), "cron schedule") && !strings.Contains(err.Error(), "refused") {
			field = "spec.timeZone"
		}
		return nil, d.errAt(field, "%v", err)
	}
	switch s.ConcurrencyPolicy {
	case "":
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		c.Policy = s.ConcurrencyPolicy
	default:
		return nil, d.errAt("spec.concurrencyPolicy", "%s is not Allow, Forbid or Replace", strict.Quote(string(s.ConcurrencyPolicy)))
	}
	if sd := s.StartingDeadlineSeconds; sd != nil {
		if *sd < 0 || *sd > maxDurationMs/1000 {
			return nil, d.errAt("spec.startingDeadlineSeconds", "must be between 0 and 100 years of seconds")
		}
		c.StartingDeadline = *sd * 1000
	}
	if s.Suspend != nil && *s.Suspend {
		c.Suspend = true
		d.note("spec.suspend", "the CronJob is suspended: it starts no run")
	}
	if s.SuccessfulJobsHistoryLimit != nil || s.FailedJobsHistoryLimit != nil {
		d.note("spec", "history limits change nothing gpuplan models")
	}
	return c, nil
}
