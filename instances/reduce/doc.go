// Package reduce builds the instances of the hardness reductions in memsched's sources, so that
// the exact algorithms can be checked on instances whose answer is known by construction.
package reduce
