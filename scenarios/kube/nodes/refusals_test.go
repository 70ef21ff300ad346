package nodes

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/validate/strict"
)

// A device plugin advertises whole devices: a node list with 1.5 GPUs
// (or 2.5 MIG instances) is refused at its field, not rounded up.
func TestFractionalDevicesRefused(t *testing.T) {
	base, err := os.ReadFile("testdata/mixed-cluster.yaml")
	require.NoError(t, err)
	body := strings.Replace(string(base), `      nvidia.com/gpu: "8"`, `      nvidia.com/gpu: "1.5"`, 1)
	require.NotEqual(t, string(base), body)
	_, err = Parse("x.yaml", []byte(body))
	var ie *strict.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, 2, ie.ExitCode())
	require.Equal(t, `x.yaml:68:23: items[0].status.allocatable["nvidia.com/gpu"]: nvidia.com/gpu "1500m": a device plugin advertises whole GPUs`, err.Error())
}
