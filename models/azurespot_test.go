package models

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// By hand: an hourly eviction chance p is a rate -ln(1-p) per hour.
// 0-5% at 5%: -ln(0.95) = 0.051293 per hour, MTBF 19.50 h; 5-10% at 10%:
// -ln(0.9) = 0.105361, MTBF 9.49 h; 20+% at 25%: -ln(0.75) = 0.287682,
// MTBF 3.48 h.
func TestAzureEvictionRate(t *testing.T) {
	for _, c := range []struct {
		band string
		rate float64
		mtbf string
	}{
		{"0-5", 0.051293, "MTBF 19.50 h"},
		{"0-5%", 0.051293, "MTBF 19.50 h"},
		{"5-10", 0.105361, "MTBF 9.49 h"},
		{"1", 0.105361, "MTBF 9.49 h"},
		{"20+", 0.287682, "MTBF 3.48 h"},
		{"20+%", 0.287682, "MTBF 3.48 h"},
	} {
		rate, why, err := AzureEvictionRate(c.band)
		require.NoError(t, err, c.band)
		require.InDelta(t, c.rate, rate, 1e-6, c.band)
		require.Contains(t, why, c.mtbf)
		require.Contains(t, why, "Azure Spot eviction-rate band")
		require.False(t, math.IsNaN(rate))
	}
	for _, bad := range []string{"<5%", ">20%", "5", "", "25-30"} {
		_, _, err := AzureEvictionRate(bad)
		require.Error(t, err, bad)
	}
}
