// Package heuristics groups memsched's heuristics and baselines, one subpackage per problem:
// checkpoint (rematerialization baselines of 004 §5.4).
package heuristics
