// Package schedule holds the schedules memsched's algorithms produce and package verify
// checks: rematerialization sequences (004 Table 1) and periodic weight-offloading schedules (002).
package schedule
