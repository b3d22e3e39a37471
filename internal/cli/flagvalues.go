package cli

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// sizeFlag parses the value of the memory-size flag name (e.g. "--mem"); a bad value is a usage
// error naming the flag (exit 2).
func sizeFlag(name, v string) (int64, error) {
	b, err := instances.ParseSize(v)
	if err != nil {
		return 0, &UsageError{fmt.Errorf("%s: %w", name, err)}
	}
	return b, nil
}

// rateFlag parses the value of the bandwidth flag name (e.g. "--bandwidth"); a bad value is a
// usage error naming the flag (exit 2).
func rateFlag(name, v string) (float64, error) {
	r, err := instances.ParseRate(v)
	if err != nil {
		return 0, &UsageError{fmt.Errorf("%s: %w", name, err)}
	}
	return r, nil
}
