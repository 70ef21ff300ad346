package strict

import (
	"errors"
	"strings"
	"testing"
)

type probe struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Inner struct {
		Ready bool `json:"ready"`
	} `json:"inner"`
}

func TestDecodeNamesLineColumnAndField(t *testing.T) {
	cases := []struct{ doc, want string }{
		// count is on line 2, column 8; an int field given text.
		{"name: a\ncount: many\n", `f.yaml:2:8: count: expected a whole number, got "many"`},
		// the second document starts at its separator, line 2.
		// the typo is on line 3, column 3, one edit from "ready".
		{"name: a\ninner:\n  raedy: true\n", `f.yaml:3:3: inner.raedy: unknown field "raedy" (did you mean "ready"?)`},
		{"name: a\n---\nname: b\n", "f.yaml:2: the file has more than one YAML document; a probe is one document"},
		{"", "f.yaml: the file is empty"},
	}
	for _, c := range cases {
		var p probe
		_, err := Decode("f.yaml", []byte(c.doc), &p, Options{What: "a probe"})
		var ie *InputError
		if !errors.As(err, &ie) || ie.ExitCode() != 2 {
			t.Fatalf("%q: want an InputError, got %v", c.doc, err)
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.doc, err, c.want)
		}
	}
}

func TestDecodePositions(t *testing.T) {
	var p probe
	pos, err := Decode("f.yaml", []byte("name: a\ninner:\n  ready: true\n"), &p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pos["inner.ready"]; got != [2]int{3, 10} {
		t.Errorf("inner.ready at %v, want line 3 column 10", got)
	}
	if !p.Inner.Ready || p.Name != "a" {
		t.Errorf("decoded %+v", p)
	}
}

func TestQuoteIsBounded(t *testing.T) {
	long := strings.Repeat("x", 1000)
	q := Quote(long)
	// 80 bytes quoted (82 with the quotes) and the length of the whole.
	if !strings.HasPrefix(q, `"`+strings.Repeat("x", MaxQuote)+`"`) || !strings.HasSuffix(q, "(1000 bytes)") {
		t.Errorf("Quote(1000 x) = %s", q)
	}
	// A cut never splits a rune: "é" is two bytes, placed across byte 80.
	s := strings.Repeat("a", MaxQuote-1) + "é" + strings.Repeat("b", 10)
	if q := Quote(s); strings.Contains(q, `\x`) {
		t.Errorf("cut inside a rune: %s", q)
	}
}

// FuzzDecode: any bytes give a decoded value or an InputError, never a
// panic, and an error quotes a bounded part of the input.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"name: a\ncount: 3\n", "inner: {ready: yes}\n", "count: .inf\n", "&a x: *a\n", "- 1\n- 2\n", "name: " + strings.Repeat("z", 500) + "\ncount: q\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p probe
		_, err := Decode("f.yaml", data, &p, Options{})
		if err == nil {
			return
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("not an InputError: %v", err)
		}
		if len(err.Error()) > 16*MaxQuote+len("f.yaml")+200 {
			t.Fatalf("error of %d bytes: %.200s", len(err.Error()), err)
		}
	})
}
