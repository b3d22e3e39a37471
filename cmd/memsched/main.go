// Command memsched schedules memory-constrained training of deep networks on one GPU:
// rematerialization, activation offloading and weight offloading, with certified lower bounds.
package main

import (
	"os"
	"runtime/debug"

	"github.com/memsched/memsched/internal/cli"
)

func main() {
	setup()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// setup makes a crash distinguishable from bad input. Go's runtime exits with status 2 on a
// fatal error (an unrecovered panic, a signal in C code, out of memory), the status memsched
// gives bad input; with the traceback level "crash" it prints the traceback and aborts with
// SIGABRT instead (shell status 134). A panic inside a command is caught by cli.Main (status
// 70); this covers what it cannot catch.
//
// It also lets --max-memory set the runtime's soft memory limit (cli.EnableProcessMemoryLimit):
// the limit is the process's, so only the binary, not the tests that run commands in theirs.
func setup() {
	debug.SetTraceback("crash")
	cli.EnableProcessMemoryLimit()
}
