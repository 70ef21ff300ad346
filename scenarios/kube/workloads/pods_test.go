package workloads

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/sim/cluster"
)

func pod(name, group, total string) string {
	meta := "metadata:\n  name: " + name + "\n  namespace: team-a\n"
	if group != "" {
		meta += "  labels: {kueue.x-k8s.io/pod-group-name: " + group + ", kueue.x-k8s.io/queue-name: gpu-queue}\n"
		if total != "" {
			meta += "  annotations: {kueue.x-k8s.io/pod-group-total-count: \"" + total + "\"}\n"
		}
	}
	return "apiVersion: v1\nkind: Pod\n" + meta + "spec:\n  restartPolicy: Never\n  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {nvidia.com/gpu: 2, cpu: \"4\", memory: 8Gi}\n"
}

// A bare Pod is one pod of its requests; Kueue's pod group (its label and
// total-count annotation) is one gang of its pods, in the group's name;
// a group whose pods in the file fall short of its count is refused at
// the annotation, as Kueue would never admit it.
func TestPodsAndKueuePodGroups(t *testing.T) {
	objs, _, err := Parse("p.yaml", []byte(pod("solo", "", "")))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	require.Equal(t, "Pod", objs[0].Kind)
	require.Equal(t, "team-a", objs[0].Namespace)
	require.Equal(t, []Group{{Name: "pod", Pods: 1, Waves: 1, Pod: cluster.PodSpec{MilliCPU: 4000, MemoryMiB: 8192, GPUs: 2}}}, objs[0].Groups)
	require.NotContains(t, strings.Join(objs[0].Notes, "\n"), "restartPolicy") // Never: it completes

	three := pod("w0", "train", "3") + "---\n" + pod("w1", "train", "3") + "---\n" + pod("w2", "train", "3") + "---\n" + pod("solo", "", "")
	objs, _, err = Parse("p.yaml", []byte(three))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	require.Equal(t, "train", objs[0].Name)
	require.EqualValues(t, 3, objs[0].Pods())
	require.Equal(t, "gpu-queue", objs[0].Queue)
	p, notes := plans(&objs[0])
	require.Empty(t, notes)
	require.Len(t, p, 1)
	require.EqualValues(t, 3, p[0].replicas)
	require.EqualValues(t, 0, p[0].minAvailable) // the whole group

	_, _, err = Parse("p.yaml", []byte(pod("w0", "train", "3")+"---\n"+pod("w1", "train", "3")))
	require.EqualError(t, err, `p.yaml:7: metadata.annotations["kueue.x-k8s.io/pod-group-total-count"]: pod group "train" counts 3 pods and the file has 2 of them: Kueue admits the group only once all its pods exist`)
	_, _, err = Parse("p.yaml", []byte(pod("w0", "train", "")))
	require.ErrorContains(t, err, `p.yaml:6:`)
	require.ErrorContains(t, err, `needs the kueue.x-k8s.io/pod-group-total-count annotation`)
}
