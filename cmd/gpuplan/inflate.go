package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
)

type inflateOptions struct {
	nodes, pods string
	policy      string
	tieBreak    string
	seed        uint64
	target      float64
	output      string
	stdout      io.Writer
}

// inflateReport is the JSON the command prints.
type inflateReport struct {
	Policy       string                  `json:"policy"`
	TieBreak     string                  `json:"tie_break"`
	Seed         uint64                  `json:"seed"`
	Target       float64                 `json:"target"`
	CapacityGPUs int64                   `json:"capacity_gpus"`
	Pods         int                     `json:"pods"`
	Clones       int                     `json:"clones"`
	Failed       int                     `json:"failed_pods"`
	Points       []pipeline.InflatePoint `json:"points"`
}

func newInflateCmd(stdout io.Writer) *cobra.Command {
	o := &inflateOptions{stdout: stdout}
	c := &cobra.Command{
		Use:   "inflate --nodes NODES.csv --pods PODS.csv --policy P",
		Short: "Run the FGD paper's workload-inflation experiment for one placement policy",
		Long: `Run the workload-inflation experiment of the FGD paper (Weng et al., ATC'23) on an
openb node list and pod list: shuffle the pods with the seed, clone pods drawn
uniformly from the list until their GPU requests reach --target times the
cluster's GPUs, schedule them in order and never delete them. For every 1% of
capacity that arrives it reports the GPU allocation ratio, the fragmented GPUs
(the FGD measure for the pod list's typical pods) and the fragmentation ratio
(fragmented over unallocated GPU capacity); ratios are in 0..1.

Policies: ` + strings.Join(pipeline.PolicyNames(), ", ") + `. Ties between equal scores follow a fixed
random order of the nodes drawn from the seed (--tie-break nodeOrder), as the
paper's simulator does; random breaks each tie uniformly, as kube-scheduler
does, and lowestIndex takes the first node of the list.`,
		Example: `  gpuplan inflate --nodes testdata/openb/openb_node_list_gpu_node.csv \
    --pods testdata/openb/openb_pod_list_default.csv --policy fgd --seed 42 --target 1.3 --output json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := c.Flags()
	f.StringVar(&o.nodes, "nodes", "", "openb node list (sn,cpu_milli,memory_mib,gpu,model)")
	f.StringVar(&o.pods, "pods", "", "openb pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...])")
	f.StringVar(&o.policy, "policy", "fgd", "placement policy: "+strings.Join(pipeline.PolicyNames(), ", "))
	f.Uint64Var(&o.seed, "seed", 42, "random seed (shuffle, clones, ties)")
	f.Float64Var(&o.target, "target", 1.3, "arrived GPU demand to stop at, as a multiple of the cluster's GPUs")
	f.StringVar(&o.tieBreak, "tie-break", pipeline.TieBreakNodeOrder, "between nodes of equal score: "+choices(scenarios.TieBreaks()).words())
	f.StringVarP(&o.output, "output", "o", "table", "what to print: table, json or yaml")
	enumFlag(c, "output", choicesOf(outputsTJY))
	enumFlag(c, "policy", pipeline.PolicyNames)
	enumFlag(c, "tie-break", scenarios.TieBreaks)
	fileFlag(c, "nodes", "csv")
	fileFlag(c, "pods", "csv")
	freeFlag(c, "seed", "target")
	return c
}

func (o *inflateOptions) validate() error {
	if o.nodes == "" || o.pods == "" {
		return usageError{fmt.Errorf("--nodes and --pods are required")}
	}
	if !pipeline.IsPolicy(o.policy) {
		return usageError{fmt.Errorf("--policy %s is not one of %s", q(o.policy), strings.Join(pipeline.PolicyNames(), ", "))}
	}
	if !(o.target > 0) || o.target > 100 {
		return usageError{fmt.Errorf("--target %g must be in (0, 100]", o.target)}
	}
	if err := choices(scenarios.TieBreaks()).check("tie-break", o.tieBreak); err != nil {
		return err
	}
	return outputsTJY().check("output", o.output)
}

func (o *inflateOptions) run() error {
	res, err := pipeline.Inflate(pipeline.Inflation{Nodes: o.nodes, Pods: o.pods, Policy: o.policy, Seed: o.seed, Target: o.target, TieBreak: o.tieBreak})
	if err != nil {
		return err
	}
	rep := inflateReport{Policy: o.policy, TieBreak: o.tieBreak, Seed: o.seed, Target: o.target, CapacityGPUs: res.CapacityGPUs,
		Pods: res.Pods, Clones: res.Clones, Failed: res.Failed, Points: res.Points}
	switch o.output {
	case "json":
		return jsonOf(rep)(o.stdout)
	case "yaml":
		return writeYAML(o.stdout, jsonOf(rep))
	}
	fmt.Fprintf(o.stdout, "Inflation, policy %s, seed %d: %d pods (%d clones) on %d GPUs; %d pods found no node.\n\n",
		o.policy, o.seed, res.Pods, res.Clones, res.CapacityGPUs, res.Failed)
	tw := tabwriter.NewWriter(o.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ARRIVED\tALLOCATED\tFRAG GPUS\tFRAG RATIO\t")
	for i, p := range res.Points {
		if i%10 == 0 || i == len(res.Points)-1 {
			fmt.Fprintf(tw, "%.0f%%\t%.2f%%\t%.1f\t%.2f%%\t\n", 100*p.Arrived, 100*p.AllocationRatio, p.FragGPUs, 100*p.FragRatio)
		}
	}
	return tw.Flush()
}
