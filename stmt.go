package kvschema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/types"
)

// Stmt is a parsed statement, executable many times with different
// arguments. Planning happens at each execution, against the catalog of
// that moment, so a prepared statement follows later DEFINE SCHEMAs.
type Stmt struct {
	db     *DB
	ast    lang.Statement
	text   string
	params int      // number of arguments it takes
	names  []string // its :name parameters by index (nil: ? or $n)
	// rebind caches a re-keyable plan (point lookup or key-prefix scan)
	// for this statement and the catalog it was planned against.
	rebind atomic.Pointer[rebindPlan]
	cols   atomic.Pointer[colNames]
	// rows is the number of rows the statement's last query returned: the
	// next one's first chunk is made that large (up to maxChunkRows), as a
	// prepared query tends to return as many rows each time.
	rows atomic.Int32
	// adv caches the plan of a statement on the advised schema.
	adv atomic.Pointer[advisedPlan]
	// agg is an aggregate SELECT's plan (see aggregate).
	agg atomic.Pointer[aggregate]
	// routed caches which kind of schema runs the statement, for the
	// catalog it was decided against (see DB.route).
	routed atomic.Pointer[routeOf]
	// shapeCount counts the runs of its shape (see observe).
	shapeCount atomic.Pointer[atomic.Uint64]
}

// routeOf is a routing decision: the advised engine, or nil for the
// client's catalog, as decided against cat.
type routeOf struct {
	cat *catalog.Catalog
	en  *exec.Engine
}

type rebindPlan struct {
	cat *catalog.Catalog
	rb  *plan.KeyRebind
}

// AST is the parsed statement.
func (s *Stmt) AST() lang.Statement { return s.ast }

// checkNames plans the statement with every parameter NULL, so that the
// names it uses are resolved against the current catalog; only an unknown
// name is an error (values are checked when they are known).
func (s *Stmt) checkNames(ctx context.Context) error {
	switch s.ast.(type) {
	case *lang.Select, *lang.Insert, *lang.Update, *lang.Delete, *lang.Connect, *lang.Explain:
	default:
		return nil // definitions are checked when they run
	}
	_, err := s.Explain(ctx, make([]any, s.params)...)
	if errors.Is(err, lang.ErrUnknownName) {
		return err
	}
	return nil
}

// Exec runs the statement, discarding rows.
func (s *Stmt) Exec(ctx context.Context, args ...any) (Result, error) {
	res, _, err := s.runPositioned(ctx, args)
	return res, err
}

// conditional reports whether st is a conditional write (a lightweight
// transaction), which answers a row.
func conditional(st lang.Statement) bool {
	switch x := st.(type) {
	case *lang.Insert:
		return x.IfNotExists
	case *lang.Update:
		return x.If != nil
	case *lang.Delete:
		return x.If != nil
	}
	return false
}

func (s *Stmt) runPositioned(ctx context.Context, args []any) (Result, *Rows, error) {
	res, rows, err := s.run(ctx, args)
	if err != nil {
		err = positioned(s.ast, err)
	}
	return res, rows, err
}

// Query runs the statement and returns its rows (an EXPLAIN returns one row
// per plan line, in a column named PLAN; a conditional write its
// [applied] row).
func (s *Stmt) Query(ctx context.Context, args ...any) (*Rows, error) {
	switch s.ast.(type) {
	case *lang.Select, *lang.Explain:
	default:
		if conditional(s.ast) {
			break
		}
		// database/sql's convention: Query reads, Exec writes; a write run
		// through Query would happen and answer with no rows.
		return nil, &lang.Error{Pos: s.ast.Pos(), Msg: fmt.Sprintf("Query runs SELECT and EXPLAIN; run %s with Exec", kindOf(s.ast))}
	}
	res, rows, err := s.runPositioned(ctx, args)
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = newRows(planColumn, planType)
		if res.Plan != "" {
			for _, line := range strings.Split(strings.TrimRight(res.Plan, "\n"), "\n") {
				rows.add()[0] = types.StringDatum(line)
			}
		}
	}
	return rows, nil
}

// Explain returns the statement's plan without running it.
func (s *Stmt) Explain(ctx context.Context, args ...any) (string, error) {
	inner := s.ast
	if e, ok := inner.(*lang.Explain); ok {
		inner = e.Stmt
	}
	if sel, ok := inner.(*lang.Select); ok && sel.Aggregated() {
		a, err := s.aggregatePlan(sel)
		if err != nil {
			return "", positioned(s.ast, err)
		}
		return a.explain(ctx, args)
	}
	if en, _, err := s.db.route(ctx, inner); err != nil {
		return "", positioned(s.ast, err)
	} else if en != nil {
		est, err := s.advisedStmt(en)
		if err != nil {
			return "", positioned(s.ast, err)
		}
		return est.Explain(), nil
	}
	args, err := s.positional(args)
	if err != nil {
		return "", err
	}
	vals, err := values(args)
	if err != nil {
		return "", err
	}
	return s.db.explain(ctx, inner, vals)
}

// values converts Go arguments to canonical values (ints to int64, float32
// to float64); attribute types are applied where each value is used. A Go
// slice or map is a collection's value, kept as it is.
// Arguments that are all canonical already are returned as they are (the
// statement only reads them), which spares a prepared statement an
// allocation per run.
func values(args []any) ([]types.Value, error) {
	out, copied := args, false
	for i, a := range args {
		switch a.(type) {
		case nil, string, []byte, int64, float64, bool, types.Set, types.List, types.Map:
			continue
		}
		if rv := reflect.ValueOf(a); rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
			continue // a collection: types.Coerce takes Go slices and maps
		}
		if !copied {
			out, copied = append(make([]types.Value, 0, len(args)), args...), true
		}
		switch x := a.(type) {
		case time.Time:
			ts, err := types.ExactTimestamp(x)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %v", i+1, err)
			}
			out[i] = ts
		case float32:
			out[i] = float64(x)
		case int, int8, int16, int32, uint8, uint16, uint32, uint64, uint:
			v, err := types.Coerce(x, types.BigInt)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %v", i+1, err)
			}
			out[i] = v
		default:
			return nil, fmt.Errorf("argument %d: unsupported Go type %T", i+1, a)
		}
	}
	return out, nil
}

// RunStatement runs an already parsed statement (rows is nil except for
// SELECT). Errors without a position get the statement's.
func (db *DB) RunStatement(ctx context.Context, ast lang.Statement, args ...any) (Result, *Rows, error) {
	return newStmt(db, ast, "").runPositioned(ctx, args)
}

func newStmt(db *DB, ast lang.Statement, text string) *Stmt {
	return &Stmt{db: db, ast: ast, text: text, params: lang.CountParams(ast), names: lang.ParamNames(ast)}
}

// positional returns args in parameter order: a sql.Named argument goes to
// the :name parameter of its name (case-insensitive). Arguments in order
// serve :name parameters too, by their order of first use.
func (s *Stmt) positional(args []any) ([]any, error) {
	named := 0
	for _, a := range args {
		if _, ok := a.(sql.NamedArg); ok {
			named++
		}
	}
	if named == 0 {
		return args, nil
	}
	if named < len(args) {
		return nil, errors.New("arguments are either all named (sql.Named) or all in order")
	}
	if s.names == nil {
		return nil, errors.New("named arguments (sql.Named) need :name parameters; this statement's are ? or $n: pass its arguments in order")
	}
	out := make([]any, len(s.names))
	set := make([]bool, len(s.names))
	for _, a := range args {
		na := a.(sql.NamedArg)
		i := slices.IndexFunc(s.names, func(n string) bool { return strings.EqualFold(n, na.Name) })
		if i < 0 {
			return nil, fmt.Errorf("no parameter :%s (the statement's are :%s)", na.Name, strings.Join(s.names, ", :"))
		}
		if set[i] {
			return nil, fmt.Errorf("argument :%s given twice", na.Name)
		}
		out[i], set[i] = na.Value, true
	}
	for i, ok := range set {
		if !ok {
			return nil, fmt.Errorf("missing argument :%s", s.names[i])
		}
	}
	return out, nil
}

func (s *Stmt) run(ctx context.Context, args []any) (Result, *Rows, error) {
	args, err := s.positional(args)
	if err != nil {
		return Result{Statement: kindOf(s.ast)}, nil, err
	}
	if _, ok := s.ast.(*lang.Transaction); ok {
		return Result{Statement: kindOf(s.ast)}, nil, fmt.Errorf("%s runs in a session (a script, the shell, DB.Session); programs use DB.Begin and Tx.Commit, or database/sql's Begin", kindOf(s.ast))
	}
	if tx := s.db.tx; tx != nil {
		if tx.ended() {
			return Result{Statement: kindOf(s.ast)}, nil, ErrTxDone
		}
		if definition(s.ast) {
			return Result{Statement: kindOf(s.ast)}, nil, fmt.Errorf("%s: %w", kindOf(s.ast), ErrInTx)
		}
	}
	if s.db.readOnly {
		switch kindOf(s.ast) {
		case "SELECT", "EXPLAIN":
		default:
			return Result{Statement: kindOf(s.ast)}, nil, fmt.Errorf("%s: %w", kindOf(s.ast), ErrReadOnly)
		}
	}
	if s.db.tx == nil && !definition(s.ast) {
		s.db.readGate.RLock()
		defer s.db.readGate.RUnlock()
	}
	if s.db.tx == nil && writes(s.ast) {
		// An open transaction holds every write: wait for it, not forever.
		release, err := s.db.waitTx(ctx, false)
		if err != nil {
			return Result{Statement: kindOf(s.ast)}, nil, err
		}
		defer release()
	}
	if res, rows, ok, err := s.runAggregate(ctx, args); ok {
		return res, rows, err
	}
	en, err := s.route(ctx)
	if err == nil && en != nil && writes(s.ast) && s.db.tx == nil {
		// A write keeps every index of the newest catalog version: a
		// migration (DB.Migrate) may have added one since the last.
		if err = s.db.current(ctx); err == nil {
			en, err = s.route(ctx)
		}
	}
	if err != nil {
		return Result{Statement: kindOf(s.ast)}, nil, err
	} else if en != nil {
		return s.runAdvised(ctx, en, Result{Statement: kindOf(s.ast)}, args)
	}
	vals, err := values(args)
	if err != nil {
		return Result{}, nil, err
	}
	if len(vals) > s.params {
		return Result{}, nil, fmt.Errorf("%d arguments for %d parameters", len(vals), s.params)
	}
	db := s.db
	res := Result{Statement: kindOf(s.ast)}
	switch s.ast.(type) {
	case *lang.Insert, *lang.Update, *lang.Delete:
		// A write resolves its relation and runs while no definition
		// changes it (see DB.define).
		db.defining.RLock()
		defer db.defining.RUnlock()
	}
	switch st := s.ast.(type) {
	case *lang.DefineRelation, *lang.DefineSchema, *lang.DropSchema:
		return res, nil, db.define(ctx, st)
	case *lang.Explain:
		res.Plan, err = db.explain(ctx, st.Stmt, vals)
		return res, nil, err
	case *lang.Insert:
		if err := db.current(ctx); err != nil {
			return res, nil, err
		}
		return db.write(ctx, st, vals, res)
	case *lang.Select:
		rel, err := db.relation(st.Relation, st.RelationAt.Or(st.At))
		if err != nil {
			return res, nil, err
		}
		p, err := s.selectPlan(st, rel, vals)
		if err != nil {
			return res, nil, err
		}
		cols := s.columns(rel, p)
		rows := newRows(cols.names, cols.types)
		rows.reserve(int(s.rows.Load()))
		rows.project = p.Project
		err = db.engine().Query(ctx, p, (*projector)(rows))
		rows.project = nil
		p.Release()
		if err != nil {
			return res, nil, err
		}
		s.rows.Store(int32(min(rows.n, maxChunkRows)))
		res.RowsAffected = int64(rows.n)
		return res, rows, nil
	case *lang.Update, *lang.Delete:
		if err := db.current(ctx); err != nil {
			return res, nil, err
		}
		return db.write(ctx, st, vals, res)
	case *lang.Connect:
		return res, nil, &lang.Error{Pos: st.At, Msg: "CONNECT and DISCONNECT change relationships of a conceptual model: run them on a schema from kvschema advise (in a client-defined relation, UPDATE the foreign-key attribute)"}
	case *lang.DefineWorkload:
		return res, nil, &lang.Error{Pos: st.At, Msg: "DEFINE WORKLOAD is an input of the advisor (kvschema advise --workload FILE), not a statement to run"}
	case *lang.AlterTable:
		return res, nil, &lang.Error{Pos: st.At, Msg: "ALTER TABLE … ADD PRIMARY KEY / FOREIGN KEY is read in model files (kvschema advise --model FILE): a client relation declares its key and foreign keys in its DEFINE RELATION or CREATE TABLE"}
	}
	return res, nil, &lang.Error{Pos: s.ast.Pos(), Msg: "unsupported statement"}
}

// columns names a plan's result columns, cached per catalog.
func (s *Stmt) columns(rel *catalog.Relation, p *plan.Plan) *colNames {
	cat := s.db.Catalog()
	if c := s.cols.Load(); c != nil && c.cat == cat && len(c.names) == len(p.Project) {
		return c
	}
	c := &colNames{cat: cat, names: make([]string, len(p.Project)), types: make([]types.Type, len(p.Project))}
	for i, a := range p.Project {
		c.names[i], c.types[i] = rel.Attrs[a].Name, rel.Attrs[a].Type
	}
	s.cols.Store(c)
	return c
}

// colNames are the result columns of a SELECT, for one catalog.
type colNames struct {
	cat   *catalog.Catalog
	names []string
	types []types.Type
}

// A conditional write's first result column.
var (
	appliedColumn = []string{"[applied]"}
	appliedType   = []types.Type{types.Bool}
)

// EXPLAIN's result column.
var (
	planColumn = []string{"PLAN"}
	planType   = []types.Type{types.String}
)

// selectPlan plans a SELECT, re-keying the statement's cached key-read
// plan when it fits the arguments.
func (s *Stmt) selectPlan(st *lang.Select, rel *catalog.Relation, vals []types.Value) (*plan.Plan, error) {
	cat := s.db.Catalog()
	if pp := s.rebind.Load(); pp != nil && pp.cat == cat {
		if p, ok := pp.rb.Plan(vals); ok {
			return p, nil
		}
	}
	p, err := plan.Select(st, rel, vals, s.db.costs)
	if err != nil {
		return nil, err
	}
	if pp := s.rebind.Load(); pp == nil || pp.cat != cat {
		if rb := plan.NewKeyRebind(st, p, s.db.costs); rb != nil {
			s.rebind.Store(&rebindPlan{cat: cat, rb: rb})
		}
	}
	return p, nil
}

// explain describes how a statement would run.
func (db *DB) explain(ctx context.Context, st lang.Statement, args []types.Value) (string, error) {
	switch x := st.(type) {
	case *lang.Select:
		rel, err := db.relation(x.Relation, x.RelationAt.Or(x.At))
		if err != nil {
			return "", err
		}
		p, err := plan.Select(x, rel, args, db.costs)
		if err != nil {
			return "", err
		}
		return p.Explain(), nil
	case *lang.Insert, *lang.Update, *lang.Delete:
		w, err := db.writePlan(x, args)
		if err != nil {
			return "", err
		}
		return w.Explain()
	}
	return "", &lang.Error{Pos: st.Pos(), Msg: "EXPLAIN supports SELECT, INSERT, UPDATE and DELETE"}
}

// write plans and runs a write statement on a client relation. A
// conditional one (IF NOT EXISTS, IF EXISTS, IF cond: a lightweight
// transaction) answers one row, as Cassandra's do: [applied], then the
// attributes its condition read, as stored when it was decided (NULL when
// it applied or no tuple was stored; every attribute for IF NOT EXISTS,
// none for IF EXISTS).
func (db *DB) write(ctx context.Context, st lang.Statement, vals []types.Value, res Result) (Result, *Rows, error) {
	w, err := db.writePlan(st, vals)
	if err != nil {
		return res, nil, err
	}
	o, err := db.engine().ApplyIf(ctx, w)
	res.RowsAffected = int64(o.Written)
	if err != nil || w.Cond == nil {
		return res, nil, err
	}
	rel := w.Relation
	cols, ts := slices.Clone(appliedColumn), slices.Clone(appliedType)
	for _, a := range w.Cond.Columns {
		cols, ts = append(cols, rel.Attrs[a].Name), append(ts, rel.Attrs[a].Type)
	}
	rows := newRows(cols, ts)
	row := rows.add()
	row[0], _ = types.DatumOf(o.Applied)
	if !o.Applied && o.Current != nil {
		for i, a := range w.Cond.Columns {
			row[i+1], _ = types.DatumOf(o.Current[a])
		}
	}
	return res, rows, nil
}

// writePlan plans a write statement on a client relation.
func (db *DB) writePlan(st lang.Statement, args []types.Value) (*plan.Write, error) {
	switch x := st.(type) {
	case *lang.Insert:
		rel, err := db.relation(x.Relation, x.RelationAt.Or(x.At))
		if err != nil {
			return nil, err
		}
		return plan.Insert(x, rel, args)
	case *lang.Update:
		rel, err := db.relation(x.Relation, x.RelationAt.Or(x.At))
		if err != nil {
			return nil, err
		}
		return plan.Update(x, rel, args, db.costs)
	case *lang.Delete:
		rel, err := db.relation(x.Relation, x.RelationAt.Or(x.At))
		if err != nil {
			return nil, err
		}
		return plan.Delete(x, rel, args, db.costs)
	}
	return nil, &lang.Error{Pos: st.Pos(), Msg: "not a write"}
}
