// Package actmilp is the exact MILP of 001's Problem 1 (activation offloading with whole
// transfers on one link, SPEC §2) and its solve: a model written with package model, in units
// chosen from the data, started from a verified schedule, every incumbent re-timed and
// validated by verify/timed. docs/act-offload.md states the formulation, the order lemma and
// the valid inequalities.
package actmilp
