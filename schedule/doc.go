// Package schedule holds the schedules memsched's algorithms produce and package verify
// checks: rematerialization sequences (004 Table 1), periodic weight-offloading schedules (002)
// and timed activation-offloading schedules (001).
package schedule
