//go:build !linux

package strict

// kernelFS names the kernel's file system path is on; only Linux is
// asked.
func kernelFS(string) string { return "" }
