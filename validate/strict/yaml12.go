package strict

import (
	"bytes"
	"errors"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans and YAML
// 1.2 (the YAML of Kubernetes' string fields) as strings. true and false,
// booleans in both, are not among them.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// QuoteYAML11Bools double-quotes, in place, every plain scalar under n
// (keys included) that YAML 1.2 reads as a string but YAML 1.1 as a
// boolean, so a decoder of either version reads the same string: a
// LocalQueue named no stays "no", a label value yes stays "yes". It
// reports whether it changed anything.
func QuoteYAML11Bools(n *yamlv3.Node) bool {
	return quoteBools(n, 0)
}

func quoteBools(n *yamlv3.Node, depth int) bool {
	if n == nil || depth > 1000 {
		return false
	}
	if n.Kind == yamlv3.ScalarNode {
		if n.Style == 0 && n.Tag == "!!str" && yaml11Bools[n.Value] {
			n.Style = yamlv3.DoubleQuotedStyle
			return true
		}
		return false
	}
	changed := false
	for _, c := range n.Content {
		if quoteBools(c, depth+1) {
			changed = true
		}
	}
	return changed
}

// YAML12 returns data with the scalars QuoteYAML11Bools quotes quoted
// (data itself when there are none, or when it is not YAML that parses:
// the decoder that follows reports that).
func YAML12(data []byte) []byte {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var docs []*yamlv3.Node
	changed := false
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return data
		}
		if QuoteYAML11Bools(&n) {
			changed = true
		}
		docs = append(docs, &n)
	}
	if !changed {
		return data
	}
	var b bytes.Buffer
	enc := yamlv3.NewEncoder(&b)
	for _, n := range docs {
		if err := enc.Encode(n); err != nil {
			return data
		}
	}
	if err := enc.Close(); err != nil {
		return data
	}
	return b.Bytes()
}

// Unmarshal is sigs.k8s.io/yaml's Unmarshal with YAML 1.2's reading of
// scalars (YAML12): every reader of gpuplan decodes through it or
// UnmarshalStrict, so they agree on what a name or label value is.
func Unmarshal(data []byte, out any) error { return yaml.Unmarshal(YAML12(data), out) }

// UnmarshalStrict is sigs.k8s.io/yaml's UnmarshalStrict with YAML 1.2's
// reading of scalars (YAML12).
func UnmarshalStrict(data []byte, out any) error {
	return yaml.UnmarshalStrict(YAML12(data), out)
}
