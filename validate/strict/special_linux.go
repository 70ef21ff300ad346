//go:build linux

package strict

import "syscall"

// kernelFSMagic names the file systems of the kernel by their statfs
// magic numbers (linux/magic.h).
var kernelFSMagic = map[int64]string{
	0x9fa0:     "procfs",
	0x62656572: "sysfs",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0x27e0eb:   "cgroupfs",
	0x63677270: "cgroup2fs",
	0x62656570: "configfs",
	0xcafe4a11: "bpffs",
	0xde5e81e4: "efivarfs",
}

// kernelFS names the kernel's file system path is on, or "".
func kernelFS(path string) string {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return ""
	}
	return kernelFSMagic[int64(st.Type)]
}
