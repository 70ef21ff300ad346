package scenarios

import (
	"fmt"
	"math"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim/cluster"
)

// GenerateOptions size a generated trace.
type GenerateOptions struct {
	Jobs int
	Seed uint64
	// GPUs is the cluster the trace is meant for (nodes of 8 GPUs) and Load
	// the share of its GPU-hours the jobs offer.
	GPUs int
	Load float64
}

// The generated mix: three quarters single-node jobs (1, 2, 4 or 8 GPUs,
// lognormal durations of median 1 h, sigma 1.2, at most 72 h, diurnal
// arrivals peaking at 14:00), one quarter gangs of 2 to 64 pods of 8 GPUs
// (median 3 h, sigma 1.0, at most 96 h). Mean GPU-hours per job, from the
// distributions' means: single 2.7 GPUs x 2.054 h, gang 53.76 GPUs x
// 4.946 h.
const generatedScenario = `apiVersion: gpuplan.dev/v1alpha1
kind: Scenario
metadata:
  name: generated
  description: a generated trace of %d jobs, seed %d, for %d GPUs at %.0f%%%% load
spec:
  seed: %d
  cluster:
    pools:
    - name: gpu
      count: %d
      gpuModel: H100-80GB
      gpusPerNode: 8
      cpu: "192"
      memory: 2048Gi
  workload:
    synthetic:
      jobs: %d
      classes:
      - name: single
        queue: %s
        arrival: {process: poisson, ratePerHour: %g, diurnal: {amplitude: 0.4, peakHour: 14}}
        pod:
          cpu: "16"
          memory: 128Gi
          gpus: {values: [1, 2, 4, 8], weights: [0.5, 0.2, 0.15, 0.15]}
        duration: {distribution: lognormal, median: 1h, sigma: 1.2, max: 72h}
      - name: gang
        queue: training
        arrival: {process: poisson, ratePerHour: %g}
        replicas: {values: [2, 4, 8, 16, 32, 64], weights: [0.4, 0.3, 0.15, 0.1, 0.04, 0.01]}
        pod: {cpu: "96", memory: 1024Gi, gpus: 8}
        duration: {distribution: lognormal, median: 3h, sigma: 1.0, max: 96h}
  queueing:
    backfill: true
`

// GeneratedScenario is the scenario of a generated trace: its cluster and
// its synthetic workload.
func GeneratedScenario(o GenerateOptions) (*Scenario, error) {
	if o.Jobs <= 0 || o.GPUs < 8 || !(o.Load > 0) || o.Load > 10 {
		return nil, fmt.Errorf("generate: jobs must be positive, GPUs at least 8 and load in (0, 10]")
	}
	single := 2.7 * 1.0 * math.Exp(1.2*1.2/2)
	gang := 53.76 * 3.0 * math.Exp(0.5)
	perJob := 0.75*single + 0.25*gang
	rate := o.Load * float64(o.GPUs) / perJob // jobs per hour
	text := fmt.Sprintf(generatedScenario, o.Jobs, o.Seed, o.GPUs, 100*o.Load, o.Seed, o.GPUs/8, o.Jobs, "interactive", 0.75*rate, 0.25*rate)
	return Parse("<generated>", "", []byte(text))
}

// GenerateTrace writes a generated trace.
func GenerateTrace(o GenerateOptions, w *traces.NativeWriter) error {
	s, err := GeneratedScenario(o)
	if err != nil {
		return err
	}
	gen, err := builder{s}.generator(s.Seed(), 0)
	if err != nil {
		return err
	}
	for {
		var j cluster.JobSpec
		ok, err := gen.Next(&j)
		if err != nil {
			return err
		}
		if !ok {
			return w.Flush()
		}
		if err := w.Write(&j); err != nil {
			return err
		}
	}
}
