package capacity

import "gpuplan.dev/gpuplan/sim/cluster"

// Ledger counts, per pool, what happened to its nodes.
type Ledger []PoolStats

// observe keeps each pool's most nodes present.
func (l Ledger) observe(c *cluster.Cluster) {
	for p := range c.Pools {
		if pr := c.Pools[p].Present; pr > l[p].MaxPresent {
			l[p].MaxPresent = pr
		}
	}
}
