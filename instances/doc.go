// Package instances holds memsched's problem data: the chain profile (004 §3, SPEC §1), the
// chain file format memsched.chain/v1, units, built-in instances, random generators and the
// reduction instances of the papers' hardness proofs.
package instances
