package workloads

import (
	"fmt"
	"slices"
	"strings"

	"gpuplan.dev/gpuplan/validate/strict"
)

// The replica types each Kubeflow kind takes, as its operator's
// validation accepts them (training-operator pkg/apis/kubeflow.org/v1
// *_validation.go and pkg/webhooks, mpi-operator
// pkg/apis/kubeflow/validation).
var kubeflowReplicaTypes = map[string][]string{
	"PyTorchJob": {"Master", "Worker"},
	"TFJob":      {"Chief", "Master", "PS", "Worker", "Evaluator"},
	"JAXJob":     {"Worker"},
	"MPIJob":     {"Launcher", "Worker"},
	"PaddleJob":  {"Master", "Worker"},
	"XGBoostJob": {"Master", "Worker"},
}

// kubeflowKindRules checks what a JAXJob's, MPIJob's, PaddleJob's or
// XGBoostJob's operator checks on creation, and notes what gpuplan does
// not model of them.
func kubeflowKindRules(d *doc, o *Object, x *kubeflowJob) error {
	s := &x.Spec
	var specs map[string]*kubeflowReplicaSpec
	field := ""
	switch o.Kind {
	case "JAXJob":
		specs, field = s.JAXReplicaSpecs, "spec.jaxReplicaSpecs"
	case "MPIJob":
		specs, field = s.MPIReplicaSpecs, "spec.mpiReplicaSpecs"
	case "PaddleJob":
		specs, field = s.PaddleReplicaSpecs, "spec.paddleReplicaSpecs"
	case "XGBoostJob":
		specs, field = s.XGBReplicaSpecs, "spec.xgbReplicaSpecs"
	default:
		return nil
	}
	allowed := kubeflowReplicaTypes[o.Kind]
	for n := range specs {
		if !slices.Contains(allowed, n) {
			return d.errAt(fmt.Sprintf("%s[%q]", field, n), "%s is not a replica type of a %s (it takes %s)", strict.Quote(n), o.Kind, strings.Join(allowed, ", "))
		}
	}
	if o.Kind == "XGBoostJob" {
		// The training operator's webhook (pkg/webhooks/xgboost): a
		// Master, exactly one (its defaulting sets a missing count to 1).
		m, ok := specs["Master"]
		if !ok || m == nil {
			return d.errAt(field, "an XGBoostJob needs a Master replica spec, as the training operator's webhook requires")
		}
		if m.Replicas != nil && *m.Replicas != 1 {
			return d.errAt(field+`["Master"].replicas`, "is %d; an XGBoostJob has exactly one Master", *m.Replicas)
		}
	}
	if o.Kind == "MPIJob" {
		l, ok := specs["Launcher"]
		if !ok || l == nil {
			return d.errAt(field, "an MPIJob needs a Launcher replica spec, as the MPI operator's validation requires")
		}
		if l.Replicas != nil && *l.Replicas != 1 {
			return d.errAt(field+`["Launcher"].replicas`, "is %d; an MPIJob has exactly one launcher", *l.Replicas)
		}
		if w := specs["Worker"]; w != nil && w.Replicas != nil && *w.Replicas < 0 {
			return d.errAt(field+`["Worker"].replicas`, "must not be negative")
		}
		if s.SlotsPerWorker != nil && *s.SlotsPerWorker < 1 {
			return d.errAt("spec.slotsPerWorker", "is %d; must be at least 1", *s.SlotsPerWorker)
		}
		switch s.LauncherCreationPolicy {
		case "", "AtStartup":
		case "WaitForWorkersReady":
			d.note("spec.launcherCreationPolicy", "the launcher is bound with its workers (one gang): waiting for them to be ready is not modelled")
		default:
			return d.errAt("spec.launcherCreationPolicy", "is %s; want AtStartup or WaitForWorkersReady", strict.Quote(s.LauncherCreationPolicy))
		}
		switch s.MPIImplementation {
		case "", "OpenMPI", "Intel", "MPICH":
		default:
			return d.errAt("spec.mpiImplementation", "is %s; want OpenMPI, Intel or MPICH", strict.Quote(s.MPIImplementation))
		}
	}
	return nil
}
