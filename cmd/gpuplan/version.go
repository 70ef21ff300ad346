package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// versionInfo is what gpuplan says of its build: the module version
// (v1.2.3 from `go install gpuplan.dev/gpuplan/cmd/gpuplan@v1.2.3`,
// "(devel)" from a checkout, or -ldflags "-X main.version=..."), the VCS
// revision and time the go command stamped, whether the tree had
// uncommitted changes, and the Go version.
type versionInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// readVersion reads the build info (debug.ReadBuildInfo, or a fake in
// tests); override is main.version when set at link time.
func readVersion(read func() (*debug.BuildInfo, bool), override string) versionInfo {
	v := versionInfo{Version: "unknown"}
	bi, ok := read()
	if ok && bi != nil {
		v.GoVersion = bi.GoVersion
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if override != "" && override != "dev" {
		v.Version = override
	}
	return v
}

// String is the one line --version prints: gpuplan v1.2.3 (revision
// 0123abcd, 2026-12-05T10:00:00Z, modified), go1.26.0.
func (v versionInfo) String() string {
	var detail []string
	if v.Revision != "" {
		detail = append(detail, "revision "+v.Revision)
	}
	if v.Time != "" {
		detail = append(detail, v.Time)
	}
	if v.Modified {
		detail = append(detail, "modified")
	}
	s := "gpuplan " + v.Version
	if len(detail) > 0 {
		s += " (" + strings.Join(detail, ", ") + ")"
	}
	if v.GoVersion != "" {
		s += ", " + v.GoVersion
	}
	return s
}

func newVersionCmd(out io.Writer, v versionInfo) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print gpuplan's version, VCS revision and time, and Go version (from the build info)",
		Long: `Print the version of this gpuplan binary as the Go toolchain recorded it: the
module version (a tag when installed with go install ...@vX.Y.Z; "(devel)" when built
from a checkout), the VCS revision and commit time and whether the tree had
uncommitted changes (when built with go build in a git checkout), and the Go version.
gpuplan --version prints the same line.`,
		Example: `  gpuplan version
  gpuplan version -o json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			if output == "" {
				output = "table"
			}
			if !outputsTJY().has(output) {
				return badFlag("output", output, "want "+outputsTJY().words())
			}
			switch output {
			case "table":
				_, err := fmt.Fprintln(out, v.String())
				return err
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return err
				}
				_, err = out.Write(b)
				return err
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "what to print: table (one line), json or yaml")
	enumFlag(c, "output", choicesOf(outputsTJY))
	return c
}
