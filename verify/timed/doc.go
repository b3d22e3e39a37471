// Package timed validates explicit timed activation-offloading schedules (001 §3.1, SPEC §2):
// compute operations and transfers with start times, checked against 001's assumptions. It
// shares no code with the schedulers in heuristics/ and dp/: it replays the schedule event by
// event from the problem's definitions only.
package timed
