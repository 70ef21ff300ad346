package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// LoadOptions are how a scenario file is read.
type LoadOptions struct {
	// RestrictPaths refuses every path the scenario names (traces,
	// policies, manifests, rate files, node lists, catalogs, calibration
	// profiles, in the spec and in every variant) that resolves, symbolic
	// links followed, outside the folder of the scenario file, as
	// kustomize's load restrictor does; a folder it names is refused when
	// anything under it resolves outside. A CI gate running scenarios from
	// pull requests wants it: `../../` and absolute paths read nothing of
	// the machine. Special files (/proc, /sys, devices, FIFOs) are refused
	// whatever the option.
	RestrictPaths bool
	// PolicyManifests, when set, replace spec.policy.manifests while the
	// scenario is read, as Options.PolicyManifests does when it is built
	// (simulate --policy DIR): the workload's DRA claims are checked
	// against their DeviceClasses.
	PolicyManifests []string
}

// LoadFileWith reads, strictly decodes and validates a scenario file as
// the options say.
func LoadFileWith(path string, o LoadOptions) (*Scenario, error) {
	data, err := readWholeBounded(path)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, filepath.Dir(path), data, o)
}

// pathFields are the json names of the fields that name files: a string,
// a list of strings, or (manifests) a list of objects with a path.
var pathFields = map[string]bool{"path": true, "manifests": true, "calibration": true, "jobTable": true, "catalogs": true, "gpuConfigs": true, "skypilot": true, "trace": true, "evictionRates": true}

// maxRestrictedEntries bounds the walk of a folder a restricted scenario
// names.
const maxRestrictedEntries = 100000

// checkPaths refuses, when the scenario was loaded with RestrictPaths, any
// path its spec names that resolves outside its folder.
func (s validator) checkPaths() error {
	if !s.restrict || s.dir == "" {
		return nil
	}
	root, err := realAbs(s.dir)
	if err != nil {
		return &InputError{File: s.file, Msg: fmt.Sprintf("the scenario's folder cannot be resolved: %s", readErr(err))}
	}
	var first error
	walkPaths(reflect.ValueOf(s.Spec), "spec", "", func(field string, p reflect.Value) bool {
		first = s.restrictedPath(root, field, p.String())
		return first == nil
	})
	return first
}

// RebasePaths replaces every file path the scenario's spec names (the
// fields --restrict-paths checks, its variants' too) with f of it: a
// scenario written to another folder keeps naming the same files.
func (s *Scenario) RebasePaths(f func(p string) string) {
	walkPaths(reflect.ValueOf(&s.Spec).Elem(), "spec", "", func(_ string, p reflect.Value) bool {
		if p.CanSet() {
			p.SetString(f(p.String()))
		}
		return true
	})
}

// walkPaths calls f with the field path and value of every file path
// under v (a spec or part of one; settable where v is); f returns false
// to stop.
func walkPaths(v reflect.Value, path, name string, f func(field string, p reflect.Value) bool) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return true
		}
		return walkPaths(v.Elem(), path, name, f)
	case reflect.String:
		if pathFields[name] && v.String() != "" {
			return f(path, v)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if !walkPaths(v.Index(i), fmt.Sprintf("%s[%d]", path, i), name, f) {
				return false
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if tag == "-" {
				continue
			}
			fp := path
			if tag != "" {
				fp = path + "." + tag
			}
			if !walkPaths(v.Field(i), fp, tag, f) {
				return false
			}
		}
	}
	return true
}

// OutsideFolder says where path resolves (symbolic links followed) when
// that is outside folder, as "resolves to X, outside the folder Y"; ""
// when it is inside (or folder cannot be resolved: reading it says why).
func OutsideFolder(folder, path string) string {
	root, err := realAbs(folder)
	if err != nil {
		return ""
	}
	real, err := realAbs(path)
	if err != nil {
		if real, err = filepath.Abs(path); err != nil {
			return ""
		}
	}
	if within(root, real) {
		return ""
	}
	return fmt.Sprintf("resolves to %s, outside the folder %s", Quote(real), Quote(root))
}

// realAbs is p absolute, symbolic links followed.
func realAbs(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// within reports whether p is root or under it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// restrictedPath refuses p (named at field) when it, or anything under it,
// resolves outside root.
func (s validator) restrictedPath(root, field, p string) error {
	full := s.path(p)
	outside := func(what, real string) error {
		return s.errAt(field, "%s %s resolves to %s, outside the scenario's folder %s; with --restrict-paths (the default of validate) a scenario reads only files in its own folder", what, Quote(p), Quote(real), Quote(root))
	}
	real, err := realAbs(full)
	if err != nil {
		// Not there (the reader says so): where it would be still counts.
		abs, aerr := filepath.Abs(full)
		if aerr != nil {
			return s.errAt(field, "path %s: %s", Quote(p), readErr(err))
		}
		if !within(root, abs) {
			return outside("path", abs)
		}
		return nil
	}
	if !within(root, real) {
		return outside("path", real)
	}
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return nil
	}
	n := 0
	errStop := errors.New("stop")
	var bad error
	werr := filepath.WalkDir(real, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // the reader reports what it cannot read
		}
		if n++; n > maxRestrictedEntries {
			bad = s.errAt(field, "folder %s holds more than %d entries; a restricted scenario's folders are walked whole", Quote(p), maxRestrictedEntries)
			return errStop
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		r, err := realAbs(q)
		if err == nil && !within(root, r) {
			rel, _ := filepath.Rel(real, q)
			bad = outside("folder's file "+Quote(rel)+" in", r)
			return errStop
		}
		return nil
	})
	if bad != nil {
		return bad
	}
	if werr != nil && !errors.Is(werr, errStop) {
		return s.errAt(field, "folder %s: %s", Quote(p), readErr(werr))
	}
	return nil
}
