// Package verify holds memsched's independent simulators and validators. Every schedule a
// dynamic program, heuristic or solver produces is replayed here before it is reported; a
// schedule that does not replay to its claimed cost and memory is a bug, never a result.
//
// This package simulates rematerialization sequences (004 §3, Table 1; SPEC §1).
package verify
