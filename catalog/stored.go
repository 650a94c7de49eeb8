// The catalog kept in the store: table __kvschema, versioned.

package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
)

// Table is the reserved table holding the catalog.
const Table = "__kvschema"

const (
	family  = "d"
	prefix  = "catalog" // legacy row; version rows are prefix + "/" + version
	scriptQ = "script"
	modelQ  = "model"
	schemaQ = "schema"
	profQ   = "profile"
	indexQ  = "indexes"
	// localIndexes is the value of indexQ when the advised schema's
	// secondary indexes are the store's local indexes (Advised.LocalIndexes).
	localIndexes = "local"
	// siRowsQ records how the advised schema's SI rows are keyed:
	// siBaseKey when they hold their base's whole key (Index.BaseOrder),
	// followed by shortSIsSep and the names of those that do not
	// (Advised.ShortSIs). A store written before has no such cell: every
	// SI that is a table and has a BaseOrder is short there.
	siRowsQ     = "si-rows"
	siBaseKey   = "base-key"
	shortSIsSep = " except "
)

// Stored is one version of a store's definitions.
type Stored struct {
	// Script holds the client's DEFINE RELATION and DEFINE SCHEMA
	// statements.
	Script string
	// Model, Schema and Profile are the advised schema ("" when none is
	// deployed): the model's DEFINE RELATION statements, the DEFINE COLUMN
	// FAMILY and DEFINE SECONDARY INDEX statements, the cost profile as
	// JSON.
	Model, Schema, Profile string
	// Indexes is "local" when the advised schema's secondary indexes that
	// can be are kept by the store as local indexes of their base column
	// families (Advised.LocalIndexes), "" when every one is a table.
	Indexes string
	// SIRows says how the advised schema's SI rows are keyed (siRowsQ).
	SIRows string
	// Legacy: the advised schema was read from the table an earlier
	// kvschema kept it in (legacy.go); the next Save records it here.
	Legacy bool
}

// setAdvised takes a cell of the advised schema (model, schema, profile)
// into s; other cells are ignored.
func (s *Stored) setAdvised(c store.Cell) {
	switch string(c.Qualifier) {
	case modelQ:
		s.Model = string(c.Value)
	case schemaQ:
		s.Schema = string(c.Value)
	case profQ:
		s.Profile = string(c.Value)
	case indexQ:
		s.Indexes = string(c.Value)
	case siRowsQ:
		s.SIRows = string(c.Value)
	}
}

func versionRow(v uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefix+"/"), v)
}

// ErrConflict means another client saved a newer version first.
var ErrConflict = errors.New("catalog: definitions were changed concurrently; reopen and retry")

// newest reads the newest version and its catalog (0 and an empty catalog
// if none) with one reverse scan of one row.
func newest(ctx context.Context, s store.Store) (version uint64, cat Stored, err error) {
	var row store.Row
	found := false
	err = s.ReadRows(ctx, Table, store.RowSet{Ranges: []store.Range{store.PrefixRange([]byte(prefix))}},
		store.ReadOptions{Limit: 1, Reverse: true}, func(r store.Row) bool {
			row, found = store.CloneRow(r), true // the store may reuse r
			return false
		})
	if errors.Is(err, store.ErrNoTable) || err == nil && !found {
		return 0, cat, nil
	}
	if err != nil {
		return 0, cat, fmt.Errorf("catalog: %w", err)
	}
	if len(row.Key) == len(prefix) {
		// The legacy row: one cell per version.
		for _, c := range row.Cells {
			if c.Family != family || len(c.Qualifier) != 8 {
				continue
			}
			if v := binary.BigEndian.Uint64(c.Qualifier); v >= version {
				version, cat.Script = v, string(c.Value)
			}
		}
		return version, cat, nil
	}
	if len(row.Key) != len(prefix)+9 || row.Key[len(prefix)] != '/' {
		return 0, cat, fmt.Errorf("catalog: unexpected row %q in %s", row.Key, Table)
	}
	version = binary.BigEndian.Uint64(row.Key[len(prefix)+1:])
	hasScript := false
	for _, c := range row.Cells {
		if c.Family != family {
			continue
		}
		if string(c.Qualifier) == scriptQ {
			cat.Script, hasScript = string(c.Value), true
		} else {
			cat.setAdvised(c)
		}
	}
	if !hasScript {
		return 0, Stored{}, fmt.Errorf("catalog: version %d has no script", version)
	}
	return version, cat, nil
}

// Version returns the newest saved version (0 if none) with one small read.
func Version(ctx context.Context, s store.Store) (uint64, error) {
	v, _, err := newest(ctx, s)
	return v, err
}

// Load returns the newest saved catalog and its version (0 and an empty
// catalog if none). A store whose advised schema an earlier kvschema kept
// in its own table (legacy.go) has it read from there, with Legacy set.
func Load(ctx context.Context, s store.Store) (version uint64, cat Stored, err error) {
	if version, cat, err = newest(ctx, s); err != nil || cat.Model != "" {
		return version, cat, err
	}
	err = readLegacyAdvised(ctx, s, &cat)
	return version, cat, err
}

// conditional returns the conditional mutations catalog rows are written
// with: the store's own, or those of the store under an intent log (the
// catalog's rows are single-row writes only, which need no intents).
func conditional(s store.Store) store.Conditional {
	if c, ok := s.(store.Conditional); ok {
		return c
	}
	if ts, ok := s.(*txnstore.Store); ok {
		return ts.Inner()
	}
	return nil
}

// Save stores cat as version prev+1, provided prev is still the newest:
// else it returns ErrConflict and writes nothing.
func Save(ctx context.Context, s store.Store, prev uint64, cat Stored) (uint64, error) {
	if err := s.CreateTable(ctx, store.TableSpec{Name: Table, Families: []string{family}}); err != nil {
		return 0, fmt.Errorf("catalog: %w", err)
	}
	row := versionRow(prev + 1)
	put := []store.Mutation{{Kind: store.SetCell, Table: Table, Row: row, Family: family, Qualifier: []byte(scriptQ), Value: []byte(cat.Script)}}
	for _, c := range []struct{ q, v string }{{modelQ, cat.Model}, {schemaQ, cat.Schema}, {profQ, cat.Profile}, {indexQ, cat.Indexes}, {siRowsQ, cat.SIRows}} {
		if c.v != "" {
			put = append(put, store.Mutation{Kind: store.SetCell, Table: Table, Row: row, Family: family, Qualifier: []byte(c.q), Value: []byte(c.v)})
		}
	}
	// A first check, which also covers versions in the legacy row (the
	// claim below sees only version rows).
	if cur, _, err := newest(ctx, s); err != nil {
		return 0, err
	} else if cur != prev {
		return 0, ErrConflict
	}
	if c := conditional(s); c != nil {
		// Claim the row: written only if it has no script yet. Versions
		// are dense, so row prev+1 is absent exactly while prev is newest.
		exists, err := c.ApplyIf(ctx, Table, row, store.Cond{Family: family, Qualifier: []byte(scriptQ), Min: []byte{}}, nil, put)
		if err != nil {
			return 0, fmt.Errorf("catalog: %w", err)
		}
		if exists {
			return 0, ErrConflict
		}
		return prev + 1, nil
	}
	if err := s.Apply(ctx, put); err != nil {
		return 0, fmt.Errorf("catalog: %w", err)
	}
	return prev + 1, nil
}

// Load progress: row "load" of the catalog's table, cell "data" the
// identity of the data set being loaded, one cell "done:INDEX" per index
// whose load finished. A load run again skips the finished indexes.
const (
	loadRow = "load"
	dataQ   = "data"
	donePfx = "done:"
)

// LoadProgress returns the identity of the data set whose load the store
// records (ok false if none) and the indexes already loaded: from the
// catalog's table or, for a load an earlier kvschema recorded, from its
// own table (legacy.go).
func LoadProgress(ctx context.Context, s store.Store) (identity string, done map[string]bool, ok bool, err error) {
	r, found, err := s.ReadRow(ctx, Table, []byte(loadRow))
	if errors.Is(err, store.ErrNoTable) || err == nil && !found {
		return legacyLoadProgress(ctx, s)
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("catalog: %w", err)
	}
	identity, done, ok = parseLoadRow(r, family)
	return identity, done, ok, nil
}

// parseLoadRow reads a load row's cells of family fam ("": any).
func parseLoadRow(r store.Row, fam string) (identity string, done map[string]bool, ok bool) {
	done = map[string]bool{}
	for _, c := range r.Cells {
		q := string(c.Qualifier)
		switch {
		case fam != "" && c.Family != fam:
		case q == dataQ:
			identity, ok = string(c.Value), true
		case strings.HasPrefix(q, donePfx) && len(q) > len(donePfx):
			done[q[len(donePfx):]] = true
		}
	}
	return identity, done, ok
}

// StartLoad records that the store is being loaded with the data set
// identity, and which indexes are loaded already (when resuming a load
// recorded elsewhere).
func StartLoad(ctx context.Context, s store.Store, identity string, done []string) error {
	if err := s.CreateTable(ctx, store.TableSpec{Name: Table, Families: []string{family}}); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	muts := []store.Mutation{{Kind: store.SetCell, Table: Table, Row: []byte(loadRow), Family: family, Qualifier: []byte(dataQ), Value: []byte(identity)}}
	for _, x := range done {
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: Table, Row: []byte(loadRow), Family: family, Qualifier: []byte(donePfx + x), Value: []byte{1}})
	}
	return s.Apply(ctx, muts)
}

// IndexLoaded records that index's rows are all loaded.
func IndexLoaded(ctx context.Context, s store.Store, index string) error {
	return s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: Table, Row: []byte(loadRow), Family: family, Qualifier: []byte(donePfx + index), Value: []byte{1}}})
}

// shortSIs names the SIs of a, read from s, that are short
// (Advised.ShortSIs).
func (s Stored) shortSIs(a *Advised) []string {
	if rest, ok := strings.CutPrefix(s.SIRows, siBaseKey); ok {
		list, _ := strings.CutPrefix(rest, shortSIsSep)
		if list == "" {
			return nil
		}
		return strings.Split(list, ",")
	}
	var out []string
	for _, x := range a.Schema.Indexes {
		if x.Kind == SI && x.BaseOrder != nil && a.Schema.Local[x] == nil {
			out = append(out, x.Name)
		}
	}
	return out
}
