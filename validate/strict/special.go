package strict

import (
	"path/filepath"
	"strings"
)

// specialRoots are the folders whose files are the kernel's, not a
// user's: /proc/self/environ reads as a regular file and holds the
// process's secrets.
var specialRoots = []string{"/proc", "/sys", "/dev"}

// special says why path (symbolic links followed) is a special file that
// no input of gpuplan is, or "" when it is not one: a file under /proc,
// /sys or /dev, or on a file system of the kernel's (procfs, sysfs and
// the like, wherever mounted).
func special(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	for _, r := range specialRoots {
		if real == r || strings.HasPrefix(real, r+"/") {
			return "is under " + r + ", a special file system"
		}
	}
	if fs := kernelFS(real); fs != "" {
		return "is on " + fs + ", a special file system"
	}
	return ""
}
