package scenarios

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
	"sigs.k8s.io/yaml"
)

// positions maps a field path ("spec.cluster.pools[0].count") to where it
// is in the file, so semantic errors found after decoding can name a line.
type positions map[string][2]int

// decodeStrict decodes one YAML document into out (a pointer to a struct
// with json tags). Unknown or mistyped fields are errors naming the line,
// column and field path; decoding itself is sigs.k8s.io/yaml's strict mode.
func decodeStrict(file string, data []byte, out any) (positions, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, inputErr(file, 0, "", "the file is empty")
		}
		return nil, yamlSyntaxError(file, err)
	}
	var extra yamlv3.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, inputErr(file, extra.Line, "", "the file has more than one YAML document; a scenario is one document")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlSyntaxError(file, err)
	}
	pos := positions{}
	w := walker{file: file, pos: pos}
	root := &doc
	if root.Kind == yamlv3.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := w.walk(root, reflect.TypeOf(out).Elem(), ""); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		// The walker places what it knows of; what is left is named as
		// decoding says it, quoting little of the input.
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: ")
		msg = strings.TrimPrefix(msg, "while decoding JSON: ")
		return nil, inputErr(file, 0, "", "%s", shortenMsg(strings.TrimPrefix(msg, "json: ")))
	}
	return pos, nil
}

func yamlSyntaxError(file string, err error) error {
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
	return inputErr(file, line, "", "invalid YAML: %s", msg)
}

type walker struct {
	file string
	pos  positions
}

var (
	specPatchType    = reflect.TypeOf(SpecPatch{})
	specType         = reflect.TypeOf(Spec{})
	quantityType     = reflect.TypeOf(resource.Quantity{})
	durationType     = reflect.TypeOf(Duration{})
	durationDistType = reflect.TypeOf(DurationDist{})
	numDistType      = reflect.TypeOf(NumDist{})
	unmarshaler      = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

func (w *walker) fail(n *yamlv3.Node, path, format string, args ...any) error {
	if len(path) > 4*MaxQuote {
		// Keys come from the input: a path names no more of it than a quote.
		cut := 4 * MaxQuote
		for cut > 0 && !utf8.RuneStart(path[cut]) {
			cut--
		}
		path = path[:cut] + "..."
	}
	return &InputError{File: w.file, Line: n.Line, Column: n.Column, Field: path, Msg: fmt.Sprintf(format, args...)}
}

func kindName(n *yamlv3.Node) string {
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

// jsonFields returns the json names of a struct type's fields, inlined
// structs flattened.
func jsonFields(t reflect.Type) map[string]reflect.Type {
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
			for k, v := range jsonFields(ft) {
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

func (w *walker) walk(n *yamlv3.Node, t reflect.Type, path string) error {
	if n.Kind == yamlv3.AliasNode {
		return w.fail(n, path, "YAML aliases are not supported in scenarios")
	}
	w.pos[path] = [2]int{n.Line, n.Column}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Tag == "!!null" {
		return nil
	}
	if isNonFiniteScalar(n) {
		// JSON, which decoding goes through, has no infinities or NaN.
		return w.fail(n, path, "%s is not a finite number", Quote(n.Value))
	}
	if t == specPatchType {
		return w.walkPatch(n, specType, path)
	}
	if n.Kind == yamlv3.ScalarNode {
		switch t {
		case durationType, durationDistType:
			return w.duration(n, path)
		case numDistType:
			if n.Tag != "!!int" && n.Tag != "!!float" {
				return w.fail(n, path, "expected a number or a mapping (values, weights; or min, max), got %s", kindName(n))
			}
			return nil
		}
	}
	custom := reflect.PointerTo(t).Implements(unmarshaler)
	if t == quantityType {
		if n.Kind != yamlv3.ScalarNode {
			return w.fail(n, path, "expected a quantity such as \"8\", \"500m\" or \"64Gi\", got %s", kindName(n))
		}
		q, err := resource.ParseQuantity(n.Value)
		if err != nil {
			return w.fail(n, path, "%s is not a quantity (examples: \"8\", \"500m\", \"64Gi\")", Quote(n.Value))
		}
		if err := checkScenarioQuantity(path, q); err != nil {
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
		if t.Kind() == reflect.Struct && len(jsonFields(t)) == 0 {
			// A scalar-only type such as Duration.
			return w.fail(n, path, "expected a single value, got %s", kindName(n))
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(n, path, "expected a mapping, got %s", kindName(n))
		}
		fields := jsonFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fp := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				return w.fail(k, fp, "unknown field %s%s", Quote(k.Value), suggest(k.Value, fields))
			}
			if seen[k.Value] {
				return w.fail(k, fp, "field %s is given twice", Quote(k.Value))
			}
			seen[k.Value] = true
			if err := w.walk(v, ft, fp); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			return w.fail(n, path, "expected a mapping, got %s", kindName(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if err := w.walk(v, t.Elem(), path+"["+strconv.Quote(k.Value)+"]"); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yamlv3.SequenceNode {
			return w.fail(n, path, "expected a list, got %s", kindName(n))
		}
		for i, v := range n.Content {
			if err := w.walk(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yamlv3.ScalarNode {
			return w.fail(n, path, "expected a string, got %s", kindName(n))
		}
		if n.Tag != "!!str" && n.Style == 0 {
			return w.fail(n, path, "expected a string, got %s (quote it to use it as text)", n.Tag[2:])
		}
	case reflect.Bool:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!bool" {
			return w.fail(n, path, "expected true or false, got %s", kindName(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			return w.fail(n, path, "expected a whole number, got %s", kindName(n))
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
			return w.fail(n, path, "expected a number, got %s", kindName(n))
		}
	case reflect.Interface:
		// Free-form, but JSON still has no infinities or NaN.
		if x, p := findNonFiniteScalar(n, path, 0); x != nil {
			return w.fail(x, p, "%s is not a finite number", Quote(x.Value))
		}
	}
	return nil
}

// duration checks a duration written as a scalar, at its own line.
func (w *walker) duration(n *yamlv3.Node, path string) error {
	if n.Tag != "!!str" {
		return w.fail(n, path, "expected a duration such as \"30m\", \"6h\" or \"3d\", got %s", kindName(n))
	}
	if _, err := ParseDuration(n.Value); err != nil {
		return w.fail(n, path, "%v", err)
	}
	return nil
}

// walkPatch checks a patch against the type it patches: the same fields
// and kinds, any of them absent, $patch: delete allowed on list items.
func (w *walker) walkPatch(n *yamlv3.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yamlv3.MappingNode && t.Kind() == reflect.Struct {
		w.pos[path] = [2]int{n.Line, n.Column}
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fp := join(path, k.Value)
			if k.Value == "$patch" {
				if v.Value != "delete" {
					return w.fail(v, fp, "the only $patch directive is delete")
				}
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				return w.fail(k, fp, "unknown field %s%s", Quote(k.Value), suggest(k.Value, fields))
			}
			if err := w.walkPatch(v, ft, fp); err != nil {
				return err
			}
		}
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
	return w.walk(n, t, path)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// suggest names the closest known field when the unknown one looks like a typo.
func suggest(got string, fields map[string]reflect.Type) string {
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

// DecodeStrictYAML decodes one YAML document into out (a pointer to a
// struct with json tags) as scenarios are: unknown or mistyped fields are
// InputErrors naming the line, column and field path. It returns where
// each field path is, for errors found later.
func DecodeStrictYAML(file string, data []byte, out any) (map[string][2]int, error) {
	return decodeStrict(file, data, out)
}
