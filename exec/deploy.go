package exec

import (
	"context"
	"errors"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/store"
)

// ErrNoSchema is returned by Open for a store without a deployed schema,
// and by an engine without one for what needs one (Prepare, Load,
// Verify).
var ErrNoSchema = errors.New("the store holds no schema: run kvschema load --schema … first")

// Deploy builds an engine from a model script and a schema script (DEFINE
// COLUMN FAMILY / SECONDARY INDEX), creates the tables and records the
// advised schema in the store's catalog (a new version, saved with a
// conditional write). Deploying the schema the store holds again is a
// no-op; a store already holding a different one, or client relations or
// layouts that take its names or tables, is an error.
func Deploy(ctx context.Context, st store.Store, modelFile string, modelSrc []byte, schemaFile string, schemaSrc []byte, prof cost.Profile) (*Engine, error) {
	a, err := catalog.ParseAdvised(modelFile, modelSrc, schemaFile, schemaSrc, prof)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		version, stored, cat, err := catalog.Read(ctx, st)
		if err != nil {
			return nil, err
		}
		// A deployment keeps the kind of secondary index it was made
		// with; a new one takes the store's (Realize).
		Realize(st, a)
		if old := cat.Advised; old != nil {
			if !old.Same(a) {
				return nil, errors.New("the store already holds a different schema or model; use an empty store")
			}
			if err := a.Inherit(old); err != nil {
				return nil, err
			}
		}
		e := FromCatalog(st, a, nil)
		if err := e.CreateTables(ctx); err != nil {
			return nil, err
		}
		if cat.Advised != nil && !stored.Legacy {
			return e, nil // deployed already
		}
		// New, or deployed by an earlier kvschema in its own table: recorded
		// in the catalog now.
		next, err := cat.WithAdvised(a)
		if err != nil {
			return nil, err
		}
		_, err = catalog.Save(ctx, st, version, next.Stored())
		if errors.Is(err, catalog.ErrConflict) && attempt < 5 {
			continue // another client saved definitions meanwhile: look again
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	}
}

// Realize decides how a first deployment of a on st keeps its secondary
// indexes: as the store's local indexes where it keeps them
// (store.Capabilities.LocalIndexes), as tables the engine keeps elsewhere
// (catalog.Advised.KeepLocal). Deploy applies it; a caller that builds
// the engine of a schema it has yet to deploy calls it first.
func Realize(st store.Store, a *catalog.Advised) { a.KeepLocal(st.Capabilities().LocalIndexes) }

// Open opens the engine of the advised schema deployed in a store.
func Open(ctx context.Context, st store.Store) (*Engine, error) {
	_, _, cat, err := catalog.Read(ctx, st)
	if err != nil {
		return nil, err
	}
	if cat.Advised == nil {
		return nil, ErrNoSchema
	}
	return FromCatalog(st, cat.Advised, nil), nil
}

// FromCatalog returns the engine of a store's catalog on st: it runs the
// client relations' plans and, when a is not nil, advised schema a. Its
// writers lock with locks (nil: locks of its own), which the engines of
// one DB's successive catalog versions share. It creates no tables: see
// Deploy.
func FromCatalog(st store.Store, a *catalog.Advised, locks *Locks) *Engine {
	if a == nil {
		if locks == nil {
			locks = new(Locks)
		}
		return &Engine{st: st, locks: locks}
	}
	e := New(st, a.Model, a.Schema, a.Profile)
	e.adv = a
	if locks != nil {
		e.locks = locks
	}
	return e
}

// Advised returns the advised schema e runs (nil for an engine built by
// New from parts).
func (e *Engine) Advised() *catalog.Advised { return e.adv }

// SetStore makes e run its statements, loads and verifications on st: a
// view of the store it was opened on (a tracing decorator, say). Call it
// before e is first used.
func (e *Engine) SetStore(st store.Store) { e.st = st }
