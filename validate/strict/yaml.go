package strict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
)

var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// IsNonFinite reports whether a YAML scalar is a float that JSON cannot
// carry (.inf, -.inf, .nan in any of YAML's spellings).
func IsNonFinite(n *yamlv3.Node) bool {
	if n.Kind != yamlv3.ScalarNode || n.ShortTag() != "!!float" {
		return false
	}
	var f float64
	return n.Decode(&f) == nil && (math.IsInf(f, 0) || math.IsNaN(f))
}

// FindNonFinite finds the first .inf or .nan under n (a YAML document or
// node), with its field path from path; nil when there is none.
func FindNonFinite(n *yamlv3.Node, path string) (*yamlv3.Node, string) {
	return findNonFinite(n, path, 0)
}

// findNonFinite finds the first .inf or .nan under n, with its field path.
func findNonFinite(n *yamlv3.Node, path string, depth int) (*yamlv3.Node, string) {
	if n == nil || depth > 200 {
		return nil, ""
	}
	switch n.Kind {
	case yamlv3.DocumentNode:
		for _, c := range n.Content {
			if x, p := findNonFinite(c, path, depth+1); x != nil {
				return x, p
			}
		}
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if x, p := findNonFinite(n.Content[i+1], Join(path, n.Content[i].Value), depth+1); x != nil {
				return x, p
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if x, p := findNonFinite(c, fmt.Sprintf("%s[%d]", path, i), depth+1); x != nil {
				return x, p
			}
		}
	case yamlv3.ScalarNode:
		if IsNonFinite(n) {
			return n, path
		}
	}
	return nil, ""
}

// NodeAt finds the node at a field path ("spec.resourceGroups[0].flavors[1].name")
// under a mapping, or the deepest one on the way that the file has, and
// whether it found the whole path.
func NodeAt(root *yamlv3.Node, path string) (*yamlv3.Node, bool) {
	n := root
	for path != "" && n != nil {
		var seg string
		if strings.HasPrefix(path, "[\"") {
			// A mapping key as the walker writes it: ["nvidia.com/gpu"].
			end := strings.Index(path, "\"]")
			if end < 0 {
				return n, false
			}
			key, err := strconv.Unquote(path[1 : end+1])
			path = strings.TrimPrefix(path[end+2:], ".")
			if err != nil || n.Kind != yamlv3.MappingNode {
				return n, false
			}
			var next *yamlv3.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return n, false
			}
			n = next
			continue
		}
		if path[0] == '[' {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return n, false
			}
			seg, path = path[:end+1], strings.TrimPrefix(path[end+1:], ".")
			i, err := strconv.Atoi(seg[1 : len(seg)-1])
			if err != nil || n.Kind != yamlv3.SequenceNode || i < 0 || i >= len(n.Content) {
				return n, false
			}
			n = n.Content[i]
			continue
		}
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			end = len(path)
		}
		seg, path = path[:end], strings.TrimPrefix(path[end:], ".")
		if n.Kind != yamlv3.MappingNode {
			return n, false
		}
		var next *yamlv3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return n, false
		}
		n = next
	}
	return n, n != nil
}

// Shorten cuts a message that carries input down to a few hundred bytes.
func Shorten(msg string) string {
	const most = 4 * MaxQuote
	if len(msg) <= most {
		return msg
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", msg[:cut], len(msg))
}

// LastQuoted is the last Go-quoted string in a message.
func LastQuoted(msg string) (string, bool) {
	all := quotedRE.FindAllString(msg, -1)
	if len(all) == 0 {
		return "", false
	}
	v, err := strconv.Unquote(all[len(all)-1])
	return v, err == nil && v != ""
}

// findScalar finds the first scalar whose value is v, with its field path.
func findScalar(n *yamlv3.Node, v, path string, depth int) (*yamlv3.Node, string) {
	if n == nil || depth > 200 {
		return nil, ""
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if x, p := findScalar(n.Content[i+1], v, Join(path, n.Content[i].Value), depth+1); x != nil {
				return x, p
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if x, p := findScalar(c, v, fmt.Sprintf("%s[%d]", path, i), depth+1); x != nil {
				return x, p
			}
		}
	case yamlv3.ScalarNode:
		if n.Value == v {
			return n, path
		}
	}
	return nil, ""
}

// FindScalar finds the first scalar under n whose value is v, with its
// field path from path.
func FindScalar(n *yamlv3.Node, v, path string) (*yamlv3.Node, string) {
	return findScalar(n, v, path, 0)
}
