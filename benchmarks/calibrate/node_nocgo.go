//go:build !cgo

package calibrate

import (
	"errors"

	"gpuplan.dev/gpuplan/models"
)

var errNoNVML = errors.New("NVML is not available: gpuplan was built without cgo (CGO_ENABLED=0), which go-nvml needs; use 'gpuplan calibrate parse' on saved nccl-tests output instead")

// NoNVML reports whether err says NVML is missing.
func NoNVML(err error) bool { return errors.Is(err, errNoNVML) }

// DiscoverNode cannot reach NVML in a build without cgo.
func DiscoverNode() (*models.NodeFacts, error) { return nil, errNoNVML }
