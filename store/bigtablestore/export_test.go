package bigtablestore

import "time"

// SetOldTableRecheck sets oldTableRecheck for a test and returns the
// function restoring it.
func SetOldTableRecheck(d time.Duration) (restore func()) {
	old := oldTableRecheck
	oldTableRecheck = d
	return func() { oldTableRecheck = old }
}
