package kueue

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// readPolicy decodes the Kueue manifests of a policy folder (or file) into
// API objects, as a kubectl apply of them would create them; Kueue's
// kueue-manager-config ConfigMap gives the fair sharing configuration.
func readPolicy(path string) (policy, error) {
	var p policy
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return p, err
	} else if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return p, err
		}
		files = files[:0]
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") {
				files = append(files, filepath.Join(path, n))
			}
		}
		sort.Strings(files)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return p, err
		}
		for _, doc := range bytes.Split(body, []byte("\n---")) {
			var tm struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return p, fmt.Errorf("%s: %v", f, err)
			}
			var into any
			switch tm.Kind {
			case "":
				continue
			case "ResourceFlavor":
				o := &kueue.ResourceFlavor{}
				p.flavors, into = append(p.flavors, o), o
			case "Cohort":
				o := &kueue.Cohort{}
				p.cohorts, into = append(p.cohorts, o), o
			case "ClusterQueue":
				o := &kueue.ClusterQueue{}
				p.queues, into = append(p.queues, o), o
			case "LocalQueue":
				o := &kueue.LocalQueue{}
				p.local, into = append(p.local, o), o
			case "WorkloadPriorityClass":
				o := &kueue.WorkloadPriorityClass{}
				p.priorities, into = append(p.priorities, o), o
			case "ConfigMap":
				var cm corev1.ConfigMap
				if err := yaml.Unmarshal(doc, &cm); err != nil {
					return p, fmt.Errorf("%s: %v", f, err)
				}
				if cm.Name != "kueue-manager-config" {
					continue
				}
				var c config.Configuration
				if err := yaml.Unmarshal([]byte(cm.Data["controller_manager_config.yaml"]), &c); err != nil {
					return p, fmt.Errorf("%s: %v", f, err)
				}
				p.fairSharing = c.FairSharing
				continue
			default:
				return p, fmt.Errorf("%s: kind %s is not part of the cross-check", f, tm.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, into); err != nil {
				return p, fmt.Errorf("%s: %s: %v", f, tm.Kind, err)
			}
		}
	}
	return p, nil
}
