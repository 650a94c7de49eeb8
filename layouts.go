package kvschema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Online layout changes. DEFINE SCHEMA of a new layout of a relation that
// has layouts already, and DROP SCHEMA, change the relation while the
// application reads and writes it, through catalog versions that each is
// a state of F1's online schema change (catalog/layouts.go; the same
// protocol as Migrate's for an advised schema):
//
//   - add: the layout is saved write-only (every write keeps it, no plan
//     reads it); once the writes of this DB that began before are over
//     (writeEpochs: later writes do not wait) and SchemaGrace has passed
//     for other processes, exec.Engine.BackfillLayout copies the tuples into it
//     under their locks, so that no concurrent write is lost or undone;
//     the layout is verified against a readable one (on one point in
//     time where the store offers it, else with this DB's writers
//     stopped) and saved readable;
//   - drop: the layout is saved write-only (plans stop reading it while
//     writers that have not seen that version yet still keep it), then,
//     once those writers are over, saved out of its relation, listed as
//     dropping; its rows are deleted (exec.DropLayoutRows) and the
//     dropping entry cleared. The last readable layout of a relation is
//     dropped only if the relation holds no tuple, checked and dropped
//     while no write of this DB runs.
//
// Every state is in the stored definitions, so a statement interrupted at
// any point (a crash, a failed store call) is finished by running it
// again: the same DEFINE SCHEMA builds the write-only layout and makes it
// readable, the same DROP SCHEMA carries the drop on. Opening the store
// resumes nothing by itself: until then writers keep a write-only layout
// (DESCRIBE says which are), and a DEFINE SCHEMA first finishes the
// deletion of dropped layouts.

// catalogVersion returns the current catalog and the version it was saved
// as, read together.
func (db *DB) catalogVersion() (*catalog.Catalog, uint64) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.cat, db.version
}

// saveDefs saves next as the version after prev and makes it this DB's
// catalog: with drain, once the write statements of this DB that began
// before are over (those after see it), then after the grace for other
// processes' writers.
func (db *DB) saveDefs(ctx context.Context, prev uint64, next *catalog.Catalog, drain bool) error {
	stored := next.Stored()
	cat, err := catalog.Open(stored) // what every client reads
	if err != nil {
		return fmt.Errorf("kvschema: the new definitions do not read back (a bug): %w", err)
	}
	version, err := catalog.Save(ctx, db.raw, prev, stored)
	if errors.Is(err, catalog.ErrConflict) {
		return fmt.Errorf("kvschema: another client changed the store's definitions meanwhile: run the statement again (%w)", err)
	}
	if err != nil {
		return err
	}
	if !drain {
		db.install(cat, version)
		return nil
	}
	db.install(cat, version)
	return db.drain(ctx)
}

// drain waits for the write statements of this DB under way (and an open
// transaction), then for the grace of other processes' writers: after it,
// every writer has seen the current catalog version. Writes that begin
// meanwhile do not wait (writeEpochs).
func (db *DB) drain(ctx context.Context) error {
	db.writes.wait()
	return db.schemaGrace(ctx)
}

// drainReads waits for the statements of this DB under way: those after
// it plan with the current catalog. (Other processes' are covered by the
// grace their writers get.)
func (db *DB) drainReads() {
	db.readGate.Lock()
	db.readGate.Unlock() //lint:ignore SA2001 an empty critical section: the wait is the point
}

// grace is the wait g asks for after a catalog change (Options.SchemaGrace,
// MigrateOptions.Grace): g if set (< 0: none); by default none on a store
// one process has open, else 2 s.
func (db *DB) grace(g time.Duration) time.Duration {
	if g != 0 {
		return g
	}
	switch db.raw.Capabilities().Engine {
	case "pebble", "mem":
		return 0
	}
	return 2 * time.Second
}

// schemaGrace waits Options.SchemaGrace (see there).
func (db *DB) schemaGrace(ctx context.Context) error {
	g := db.grace(db.opts.SchemaGrace)
	if g <= 0 {
		return nil
	}
	t := time.NewTimer(g)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// addLayout adds layout d to a relation that has layouts: write-only,
// then built (buildLayout).
func (db *DB) addLayout(ctx context.Context, d *lang.DefineSchema) error {
	old, version := db.catalogVersion()
	next := old.Clone()
	if err := next.Define(d); err != nil {
		return err
	}
	if err := next.SetWriteOnly(d.Name, true); err != nil {
		return err
	}
	// The tables first: a writer that sees the version writes them.
	if err := createTables(ctx, db.raw, next.Layout(d.Name)); err != nil {
		return err
	}
	if err := db.saveDefs(ctx, version, next, false); err != nil {
		return err
	}
	return db.buildLayout(ctx, d.Relation, d.Name)
}

// buildLayout fills write-only layout name of relation rel, verifies it
// and makes it readable.
func (db *DB) buildLayout(ctx context.Context, rel, name string) error {
	// Every writer from now on keeps the layout: the copy starts after
	// those that might not.
	if err := db.drain(ctx); err != nil {
		return err
	}
	r := db.Catalog().Relation(rel)
	report := db.schemaProgress(name, "copy")
	n, err := db.engine().BackfillLayout(ctx, r, name, exec.LayoutBackfillOptions{Rate: db.opts.SchemaRate, Progress: func(n int64) { report(n, false) }})
	if err != nil {
		return fmt.Errorf("%w (schema %s stays write-only: run its DEFINE SCHEMA again to finish it)", err, name)
	}
	report(n, true)
	if err := db.verifyLayout(ctx, r, name); err != nil {
		return err
	}
	cat, version := db.catalogVersion()
	next := cat.Clone()
	if err := next.SetWriteOnly(name, false); err != nil {
		return err
	}
	return db.saveDefs(ctx, version, next, false)
}

// verifyLayout checks layout name of r against a readable layout of r: on
// one point in time where the store offers it, else while no write of this
// DB runs.
func (db *DB) verifyLayout(ctx context.Context, r *catalog.Relation, name string) error {
	en := db.engine()
	if vr, ok := db.raw.(store.Viewer); ok {
		v, err := vr.View(ctx)
		if err != nil {
			return err
		}
		defer v.Close()
		en = exec.FromCatalog(v, nil, nil)
	} else {
		held := db.locks.All()
		defer db.locks.Unlock(held)
	}
	rep, err := en.VerifyLayouts(ctx, r, []string{name}, nil)
	if err != nil {
		return err
	}
	if len(rep.Differences) == 0 {
		return nil
	}
	var b strings.Builder
	for i, d := range rep.Differences {
		if i == 10 {
			fmt.Fprintf(&b, "\n… and %d more", len(rep.Differences)-10)
			break
		}
		b.WriteString("\n" + d.String())
	}
	return fmt.Errorf("kvschema: schema %s disagrees with the tuples of %s after its backfill (%d differences); it stays write-only (a writer of another process may have raced the copy: run its DEFINE SCHEMA again):%s",
		name, r.Name, len(rep.Differences), b.String())
}

// dropSchema runs DROP SCHEMA (see the comment at the top of the file).
func (db *DB) dropSchema(ctx context.Context, d *lang.DropSchema) error {
	cat, version := db.catalogVersion()
	x, r := cat.LayoutIndex(d.Name)
	if x == nil {
		if cat.DroppingLayout(d.Name) != nil {
			return db.finishDrop(ctx, d.Name) // an interrupted DROP SCHEMA
		}
		if a := cat.Advised; a != nil && a.Schema.Index(d.Name) != nil {
			return &lang.Error{Pos: d.At, Msg: fmt.Sprintf("%s is an index of the advised schema, not a layout (DEFINE SCHEMA): kvschema migrate changes those", d.Name)}
		}
		return lang.UnknownAt(d.At, "unknown schema %s: no layout of this store has that name (DESCRIBE SCHEMA lists them)", d.Name)
	}
	others := 0
	for _, y := range r.ReadIndexes() {
		if y != x {
			others++
		}
	}
	if others == 0 {
		return db.dropLast(ctx, d)
	}
	if !x.WriteOnly {
		next := cat.Clone()
		if err := next.SetWriteOnly(x.Name, true); err != nil {
			return err
		}
		if err := db.saveDefs(ctx, version, next, false); err != nil {
			return err
		}
	}
	// Writers that read it are over: they see it write-only (a reader
	// that began before may still read it; the rows go only once its
	// writers are gone too).
	if err := db.drain(ctx); err != nil {
		return err
	}
	cat, version = db.catalogVersion()
	next := cat.Clone()
	if err := next.DropLayout(d.Name); err != nil {
		return err
	}
	if err := db.saveDefs(ctx, version, next, true); err != nil {
		return err
	}
	return db.finishDrop(ctx, d.Name)
}

// dropLast drops the last readable layout of its relation, which must
// hold no tuple, while no write of this DB runs (a write could not go
// anywhere else).
func (db *DB) dropLast(ctx context.Context, d *lang.DropSchema) error {
	err := func() error {
		db.defining.Lock()
		defer db.defining.Unlock()
		cat, version := db.catalogVersion()
		x, r := cat.LayoutIndex(d.Name)
		if x == nil {
			return lang.UnknownAt(d.At, "unknown schema %s", d.Name)
		}
		if some, err := db.holdsTuples(ctx, r); err != nil {
			return err
		} else if some {
			var building []string
			for _, z := range r.Indexes {
				if z.WriteOnly && z != x {
					building = append(building, z.Name)
				}
			}
			hint := fmt.Sprintf("define another schema for %s first", r.Name)
			if len(building) > 0 {
				hint = fmt.Sprintf("finish %s first: run its DEFINE SCHEMA again", strings.Join(building, ", "))
			}
			return &lang.Error{Pos: d.At, Msg: fmt.Sprintf("cannot drop schema %s: it is the last readable schema of relation %s, which holds tuples, so they would be lost (%s)", x.Name, r.Name, hint)}
		}
		next := cat.Clone()
		if err := next.DropLayout(d.Name); err != nil {
			return err
		}
		return db.saveDefs(ctx, version, next, false)
	}()
	if err != nil {
		return err
	}
	return db.finishDrop(ctx, d.Name)
}

// holdsTuples reports whether a layout of r holds a tuple.
func (db *DB) holdsTuples(ctx context.Context, r *catalog.Relation) (bool, error) {
	some := false
	for _, x := range r.Indexes {
		acc := plan.Derive(x.Layout(), make(plan.Constraints, len(r.Attrs)))
		p := &plan.Plan{Relation: r, Accesses: []*plan.Access{acc}, Limit: 1}
		err := db.engine().Query(ctx, p, exec.SinkFunc(func([]types.Datum) bool {
			some = true
			return false
		}))
		if err != nil || some {
			return some, err
		}
	}
	return false, nil
}

// schemaProgress returns the reporter of step of an online change of
// layout name to Options.SchemaProgress (a no-op without one).
func (db *DB) schemaProgress(name, step string) func(rows int64, done bool) {
	return func(rows int64, done bool) {
		if f := db.opts.SchemaProgress; f != nil {
			f(SchemaEvent{Schema: name, Step: step, Rows: rows, Done: done})
		}
	}
}

// finishDrops deletes the rows of every dropped layout whose drop was
// interrupted.
func (db *DB) finishDrops(ctx context.Context) error {
	for _, l := range db.Catalog().Dropping() {
		if err := db.finishDrop(ctx, l.Name); err != nil {
			return err
		}
	}
	return nil
}

// finishDrop deletes the rows of dropping layout name and forgets it.
func (db *DB) finishDrop(ctx context.Context, name string) error {
	cat := db.Catalog()
	l := cat.DroppingLayout(name)
	if l == nil {
		return nil
	}
	// A reader that planned with the layout before its drop reads it
	// whole.
	db.drainReads()
	var keep []*layout.Layout
	for _, r := range cat.Relations {
		keep = append(keep, r.Layouts()...)
	}
	report := db.schemaProgress(name, "drop")
	n, err := exec.DropLayoutRows(ctx, db.raw, l, keep, db.opts.SchemaRate, func(n int64) { report(n, false) })
	if err != nil {
		return fmt.Errorf("kvschema: deleting the rows of dropped schema %s (run DROP SCHEMA %s again to finish): %w", name, name, err)
	}
	report(n, true)
	cat, version := db.catalogVersion()
	next := cat.Clone()
	if err := next.ForgetDropped(name); err != nil {
		return err
	}
	return db.saveDefs(ctx, version, next, false)
}
