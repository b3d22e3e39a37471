// Package cli implements the memsched command line. Each command has an Options struct, a
// constructor that only parses flags into it, and a run function that does the work and writes
// through the injected IO, so both levels are testable without a process (gh's pattern).
package cli
