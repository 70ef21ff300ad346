package manifests

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gpuplan.dev/gpuplan/reports"
)

// WriteDir writes the files under dir, each atomically.
func WriteDir(dir string, files []File) error {
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := reports.WriteFileAtomic(path, func(w io.Writer) error { return f.Encode(w) }); err != nil {
			return fmt.Errorf("writing %s: %v", path, err)
		}
	}
	return nil
}
