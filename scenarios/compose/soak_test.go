//go:build soak

package compose

import (
	"os"
	"testing"
	"time"
)

// The composer's longer run (`make soak`, called from CI): compositions
// of a hunt seeded GPUPLAN_SOAK_SEED (default 2, another stream than
// `make test`'s) for GPUPLAN_SOAK_TIME (default 8m; then the findings
// are shrunk, for at most 4 minutes more), up to GPUPLAN_SOAK_N (default 10,000,000). Shrunk findings
// go under GPUPLAN_COMPOSE_OUT when it is set. Run it for longer by hand
// with, say, GPUPLAN_SOAK_TIME=2h make soak SOAKTIMEOUT=0.
func TestComposerSoak(t *testing.T) {
	rep := hunt(t, HuntOptions{Seed: uint64(envInt(t, "GPUPLAN_SOAK_SEED", 2)), N: envInt(t, "GPUPLAN_SOAK_N", 10_000_000),
		Duration: envDuration(t, "GPUPLAN_SOAK_TIME", 8*time.Minute), Shrink: true, ShrinkBudget: 4 * time.Minute, FindingsDir: os.Getenv("GPUPLAN_COMPOSE_OUT")})
	check(t, rep)
}
