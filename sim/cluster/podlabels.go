package cluster

// PodLabels are the labels of a workload's pods (a pod template's
// metadata.labels), shared by every pod of the workload. The cluster
// counts, on each node, the pods of each label set placed there, so that
// the scheduler can count the pods a label selector matches by topology
// domain (topology spread constraints) without a list of pods.
type PodLabels struct {
	Labels map[string]string
}

// labelTally counts the placed pods of each label set per node.
type labelTally struct {
	// ids numbers the label sets in the order their first pod was placed
	// (deterministic: the run is).
	ids  map[*PodLabels]int32
	sets []*PodLabels
	// pods[set][node] is the pods of the set on the node.
	pods [][]int32
}

// tallyPod adds d (+1 or -1) pods of p's label set on node n.
func (c *Cluster) tallyPod(n int32, p *PodSpec, d int32) {
	if p.Labels == nil {
		return
	}
	t := &c.labels
	id, ok := t.ids[p.Labels]
	if !ok {
		if t.ids == nil {
			t.ids = map[*PodLabels]int32{}
		}
		id = int32(len(t.sets))
		t.ids[p.Labels] = id
		t.sets = append(t.sets, p.Labels)
		t.pods = append(t.pods, make([]int32, len(c.Nodes)))
	}
	t.pods[id][n] += d
}

// PodLabelSets is the number of label sets whose pods have been placed;
// PodLabelSet(i) is the i-th.
func (t Topology) PodLabelSets() int { return len(t.c.labels.sets) }

// PodLabelSet is the i-th label set placed (0 <= i < PodLabelSets()).
func (t Topology) PodLabelSet(i int) *PodLabels { return t.c.labels.sets[i] }

// PodsWithLabels is how many pods of label set i are on node n now.
func (t Topology) PodsWithLabels(i int, n int32) int32 { return t.c.labels.pods[i][n] }
