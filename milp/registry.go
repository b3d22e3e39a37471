package milp

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]func() (Solver, error){}
)

// Register makes a backend available under name. Backends call it from init in the files that
// their build tag selects, so a binary knows exactly which solvers it was built with.
// Register panics if name is empty or already registered (a programmer error).
func Register(name string, factory func() (Solver, error)) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if name == "" || factory == nil {
		panic("milp: Register with empty name or nil factory")
	}
	if _, dup := registry[name]; dup {
		panic("milp: solver " + name + " registered twice")
	}
	registry[name] = factory
}

// Available returns the registered backend names, sorted.
func Available() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// preference is the order in which Lookup("") picks a default backend.
var preference = []string{"highs", "lpsolve", "ref"}

// Backends returns the real backends registered (HiGHS, then lp_solve), best first: those
// Lookup("") prefers to the enumerating referee. A solver registered under another name (a
// test's stub) is not one of them.
func Backends() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []string
	for _, n := range preference {
		if _, ok := registry[n]; ok && n != "ref" {
			out = append(out, n)
		}
	}
	return out
}

// Lookup returns a new solver of the named backend; the empty name picks the best available
// (highs, then lpsolve, then the pure-Go ref).
func Lookup(name string) (Solver, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if name == "" {
		for _, n := range preference {
			if f, ok := registry[n]; ok {
				return f()
			}
		}
		return nil, fmt.Errorf("milp: no solver registered in this build")
	}
	f, ok := registry[name]
	if !ok {
		known := strings.Join(preference, ", ")
		return nil, fmt.Errorf("milp: solver %q not available in this build (known: %s; build with make for tags highs lpsolve)", name, known)
	}
	return f()
}
