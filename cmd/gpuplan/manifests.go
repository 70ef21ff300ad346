package main

import (
	"slices"

	"fmt"
	"gpuplan.dev/gpuplan/reports/outdir"
	"io"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/reports/manifests"
	"gpuplan.dev/gpuplan/scenarios"
)

func newManifestsCmd(stdout io.Writer, t *outdir.Tracker) *cobra.Command {
	var out, variant string
	var o manifests.Options
	c := &cobra.Command{
		Use:   "manifests [SCENARIO] --out DIR",
		Short: "Write the Kubernetes objects that put a scenario into practice",
		Long: `Writes, under DIR, the Kubernetes manifests that realise the scenario's cluster
and workload (the embedded default scenario when none is given):

  namespaces.yaml              the Jobs' namespace and gpu-operator
  karpenter/ec2nodeclass.yaml  the AWS node class (AL2023 image, discovery tags)
  karpenter/nodepools.yaml     a NodePool per pool: instance types, capacity types,
                               zone, labels, taints, GPU and node limits, disruption
  gpu-operator.yaml            device-plugin time-slicing / MIG-strategy configs and
                               the mig-parted layouts, picked per node by label
  priorityclasses.yaml         a PriorityClass per priority the classes use
  kueue.yaml                   a ResourceFlavor per pool, a ClusterQueue, LocalQueues
  volcano-queues.yaml          instead, when every class is a Volcano Job: a Queue each
  prometheusrule.yaml          alert: a GPU under 50% utilised for 30 minutes
  jobs/CLASS.yaml              a suspended Job per workload class (GPU requests equal
                               to limits, tolerations, nodeSelector, /dev/shm, a
                               checkpoint claim, grace period; gangs as Indexed Jobs
                               with a headless Service), or a Volcano Job for a class
                               with volcano (minAvailable, maxRetry, policies)

Objects are built with the projects' API types (k8s.io/api, Karpenter, Kueue,
prometheus-operator); NVIDIA's configs, the EC2NodeClass and Volcano's Job and Queue
follow their published schemas. Each file is written atomically.`,
		Example: `  gpuplan manifests scenarios/examples/gpu-sharing.yaml --out manifests/
  gpuplan manifests scenarios/examples/spot-what-if.yaml --variant all-spot-tight --out m/
  kubectl apply --dry-run=server -R -f manifests/`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out DIR is required")}
			}
			var sc *scenarios.Scenario
			var err error
			if len(args) == 0 {
				sc, err = scenarios.Default()
			} else {
				sc, err = scenarios.LoadFile(args[0])
			}
			if err != nil {
				return err
			}
			if variant != "" {
				if sc, err = sc.Variant(variant); err != nil {
					return err
				}
			}
			m, err := sc.Cluster()
			if err != nil {
				return err
			}
			files, err := manifests.Generate(sc, m, o)
			if err != nil {
				return usageError{err}
			}
			// The folder appears whole: built aside, put in place at once.
			folder := outdir.Options{Kind: "manifests", Tracker: t, Ours: func(names []string) bool {
				return slices.Contains(names, "namespaces.yaml")
			}}
			if err := outdir.Write(out, folder, func(staging string) error { return manifests.WriteDir(staging, files) }); err != nil {
				return err
			}
			for _, f := range files {
				fmt.Fprintf(stdout, "wrote %s/%s (%d objects)\n", out, f.Path, len(f.Objects))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&out, "out", "", "folder to write the manifests into (required)")
	f.StringVar(&variant, "variant", "", "render this what-if variant of the scenario")
	f.StringVar(&o.ClusterName, "cluster-name", "", "EKS cluster name for Karpenter's discovery tags and node role (default: the scenario's name)")
	f.StringVar(&o.Namespace, "namespace", manifests.DefaultNamespace, "namespace of the Jobs, LocalQueues and checkpoint claims")
	f.StringVar(&o.Image, "image", manifests.DefaultImage, "container image of the Job templates")
	f.StringVar(&o.CheckpointStorage, "checkpoint-storage", manifests.DefaultCheckpointStorage, "size of each checkpointing class's volume claim")
	return c
}
