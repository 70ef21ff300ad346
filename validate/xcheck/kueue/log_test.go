package kueue

import (
	"fmt"
	"os"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Kueue logs through controller-runtime's logger: silent, unless
// XCHECK_KUEUE_LOG gives a verbosity (Kueue's V levels) to print at, for
// finding where the two sides part.
func init() {
	v, err := strconv.Atoi(os.Getenv("XCHECK_KUEUE_LOG"))
	if err != nil {
		ctrllog.SetLogger(logr.Discard())
		return
	}
	ctrllog.SetLogger(funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{Verbosity: v}))
}
