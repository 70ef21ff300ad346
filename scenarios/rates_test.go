package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The rates fitted over the embedded Karpenter price table: the same 27
// rows (c7i, m7i and r7i, no metal or flex sizes) fitted independently
// with a short script over the two CSV files give $0.036990451 a vCPU-hour
// and $0.0035796845 a GiB-hour.
func TestAWSCPUMemoryRatesFromEmbeddedCatalog(t *testing.T) {
	r, err := AWSCPUMemoryRates()
	require.NoError(t, err)
	require.InDelta(t, 0.036990451, r.VCPU, 1e-9)
	require.InDelta(t, 0.0035796845, r.GiB, 1e-10)
	require.Contains(t, r.Basis, "27 AWS c7i/m7i/r7i")
	rows, err := awsInstancePrices(func(f, s string) bool { return f == "m7i" && s == "xlarge" })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, 4.0, rows[0].VCPUs)
	require.Equal(t, 16.0, rows[0].GiB)
	require.Equal(t, 0.2016, rows[0].PerHour)
}
