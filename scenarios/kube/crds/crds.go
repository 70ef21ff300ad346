package crds

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"gpuplan.dev/gpuplan/validate/strict"
)

//go:embed kueue/*.json.gz
var kueueFS embed.FS

// kueueCRDs compiles every Kueue schema once; they never change after.
var kueueCRDs = sync.OnceValues(func() (map[string]*strict.CRD, error) {
	ents, err := kueueFS.ReadDir("kueue")
	if err != nil {
		return nil, err
	}
	out := map[string]*strict.CRD{}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".gz")
		b, err := kueueFS.ReadFile("kueue/" + e.Name())
		if err != nil {
			return nil, err
		}
		c, err := strict.CompileCRD(name, b)
		if err != nil {
			return nil, err
		}
		if u := c.Unevaluated(); len(u) > 0 {
			return nil, fmt.Errorf("schema %s: gpuplan cannot evaluate its rule %s (validate/strict/cel.go)", name, u[0])
		}
		out[strings.TrimSuffix(name, ".json")] = c
	}
	return out, nil
})

// Kueue is the schema of a Kueue kind at an API version
// ("kueue.x-k8s.io/v1beta2", "ClusterQueue"), nil when none is embedded.
func Kueue(apiVersion, kind string) (*strict.CRD, error) {
	version, ok := strings.CutPrefix(apiVersion, "kueue.x-k8s.io/")
	if !ok {
		return nil, nil
	}
	all, err := kueueCRDs()
	if err != nil {
		return nil, err
	}
	return all[strings.ToLower(kind)+"_"+version], nil
}
