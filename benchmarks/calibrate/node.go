//go:build cgo

package calibrate

import "gpuplan.dev/gpuplan/models"

// DiscoverNode discovers this node through its NVML library.
func DiscoverNode() (*models.NodeFacts, error) {
	return Discover(OpenNVML(), HostFacts(), NVMLProfileName)
}
