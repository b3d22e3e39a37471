// Command memsched schedules memory-constrained training of deep networks on one GPU:
// rematerialization, activation offloading and weight offloading, with certified lower bounds.
package main

import (
	"os"

	"github.com/memsched/memsched/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
