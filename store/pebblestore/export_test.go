package pebblestore

// RowLock exposes the row-lock stripe of a row: tests that a write of
// another row does not wait for a guarded write must pick a row on
// another stripe (two rows share one with probability 1/64).
var RowLock = rowLock
