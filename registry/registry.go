// Package registry keeps a database's definitions (DEFINE RELATION / DEFINE
// SCHEMA) in the store itself, versioned, as seed 003 kept its schemas in
// ZooKeeper: opening a store loads the latest version, so every client of a
// store sees the same layouts.
//
// Layout: table "__kvschema", row "catalog", family "d"; one cell per
// version, qualifier = the version as 8 bytes big-endian, value = the whole
// definition script (canonical text). Versions only grow; the newest wins.
// Row "version" holds the newest version number alone, written in the same
// atomic batch, so clients can check cheaply whether they are current.
package registry

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/store"
)

// Table is the reserved table holding the registry.
const Table = "__kvschema"

const (
	family     = "d"
	row        = "catalog"
	versionRow = "version"
)

// Version returns the newest saved version (0 if none) with one small read.
func Version(ctx context.Context, s store.Store) (uint64, error) {
	r, ok, err := s.ReadRow(ctx, Table, []byte(versionRow))
	if errors.Is(err, store.ErrNoTable) || err == nil && !ok {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("registry: %w", err)
	}
	for _, c := range r.Cells {
		if c.Family == family && len(c.Value) == 8 {
			return binary.BigEndian.Uint64(c.Value), nil
		}
	}
	return 0, nil
}

// ErrConflict means another client saved a newer version first.
var ErrConflict = errors.New("registry: definitions were changed concurrently; reopen and retry")

// Load returns the newest saved script and its version (0 and "" if none).
func Load(ctx context.Context, s store.Store) (version uint64, script string, err error) {
	r, ok, err := s.ReadRow(ctx, Table, []byte(row))
	if errors.Is(err, store.ErrNoTable) || err == nil && !ok {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("registry: %w", err)
	}
	for _, c := range r.Cells {
		if c.Family != family || len(c.Qualifier) != 8 {
			continue
		}
		if v := binary.BigEndian.Uint64(c.Qualifier); v >= version {
			version, script = v, string(c.Value)
		}
	}
	return version, script, nil
}

// Save stores script as version prev+1, provided prev is still the newest.
func Save(ctx context.Context, s store.Store, prev uint64, script string) (uint64, error) {
	if err := s.CreateTable(ctx, store.TableSpec{Name: Table, Families: []string{family}}); err != nil {
		return 0, fmt.Errorf("registry: %w", err)
	}
	cur, _, err := Load(ctx, s)
	if err != nil {
		return 0, err
	}
	if cur != prev {
		return 0, ErrConflict
	}
	q := make([]byte, 8)
	binary.BigEndian.PutUint64(q, prev+1)
	err = s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: Table, Row: []byte(row), Family: family, Qualifier: q, Value: []byte(script)},
		{Kind: store.SetCell, Table: Table, Row: []byte(versionRow), Family: family, Qualifier: []byte{}, Value: q},
	})
	if err != nil {
		return 0, fmt.Errorf("registry: %w", err)
	}
	return prev + 1, nil
}
