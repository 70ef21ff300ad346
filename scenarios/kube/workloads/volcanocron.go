package workloads

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpuplan.dev/gpuplan/validate/strict"
)

// volcanoCronJob is Volcano's CronJob (batch.volcano.sh/v1alpha1,
// volcano.sh/apis pkg/apis/batch/v1alpha1 CronJobSpec): a batch/v1
// CronJob's schedule fields around a Volcano Job template.
type volcanoCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Schedule                string                    `json:"schedule"`
		TimeZone                *string                   `json:"timeZone,omitempty"`
		StartingDeadlineSeconds *int64                    `json:"startingDeadlineSeconds,omitempty"`
		ConcurrencyPolicy       batchv1.ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
		Suspend                 *bool                     `json:"suspend,omitempty"`
		JobTemplate             struct {
			metav1.ObjectMeta `json:"metadata,omitempty"`
			Spec              volcanoJobSpec `json:"spec,omitempty"`
		} `json:"jobTemplate"`
		SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`
		FailedJobsHistoryLimit     *int32 `json:"failedJobsHistoryLimit,omitempty"`
	} `json:"spec"`
	Status any `json:"status,omitempty"`
}

// volcanoCronJobObject reads a Volcano CronJob: its jobTemplate as a
// Volcano Job named after the CronJob (its fields named at
// spec.jobTemplate.spec), run on the schedule as a batch/v1 CronJob's.
func volcanoCronJobObject(d *doc, o *Object, x *volcanoCronJob) error {
	const tpl = "spec.jobTemplate.spec"
	jd := *d
	jd.pos = strict.Positions{}
	for k, v := range d.pos {
		if rest, ok := strings.CutPrefix(k, tpl); ok {
			jd.pos["spec"+rest] = v
		} else if k == "metadata" || strings.HasPrefix(k, "metadata.") {
			jd.pos[k] = v
		}
	}
	jd.rename = func(field string) string {
		if rest, ok := strings.CutPrefix(field, "spec"); ok {
			return tpl + rest
		}
		return field
	}
	if err := volcanoObject(&jd, o, &volcanoJob{ObjectMeta: x.ObjectMeta, Spec: x.Spec.JobTemplate.Spec}); err != nil {
		return err
	}
	s := &x.Spec
	c, err := parseCron(d, &batchv1.CronJobSpec{Schedule: s.Schedule, TimeZone: s.TimeZone, StartingDeadlineSeconds: s.StartingDeadlineSeconds,
		ConcurrencyPolicy: s.ConcurrencyPolicy, Suspend: s.Suspend, SuccessfulJobsHistoryLimit: s.SuccessfulJobsHistoryLimit, FailedJobsHistoryLimit: s.FailedJobsHistoryLimit})
	if err != nil {
		return err
	}
	o.Cron = c
	return nil
}
