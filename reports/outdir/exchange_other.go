//go:build !linux

package outdir

import "errors"

// exchange is not available here: the caller moves the old folder aside.
func exchange(a, b string) error { return errors.New("no atomic exchange on this system") }
