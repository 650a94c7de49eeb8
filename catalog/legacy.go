package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/store"
)

// legacyTable is where kvschema kept an advised schema and the progress of
// its loads before the catalog's table held both: row "schema" (cells
// model, schema, profile) and row "load" (cell data, the identity of the
// data being loaded, and a cell "done:INDEX" per index loaded). Stores
// written then are still read; nothing writes the table now.
const legacyTable = "__kvschema_engine"

// readLegacyAdvised fills cat's advised schema from the legacy table, if
// it holds one.
func readLegacyAdvised(ctx context.Context, s store.Store, cat *Stored) error {
	r, ok, err := s.ReadRow(ctx, legacyTable, []byte("schema"))
	if errors.Is(err, store.ErrNoTable) || err == nil && !ok {
		return nil
	}
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	for _, c := range r.Cells {
		cat.setAdvised(c)
	}
	cat.Legacy = cat.Model != ""
	return nil
}

// legacyLoadProgress reads the load row of the legacy table.
func legacyLoadProgress(ctx context.Context, s store.Store) (identity string, done map[string]bool, ok bool, err error) {
	r, found, err := s.ReadRow(ctx, legacyTable, []byte(loadRow))
	if errors.Is(err, store.ErrNoTable) || err == nil && !found {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("catalog: %w", err)
	}
	identity, done, ok = parseLoadRow(r, "")
	return identity, done, ok, nil
}
