package strict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type named struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Ready  bool              `json:"ready"`
	Count  int               `json:"count"`
	Max    *int              `json:"max"`
}

// YAML 1.1 reads no, yes, on, off, y, n as booleans; YAML 1.2, and
// Kubernetes' string fields, read them as strings. Every way gpuplan
// decodes YAML (a document, a manifest, the Unmarshal helpers) reads a
// name no and a label value yes as the strings they are.
func TestYAML11BooleansAreStringsInEveryDecoder(t *testing.T) {
	doc := "name: no\nlabels: {team: yes, on: off, tier: Y}\nready: true\n"
	want := func(how string, n named) {
		t.Helper()
		if n.Name != "no" || n.Labels["team"] != "yes" || n.Labels["on"] != "off" || n.Labels["tier"] != "Y" || !n.Ready {
			t.Errorf("%s: got %+v, want name no, labels team=yes on=off tier=Y, ready", how, n)
		}
	}
	var a named
	if _, err := Decode("f.yaml", []byte(doc), &a, Options{}); err != nil {
		t.Fatal(err)
	}
	want("Decode", a)
	ms, err := Manifests("m.yaml", []byte("apiVersion: v1\nkind: X\n"+doc))
	if err != nil || len(ms) != 1 {
		t.Fatal(err)
	}
	var b struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Name       string            `json:"name"`
		Labels     map[string]string `json:"labels"`
		Ready      bool              `json:"ready"`
	}
	if _, err := ms[0].Decode("m.yaml", &b, Options{}); err != nil {
		t.Fatal(err)
	}
	want("Manifest.Decode", named{Name: b.Name, Labels: b.Labels, Ready: b.Ready})
	var c, d named
	if err := Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	want("Unmarshal", c)
	if err := UnmarshalStrict([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	want("UnmarshalStrict", d)
	// A boolean field is true or false, not yes.
	var e named
	_, err = Decode("f.yaml", []byte("ready: yes\n"), &e, Options{})
	if err == nil || err.Error() != `f.yaml:1:8: ready: expected true or false, got "yes"` {
		t.Errorf("ready: yes: got %v", err)
	}
}

// A number or boolean field given null is refused (decoding would read 0):
// count: null is not count: 0. A pointer field may be null, and a patch
// may null anything (null deletes there).
func TestNullNumbersRefused(t *testing.T) {
	var n named
	_, err := Decode("f.yaml", []byte("name: a\ncount: null\n"), &n, Options{})
	if err == nil || err.Error() != "f.yaml:2:8: count: is null; give a whole number or leave the field out" {
		t.Errorf("count: null: got %v", err)
	}
	_, err = Decode("f.yaml", []byte("ready: ~\n"), &n, Options{})
	if err == nil || err.Error() != "f.yaml:1:8: ready: is null; give a true or false or leave the field out" {
		t.Errorf("ready: ~: got %v", err)
	}
	if _, err := Decode("f.yaml", []byte("name: a\nmax: null\n"), &n, Options{}); err != nil {
		t.Errorf("max (a pointer): %v", err)
	}
}

// Text decodes UTF-16 with a byte-order mark, as Kubernetes reads it, and
// refuses NUL bytes (binary, UTF-16 without a mark) without quoting them.
func TestTextDecodesUTF16AndRefusesBinary(t *testing.T) {
	le := []byte{0xff, 0xfe, 'n', 0, ':', 0, ' ', 0, 0xe9, 0, '\n', 0}
	be := []byte{0xfe, 0xff, 0, 'n', 0, ':', 0, ' ', 0, 0xe9, 0, '\n'}
	for name, b := range map[string][]byte{"le": le, "be": be} {
		got, err := Text("u.yaml", b)
		if err != nil || string(got) != "n: \u00e9\n" {
			t.Errorf("%s: got %q, %v", name, got, err)
		}
	}
	_, err := Text("u.yaml", le[2:]) // no mark
	if err == nil || err.Error() != "u.yaml: is not a text file: it has a NUL byte at byte 1 (a binary file, or UTF-16 without a byte-order mark: save it as UTF-8); nothing of it is quoted" {
		t.Errorf("no mark: got %v", err)
	}
	_, err = Text("u.yaml", le[:len(le)-1])
	if err == nil || !strings.Contains(err.Error(), "odd number of bytes (9)") {
		t.Errorf("odd: got %v", err)
	}
	// Read from a file, a UTF-16 scenario is what it says, not empty.
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, le, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFileBounded(p); err != nil || string(got) != "n: \u00e9\n" {
		t.Errorf("ReadFileBounded: %q, %v", got, err)
	}
}

// /proc/self/environ reads as a regular file and holds the process's
// secrets; it, anything under /proc, /sys or /dev, and a link to one, is
// refused by name before a byte is read.
func TestSpecialFilesRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here")
	}
	t.Setenv("SECRET_TOKEN", "s3cr3t-value")
	link := filepath.Join(t.TempDir(), "env.csv")
	if err := os.Symlink("/proc/self/environ", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/self/environ", link} {
		_, err := ReadFileBounded(p)
		if err == nil || err.Error() != p+": is under /proc, a special file system: gpuplan reads a user's files, not the kernel's" {
			t.Errorf("%s: got %v", p, err)
		}
		if _, err := Open(p); err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open %s: got %v", p, err)
		}
	}
}
