// Command gpuplan is an offline simulator and capacity planner for
// Kubernetes GPU clusters. Each command is a layer over the library, one
// file each: flags fill an options struct (complete, validate, run), the
// library does the work, a printer of its result shows it. flagerr.go
// words bad flag values, progress.go draws every progress bar, paths.go
// and budget.go hold the flags several commands share.
//
// Exit status: 0 success, 1 a failed assertion, 2 bad input or usage, 3 an
// I/O or environment failure, 4 a broken invariant (a gpuplan bug).
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"gpuplan.dev/gpuplan/reports/outdir"
)

func main() {
	t := &outdir.Tracker{}
	// SIGINT and SIGTERM remove the output folder being built aside (the
	// folder at --out keeps the earlier run) before exiting.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		t.RemoveAll()
		fmt.Fprintf(os.Stderr, "gpuplan: stopped by %v; nothing was written\n", s)
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	code := runWith(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, t)
	if t.Stopping() {
		select {} // a signal came: its handler exits, with its own status
	}
	os.Exit(code)
}

// exitCoder is an error that knows its exit status.
type exitCoder interface{ ExitCode() int }

// usageError is a command-line mistake: exit 2.
type usageError struct{ error }

func (usageError) ExitCode() int { return 2 }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(args, stdin, stdout, stderr, nil)
}

func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer, t *outdir.Tracker) int {
	root := newRootCmd(stdin, stdout, stderr, t)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "gpuplan: "+err.Error())
	return exitCode(err)
}

// exitCode maps an error to the exit status: its own when it knows it; a
// file that does not exist is a usage mistake (2); any other file system
// failure is the environment's (3); the rest is bad input (2). Exit 1 is
// only ever a failed assertion and 4 a broken invariant, both coded.
func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 2
	case errors.As(err, &pe), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EROFS):
		return 3
	}
	return 2
}
