//go:build !linux

package dp

// adviseHuge does nothing outside Linux (hugepages_linux.go).
func adviseHuge([]float64) {}
