//go:build !race

package exec_test

import "testing"

// TestPipelinedLimitBackends: the pipelined run (its later steps read the
// store from the first step's read callback) on Pebble and on Bigtable.
func TestPipelinedLimitBackends(t *testing.T) {
	onPebbleAndBigtable(t, testPipelinedLimit)
}
