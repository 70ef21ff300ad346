package crds

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"gpuplan.dev/gpuplan/validate/strict"
)

//go:embed kueue/*.json.gz karpenter/*.json.gz
var schemaFS embed.FS

// kueueCRDs compiles every Kueue schema once; they never change after.
var kueueCRDs = sync.OnceValues(func() (map[string]*strict.CRD, error) { return compileDir("kueue") })

// karpenterCRDs compiles Karpenter's NodePool and EC2NodeClass schemas
// once.
var karpenterCRDs = sync.OnceValues(func() (map[string]*strict.CRD, error) { return compileDir("karpenter") })

// compileDir compiles the schemas of one folder, keyed by file name
// without .json.gz; a schema with a CEL rule gpuplan cannot evaluate is
// an error (every rule that creation can break is checked).
func compileDir(dir string) (map[string]*strict.CRD, error) {
	ents, err := schemaFS.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]*strict.CRD{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json.gz") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".gz")
		b, err := schemaFS.ReadFile(dir + "/" + e.Name())
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
}

// Karpenter is the schema of karpenter.sh/v1 NodePool or
// karpenter.k8s.aws/v1 EC2NodeClass, nil for another kind.
func Karpenter(apiVersion, kind string) (*strict.CRD, error) {
	var key string
	switch apiVersion + " " + kind {
	case "karpenter.sh/v1 NodePool":
		key = "nodepool_v1"
	case "karpenter.k8s.aws/v1 EC2NodeClass":
		key = "ec2nodeclass_v1"
	default:
		return nil, nil
	}
	all, err := karpenterCRDs()
	if err != nil {
		return nil, err
	}
	return all[key], nil
}

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
