// Package rematoffload builds executable schedules of rematerialization and activation
// offloading together (SPEC §6): Retime turns a plan of the combined class into a schedule
// under strict timing, and the strategies here build plans more cheaply than the dynamic
// program (dp.Combined). Every schedule is validated by verify/combined before it is
// returned.
package rematoffload
