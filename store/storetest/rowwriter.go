package storetest

import (
	"context"

	"github.com/kvschema/kvschema/store"
)

// RowWriter is a store.RowWriter over a store, counting its ApplyRows
// calls (applied with Apply): for decorators' tests that the capability
// reaches the store under them.
type RowWriter struct {
	store.Store
	Calls int
}

// ApplyRows implements store.RowWriter.
func (w *RowWriter) ApplyRows(ctx context.Context, muts []store.Mutation) error {
	w.Calls++
	return w.Apply(ctx, muts)
}
