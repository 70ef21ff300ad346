package main

import (
	"slices"

	"errors"
	"fmt"
	"gpuplan.dev/gpuplan/reports/outdir"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/kube/manifests"
)

// manifestsOptions are manifests' flags.
type manifestsOptions struct {
	scenario, out, variant string
	restrict               bool
	gen                    manifests.Options

	stdout, stderr io.Writer
	tracker        *outdir.Tracker
}

func newManifestsCmd(stdout io.Writer, t *outdir.Tracker) *cobra.Command {
	o := &manifestsOptions{stdout: stdout, tracker: t}
	c := &cobra.Command{
		Use:   "manifests [SCENARIO] --out DIR",
		Short: "Write the Kubernetes objects that put a scenario into practice",
		Long: `Writes, under DIR, the Kubernetes manifests that realise the scenario's cluster,
admission policy and workload as the simulation ran them (the embedded default scenario
when none is given):

DIR/kubernetes/ holds every API object, named so that one ` + "`kubectl apply -R -f DIR/kubernetes`" + `
(which walks the folder in name order) creates what an object names before it: the
objects of the cluster's own APIs first, then Karpenter's, Kueue's or Volcano's custom
resources (their CRDs installed), then what the workloads share and the services.
eksctl's file and the job classes' templates (jobs/) sit beside it: submit a job of a
class with ` + "`kubectl create -f DIR/jobs/CLASS.yaml`" + `, once per job (generateName gives each
a new name; kubectl apply refuses generateName).

  kubernetes/00-namespaces.yaml      the namespaces the jobs and LocalQueues use, and gpu-operator
  kubernetes/01-priorityclasses.yaml the PriorityClasses the jobs use
  kubernetes/02-storage.yaml         the EBS gp3 StorageClass of per-pod checkpoint volumes
  kubernetes/03-gpu-operator.yaml    device-plugin time-slicing / MIG-strategy configs and the
                                     mig-parted layouts, picked per node by label
  kubernetes/10-karpenter/ec2nodeclass.yaml  the AWS node class (AL2023 image, discovery tags)
  kubernetes/10-karpenter/nodepools.yaml     a NodePool per pool: instance types, capacity
                                     types, zone, labels, taints, GPU and node limits,
                                     disruption; a fixed pool is a static NodePool
                                     (spec.replicas); expireAfter Never
  kubernetes/20-kueue.yaml           the Kueue policy that ran: when spec.policy gives
                                     manifests, their ResourceFlavors, Cohorts, ClusterQueues
                                     (quotas, borrowing and lending limits, preemption, queueing
                                     strategy, fungibility, fair-sharing weights) and
                                     LocalQueues, written back normalised; else one ClusterQueue
                                     over the whole cluster, and when a class asks for
                                     topology a Topology (block, rack, host) its flavors name
  kubernetes/21-kueue-config.yaml    Kueue's Configuration (ConfigMap kueue-manager-config) when
                                     the run used fair sharing or waitForPodsReady, or the
                                     policy's or (--gpus dra) gpuplan's deviceClassMappings
  kubernetes/04-dra-deviceclasses.yaml  the policy's DeviceClasses as read; with --gpus dra
                                     gpuplan's (NVIDIA's DRA driver's whole GPUs, MIG instances
                                     of a profile) the classes' and services'
                                     ResourceClaimTemplates name
  kubernetes/20-volcano-queues.yaml  instead, for a Volcano policy: its Queues as read and the
                                     scheduler's ConfigMap (its actions decide reclaim and preempt)
  kubernetes/20-volcano-hypernodes.yaml  the policy's Volcano HyperNodes, as read; without
                                     them, when a Volcano Job class asks for topology, the
                                     pools' racks and blocks (and NVLink domains) as HyperNodes
  kubernetes/30-prometheusrule.yaml  alerts on GPUs a pod holds (DCGM, exported_pod set)
                                     averaging under 50% over the last 30 minutes or at 0% for
                                     an hour; label release
  kubernetes/40-jobs/CLASS.yaml      what a class's jobs share: a gang's headless Service,
                                     a ReadWriteMany checkpoint claim, with --gpus dra its
                                     ResourceClaimTemplate (none: no file)
  jobs/CLASS.yaml                    a workload class's job as a template (generateName
                                     CLASS-): a suspended Job (a gang: an Indexed Job whose
                                     pods run torchrun with their node rank and their job's
                                     pod 0 as the rendezvous), a Kubeflow PyTorchJob or TFJob
                                     (--training-api), or a Volcano Job (with
                                     spec.networkTopology when the class asks for topology);
                                     GPU requests equal to limits (MIG as
                                     nvidia.com/mig-PROFILE, a share of a
                                     GPU as one time-slicing replica; --gpus dra: a claim of
                                     the class's ResourceClaimTemplate instead of whole GPUs
                                     and MIG), Kueue's podset topology annotation when the
                                     class asks for topology, checkpoint volume, a
                                     grace period long enough for the checkpoint write
  kubernetes/40-services/NAME.yaml   an inference service: a Deployment (the replica pod, its
                                     PriorityClass, placement and Kueue queue label; for an LLM
                                     service of multi-pod replicas a LeaderWorkerSet running
                                     vLLM's multi-node serving; for a disaggregated one a
                                     KServe LLMInferenceService with spec.prefill, fixed
                                     replicas) with its autoscaling/v2 HPA or
                                     KEDA ScaledObject, or for Knative's
                                     KPA a KServe InferenceService (scaleMetric concurrency,
                                     scaleTarget); with --gpus dra first the replicas'
                                     ResourceClaimTemplate, which they claim their GPUs from
  kubernetes/40-services/NAME.config.properties  TorchServe's batching, queue and timeout,
                                     when the service batches (also the ConfigMap the
                                     Deployment mounts; kubectl skips the file)
  aks-agentpools.json                with --provider aks, instead of 10-karpenter/: each pool as
                                     an AKS agent pool in an ARM template (VM size, count, Spot
                                     or Regular, zone, labels, taints, autoscaler min/max); az
                                     deployment group create --template-file, not kubectl; a
                                     scenario reads it back with cluster.agentPools
  eksctl-nodegroups.yaml             with --fixed-pools managed-nodegroup: the fixed pools as
                                     EKS managed node groups (eksctl ClusterConfig; eksctl
                                     create nodegroup --config-file, not kubectl)

Checkpoint storage: --access-mode ReadWriteOnce (default; EBS on EKS attaches a volume
to one node) gives each pod its own volume, deleted with it; ReadWriteMany with an RWX
--storage-class (EFS, FSx for Lustre) gives a class one claim that outlives its pods.

Fixed pools: nodepool-static keeps every pool in Karpenter (one tool, drift and
consolidation alike) but static NodePools are alpha, behind Karpenter's
StaticCapacity=true feature gate; managed-nodegroup uses EKS managed node groups,
generally available and upgraded by EKS, at the price of a second tool (eksctl) beside
Karpenter for the autoscaled pools.

Warnings (a checkpoint write longer than the grace period or the spot notice, per-pod
volumes that die with their pods) go to stderr and into the files' comments. Objects are
built with the projects' API types; each file is written atomically.`,
		Example: `  gpuplan manifests scenarios/examples/gpu-sharing.yaml --out manifests/
  gpuplan manifests scenarios/examples/spot-what-if.yaml --variant all-spot-tight --out m/
  gpuplan manifests aks-scenario.yaml --provider aks --out aks/
  kubectl apply --dry-run=server -R -f manifests/kubernetes`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd, args)
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := c.Flags()
	f.StringVar(&o.out, "out", "", "folder to write the manifests into (required)")
	f.StringVar(&o.variant, "variant", "", "render this what-if variant of the scenario")
	addRestrictPaths(f, &o.restrict, false)
	f.StringVar(&o.gen.ClusterName, "cluster-name", "", "EKS cluster name for Karpenter's discovery tags and node role (default: the scenario's name)")
	f.StringVar(&o.gen.Namespace, "namespace", manifests.DefaultNamespace, "namespace of the Jobs, LocalQueues and checkpoint claims")
	f.StringVar(&o.gen.Image, "image", manifests.DefaultImage, "container image of the Job templates")
	f.StringVar(&o.gen.CheckpointStorage, "checkpoint-storage", manifests.DefaultCheckpointStorage, "size of each checkpointing class's volume claim")
	f.StringVar(&o.gen.StorageClass, "storage-class", "", "storageClassName of the checkpoint volumes (default: a gp3 EBS class written in storage.yaml for ReadWriteOnce, the cluster's default for ReadWriteMany)")
	f.StringVar(&o.gen.AccessMode, "access-mode", manifests.AccessRWO, "checkpoint volumes: ReadWriteOnce (one per pod) or ReadWriteMany (one claim per class; needs an RWX storage class)")
	f.StringVar(&o.gen.TrainingAPI, "training-api", manifests.TrainingJob, "how gangs and training classes run: job (Indexed Job), pytorchjob or tfjob (Kubeflow training operator)")
	f.StringVar(&o.gen.Provider, "provider", manifests.ProviderEKS, "the cloud the pools are written for: eks (Karpenter NodePools and EC2NodeClass) or aks (AKS agent pools as an ARM template, aks-agentpools.json)")
	f.StringVar(&o.gen.GPUs, "gpus", manifests.GPUsDevicePlugin, "how the job templates' and services' pods ask for GPUs: device-plugin (nvidia.com/gpu, nvidia.com/mig-PROFILE) or dra (ResourceClaimTemplates of gpuplan's DeviceClasses for NVIDIA's DRA driver, mapped to the same Kueue quota)")
	f.StringVar(&o.gen.FixedPools, "fixed-pools", manifests.FixedStatic, "how fixed-size pools are written: nodepool-static (Karpenter, alpha) or managed-nodegroup (EKS, eksctl)")
	f.StringVar(&o.gen.PrometheusRelease, "prometheus-release", manifests.DefaultPrometheusRelease, "release label of the PrometheusRule: kube-prometheus-stack's Helm release name, which its default rule selector matches")
	f.StringVar(&o.gen.Entrypoint, "entrypoint", manifests.DefaultEntrypoint, "training script the job templates run with torchrun")
	f.StringVar(&o.gen.ServingImage, "serving-image", manifests.DefaultServingImage, "container image of the inference services' replicas (TorchServe)")
	f.StringVar(&o.gen.LLMImage, "llm-image", manifests.DefaultLLMImage, "container image of the LLM services' replicas (vLLM's OpenAI-compatible server, its entry point given the engine's arguments)")
	scenarioArgs(c)
	dirFlag(c, "out")
	scenarioFlag(c, "variant", variantNames)
	// Checked by manifests.Generate against these same lists.
	enumFlag(c, "access-mode", manifests.AccessModes)
	enumFlag(c, "training-api", manifests.TrainingAPIs)
	enumFlag(c, "provider", manifests.Providers)
	enumFlag(c, "fixed-pools", manifests.FixedPoolKinds)
	enumFlag(c, "gpus", manifests.GPUKinds)
	freeFlag(c, "cluster-name", "namespace", "image", "checkpoint-storage", "storage-class", "prometheus-release", "entrypoint", "serving-image", "llm-image")
	return c
}

func (o *manifestsOptions) complete(cmd *cobra.Command, args []string) {
	if len(args) == 1 {
		o.scenario = args[0]
	}
	o.stderr = cmd.ErrOrStderr()
}

func (o *manifestsOptions) validate() error {
	if o.out == "" {
		return usageError{fmt.Errorf("--out DIR is required")}
	}
	for _, f := range []struct{ flag, v string }{{"image", o.gen.Image}, {"serving-image", o.gen.ServingImage}, {"llm-image", o.gen.LLMImage}, {"entrypoint", o.gen.Entrypoint}} {
		if strings.TrimSpace(f.v) == "" {
			return badFlag(f.flag, f.v, "want a value (see its default in --help)")
		}
	}
	return nil
}

func (o *manifestsOptions) run() error {
	var sc *scenarios.Scenario
	var err error
	if o.scenario == "" {
		sc, err = scenarios.Default()
	} else {
		sc, err = scenarios.LoadFileWith(o.scenario, loadOptions(o.restrict))
	}
	if err != nil {
		return err
	}
	if o.variant != "" {
		if sc, err = sc.Variant(o.variant); err != nil {
			return err
		}
	}
	m, err := sc.Cluster()
	if err != nil {
		return err
	}
	files, warnings, err := manifests.Generate(sc, m, o.gen)
	if err != nil {
		return usageError{optionAsFlag(err)}
	}
	// The folder appears whole: built aside, put in place at once.
	folder := outdir.Options{Kind: "manifests", Tracker: o.tracker, Ours: func(names []string) bool {
		return slices.Contains(names, "namespaces.yaml")
	}}
	if err := outdir.Write(o.out, folder, func(staging string) error { return manifests.WriteDir(staging, files) }); err != nil {
		return err
	}
	for _, f := range files {
		if f.Raw != nil {
			fmt.Fprintf(o.stdout, "wrote %s/%s\n", o.out, f.Path)
			continue
		}
		fmt.Fprintf(o.stdout, "wrote %s/%s (%d objects)\n", o.out, f.Path, len(f.Objects))
	}
	for _, w := range warnings {
		fmt.Fprintf(o.stderr, "warning: %s\n", w)
	}
	return nil
}

// optionFlags are the flags of the manifests options, by the words the
// library's errors name them with.
var optionFlags = []struct{ words, flag string }{
	{"training API ", "--training-api "}, {"fixed pools ", "--fixed-pools "}, {"provider ", "--provider "}, {"access mode ", "--access-mode "},
	{"checkpoint storage ", "--checkpoint-storage "}, {"cluster name ", "--cluster-name "}, {"namespace ", "--namespace "},
	{"storage class ", "--storage-class "}, {"prometheus release ", "--prometheus-release "},
	{"GPU request ", "--gpus "},
}

// optionAsFlag names the flag of an option error ("training API \"x\" is
// not one of ..." is --training-api's).
func optionAsFlag(err error) error {
	msg := err.Error()
	for _, o := range optionFlags {
		if rest, ok := strings.CutPrefix(msg, o.words); ok {
			return errors.New(o.flag + rest)
		}
	}
	return err
}
