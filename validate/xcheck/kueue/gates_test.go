package kueue

import (
	"os"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// kueueGates are the feature gates XCHECK_KUEUE_GATES sets (nil: none).
var kueueGates map[string]bool

// XCHECK_KUEUE_GATES sets Kueue feature gates for the run (as its
// Configuration's featureGates would), NAME=true|false separated by
// commas, to find which of Kueue's defaults a difference comes from. The
// random policies give gpuplan the same gates, in the Configuration of
// their kueue-manager-config ConfigMap (gen_test.go).
func init() {
	g := os.Getenv("XCHECK_KUEUE_GATES")
	if g == "" {
		return
	}
	m := map[string]bool{}
	for _, kv := range strings.Split(g, ",") {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v == "true"
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(m); err != nil {
		panic(err)
	}
	kueueGates = m
}
