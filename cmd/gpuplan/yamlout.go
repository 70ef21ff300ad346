package main

import (
	"bytes"
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"
)

// writeYAML prints as YAML what writeJSON prints as JSON: the same keys
// and values (sigs.k8s.io/yaml.JSONToYAML, keys sorted), as kubectl's
// -o yaml mirrors its -o json.
func writeYAML(w io.Writer, writeJSON func(io.Writer) error) error {
	var b bytes.Buffer
	if err := writeJSON(&b); err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(b.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// jsonOf is the indented JSON writer of v.
func jsonOf(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}
