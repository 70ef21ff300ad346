package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The version comes from the build info the go command records, not a
// constant: a tagged install names its tag, revision and time; a link-time
// -X main.version wins; no build info says unknown.
func TestVersionFromBuildInfo(t *testing.T) {
	info := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "gpuplan.dev/gpuplan", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
				{Key: "vcs.time", Value: "2026-12-05T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	v := readVersion(info, "dev")
	require.Equal(t, versionInfo{Version: "v1.2.3", Revision: "0123abcd", Time: "2026-12-05T10:00:00Z", Modified: true, GoVersion: "go1.26.0"}, v)
	require.Equal(t, "gpuplan v1.2.3 (revision 0123abcd, 2026-12-05T10:00:00Z, modified), go1.26.0", v.String())
	require.Equal(t, "v9.9.9", readVersion(info, "v9.9.9").Version)
	require.Equal(t, "gpuplan unknown", readVersion(func() (*debug.BuildInfo, bool) { return nil, false }, "dev").String())
}

// This test binary's own: --version and `version` print the same line,
// with the Go version that built it; -o json and -o yaml carry it too.
func TestVersionCommand(t *testing.T) {
	code, out, errOut := gpuplan(t, "--version")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, runtime.Version())
	require.NotEqual(t, "gpuplan dev\n", out, "not the constant it used to print")
	code, out2, _ := gpuplan(t, "version")
	require.Equal(t, 0, code)
	require.Equal(t, out, out2)
	require.True(t, strings.HasPrefix(out, "gpuplan "), out)
	for _, o := range []string{"json", "yaml"} {
		code, b, errOut := gpuplan(t, "version", "-o", o)
		require.Equal(t, 0, code, errOut)
		var v versionInfo
		if o == "json" {
			require.NoError(t, json.Unmarshal([]byte(b), &v))
		} else {
			require.NoError(t, yaml.Unmarshal([]byte(b), &v))
		}
		require.Equal(t, runtime.Version(), v.GoVersion, o)
	}
	code, _, errOut = gpuplan(t, "version", "-o", "xml")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--output "xml"`)
}
