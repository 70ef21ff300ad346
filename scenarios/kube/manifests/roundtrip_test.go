package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/scenarios"
	"gpuplan.dev/gpuplan/scenarios/pipeline"
	"gpuplan.dev/gpuplan/sim/cluster"
	"gpuplan.dev/gpuplan/sim/services"
)

// shippedRuns lists every shipped example scenario and each of its
// variants ("" is the scenario as given).
func shippedRuns(t *testing.T) [][2]string {
	t.Helper()
	var files []string
	for _, pat := range []string{"../../examples/*.yaml", "../../examples/*/scenario.yaml", "../../examples/inference/*/scenario.yaml"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	require.NotEmpty(t, files)
	var out [][2]string
	for _, f := range files {
		s, err := scenarios.LoadFile(f)
		require.NoError(t, err, f)
		out = append(out, [2]string{f, ""})
		for _, v := range s.VariantNames() {
			out = append(out, [2]string{f, v})
		}
	}
	return out
}

// simulationOnly names what a summary holds that no Kubernetes object
// carries, so the round trip leaves it out of the comparison:
// assumptions name the manifest files the policy was read from (the
// originals, then the written copies).
var simulationOnly = []string{"assumptions"}

func summaryJSON(t *testing.T, sc *scenarios.Scenario, o pipeline.Options) map[string]any {
	t.Helper()
	o.NoSpotTwin, o.NoSensitivity, o.NoVariants = true, true, true
	run, err := pipeline.One(sc, o, "", false)
	require.NoError(t, err)
	b, err := json.Marshal(run.Summary)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range simulationOnly {
		delete(m, k)
	}
	return m
}

// TestRoundTrip: for every shipped scenario and variant, the manifests
// gpuplan writes, read back as the run's admission policy with the same
// workload and cluster, give the summary the original run gave.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates every shipped scenario twice")
	}
	for _, r := range shippedRuns(t) {
		name := filepath.Base(filepath.Dir(r[0])) + "/" + filepath.Base(r[0])
		if r[1] != "" {
			name += "@" + r[1]
		}
		t.Run(name, func(t *testing.T) {
			s, err := scenarios.LoadFile(r[0])
			require.NoError(t, err)
			if r[1] != "" {
				s, err = s.Variant(r[1])
				require.NoError(t, err)
			}
			m, err := s.Cluster()
			require.NoError(t, err)
			files, _, err := Generate(s, m, Options{})
			if s.Spec.Cluster.NodeList != nil {
				// A node list (openb's) names no instance types to
				// provision: manifests refuse it, saying so.
				require.ErrorContains(t, err, "spec.cluster.nodeList")
				return
			}
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, WriteDir(dir, files))
			var policy []string
			if s.Spec.Policy != nil && len(s.Spec.Policy.Manifests) > 0 {
				for _, f := range []string{PathKueue, PathKueueConfig, PathVolcano, PathPriorityClasses, PathDRA} {
					if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
						policy = append(policy, filepath.Join(dir, f))
					}
				}
			}
			want := summaryJSON(t, s, pipeline.Options{})
			got := summaryJSON(t, s, pipeline.Options{Build: scenarios.Options{PolicyManifests: policy}})
			require.Equal(t, want, got, "the policy read back")
			// The cluster too: the written NodePools and EC2NodeClass as
			// the cluster, with the policy read back.
			cluster := []string{filepath.Join(dir, filepath.FromSlash(PathNodePools)), filepath.Join(dir, filepath.FromSlash(PathEC2NodeClass))}
			t.Logf("carried over from the scenario's pools by name, no object holding them: %s", strings.Join(clusterSimulationOnly, "; "))
			back := readBack(t, s, append(cluster, policy...))
			got = summaryJSON(t, back, pipeline.Options{})
			require.Equal(t, want, got, "the cluster and policy read back")
			if len(s.Spec.Workload.Services) > 0 {
				// The services too: each from its written Deployment or
				// InferenceService, autoscaler and config.properties.
				got = summaryJSON(t, servicesReadBack(t, s, dir), pipeline.Options{})
				require.Equal(t, want, got, "the services read back")
			}
		})
	}
}

// clusterSimulationOnly names the settings of a pool that no Kubernetes
// object carries; the cluster round trip gives the pools read back from
// the written NodePools the original's, by name.
var clusterSimulationOnly = []string{
	"prices (pricePerHour, onDemandPricePerHour)", "provisioning and image pull delays",
	"spot interruptions and node failures", "time-slicing overhead", "MIG re-layout times",
	"fabric and network", "replace",
	// Each node's rack and block are its own labels, which one NodePool's
	// template cannot give (kueue-tas's 2 blocks of 2 racks).
	"racks, blocks and NVLink domains (a pool's topology)",
	// Not simulation-only, but not read back yet: gpu-operator.yaml's
	// device-plugin and mig-parted configurations (a pool's sharing).
	"GPU sharing (gpu-operator.yaml is not read back)",
	// A fixed pool of no nodes has no object (the files say so).
	"fixed pools of 0 nodes",
	// Two catalogs disagree: gpuplan's GPU models give an L4 24 GiB,
	// Karpenter's instance label (karpenter.k8s.aws/instance-gpu-memory)
	// 22888 MiB; a NodePool read back takes Karpenter's.
	"GPU memory per GPU",
}

// overlay copies the simulation-only settings of the original pools onto
// the pools read back, by name.
func overlay(orig, back *scenarios.Scenario) {
	byName := map[string]scenarios.PoolSpec{}
	for _, p := range orig.Spec.Cluster.Pools {
		byName[p.Name] = p
	}
	for i, o := range orig.Spec.Cluster.Pools {
		if o.Count == 0 && o.Autoscaling == nil && i <= len(back.Spec.Cluster.Pools) {
			back.Spec.Cluster.Pools = slices.Insert(back.Spec.Cluster.Pools, i, o)
		}
	}
	for i := range back.Spec.Cluster.Pools {
		b := &back.Spec.Cluster.Pools[i]
		o, ok := byName[b.Name]
		if !ok {
			continue
		}
		if b.Sharing == nil {
			b.Sharing = o.Sharing
		}
		b.GPUMemory = o.GPUMemory
		if b.GPUMemory == nil {
			if m, err := orig.Cluster(); err == nil {
				for _, r := range m.Pools {
					if r.Name == b.Name && r.GPUMemoryMiB > 0 {
						b.GPUMemory = resource.NewQuantity(r.GPUMemoryMiB<<20, resource.BinarySI)
					}
				}
			}
		}
		b.PricePerHour, b.OnDemandPricePerHour = o.PricePerHour, o.OnDemandPricePerHour
		b.Provisioning, b.ImagePull, b.Interruptions, b.Failures = o.Provisioning, o.ImagePull, o.Interruptions, o.Failures
		b.Fabric, b.Network, b.Replace = o.Fabric, o.Network, o.Replace
		b.Topology = o.Topology
		if o.Sharing != nil && b.Sharing != nil {
			if o.Sharing.TimeSlicing != nil && b.Sharing.TimeSlicing != nil {
				b.Sharing.TimeSlicing.Overhead = o.Sharing.TimeSlicing.Overhead
			}
			if o.Sharing.MIG != nil && b.Sharing.MIG != nil {
				b.Sharing.MIG.Relayout = o.Sharing.MIG.Relayout
			}
		}
	}
	nps := map[string]scenarios.NodePoolSpec{}
	for _, np := range orig.Spec.Cluster.NodePools {
		nps[np.Name] = np
	}
	for i := range back.Spec.Cluster.NodePools {
		b := &back.Spec.Cluster.NodePools[i]
		if o, ok := nps[b.Name]; ok {
			b.PricePerHour, b.Provisioning, b.ImagePull = o.PricePerHour, o.Provisioning, o.ImagePull
			b.Interruptions, b.Failures, b.SpotLaunchFailure = o.Interruptions, o.Failures, o.SpotLaunchFailure
		}
	}
}

// readBack is the scenario with its cluster and policy replaced by the
// written manifests: the same workload, seed, horizon, scheduler and the
// gpuplan-side queue mapping (spec.policy.queues, defaultQueue,
// priorityClasses), which the jobs' queue labels carry.
func readBack(t *testing.T, s *scenarios.Scenario, manifests []string) *scenarios.Scenario {
	t.Helper()
	spec := s.Spec
	spec.Cluster = scenarios.ClusterSpec{}
	spec.Variants = nil
	pol := &scenarios.PolicySpec{Manifests: manifests}
	if p := s.Spec.Policy; p != nil {
		pol.Queues, pol.DefaultQueue, pol.PriorityClasses = p.Queues, p.DefaultQueue, p.PriorityClasses
	}
	spec.Policy = pol
	doc := map[string]any{"apiVersion": "gpuplan.dev/v1alpha1", "kind": "Scenario", "metadata": s.Metadata, "spec": spec}
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	back, err := scenarios.Parse(s.File(), filepath.Dir(s.File()), b)
	require.NoError(t, err)
	overlay(s, back)
	return back
}

// writtenService writes the scenario's manifests into a temporary folder
// and reads back service name's file (kubernetes/40-services/NAME.yaml):
// the files written, the folder, the file's path and its bytes.
func writtenService(t *testing.T, s *scenarios.Scenario, name string) (files []File, dir, path string, raw []byte) {
	t.Helper()
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err = Generate(s, m, Options{})
	require.NoError(t, err)
	dir = t.TempDir()
	require.NoError(t, WriteDir(dir, files))
	path = filepath.Join(dir, filepath.FromSlash(DirServices), name+".yaml")
	raw, err = os.ReadFile(path)
	require.NoError(t, err)
	return files, dir, path, raw
}

// servicesReadBack is the scenario with each inference service taken from
// the files gpuplan manifests wrote (kubernetes/40-services/NAME.yaml: the replica pod,
// placement, bounds and autoscaler; config.properties: the batch size and
// delay). What no object carries stays the scenario's: the load, cold
// start, service time, SLO and timeout; and, as the run resolved them, the
// priority (the written PriorityClass is gpuplan's own, which a scenario
// without its policy cannot resolve), the queue limit (TorchServe's
// default stands where the run had none) and the initial replicas of an
// InferenceService.
func servicesReadBack(t *testing.T, s *scenarios.Scenario, dir string) *scenarios.Scenario {
	t.Helper()
	b, err := s.Build(scenarios.Options{})
	require.NoError(t, err)
	defer b.Close()
	spec := s.Spec
	spec.Variants = nil
	wl := spec.Workload
	wl.Services = nil
	for i, v := range s.Spec.Workload.Services {
		c := b.Config.Services[i]
		y := filepath.Join(dir, filepath.FromSlash(DirServices), v.Name+".yaml")
		nv := scenarios.ServiceSpec{Name: v.Name, Queue: v.Queue, Priority: ptr(c.Priority), GPUModel: v.GPUModel,
			ColdStart: v.ColdStart, Load: v.Load, Timeout: v.Timeout, SLO: v.SLO, Manifests: []string{y}, QueueLimit: ptr(c.Spec.QueueLimit),
			Balancing: v.Balancing} // the balancer in front is no object gpuplan writes
		if c.Flags&cluster.FlagPreemptNever != 0 {
			nv.PreemptionPolicy = scenarios.PreemptNever
		}
		batch := c.Spec.Batch
		nv.Batching = &scenarios.BatchingSpec{BaseMs: ptr(batch.BaseMs), PerItemMs: ptr(batch.PerItemMs)}
		if l := v.LLM; l != nil {
			// The engine's limits from the vLLM server's arguments; the
			// request lengths, targets and step model are the run's alone.
			nv.Batching, nv.QueueLimit = nil, nil
			nv.LLM = &scenarios.LLMServiceSpec{GPU: l.GPU, StepOverheadMs: l.StepOverheadMs, Roofline: l.Roofline, StepFit: l.StepFit,
				APIOverhead: l.APIOverhead, InputTokens: l.InputTokens, OutputTokens: l.OutputTokens, SLO: l.SLO, Prefix: l.Prefix}
		} else if props := filepath.Join(dir, filepath.FromSlash(DirServices), v.Name+".config.properties"); fileExists(props) {
			nv.TorchServe = &scenarios.TorchServeSpec{Path: props}
		} else {
			nv.Batching.BatchSize = ptr(batch.Size)
			d := scenarios.Duration{Duration: time.Duration(batch.MaxDelayMs * float64(time.Millisecond))}
			nv.Batching.MaxBatchDelay = &d
		}
		switch c.Scaler.(type) {
		case services.HPA, services.KEDA:
			nv.Autoscaler = &scenarios.AutoscalerSpec{Manifests: []string{y}}
		case services.KPA:
			nv.Replicas = &scenarios.ServiceReplicasSpec{Initial: ptr(c.InitialReplicas)}
		}
		wl.Services = append(wl.Services, nv)
	}
	spec.Workload = wl
	doc := map[string]any{"apiVersion": "gpuplan.dev/v1alpha1", "kind": "Scenario", "metadata": s.Metadata, "spec": spec}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	back, err := scenarios.Parse(s.File(), filepath.Dir(s.File()), raw)
	require.NoError(t, err)
	return back
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestRoundTripLLM: the LLM chat example's service written as a vLLM
// Deployment (the engine's limits as the server's arguments) and its KEDA
// ScaledObject, read back, gives the run's summary. (One example, not
// every LLM example and variant: each run computes its engine's curve.)
func TestRoundTripLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates an LLM service three times")
	}
	s, err := scenarios.LoadFile("../../examples/llm-serving/chat/scenario.yaml")
	require.NoError(t, err)
	m, err := s.Cluster()
	require.NoError(t, err)
	files, _, err := Generate(s, m, Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, files))
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(DirServices), "chat.yaml"))
	require.NoError(t, err)
	for _, arg := range []string{"image: vllm/vllm-openai:v0.11.0", "- --model\n        - meta-llama/Llama-3.1-8B-Instruct", "- --max-num-seqs\n        - \"256\"",
		"- --max-model-len\n        - \"8192\"", "- --max-num-batched-tokens\n        - \"8192\"", "path: /health", "kind: ScaledObject", "vllm:num_requests_waiting"} {
		require.Contains(t, string(raw), arg)
	}
	want := summaryJSON(t, s, pipeline.Options{})
	got := summaryJSON(t, servicesReadBack(t, s, dir), pipeline.Options{})
	require.Equal(t, want, got, "the LLM service read back")
}
