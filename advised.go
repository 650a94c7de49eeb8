package kvschema

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/observe"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
)

// A store holds at most one advised schema (a conceptual model and the
// column families and secondary indexes kvschema advise chose for it, as
// deployed by Deploy or kvschema load) beside the relations and layouts
// defined with DEFINE RELATION / DEFINE SCHEMA. A relation name belongs to
// one of them: statements on it are planned and run by its owner, and a
// definition that would give a name to both is refused.

// advised returns the engine of the advised schema deployed in the store,
// or nil. When none is known it looks again if recheck is set (another
// process may have deployed one since).
func (db *DB) advised(ctx context.Context, recheck bool) (*exec.Engine, error) {
	if _, en := db.snapshot(); en != nil || !recheck {
		return en, nil
	}
	if err := db.current(ctx); err != nil {
		return nil, err
	}
	_, en := db.snapshot()
	return en, nil
}

// snapshot returns the current catalog and its engine if it has an
// advised schema (else nil).
func (db *DB) snapshot() (*catalog.Catalog, *exec.Engine) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.cat.Advised == nil {
		return db.cat, nil
	}
	return db.cat, db.en
}

// relationOf names the relation a statement reads or writes ("" for
// definitions).
func relationOf(st lang.Statement) (string, lang.Pos) {
	switch s := st.(type) {
	case *lang.Select:
		return s.Relation, s.RelationAt.Or(s.At)
	case *lang.Insert:
		return s.Relation, s.RelationAt.Or(s.At)
	case *lang.Update:
		return s.Relation, s.RelationAt.Or(s.At)
	case *lang.Delete:
		return s.Relation, s.RelationAt.Or(s.At)
	case *lang.Connect:
		return s.Relation, s.RelationAt.Or(s.At)
	case *lang.Explain:
		return relationOf(s.Stmt)
	}
	return "", lang.Pos{}
}

// route is DB.route for s, decided once per catalog: a prepared statement
// run again against the same catalog (and so the same advised engine)
// reuses the decision.
func (s *Stmt) route(ctx context.Context) (*exec.Engine, error) {
	if r := s.routed.Load(); r != nil {
		if cat, en := s.db.snapshot(); cat == r.cat && (r.en == nil || r.en == en) {
			return r.en, nil
		}
	}
	en, cat, err := s.db.route(ctx, s.ast)
	if err == nil && cat != nil {
		s.routed.Store(&routeOf{cat: cat, en: en})
	}
	return en, err
}

// route returns the advised schema when it owns the relation statement st
// is about, nil when the client's catalog does (or st is about no
// relation), and an error when neither or both define it; cat is the
// catalog it decided against, nil when neither knows the relation (the
// next run looks again: another client may define it).
func (db *DB) route(ctx context.Context, st lang.Statement) (en *exec.Engine, cat *catalog.Catalog, err error) {
	name, at := relationOf(st)
	cat, en = db.snapshot()
	if name == "" {
		return nil, cat, nil
	}
	rel, ent := cat.Owner(name)
	if rel == nil && ent == nil {
		// Perhaps defined or deployed by another client since.
		if err := db.current(ctx); err != nil {
			return nil, nil, err
		}
		cat, en = db.snapshot()
		rel, ent = cat.Owner(name)
	}
	client := rel != nil
	if !client && ent == nil {
		cat = nil
	}
	switch {
	case ent != nil:
		return en, cat, nil
	case !client && en != nil:
		if _, ok := st.(*lang.Connect); ok {
			return en, cat, nil // the engine names the unknown relation
		}
	case !client:
		if _, ok := st.(*lang.Connect); ok {
			return nil, nil, &lang.Error{Pos: at, Msg: "CONNECT and DISCONNECT change relationships of a conceptual model: run them on a schema from kvschema advise (in a client-defined relation, UPDATE the foreign-key attribute)"}
		}
	}
	return nil, cat, nil
}

// advisedStmt returns the advised schema's plan of s, prepared once per
// deployed schema.
func (s *Stmt) advisedStmt(en *exec.Engine) (*exec.Stmt, error) {
	if p := s.adv.Load(); p != nil && p.en == en {
		return p.st, nil
	}
	var est *exec.Stmt
	var err error
	target := s.ast
	if ex, ok := target.(*lang.Explain); ok {
		target = ex.Stmt
	}
	switch ins, _ := target.(*lang.Insert); {
	case ins != nil && len(ins.Rows) > 1:
		est, err = en.PrepareAST(oneTuple(ins))
	case s.text != "":
		est, err = en.Prepare(s.text) // shared by equal texts
	default:
		est, err = en.PrepareAST(s.ast)
	}
	if err != nil {
		return nil, err
	}
	s.adv.Store(&advisedPlan{en: en, st: est})
	return est, nil
}

type advisedPlan struct {
	en *exec.Engine
	st *exec.Stmt
}

// runAdvised runs s on the advised schema: a model-level query along
// paths, or a write (INSERT, UPDATE, DELETE, CONNECT, DISCONNECT) that
// keeps every column family and index holding the relation correct.
func (s *Stmt) runAdvised(ctx context.Context, en *exec.Engine, res Result, args []any) (Result, *Rows, error) {
	given, err := values(args)
	if err != nil {
		return res, nil, err
	}
	// A copy for the engine, so that the caller's arguments (often the
	// variadic slice of Query) do not escape on the client's path too.
	vals := slices.Clone(given)
	s.observe()
	if ins, ok := s.ast.(*lang.Insert); ok && len(ins.Rows) > 1 {
		return s.insertAdvised(ctx, en, ins, vals, res)
	}
	est, err := s.advisedStmt(en)
	if err != nil {
		return res, nil, err
	}
	if ex, ok := s.ast.(*lang.Explain); ok {
		res.Plan = est.Explain()
		if ins, ok := ex.Stmt.(*lang.Insert); ok && len(ins.Rows) > 1 {
			res.Plan += fmt.Sprintf("(the plan of each of the %d tuples, written in one atomic batch)\n", len(ins.Rows))
		}
		return res, nil, nil
	}
	if est.Write != nil {
		o, err := est.ExecIf(ctx, vals...)
		res.RowsAffected = int64(o.Written)
		if err != nil || !conditional(s.ast) {
			return res, nil, err
		}
		// A conditional write answers [applied] and, when it did not
		// apply, the stored values its condition read, as on a client
		// relation.
		fields := est.CondFields()
		cols, ts := slices.Clone(appliedColumn), slices.Clone(appliedType)
		for _, f := range fields {
			cols, ts = append(cols, f.Name), append(ts, f.Type)
		}
		rows := newRows(cols, ts)
		row := rows.add()
		row[0], _ = types.DatumOf(o.Applied)
		for i, v := range o.Current {
			row[i+1], _ = types.DatumOf(v)
		}
		return res, rows, nil
	}
	r, err := est.Query(ctx, vals...)
	if errors.Is(err, store.ErrNoTable) && s.db.tx == nil {
		// A migration in another process dropped a table this catalog
		// version reads (DB.Migrate): read with the newest version.
		if err = s.db.current(ctx); err == nil {
			var en2 *exec.Engine
			if en2, err = s.route(ctx); err == nil && en2 != nil && en2 != en {
				if est, err = s.advisedStmt(en2); err == nil {
					r, err = est.Query(ctx, vals...)
				}
			} else if err == nil {
				err = fmt.Errorf("%w (and the store's newest definitions read it too)", store.ErrNoTable)
			}
		}
	}
	if err != nil {
		return res, nil, err
	}
	// The engine's rows, one slice of len(columns) Datums each, serve as
	// the chunks of Rows as they are: no copy.
	rows := &Rows{cols: r.Columns, types: r.Types, chunks: r.Rows, used: len(r.Columns), n: len(r.Rows)}
	res.RowsAffected = int64(rows.n)
	return res, rows, nil
}

// insertAdvised runs an INSERT … VALUES of several tuples on the advised
// schema as one atomic write: the statement is planned once as a one-tuple
// INSERT of parameters, then run with each tuple's values.
func (s *Stmt) insertAdvised(ctx context.Context, en *exec.Engine, ins *lang.Insert, args []types.Value, res Result) (Result, *Rows, error) {
	est, err := s.advisedStmt(en)
	if err != nil {
		return res, nil, err
	}
	lists := make([][]types.Value, len(ins.Rows))
	for r, row := range ins.Rows {
		if len(row) != len(ins.Rows[0]) {
			return res, nil, &lang.Error{Pos: row[0].Pos(), Msg: fmt.Sprintf("tuple %d has %d values, the first %d", r+1, len(row), len(ins.Rows[0]))}
		}
		lists[r] = make([]types.Value, len(row))
		for i, e := range row {
			if lists[r][i], err = plan.Literal(e, args); err != nil {
				return res, nil, err
			}
		}
	}
	n, err := est.ExecBatch(ctx, lists)
	res.RowsAffected = int64(n)
	return res, nil, err
}

// oneTuple is the one-tuple INSERT of parameters that plans every tuple of
// a multi-tuple INSERT … VALUES.
func oneTuple(ins *lang.Insert) *lang.Insert {
	one := &lang.Insert{At: ins.At, Relation: ins.Relation, Columns: ins.Columns, Rows: [][]lang.Expr{make([]lang.Expr, len(ins.Rows[0]))}}
	for i, e := range ins.Rows[0] {
		one.Rows[0][i] = &lang.Param{At: e.Pos(), Index: i}
	}
	return one
}

// Deploy deploys an advised schema in the store: the conceptual model
// (DEFINE RELATION statements of modelSrc), the column families and
// secondary indexes of schemaSrc (kvschema advise --format ddl), and the
// cost profile its plans are chosen with. It creates the tables; Load fills
// them. Deploying the schema the store already holds again is a no-op; a
// different one, or a model relation the store's DEFINE RELATIONs already
// name, is an error.
//
// The notes say what the caller should know although the deployment
// succeeded: that the schema was advised for another target than the
// store's engine (its DDL records the target: kvschema advise --target;
// a schema advised for pebble deployed on Bigtable, say, was costed with
// constants its plans do not run under). A mem: store takes any target
// without a note.
func (db *DB) Deploy(ctx context.Context, modelFile string, modelSrc []byte, schemaFile string, schemaSrc []byte, prof cost.Profile) (notes []string, err error) {
	if db.tx != nil {
		return nil, fmt.Errorf("Deploy: %w", ErrInTx)
	}
	en, err := exec.Deploy(ctx, db.raw, modelFile, modelSrc, schemaFile, schemaSrc, prof)
	if err != nil {
		return nil, err
	}
	if note := catalog.TargetNote(en.Advised().Target, db.raw.Capabilities().Engine); note != "" {
		notes = append(notes, note)
	}
	return notes, db.reload(ctx) // the catalog's new version holds the schema
}

// Definitions returns every definition the store holds, as a script: the
// DEFINE RELATION and DEFINE SCHEMA statements of the client's catalog,
// then those of the advised schema (its model's DEFINE RELATIONs, its
// DEFINE COLUMN FAMILY and DEFINE SECONDARY INDEX statements), if any.
func (db *DB) Definitions(ctx context.Context) (string, error) {
	out := lang.PrintScript(db.Catalog().Defs)
	en, err := db.advised(ctx, true)
	if err != nil || en == nil {
		return out, err
	}
	if out != "" {
		out += "\n"
	}
	return out + "-- the advised schema (kvschema load, DB.Deploy)\n" + lang.PrintScript(en.Definitions()), nil
}

// Advised returns the advised schema deployed in the store (its model,
// column families and indexes, and plans), or nil if there is none.
func (db *DB) Advised(ctx context.Context) (*exec.Engine, error) {
	return db.advised(ctx, true)
}

func (db *DB) needAdvised(ctx context.Context) (*exec.Engine, error) {
	en, err := db.advised(ctx, true)
	if err == nil && en == nil {
		err = exec.ErrNoSchema
	}
	return en, err
}

// Load bulk-loads entity rows into every column family and index of the
// advised schema (see exec.Engine.Load: rows are checked before anything
// is written; an interrupted load run again resumes).
func (db *DB) Load(ctx context.Context, rows func(yield func(exec.Row) error) error, opt exec.LoadOptions) (*exec.LoadStats, error) {
	if db.tx != nil {
		return nil, fmt.Errorf("Load: %w", ErrInTx)
	}
	en, err := db.needAdvised(ctx)
	if err != nil {
		return nil, err
	}
	return en.Load(ctx, rows, opt)
}

// Verify checks the store against its definitions: that every layout of
// each client relation holds the tuples of its primary layout and nothing
// else (exec.Engine.VerifyRelation), and that every column family and
// index of the advised schema holds exactly the rows its definition
// implies, against opt.Reference when given, else against the entity data
// rebuilt from all of them. With neither kind defined it fails with
// exec.ErrNoSchema; opt.Reference needs an advised schema. Writers of
// this DB wait while it reads (it holds every write lock), so what it
// compares is one state of the store; it waits for an open transaction as
// a write does (ErrBusy after Options.BusyTimeout), and inside one fails
// with ErrInTx.
func (db *DB) Verify(ctx context.Context, opt exec.VerifyOptions) (*exec.Report, error) {
	if db.tx != nil {
		return nil, fmt.Errorf("Verify: %w", ErrInTx)
	}
	gate, err := db.waitTx(ctx, false) // as a writer: not while a transaction is open
	if err != nil {
		return nil, fmt.Errorf("Verify: %w", err)
	}
	defer gate()
	held := db.locks.All()
	defer db.locks.Unlock(held)
	en, err := db.advised(ctx, true)
	if err != nil {
		return nil, err
	}
	rels := db.Catalog().Relations
	if en == nil && (len(rels) == 0 || opt.Reference != nil) {
		return nil, exec.ErrNoSchema
	}
	rep := &exec.Report{Rows: map[string]int{}}
	for _, rel := range rels {
		r, err := db.engine().VerifyRelation(ctx, rel, opt.Progress)
		if err != nil {
			return nil, err
		}
		maps.Copy(rep.Rows, r.Rows)
		rep.Differences = append(rep.Differences, r.Differences...)
	}
	if en != nil {
		r, err := en.Verify(ctx, opt)
		if err != nil {
			return nil, err
		}
		maps.Copy(rep.Rows, r.Rows)
		rep.Partitions = r.Partitions
		rep.Differences = append(rep.Differences, r.Differences...)
	}
	return rep, nil
}

// Repair finishes the multi-row writes dead clients left in the intent log
// of a store that is atomic per row only (Bigtable, see package txnstore),
// aborts those they left uncommitted and removes stale locks. On a store
// that writes atomically it does nothing and reports false.
func (db *DB) Repair(ctx context.Context, progress func(table string, rows int64)) (txnstore.RepairStats, bool, error) {
	if db.tx != nil {
		return txnstore.RepairStats{}, false, fmt.Errorf("Repair: %w", ErrInTx)
	}
	ts, ok := db.raw.(*txnstore.Store)
	if !ok {
		return txnstore.RepairStats{}, false, nil
	}
	st, err := ts.Repair(ctx, progress)
	return st, true, err
}

// maxShapeTexts bounds DB.shapes.
const maxShapeTexts = 4096

// observe counts the statement's run by its shape (DB.ObservedWorkload).
func (s *Stmt) observe() {
	c := s.db.observed
	if c == nil {
		return
	}
	n := s.shapeCount.Load()
	if n == nil {
		key := s.text
		if key == "" {
			key = lang.Print(s.ast)
		}
		if v, ok := s.db.shapes.Load(key); ok {
			n = v.(*atomic.Uint64)
		} else if shape, ok := observe.Shape(s.ast); ok {
			n = c.For(shape)
			// Texts with constants in them are many: the cache stays
			// bounded, beyond which a text is normalized at each run.
			if s.db.nshapes.Add(1) <= maxShapeTexts {
				s.db.shapes.Store(key, n)
			}
		} else {
			return // no query or write: nothing to count
		}
		s.shapeCount.Store(n)
	}
	times := uint64(1)
	if ins, ok := s.ast.(*lang.Insert); ok && len(ins.Rows) > 1 {
		times = uint64(len(ins.Rows))
	}
	c.Count(n, times)
}
