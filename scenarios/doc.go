// Package scenarios turns a scenario file (kind: Scenario, apiVersion
// gpuplan.dev/v1alpha1) into everything one simulation needs: the pools,
// their prices and capacity models, the workload as a stream of jobs, the
// inference services, the admission policy and the variants. It owns the
// schema and the build; the formats it reads live in sub-packages.
//
// The root package, by file:
//
//   - types.go, values.go: the schema (Scenario and its spec) and the
//     value types a user writes (durations, quantities, distributions);
//   - load.go, decode.go, patched.go, variants.go: reading a scenario
//     strictly (every error at file:line:field), the embedded default,
//     merge patches and the variants built from them;
//   - build.go, builder.go: Build, from a scenario to sim.Config with its
//     assumptions and pricing plan. The document's own methods are
//     decoding, defaults and accessors; building is done by views over it
//     that read it and change nothing: builder (pools, workload, policy),
//     serviceBuilder (services, servicescaler.go for their autoscalers),
//     budgeter (the work budget, budget.go), pricer (the pricing rules,
//     pricing.go, rates.go and commitments.go), interrupter (a pool's spot
//     interruptions: spotmodel.go, spottrace.go) and validator (Validate
//     and the paths it names);
//   - checks.go, classchecks.go: the checks a scenario passes before the
//     clock starts (sizes, each class against the pools and the policy),
//     shared by simulate and `scenario check`;
//   - synthetic.go: synthetic workloads (classes with arrival processes,
//     pod and duration distributions); generate.go: the large synthetic
//     traces of `gpuplan trace generate`;
//   - services.go, servicebuild.go, servicescaler.go, servicecheck.go,
//     servicerates.go, servicetime.go, servicellm.go: inference services (spec.workload.services[]) with
//     their load curves and rate files, batching and service-time
//     defaults, and autoscalers; servicegroup.go: replicas of several
//     pods (a LeaderWorkerSet's groups);
//   - policy.go, policy_nodepools.go, volcano.go, manifests.go: admission
//     and provisioning policies from Kubernetes manifests (Kueue, Volcano,
//     Karpenter NodePools) and workloads given as manifests;
//   - prices.go, rates.go, capacity.go, spotmtbf.go, spottrace.go: the
//     price catalog, the CPU/memory/GPU split of a node's price, spot
//     interruptions, failures and autoscaling of the pools;
//   - livenodes.go: pools from a live cluster's node list; profile.go:
//     calibration profiles.
//
// Sub-packages:
//
//   - strict: strict YAML and JSON decoding with positions, InputError,
//     bounds and CRD-schema checks (a leaf: it imports nothing of gpuplan);
//   - traces: job trace formats (native, openb, Philly, Helios, PAI),
//     sorting traces out of order, and the CSV row loop;
//   - kube/nodes, kube/workloads, kube/services: Kubernetes objects as
//     users have them (NodeLists; Job, CronJob, PyTorchJob, TFJob, Volcano
//     Job, JobSet, RayJob and RayCluster; Deployments, InferenceServices,
//     HPAs, ScaledObjects and TorchServe configuration);
//   - catalog/karpenter: AWS instance types with Karpenter's labels, and
//     NodePool requirements resolved against them;
//   - skypilot: SkyPilot spot traces;
//   - azurerates: Azure Spot eviction-rate bands per VM size and region,
//     as an Azure Resource Graph query exports them;
//   - pipeline (and pipeline/sweep, pipeline/recommend): the run pipeline
//     every command calls (build, run, invariants, pricing, outputs,
//     variants, worker pools), sweeps and the planner.
//
// The import direction is root -> sub-packages, never back, except
// pipeline, which sits above the root.
package scenarios
