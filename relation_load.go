package kvschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

// loadBatch is the number of tuples LoadRelation writes per atomic batch.
const loadBatch = 1000

// LoadRelation bulk-loads tuples into a relation defined with DEFINE
// RELATION, into every one of its layouts, as Phoenix's CSV loader loads a
// table. rows yields the tuples (Values in the relation's attribute order,
// File and Line saying where each comes from; Entity is ignored), and is
// called twice: first every tuple is checked — its types, its key, what
// each layout can encode — so that bad data writes nothing, with an error
// naming the file, line and attribute; then the tuples are written as
// INSERT writes them (an upsert: a tuple whose key is stored replaces it
// in every layout), loadBatch per atomic batch, so a load that stops part
// way and is run again ends the same. It returns the number of tuples
// written. The advised schema's entities load with Load.
func (db *DB) LoadRelation(ctx context.Context, name string, rows func(yield func(exec.Row) error) error) (int64, error) {
	switch {
	case db.tx != nil:
		return 0, fmt.Errorf("LoadRelation: %w", ErrInTx)
	case db.readOnly:
		return 0, fmt.Errorf("LoadRelation: %w", ErrReadOnly)
	}
	if err := db.current(ctx); err != nil {
		return 0, err
	}
	// As a write statement: not while a transaction is open, nor while a
	// definition changes the relation's layouts.
	release, err := db.waitTx(ctx, false)
	if err != nil {
		return 0, err
	}
	defer release()
	db.defining.RLock()
	defer db.defining.RUnlock()
	rel, err := db.relation(name, lang.Pos{})
	if err != nil {
		return 0, err
	}
	tuple := func(r exec.Row) ([]types.Value, error) {
		at := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: relation %s: %s", r.File, r.Line, rel.Name, fmt.Sprintf(format, args...))
		}
		if len(r.Values) != len(rel.Attrs) {
			return nil, at("%d values for %d attributes", len(r.Values), len(rel.Attrs))
		}
		t := make([]types.Value, len(rel.Attrs))
		for i, a := range rel.Attrs {
			v, err := types.Coerce(r.Values[i], a.Type)
			if err != nil {
				return nil, at("attribute %s: %v", a.Name, err)
			}
			if v == nil && a.Key {
				return nil, at("key attribute %s needs a value", a.Name)
			}
			t[i] = v
		}
		for _, x := range rel.Indexes {
			if _, _, err := x.Layout().PutCells(t); err != nil {
				return nil, at("%v", err)
			}
		}
		return t, nil
	}
	// Pass 1: check everything.
	var n int64
	if err := rows(func(r exec.Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := tuple(r)
		n++
		return err
	}); err != nil {
		return 0, err
	}
	// Pass 2: write.
	var written int64
	batch := make([][]types.Value, 0, loadBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		w := &plan.Write{Relation: rel, Kind: plan.WriteUpsert, ReadOld: plan.NeedsOld(rel), Tuples: batch}
		if _, err := db.engine().Apply(ctx, w); err != nil {
			return fmt.Errorf("relation %s, after %d tuples written: %w", rel.Name, written, err)
		}
		written += int64(len(batch))
		batch = make([][]types.Value, 0, loadBatch)
		return nil
	}
	err = rows(func(r exec.Row) error {
		t, err := tuple(r)
		if err != nil {
			return err // the data changed since it was checked
		}
		if batch = append(batch, t); len(batch) == loadBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil && written != n {
		err = errors.New("the data changed while it was loaded: run the load again")
	}
	return written, err
}
