package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
)

// ErrNoSchema is returned by Open for a store without a deployed schema.
var ErrNoSchema = errors.New("the store holds no schema: run kvschema load --schema … first")

// Deploy builds an engine from a model script and a schema script (DEFINE
// COLUMN FAMILY / SECONDARY INDEX), creates the tables and records the
// scripts and the profile in the store's catalog (package catalog: a new
// version, saved with a conditional write). Deploying the schema the store
// holds again is a no-op; a store already holding a different one is an
// error.
func Deploy(ctx context.Context, st store.Store, modelFile string, modelSrc []byte, schemaFile string, schemaSrc []byte, prof cost.Profile) (*Engine, error) {
	e, err := build(modelFile, modelSrc, schemaFile, schemaSrc, prof)
	if err != nil {
		return nil, err
	}
	e.SetStore(st)
	pj, err := json.Marshal(prof)
	if err != nil {
		return nil, err
	}
	if err := e.CreateTables(ctx); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		old, ok, version, cat, err := readMeta(ctx, st)
		if err != nil {
			return nil, err
		}
		if ok {
			if old.Schema != string(schemaSrc) || old.Model != string(modelSrc) {
				return nil, errors.New("the store already holds a different schema or model; use an empty store")
			}
			if !cat.Legacy {
				return e, nil // deployed already
			}
			// Deployed by an earlier kvschema in its own table: recorded in
			// the catalog now.
		}
		cat.Model, cat.Schema, cat.Profile = string(modelSrc), string(schemaSrc), string(pj)
		_, err = catalog.Save(ctx, st, version, cat)
		if errors.Is(err, catalog.ErrConflict) && attempt < 5 {
			continue // another client saved definitions meanwhile: look again
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	}
}

// Open opens the engine deployed in a store.
func Open(ctx context.Context, st store.Store) (*Engine, error) {
	meta, ok, _, _, err := readMeta(ctx, st)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoSchema
	}
	e, err := build("model (stored)", []byte(meta.Model), "schema (stored)", []byte(meta.Schema), meta.Profile)
	if err != nil {
		return nil, err
	}
	e.SetStore(st)
	return e, nil
}

// readMeta returns the advised schema the store's catalog holds (ok false
// if none), the catalog's version and its stored form.
func readMeta(ctx context.Context, st store.Store) (m metaInfo, ok bool, version uint64, cat catalog.Stored, err error) {
	if version, cat, err = catalog.Load(ctx, st); err != nil || cat.Model == "" {
		return m, false, version, cat, err
	}
	m.Model, m.Schema = cat.Model, cat.Schema
	if err := json.Unmarshal([]byte(cat.Profile), &m.Profile); err != nil {
		return m, false, 0, cat, fmt.Errorf("stored cost profile: %w", err)
	}
	return m, true, version, cat, nil
}

type metaInfo struct {
	Model, Schema string
	Profile       cost.Profile
}

// build parses the scripts into an engine without a store.
func build(modelFile string, modelSrc []byte, schemaFile string, schemaSrc []byte, prof cost.Profile) (*Engine, error) {
	ms, err := lang.ParseScript(modelFile, modelSrc)
	if err != nil {
		return nil, err
	}
	m, err := catalog.Build(ms)
	if err != nil {
		return nil, err
	}
	ss, err := lang.ParseScript(schemaFile, schemaSrc)
	if err != nil {
		return nil, err
	}
	s, err := catalog.ParseSchema(m, ss)
	if err != nil {
		return nil, err
	}
	if len(s.Indexes) == 0 {
		return nil, fmt.Errorf("%s defines no column family", schemaFile)
	}
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	return New(nil, m, s, prof), nil
}

// SetStore makes e run its statements, loads and verifications on st: a
// view of the store it was opened on (a tracing decorator, say). Call it
// before e is first used.
func (e *Engine) SetStore(st store.Store) { e.st = st }
