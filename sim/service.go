package sim

import (
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// ServiceConfig is one inference service of a run. Its replicas are
// single-pod jobs of the same scheduler (and of admission, when the run has
// a policy): they queue, bind, are preempted by higher priorities and
// preempt lower ones like any pod. The run asks the service's scaler, every
// scaler period, how many replicas it wants, and creates or deletes replica
// pods to match; a replica serves once it is bound and its cold start
// (image pull, then model load) has passed. Replicas are not jobs of the
// workload: they appear in Result.Services, never in Result.Jobs.
type ServiceConfig struct {
	// Spec is the request load, the batching model, limits and SLO.
	Spec services.Spec
	// Scaler decides the replicas at each of its periods, the first one
	// period after the start (nil: the initial replicas, fixed). A run
	// works on a fresh copy of a stateful scaler (services.Freshener), so
	// the Config can be run again, or by several runs at once.
	Scaler services.Scaler
	// Queue is the LocalQueue (with admission) or the queue name the
	// replica pods carry; Priority their PriorityClass value; Flags may
	// carry cluster.FlagPreemptNever.
	Queue    string
	Priority int32
	Flags    cluster.JobFlag
	// Pod is one replica's pod (each pod of a multi-pod replica);
	// Constraints its nodeSelector, affinity and tolerations (nil: none).
	Pod         cluster.PodSpec
	Constraints *cluster.Constraints
	// PodsPerReplica is the pods of one replica (0 or 1: one pod). A
	// replica of several is a LeaderWorkerSet's group: a leader and
	// PodsPerReplica-1 workers, each a Pod, placed as one job of that
	// many pods (a gang under the scheduler's Gang plugin, as jobs are),
	// ready once every pod is bound and the cold start has passed; with
	// LWS's default RecreateGroupOnPodRestart a pod preempted or lost
	// with its node recreates the whole group. The scaler counts groups.
	PodsPerReplica int
	// Groups are a replica's further pods whose shape differs from Pod
	// (a disaggregated LLM replica's decode engines when they ask for
	// other GPUs than its prefill engines), as a job's Groups are: the
	// replica's first PodsPerReplica less theirs are Pod, then each
	// group's, all one gang. Nil: every pod of a replica is Pod.
	Groups []cluster.PodGroup
	// MinReplicas and MaxReplicas bound what the scaler may ask for
	// (MinReplicas 0 allows scale to zero; MaxReplicas 0 means the larger
	// of MinReplicas and InitialReplicas, and must then not be 0).
	// InitialReplicas are created at time 0, clamped to the bounds: 0
	// starts at MinReplicas, so a service starts at zero only when its
	// MinReplicas is 0 too.
	MinReplicas, MaxReplicas, InitialReplicas int
	// ImagePull and ModelLoad are a new replica's cold start after it is
	// bound: pulling the image, then loading the model.
	ImagePull, ModelLoad Time
}

// A run with services needs a positive Horizon (they never finish; it
// runs to the horizon even when the workload has no jobs). A replica pod
// that preemption, admission or a lost node stops is replaced at once by
// a new pod, which queues and cold-starts again (a multi-pod replica: the
// whole group).

// ServiceResult is what one service did over the run.
type ServiceResult struct {
	// Report holds the requests arrived, served and dropped, latency
	// quantiles, SLO attainment and replica hours.
	services.Report
	Queue    string
	Priority int32
	// ColdStarts counts replicas that became ready; ColdStartMs is their
	// mean time from creation to ready (scheduling, provisioning, image
	// pull, model load).
	ColdStarts  int
	ColdStartMs float64
	// Decisions counts the scaler's periods.
	Decisions int
	// Preempted counts replicas evicted by the scheduler or by
	// admission; Disrupted those lost with a node (a multi-pod replica
	// once, however many of its pods the node held).
	Preempted, Disrupted int
	// Usage is the resource time the service's replica pods held, per
	// pool in pool order (the same ledger as JobRecord.Usage; replicas
	// lose no work, so Lost and Checkpoint stay 0).
	Usage []PoolUsage
	// Timeline has one point per timeline bucket of the run.
	Timeline []ServicePoint
}

// ServicePoint is one timeline bucket of a service: means over the bucket.
type ServicePoint struct {
	// Rate is the mean requests per second arriving; Served and Dropped
	// the requests in the bucket.
	Rate            float64
	Served, Dropped float64
	// Replicas is the mean replicas that exist (pending ones included;
	// a multi-pod replica counts once; the Report's ReplicaHours integrate
	// the same), Ready those serving, GPUs the GPUs the bound replica pods
	// held.
	Replicas, Ready, GPUs float64
	// P95Ms is the bucket's 95th-percentile latency of served requests
	// (0 when none was served).
	P95Ms float64
}
