package nodes

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Topology levels a node list carries, as the clouds and NVIDIA's tools
// label nodes. A pool's nodes that carry them are read into the pool's
// topology: NVLink domains, racks (the switch nearest the nodes) and
// blocks (the layer above), when the levels nest and every group of a
// level is the same size, as gpuplan's pools fill them.
const (
	// LevelDomain, LevelRack and LevelBlock are gpuplan's level labels
	// (sim/cluster's LabelGPUClique, LabelTopologyRack, LabelTopologyBlock).
	LevelDomain = "nvidia.com/gpu.clique"
	LevelRack   = "cloud.provider.com/topology-rack"
	LevelBlock  = "cloud.provider.com/topology-block"
)

// levelSources are the labels read for each level, first found wins:
//   - NVLink domain: NVIDIA GPU feature discovery's nvidia.com/gpu.clique
//     (GB200/GB300: <cluster UUID>.<clique ID>), NVIDIA topograph's
//     network.topology.nvidia.com/accelerator;
//   - rack: EKS's topology.k8s.aws/network-node-layer-3 (the bottom layer
//     of EC2's instance topology; layer-4 on the types with four layers),
//     topograph's leaf, GKE's cloud.google.com/gce-topology-subblock, and
//     the level label of Kueue's documentation;
//   - block: the layer above each of those.
var levelSources = []struct {
	level string
	keys  []string
}{
	{LevelDomain, []string{LevelDomain, "network.topology.nvidia.com/accelerator"}},
	{LevelRack, []string{awsLayer + "4", awsLayer + "3", "network.topology.nvidia.com/leaf", "cloud.google.com/gce-topology-subblock", LevelRack}},
	{LevelBlock, []string{awsLayer + "3", awsLayer + "2", "network.topology.nvidia.com/spine", "cloud.google.com/gce-topology-block", LevelBlock}},
}

const awsLayer = "topology.k8s.aws/network-node-layer-"

// Levels is a pool's topology read from its nodes' labels.
type Levels struct {
	// NodesPerDomain, NodesPerRack and RacksPerBlock are the sizes of the
	// levels read (0: not read).
	NodesPerDomain, NodesPerRack, RacksPerBlock int32
	// Keys maps each label read to its gpuplan level label (LevelDomain,
	// LevelRack, LevelBlock): a Kueue Topology or a pod naming the cloud's
	// label finds the same groups.
	Keys map[string]string
}

// nodeLevels are one node's level values, by gpuplan level label, and the
// label each was read from.
type nodeLevels struct {
	vals, keys map[string]string
}

func readLevels(lb map[string]string) nodeLevels {
	nl := nodeLevels{vals: map[string]string{}, keys: map[string]string{}}
	for _, src := range levelSources {
		for _, k := range src.keys {
			if v, ok := lb[k]; ok && v != "" {
				// EKS's layer-3 is the rack only where no layer-4 is.
				if src.level == LevelBlock && k == awsLayer+"3" && lb[awsLayer+"4"] == "" {
					continue
				}
				nl.vals[src.level], nl.keys[src.level] = v, k
				break
			}
		}
	}
	return nl
}

// poolLevels reads the levels of one pool's nodes; a note says why a level
// the labels give is not read.
func poolLevels(name string, nodes []nodeLevels) (*Levels, []string) {
	var notes []string
	// A level is read when every node gives it under the same label.
	have := map[string]string{}
	for _, src := range levelSources {
		key := nodes[0].keys[src.level]
		if key == "" {
			continue
		}
		all := true
		for _, n := range nodes {
			all = all && n.keys[src.level] == key
		}
		if !all {
			notes = append(notes, fmt.Sprintf("pool %s: not every node carries %s: its %s level is not read", name, key, levelWord(src.level)))
			continue
		}
		have[src.level] = key
	}
	if len(have) == 0 {
		return nil, notes
	}
	// group counts the members of each value of level, and checks each
	// group lies inside one group of the level above (nil: none).
	group := func(level, above string) (map[string]int32, bool) {
		count := map[string]int32{}
		parent := map[string]string{}
		for _, n := range nodes {
			v := n.vals[level]
			count[v]++
			if above == "" {
				continue
			}
			if p, ok := parent[v]; ok && p != n.vals[above] {
				return nil, false
			}
			parent[v] = n.vals[above]
		}
		return count, true
	}
	same := func(count map[string]int32) (int32, bool) {
		var size int32
		for _, c := range count {
			if size != 0 && c != size {
				return 0, false
			}
			size = c
		}
		return size, true
	}
	sizes := func(count map[string]int32) string {
		var s []int
		for _, c := range count {
			s = append(s, int(c))
		}
		sort.Ints(s)
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(slices.Compact(s))), " or "), "[]")
	}
	lv := &Levels{Keys: map[string]string{}}
	flat := func(why string) (*Levels, []string) {
		return nil, append(notes, fmt.Sprintf("pool %s: %s; gpuplan's pools fill levels of one size, so its topology is taken as one flat network", name, why))
	}
	// above is the level read above level ("" for none).
	above := func(level string) string {
		if level == LevelDomain && have[LevelRack] != "" {
			return LevelRack
		}
		if level != LevelBlock && have[LevelBlock] != "" {
			return LevelBlock
		}
		return ""
	}
	if k := have[LevelDomain]; k != "" {
		count, nested := group(LevelDomain, above(LevelDomain))
		if !nested {
			return flat(fmt.Sprintf("an NVLink domain (%s) spans two %ss", k, levelWord(above(LevelDomain))))
		}
		n, ok := same(count)
		if !ok {
			return flat(fmt.Sprintf("its NVLink domains (%s) hold %s nodes", k, sizes(count)))
		}
		lv.NodesPerDomain, lv.Keys[k] = n, LevelDomain
	}
	if k := have[LevelRack]; k != "" {
		count, nested := group(LevelRack, above(LevelRack))
		if !nested {
			return flat(fmt.Sprintf("a rack (%s) spans two blocks", k))
		}
		n, ok := same(count)
		if !ok {
			return flat(fmt.Sprintf("its racks (%s) hold %s nodes", k, sizes(count)))
		}
		if lv.NodesPerDomain > 0 && n%lv.NodesPerDomain != 0 {
			return flat(fmt.Sprintf("its racks of %d nodes do not hold whole %d-node NVLink domains", n, lv.NodesPerDomain))
		}
		lv.NodesPerRack, lv.Keys[k] = n, LevelRack
	}
	if k := have[LevelBlock]; k != "" {
		racks := map[string]map[string]bool{}
		for _, n := range nodes {
			unit := n.vals[LevelRack]
			if lv.NodesPerRack == 0 {
				unit = n.vals[LevelDomain]
			}
			if racks[n.vals[LevelBlock]] == nil {
				racks[n.vals[LevelBlock]] = map[string]bool{}
			}
			racks[n.vals[LevelBlock]][unit] = true
		}
		count := map[string]int32{}
		for b, r := range racks {
			count[b] = int32(len(r))
		}
		n, ok := same(count)
		switch {
		case lv.NodesPerRack == 0 && lv.NodesPerDomain == 0:
			notes = append(notes, fmt.Sprintf("pool %s: %s gives blocks but no rack or NVLink domain is labelled: its block level is not read", name, k))
		case !ok:
			return flat(fmt.Sprintf("its blocks (%s) hold %s racks", k, sizes(count)))
		default:
			lv.RacksPerBlock, lv.Keys[k] = n, LevelBlock
		}
	}
	if lv.NodesPerDomain <= 1 && lv.NodesPerRack == 0 && lv.RacksPerBlock == 0 {
		return nil, notes
	}
	return lv, notes
}

func levelWord(level string) string {
	switch level {
	case LevelDomain:
		return "NVLink domain"
	case LevelRack:
		return "rack"
	case LevelBlock:
		return "block"
	}
	return "level"
}
