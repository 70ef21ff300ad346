package strict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Positions maps a field path ("spec.cluster.pools[0].count") to where it
// is in the file (line, column), so semantic errors found after decoding
// can name a line.
type Positions map[string][2]int

// Errorf is an InputError at a field path of file, placed at the field's
// line and column where the file has it.
func (p Positions) Errorf(file, path, format string, args ...any) *InputError {
	e := &InputError{File: file, Field: path, Msg: fmt.Sprintf(format, args...)}
	if lc, ok := p[path]; ok {
		e.Line, e.Column = lc[0], lc[1]
	}
	return e
}

// Options adapts the walk to one schema: types whose YAML is a patch of
// another type, scalar types with a checker of their own (durations,
// distributions written as one value), and a check of quantities by field
// path. The zero value checks structure and kinds only.
type Options struct {
	// What one document is, for the error on a second one ("a scenario").
	What string
	// Patches maps a type to the type it patches: its YAML has the same
	// fields and kinds, any of them absent, and `$patch: delete` on list
	// items.
	Patches map[reflect.Type]reflect.Type
	// Scalars checks a scalar node given for a value of the type; the error
	// it returns is placed at the node's line, column and field path.
	Scalars map[reflect.Type]func(n *yamlv3.Node) error
	// Quantity checks a Kubernetes quantity at a field path.
	Quantity func(path string, q resource.Quantity) error
}

// Decode decodes one YAML document into out (a pointer to a struct with
// json tags). Unknown or mistyped fields are InputErrors naming the line,
// column and field path; decoding itself is sigs.k8s.io/yaml's strict
// mode. It returns where each field path is, for errors found later.
func Decode(file string, data []byte, out any, opt Options) (Positions, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errorf(file, 0, "", "the file is empty")
		}
		return nil, SyntaxError(file, err)
	}
	var extra yamlv3.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errorf(file, extra.Line, "", "the file has more than one YAML document; %s is one document", what(opt))
	} else if !errors.Is(err, io.EOF) {
		return nil, SyntaxError(file, err)
	}
	pos := Positions{}
	w := Walker{File: file, Pos: pos, Opts: opt}
	root := &doc
	if root.Kind == yamlv3.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := w.Walk(root, reflect.TypeOf(out).Elem(), ""); err != nil {
		return nil, err
	}
	if QuoteYAML11Bools(root) {
		if b, err := yamlv3.Marshal(root); err == nil {
			data = b
		}
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		// The walker places what it knows of; what is left is named as
		// decoding says it, quoting little of the input.
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: ")
		msg = strings.TrimPrefix(msg, "while decoding JSON: ")
		return nil, Errorf(file, 0, "", "%s", Shorten(strings.TrimPrefix(msg, "json: ")))
	}
	return pos, nil
}

// SyntaxError is a YAML parser error as an InputError at its line.
func SyntaxError(file string, err error) error {
	msg := err.Error()
	line := 0
	// yaml.v3 errors read "yaml: line N: ...".
	if rest, ok := strings.CutPrefix(msg, "yaml: line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return Errorf(file, line, "", "invalid YAML: %s", msg)
}

// Walker checks a YAML node tree against a Go type (json tags), recording
// where each field path is. Decode uses one; a reader of several documents
// uses one per document.
type Walker struct {
	File string
	Pos  Positions
	Opts Options
}

var (
	quantityType = reflect.TypeOf(resource.Quantity{})
	// rawType is an embedded object of any shape (a DRA claim's opaque
	// driver parameters): its schema is its driver's, not the API's.
	rawType     = reflect.TypeOf(runtime.RawExtension{})
	unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func what(opt Options) string {
	if opt.What == "" {
		return "a file of this kind"
	}
	return opt.What
}

func (w *Walker) fail(n *yamlv3.Node, path, format string, args ...any) error {
	if len(path) > 4*MaxQuote {
		// Keys come from the input: a path names no more of it than a quote.
		cut := 4 * MaxQuote
		for cut > 0 && !utf8.RuneStart(path[cut]) {
			cut--
		}
		path = path[:cut] + "..."
	}
	return &InputError{File: w.File, Line: n.Line, Column: n.Column, Field: path, Msg: fmt.Sprintf(format, args...)}
}

// KindName says what a node is, for messages: a mapping, a list, null, or
// the scalar quoted.
func KindName(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "null"
	}
	return Quote(n.Value)
}

// JSONFields returns the json names of a struct type's fields, inlined
// structs flattened.
func JSONFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && (strings.Contains(opts, "inline") || (f.Anonymous && name == "")) {
			for k, v := range JSONFields(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// Walk checks n against t at field path path.
func (w *Walker) Walk(n *yamlv3.Node, t reflect.Type, path string) error {
	if n.Kind == yamlv3.AliasNode {
		return w.fail(n, path, "YAML aliases are not supported")
	}
	w.Pos[path] = [2]int{n.Line, n.Column}
	optional := t.Kind() == reflect.Pointer
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Tag == "!!null" {
		if !optional && isNumberOrBool(t.Kind()) {
			// Decoding would read null as 0 (or false): count: null is
			// not count: 0.
			return w.fail(n, path, "is null; give a %s or leave the field out", kindWord(t.Kind()))
		}
		return nil
	}
	if IsNonFinite(n) {
		// JSON, which decoding goes through, has no infinities or NaN.
		return w.fail(n, path, "%s is not a finite number", Quote(n.Value))
	}
	if pt, ok := w.Opts.Patches[t]; ok {
		return w.walkPatch(n, pt, path)
	}
	if check, ok := w.Opts.Scalars[t]; ok && n.Kind == yamlv3.ScalarNode {
		if err := check(n); err != nil {
			return w.fail(n, path, "%v", err)
		}
		return nil
	}
	if t == rawType {
		return nil
	}
	custom := reflect.PointerTo(t).Implements(unmarshaler)
	if t == quantityType {
		if n.Kind != yamlv3.ScalarNode {
			return w.fail(n, path, "expected a quantity such as \"8\", \"500m\" or \"64Gi\", got %s", KindName(n))
		}
		q, err := resource.ParseQuantity(n.Value)
		if err != nil {
			return w.fail(n, path, "%s is not a quantity (examples: \"8\", \"500m\", \"64Gi\")", Quote(n.Value))
		}
		if w.Opts.Quantity == nil {
			return nil
		}
		if err := w.Opts.Quantity(path, q); err != nil {
			// Quote what was written: a quantity past int64 prints as
			// 9223372036854775807 whatever it was.
			return w.fail(n, path, "%s", strings.Replace(err.Error(), Quote(q.String()), Quote(n.Value), 1))
		}
		return nil
	}
	if custom {
		if n.Kind == yamlv3.ScalarNode {
			return nil // the type's own decoder checks the scalar form
		}
		if t.Kind() == reflect.Struct && len(JSONFields(t)) == 0 {
			// A scalar-only type such as Duration.
			return w.fail(n, path, "expected a single value, got %s", KindName(n))
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(n, path, "expected a mapping, got %s", KindName(n))
		}
		fields := JSONFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fp := Join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				return w.fail(k, fp, "unknown field %s%s", Quote(k.Value), Suggest(k.Value, fields))
			}
			if seen[k.Value] {
				return w.fail(k, fp, "field %s is given twice", Quote(k.Value))
			}
			seen[k.Value] = true
			if err := w.Walk(v, ft, fp); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(n, path, "expected a mapping, got %s", KindName(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if err := w.Walk(v, t.Elem(), path+"["+strconv.Quote(k.Value)+"]"); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yamlv3.SequenceNode {
			return w.fail(n, path, "expected a list, got %s", KindName(n))
		}
		for i, v := range n.Content {
			if err := w.Walk(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yamlv3.ScalarNode {
			return w.fail(n, path, "expected a string, got %s", KindName(n))
		}
		if n.Tag != "!!str" && n.Style == 0 {
			return w.fail(n, path, "expected a string, got %s (quote it to use it as text)", n.Tag[2:])
		}
	case reflect.Bool:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!bool" {
			return w.fail(n, path, "expected true or false, got %s", KindName(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			return w.fail(n, path, "expected a whole number, got %s", KindName(n))
		}
		bits := t.Bits()
		var err error
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			_, err = strconv.ParseUint(n.Value, 0, bits)
		} else {
			_, err = strconv.ParseInt(n.Value, 0, bits)
		}
		if err != nil {
			return w.fail(n, path, "%s is out of range", Quote(n.Value))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind == yamlv3.ScalarNode && n.Tag == "!!str" && n.Style == 0 {
			if _, err := strconv.ParseFloat(n.Value, 64); errors.Is(err, strconv.ErrRange) {
				return w.fail(n, path, "%s is out of range", Quote(n.Value))
			}
		}
		if n.Kind != yamlv3.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return w.fail(n, path, "expected a number, got %s", KindName(n))
		}
	case reflect.Interface:
		// Free-form, but JSON still has no infinities or NaN.
		if x, p := FindNonFinite(n, path); x != nil {
			return w.fail(x, p, "%s is not a finite number", Quote(x.Value))
		}
	}
	return nil
}

// walkPatch checks a patch against the type it patches: the same fields
// and kinds, any of them absent, $patch: delete allowed on list items.
func (w *Walker) walkPatch(n *yamlv3.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yamlv3.MappingNode && t.Kind() == reflect.Struct {
		w.Pos[path] = [2]int{n.Line, n.Column}
		fields := JSONFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fp := Join(path, k.Value)
			if k.Value == "$patch" {
				if v.Value != "delete" {
					return w.fail(v, fp, "the only $patch directive is delete")
				}
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				return w.fail(k, fp, "unknown field %s%s", Quote(k.Value), Suggest(k.Value, fields))
			}
			if err := w.walkPatch(v, ft, fp); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Tag == "!!null" {
		// In a patch null removes the field.
		w.Pos[path] = [2]int{n.Line, n.Column}
		return nil
	}
	if n.Kind == yamlv3.SequenceNode && t.Kind() == reflect.Slice {
		for i, v := range n.Content {
			if err := w.walkPatch(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	return w.Walk(n, t, path)
}

func isNumberOrBool(k reflect.Kind) bool {
	return k == reflect.Bool || k >= reflect.Int && k <= reflect.Float64
}

func kindWord(k reflect.Kind) string {
	switch {
	case k == reflect.Bool:
		return "true or false"
	case k >= reflect.Float32:
		return "number"
	}
	return "whole number"
}

// Join appends a key to a field path.
func Join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Suggest names the closest known field when the unknown one looks like a
// typo, else lists the known fields.
func Suggest(got string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if len(got) >= len(k)+bestD || len(k) >= len(got)+bestD {
			continue // too far apart in length to be within bestD edits
		}
		if d := editDistance(strings.ToLower(got), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known fields: %s)", strings.Join(names, ", "))
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
