package strict

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Manifest is one document of a Kubernetes manifest file: a mapping with
// apiVersion and kind, and the line it starts at.
type Manifest struct {
	Root             *yamlv3.Node
	APIVersion, Kind string
	Name             string
	Line             int
}

// Manifests splits a file of YAML documents (`---` separated) into its
// manifests; empty documents are dropped; a document that is not a mapping
// with apiVersion and kind is an error at its line.
func Manifests(file string, data []byte) ([]Manifest, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var out []Manifest
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, SyntaxError(file, err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind == yamlv3.ScalarNode && n.Content[0].Tag == "!!null" {
			continue
		}
		root := n.Content[0]
		if root.Kind != yamlv3.MappingNode {
			return nil, Errorf(file, root.Line, "", "a manifest is a mapping with apiVersion and kind, got %s", KindName(root))
		}
		// Names and label values read as YAML 1.2 (and Kubernetes) reads
		// them, whichever decoder follows.
		QuoteYAML11Bools(root)
		m := Manifest{Root: root, Line: root.Line}
		m.APIVersion, m.Kind = scalarAt(root, "apiVersion"), scalarAt(root, "kind")
		m.Name = scalarAt(mapAt(root, "metadata"), "name")
		if m.APIVersion == "" || m.Kind == "" {
			return nil, Errorf(file, root.Line, "", "a manifest needs apiVersion and kind")
		}
		out = append(out, m)
	}
}

// Decode checks a manifest against out's type (a pointer to a struct with
// json tags) and decodes it strictly; unknown or mistyped fields are
// InputErrors at their line and field path. It returns the positions of
// the fields, for errors found later.
func (m Manifest) Decode(file string, out any, opt Options) (Positions, error) {
	pos := Positions{}
	w := Walker{File: file, Pos: pos, Opts: opt}
	if err := w.Walk(m.Root, reflect.TypeOf(out).Elem(), ""); err != nil {
		return nil, err
	}
	b, err := yamlv3.Marshal(m.Root)
	if err != nil {
		return nil, Errorf(file, m.Line, "", "%v", err)
	}
	if err := yaml.UnmarshalStrict(b, out); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: ")
		msg = strings.TrimPrefix(msg, "while decoding JSON: ")
		return nil, Errorf(file, m.Line, m.Kind, "%s", Shorten(strings.TrimPrefix(msg, "json: ")))
	}
	return pos, nil
}

// At is an InputError at a field path of a decoded manifest: the field's
// own line and column when known, else the manifest's line.
func At(file string, line int, pos Positions, field, format string, args ...any) *InputError {
	e := Errorf(file, line, field, format, args...)
	if p, ok := pos[field]; ok {
		e.Line, e.Column = p[0], p[1]
	}
	return e
}

func mapAt(n *yamlv3.Node, key string) *yamlv3.Node {
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalarAt(n *yamlv3.Node, key string) string {
	v := mapAt(n, key)
	if v == nil || v.Kind != yamlv3.ScalarNode {
		return ""
	}
	return v.Value
}

// PositionsOf records where every field path under root is, for errors
// about a document decoded without a Walker.
func PositionsOf(root *yamlv3.Node) Positions {
	pos := Positions{}
	var walk func(n *yamlv3.Node, path string, depth int)
	walk = func(n *yamlv3.Node, path string, depth int) {
		if n == nil || depth > 200 {
			return
		}
		pos[path] = [2]int{n.Line, n.Column}
		switch n.Kind {
		case yamlv3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], Join(path, n.Content[i].Value), depth+1)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		}
	}
	walk(root, "", 0)
	return pos
}
