package strict

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// CRD is a custom resource's published schema (OpenAPI v3 as JSON Schema),
// compiled to check manifests against as the API server with strict field
// validation would: fields the schema does not have are refused,
// int-or-string fields take either.
type CRD struct {
	name   string
	schema *jsonschema.Schema
	// doc is the schema as JSON, for its defaults and CEL rules.
	doc         any
	unevaluated []string
}

// Unevaluated lists the schema's CEL rules (not counting transition
// rules) that Check cannot evaluate, each with its place.
func (c *CRD) Unevaluated() []string { return c.unevaluated }

// CompileCRD compiles a schema, gzipped or not.
func CompileCRD(name string, data []byte) (*CRD, error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if data, err = io.ReadAll(io.LimitReader(zr, MaxFileBytes)); err != nil {
			return nil, err
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	unknown := unevaluatedRules(doc)
	strictCRD(doc)
	c := jsonschema.NewCompiler()
	url := "file:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &CRD{name: name, schema: s, doc: doc, unevaluated: unknown}, nil
}

// strictCRD makes a structural schema refuse unknown fields and lets
// x-kubernetes-int-or-string fields be either.
func strictCRD(v any) {
	switch t := v.(type) {
	case map[string]any:
		if t["x-kubernetes-int-or-string"] == true {
			delete(t, "type")
			t["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
		}
		if _, ok := t["properties"]; ok && t["additionalProperties"] == nil && t["x-kubernetes-preserve-unknown-fields"] != true {
			t["additionalProperties"] = false
		}
		for _, x := range t {
			strictCRD(x)
		}
	case []any:
		for _, x := range t {
			strictCRD(x)
		}
	}
}

// Check validates a manifest against the schema after its defaults, as
// the API server does; the first problem (the deepest, then the first in
// the file) is an InputError at its line, column and field path.
func (c *CRD) Check(file string, m Manifest) error {
	b, err := yamlv3.Marshal(m.Root)
	if err != nil {
		return Errorf(file, m.Line, "", "%v", err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return Errorf(file, m.Line, "", "%s", Shorten(err.Error()))
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return Errorf(file, m.Line, "", "%s", Shorten(err.Error()))
	}
	// The API server defaults an object before it validates it: a field
	// the schema both requires and defaults (a NodePool's
	// disruption.consolidateAfter) may be left out.
	applyDefaults(c.doc, inst)
	err = c.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return c.rules(file, m, inst)
	}
	if !errors.As(err, &ve) {
		return Errorf(file, m.Line, m.Kind, "%s", Shorten(err.Error()))
	}
	out := ve.BasicOutput()
	type problem struct {
		path  []string
		msg   string
		line  int
		col   int
		field string
	}
	var ps []problem
	for _, u := range out.Errors {
		if u.Error == nil || u.InstanceLocation == "" && len(out.Errors) > 1 {
			continue
		}
		path := strings.Split(strings.TrimPrefix(u.InstanceLocation, "/"), "/")
		if u.InstanceLocation == "" {
			path = nil
		}
		field := fieldPath(path)
		p := problem{path: path, msg: u.Error.String(), field: field, line: m.Line}
		if n, ok := NodeAt(m.Root, field); ok || n != nil {
			p.line, p.col = n.Line, n.Column
		}
		// An unknown field is named by its key, at the key's line.
		if strings.Contains(p.msg, "additional properties") {
			if k := unknownKey(p.msg); k != "" {
				if parent, ok := NodeAt(m.Root, field); ok && parent.Kind == yamlv3.MappingNode {
					for i := 0; i+1 < len(parent.Content); i += 2 {
						if key := parent.Content[i]; key.Value == k {
							p.field = Join(field, k)
							p.line, p.col = key.Line, key.Column
							p.msg = fmt.Sprintf("unknown field %s: the %s schema has no such field", Quote(k), m.Kind)
							break
						}
					}
				}
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return Errorf(file, m.Line, m.Kind, "%s", Shorten(err.Error()))
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if len(ps[i].path) != len(ps[j].path) {
			return len(ps[i].path) > len(ps[j].path)
		}
		return ps[i].line < ps[j].line
	})
	p := ps[0]
	return &InputError{File: file, Line: p.line, Column: p.col, Field: p.field, Msg: Shorten(p.msg)}
}

// fieldPath writes a JSON pointer's segments as a field path
// ("spec.triggers[0].metadata").
func fieldPath(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		if s != "" && strings.Trim(s, "0123456789") == "" {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// unknownKey is the first key named in an "additional properties 'x'
// not allowed" message.
func unknownKey(msg string) string {
	i := strings.IndexAny(msg, "'\"")
	if i < 0 {
		return ""
	}
	q := msg[i]
	j := strings.IndexByte(msg[i+1:], q)
	if j < 0 {
		return ""
	}
	return msg[i+1 : i+1+j]
}

// Validate checks an instance decoded from JSON (jsonschema.UnmarshalJSON)
// against the schema, for callers that hold an object rather than a
// manifest's YAML.
func (c *CRD) Validate(inst any) error { return c.schema.Validate(inst) }

// rules runs the schema's CEL rules gpuplan can evaluate on a valid instance after its
// defaults, as the API server does on create; a rule that fails is an
// InputError at the field it is attached to, with the API server's words.
func (c *CRD) rules(file string, m Manifest, inst any) error {
	applyDefaults(c.doc, inst)
	f := evalRules(c.doc, inst, "")
	if f == nil {
		return nil
	}
	e := &InputError{File: file, Line: m.Line, Field: f.field, Msg: fmt.Sprintf("%s: Invalid value: \"object\": %s (a rule of the %s schema, checked with its defaults)", m.Kind, f.message, m.Kind)}
	if n, ok := NodeAt(m.Root, f.field); ok || n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	// An object's rule is placed at its key, not at its first field.
	if i := strings.LastIndexByte(f.field, '.'); !strings.HasSuffix(f.field, "]") {
		parent, key := "", f.field
		if i >= 0 {
			parent, key = f.field[:i], f.field[i+1:]
		}
		if pn, ok := NodeAt(m.Root, parent); ok && pn.Kind == yamlv3.MappingNode {
			for j := 0; j+1 < len(pn.Content); j += 2 {
				if k := pn.Content[j]; k.Value == key {
					e.Line, e.Column = k.Line, k.Column
				}
			}
		}
	}
	return e
}
