package services

import (
	"errors"
	"strings"
	"testing"

	"gpuplan.dev/gpuplan/validate/strict"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "6", memory: 24Gi}
          limits: {nvidia.com/mig-1g.10gb: 1}
`

// Manifests the API server refuses, accepted before issue 33, refused
// with the file, line and field: a Deployment of -1 replicas, a MIG
// resource naming no profile, an HPA metric of a type that is none.
func TestServiceManifestsRefusedAsTheAPIServerWould(t *testing.T) {
	hpa := string(read(t, "hpa.yaml"))
	for _, c := range []struct{ name, text, want string }{
		{"replicas", strings.Replace(deployment, "replicas: 2", "replicas: -1", 1),
			`d.yaml:5:13: spec.replicas: -1 is negative; a Deployment runs 0 or more replicas`},
		{"mig", strings.Replace(deployment, "mig-1g.10gb", "mig-9g.99gb", 1),
			`d.yaml:14:11: spec.template.spec.containers[0].resources: resource "nvidia.com/mig-9g.99gb" names no MIG profile (profiles: 1g.10gb, 1g.18gb, 1g.20gb, 1g.23gb, 1g.34gb, 1g.35gb, 1g.45gb, 1g.47gb, 1g.5gb, 1g.67gb, 1g.70gb, 2g.10gb, 2g.20gb, 2g.35gb, 2g.45gb, 2g.47gb, 2g.67gb, 2g.70gb, 3g.135gb, 3g.139gb, 3g.20gb, 3g.40gb, 3g.71gb, 3g.90gb, 3g.93gb, 4g.135gb, 4g.139gb, 4g.20gb, 4g.40gb, 4g.71gb, 4g.90gb, 4g.93gb, 7g.141gb, 7g.180gb, 7g.186gb, 7g.269gb, 7g.278gb, 7g.40gb, 7g.80gb)`},
		{"hpa-type", strings.Replace(hpa, "  - type: Resource", "  - type: Bogus", 1),
			`d.yaml:14:11: spec.metrics[0].type: "Bogus" is not a metric source type (one of Resource, ContainerResource, Pods, Object, External)`},
		{"hpa-type-source", strings.Replace(hpa, "  - type: Resource", "  - type: Pods", 1),
			`d.yaml:14:11: spec.metrics[0].type: is Pods but spec.metrics[0] has no pods source`},
	} {
		var err error
		if strings.Contains(c.name, "hpa") {
			_, err = Read("d.yaml", []byte(c.text))
		} else {
			_, _, err = ReadServing("d.yaml", []byte(c.text))
		}
		var ie *strict.InputError
		if !errors.As(err, &ie) || ie.ExitCode() != 2 || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
	// The manifest as written reads.
	if _, _, err := ReadServing("d.yaml", []byte(deployment)); err != nil {
		t.Fatal(err)
	}
}
