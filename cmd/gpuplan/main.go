// Command gpuplan is an offline simulator and capacity planner for
// Kubernetes GPU clusters. Each command is a thin layer over the library:
// flags fill an options struct, the library does the work, a printer shows
// the result.
//
// Exit status: 0 success, 1 a failed assertion (or a bug caught by the
// invariant checks), 2 bad input or usage.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitCoder is an error that knows its exit status.
type exitCoder interface{ ExitCode() int }

// usageError is a command-line mistake: exit 2.
type usageError struct{ error }

func (usageError) ExitCode() int { return 2 }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "gpuplan: "+err.Error())
	return exitCode(err)
}

func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
