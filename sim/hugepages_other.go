//go:build !linux

package sim

// adviseHuge does nothing here: see the Linux version.
func adviseHuge([]JobRecord) {}
