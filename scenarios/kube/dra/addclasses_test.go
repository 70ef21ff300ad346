package dra

import (
	"testing"

	"github.com/stretchr/testify/require"

	"gpuplan.dev/gpuplan/validate/strict"
)

// AddClasses gives a file the DeviceClasses of the other files a
// service lists: a class the file does not define comes from the others,
// a class it defines stays its own, and a built-in class another file
// redefines is the other file's.
func TestAddClassesSharesOtherFilesClasses(t *testing.T) {
	read := func(file, body string) *Set {
		docs, err := strict.Manifests(file, []byte(body))
		require.NoError(t, err)
		s, err := Read(file, docs)
		require.NoError(t, err)
		return s
	}
	class := func(name, expr string) string {
		return "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: " + name + "}\nspec: {selectors: [{cel: {expression: \"" + expr + "\"}}]}\n"
	}
	shared := read("classes.yaml", class("gpuplan-gpu", "device.driver == 'gpu.nvidia.com'")+class("mine", "device.driver == 'gpu.example.com'")+
		class("gpu.nvidia.com", "device.driver == 'gpu.example.com'"))
	own := read("svc.yaml", class("mine", "device.driver == 'gpu.nvidia.com'"))
	own.AddClasses(shared)
	require.Equal(t, "classes.yaml", own.classes["gpuplan-gpu"].sel[0].file)
	require.Equal(t, "svc.yaml", own.classes["mine"].sel[0].file, "the file's own class")
	require.False(t, own.classes["gpu.nvidia.com"].Builtin, "the other file's redefinition of a built-in class")
	own.AddClasses(nil)
}
