//go:build !unix

package harness

// readRusage has no getrusage to read on this OS; the context-switch counters are left out.
func readRusage(map[string]float64) {}
