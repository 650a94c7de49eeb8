package exec

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/planner"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Engine runs plans on a store: the plans and writes of the client's
// relations (Query, Apply), and the statements of the advised schema it
// was built for, if any (Prepare, Load, Verify). It is safe for concurrent
// use.
type Engine struct {
	st      store.Store
	locks   *Locks    // shared by the engines of one DB's catalog versions
	scratch sync.Pool // of *writeScratch

	// The advised schema (nil m and schema: none).
	m       *catalog.Model
	schema  *catalog.Schema
	prof    cost.Profile
	adv     *catalog.Advised // nil when built by New
	planner *planner.Planner
	tables  map[*catalog.Index]*table
	byName  map[string]*table

	stmts stmtCache
	// building maps the table of each write-only index (a migration
	// builds or drops it) to the index: writes mark the rows they change
	// there (marked). migration caches the programs of Backfill.
	building  map[string]string
	migration sync.Map

	// executor runs join steps (SetExecutor); each compiled step holds a
	// copy.
	executor Executor
}

// stmtCacheSize bounds the statements Prepare keeps planned.
const stmtCacheSize = 10000

// stmtCache keeps the most recently prepared statements by text, least
// recently used evicted first.
type stmtCache struct {
	limit int // 0: stmtCacheSize
	mu    sync.Mutex
	byKey map[string]*list.Element // of *Stmt
	lru   list.List                // front: most recent
}

func (c *stmtCache) get(text string) *Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byKey[text]
	if el == nil {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*Stmt)
}

func (c *stmtCache) put(text string, s *Stmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	if el := c.byKey[text]; el != nil {
		c.lru.MoveToFront(el)
		return
	}
	c.byKey[text] = c.lru.PushFront(s)
	limit := c.limit
	if limit == 0 {
		limit = stmtCacheSize
	}
	if c.lru.Len() > limit {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.byKey, old.Value.(*Stmt).Text)
	}
}

// New runs schema s (over model m) on st with cost profile prof (which
// ranks plans). It does not create tables: see Deploy.
func New(st store.Store, m *catalog.Model, s *catalog.Schema, prof cost.Profile) *Engine {
	e := &Engine{st: st, m: m, schema: s, prof: prof, planner: planner.New(s, prof),
		tables: map[*catalog.Index]*table{}, byName: map[string]*table{}, locks: new(Locks)}
	e.planner.Scans = true // a query no key lookup starts answers by a full scan
	for _, x := range s.Indexes {
		if x.Layout() == nil {
			panic(fmt.Sprintf("exec: index %s has no layout: schemas come from catalog.ParseSchema", x.Name))
		}
		t := newTable(x)
		e.tables[x] = t
		e.byName[t.name] = t
		if s.WriteOnly[x] && s.Local[x] == nil {
			if e.building == nil {
				e.building = map[string]string{}
			}
			e.building[t.name] = x.Name
		}
	}
	return e
}

// Model returns the conceptual model.
func (e *Engine) Model() *catalog.Model { return e.m }

// Schema returns the physical schema.
func (e *Engine) Schema() *catalog.Schema { return e.schema }

// Definitions returns the model's DEFINE RELATION statements and the
// schema's DEFINE COLUMN FAMILY and DEFINE SECONDARY INDEX statements (none
// without an advised schema).
func (e *Engine) Definitions() []lang.Statement {
	if e.schema == nil {
		return nil
	}
	return append(append([]lang.Statement(nil), e.m.Defs...), e.schema.Statements()...)
}

// Store returns the store.
func (e *Engine) Store() store.Store { return e.st }

// CreateTables creates the table of every index of the advised schema
// that is not a local index, declaring the local indexes each keeps
// (idempotent).
func (e *Engine) CreateTables(ctx context.Context) error {
	if e.schema == nil {
		return nil
	}
	if err := e.schema.Kept(); err != nil {
		return err
	}
	specs := e.tableSpecs()
	if len(e.building) > 0 {
		specs = append(specs, store.TableSpec{Name: MarkTable, Families: []string{markFamily}})
	}
	for _, spec := range specs {
		if err := e.st.CreateTable(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}

// Stmt is a prepared statement: a query with its plan, or a write with
// its upkeeps.
type Stmt struct {
	e    *Engine
	Text string
	// Resolved and Plan: a query and its plan.
	Resolved *catalog.Query
	// A union (WHERE with OR or IN) has several branches; Resolved and
	// Plan are its first.
	Plan  *plan.Query
	prog  *program
	union []*branch
	// An UPDATE or DELETE whose WHERE has OR or IN runs the write of each
	// conjunct (unionWrites) in one batch; Write and Upkeeps are the first's.
	unionWrites []*Stmt
	Write       *catalog.Write
	// Upkeeps lists, for a write, how it keeps each index it changes.
	Upkeeps []*plan.Upkeep
	ups     []*upkeepProg
	nparams int
	columns []string     // a query's result columns
	types   []types.Type // and their types
	checks  []existCheck
	// cond reads the tuple a write names before it writes
	// (Write.ReadsTuple): readFields are the fields it reads, condFields
	// (see CondFields) first.
	cond       *existCheck
	condFields []*catalog.Field
	readFields []*catalog.Field
}

// Prepare parses, resolves and plans one statement. The most recently used
// statements stay planned, by text.
func (e *Engine) Prepare(text string) (*Stmt, error) {
	if s := e.stmts.get(text); s != nil {
		return s, nil
	}
	st, err := lang.ParseStatement("statement", text)
	if err != nil {
		return nil, err
	}
	s, err := e.PrepareAST(st)
	if err != nil {
		return nil, err
	}
	s.Text = text
	e.stmts.put(text, s)
	return s, nil
}

// PrepareAST resolves and plans a parsed statement.
func (e *Engine) PrepareAST(st lang.Statement) (*Stmt, error) {
	if e.schema == nil {
		return nil, ErrNoSchema
	}
	s := &Stmt{e: e, Text: lang.Print(st), nparams: lang.CountParams(st)}
	if ex, ok := st.(*lang.Explain); ok {
		st = ex.Stmt
	}
	if sel, ok := st.(*lang.Select); ok {
		sels, err := disjuncts(sel)
		if err != nil {
			return nil, err
		}
		if len(sels) == 1 {
			sel = sels[0] // a conjunction once rewritten
		}
		if len(sels) > 1 {
			if err := e.prepareUnion(s, sels); err != nil {
				return nil, err
			}
			for _, r := range s.Resolved.Select {
				s.columns = append(s.columns, s.Resolved.Graph.DescribeRef(r))
				s.types = append(s.types, r.Field.Type)
			}
			return s, nil
		}
		q, err := e.m.ResolveSelect(sel)
		if err != nil {
			return nil, err
		}
		pl, err := e.planner.Query(q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lang.Print(st), err)
		}
		prog, err := e.compile(pl)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lang.Print(st), err)
		}
		s.Resolved, s.Plan, s.prog = q, pl, prog
		for _, r := range q.Select {
			s.columns = append(s.columns, q.Graph.DescribeRef(r))
			s.types = append(s.types, r.Field.Type)
		}
		return s, nil
	}
	alts, err := writeDisjuncts(st)
	if err != nil {
		return nil, err
	}
	switch {
	case len(alts) == 1:
		st = alts[0] // a conjunction once rewritten
	case len(alts) > 1:
		for _, alt := range alts {
			as, err := e.PrepareAST(alt)
			if err != nil {
				return nil, err
			}
			if as.cond != nil {
				what := "a conditional write"
				if as.Write.Cond == catalog.Unconditional {
					what = "changing a list's elements by position or value"
				}
				return nil, fmt.Errorf("%s: %s names one tuple: its WHERE has no OR or IN", lang.Print(st), what)
			}
			s.unionWrites = append(s.unionWrites, as)
		}
		s.Write, s.Upkeeps = s.unionWrites[0].Write, s.unionWrites[0].Upkeeps
		return s, nil
	}
	w, err := e.m.ResolveWrite(st)
	if err != nil {
		return nil, err
	}
	if err := e.checkTTL(w); err != nil {
		return nil, fmt.Errorf("%s: %w", lang.Print(st), err)
	}
	ups, err := e.planner.Write(w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lang.Print(st), err)
	}
	s.Write, s.Upkeeps = w, ups
	for _, u := range ups {
		up, err := e.compileUpkeep(w, u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lang.Print(st), err)
		}
		s.ups = append(s.ups, up)
	}
	s.checks = e.existChecks(s)
	if w.ReadsTuple() {
		what, who := "the condition reads", "a conditional write reads"
		if w.Cond == catalog.Unconditional {
			what = "changing a list's elements by position or value reads"
			who = what
		}
		t := e.entityTable(w.CondSource)
		if t == nil {
			if any := e.entityTable(func(x *catalog.Index) bool { return x.KeyedBy(w.Entity) }); any != nil {
				return nil, fmt.Errorf("%s: %s %s, which no column family of %s keyed by %s alone holds (%s does not)", lang.Print(st), what, fieldNames(w.ReadFields()), w.Entity.Name, w.Entity.ID(), any.name)
			}
			return nil, fmt.Errorf("%s: %s the tuple it names from a column family of %s keyed by %s alone, and this schema has none", lang.Print(st), who, w.Entity.Name, w.Entity.ID())
		}
		s.cond = &existCheck{what: w.Entity.Name, ent: w.Entity, value: w.Key, t: t}
		s.condFields = condFields(w, t)
		s.readFields = slices.Clone(s.condFields)
		for _, f := range w.ReadFields() {
			if !slices.Contains(s.readFields, f) {
				s.readFields = append(s.readFields, f)
			}
		}
	}
	return s, nil
}

// heldNames lists the fields an index holds besides the key.
func heldNames(fs []*catalog.Field) string {
	if len(fs) == 0 {
		return "the key alone"
	}
	return fieldNames(fs)
}

// fieldNames lists fields by name, comma-separated.
func fieldNames(fs []*catalog.Field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	return strings.Join(names, ", ")
}

// condFields lists the fields a conditional write w reports (see
// Stmt.CondFields), t being the column family it reads them from.
func condFields(w *catalog.Write, t *table) []*catalog.Field {
	var out []*catalog.Field
	switch w.Cond {
	case catalog.IfNotExists:
		for _, f := range w.Entity.Fields {
			if _, ok := t.pos[catalog.Attr{Node: 0, Field: f}]; ok {
				out = append(out, f)
			}
		}
	case catalog.IfValues:
		out = w.CondFields()
	}
	return out
}

// Result is the answer of a query.
type Result struct {
	Columns []string     // shared by every result of the statement: do not modify
	Types   []types.Type // the columns' types; shared likewise
	Rows    [][]types.Datum
}

// Values returns the rows as canonical Go values.
func (r *Result) Values() [][]types.Value {
	out := make([][]types.Value, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = make([]types.Value, len(row))
		for j, d := range row {
			out[i][j] = d.Value()
		}
	}
	return out
}

// Query runs a prepared query.
func (s *Stmt) Query(ctx context.Context, args ...types.Value) (*Result, error) {
	if s.prog == nil && s.union == nil {
		return nil, errors.New("not a query: use Exec")
	}
	if err := s.checkArgs(args); err != nil {
		return nil, err
	}
	if s.union != nil {
		return s.queryUnion(ctx, args)
	}
	r := s.prog.getRun()
	defer s.prog.putRun(r) // after the result is copied out
	if _, err := bindPreds(r.vals, s.Resolved, args); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Text, err)
	}
	rows, err := s.prog.run(ctx, s.e.st, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Text, err)
	}
	w := len(s.prog.sel)
	res := &Result{Columns: s.columns, Types: s.types, Rows: make([][]types.Datum, len(rows))}
	all := make([]types.Datum, len(rows)*w)
	for i, t := range rows {
		out := all[i*w : (i+1)*w : (i+1)*w]
		for j, k := range s.prog.sel {
			out[j] = t[k]
		}
		res.Rows[i] = out
	}
	return res, nil
}

func (s *Stmt) checkArgs(args []types.Value) error {
	if len(args) != s.nparams {
		return fmt.Errorf("%s: %d parameters, %d values given", s.Text, s.nparams, len(args))
	}
	return nil
}

// Explain describes the plan: each step's index, key and estimates, and
// the store tables and keys it reads; for a write, each upkeep and the plans
// of its support queries.
func (s *Stmt) Explain() string {
	if s.union != nil {
		return s.explainUnion()
	}
	if s.prog != nil {
		return fmt.Sprintf("%s\ncost %.6g\n%s", s.Text, s.Plan.Cost, s.prog.explain())
	}
	if s.unionWrites != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "%s\nTHE WRITES OF %d ALTERNATIVES, IN ONE ATOMIC BATCH (a tuple several match is written once)\n", s.Text, len(s.unionWrites))
		for i, ws := range s.unionWrites {
			fmt.Fprintf(&b, "ALTERNATIVE %d:\n", i+1)
			for _, line := range strings.SplitAfter(strings.TrimSuffix(ws.Explain(), "\n"), "\n") {
				b.WriteString("    " + line)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", s.Text)
	if c := s.cond; c != nil {
		what := "ONLY IF IT EXISTS"
		switch s.Write.Cond {
		case catalog.IfNotExists:
			what = "ONLY IF IT DOES NOT EXIST"
		case catalog.IfValues:
			var conds []string
			for _, p := range s.Write.CondPreds {
				conds = append(conds, fmt.Sprintf("%s %s %s", p.Ref.Field, p.Op, lang.PrintExpr(p.Value)))
			}
			what += " AND " + strings.Join(conds, " AND ")
		}
		if s.Write.Cond == catalog.Unconditional {
			fmt.Fprintf(&b, "CLIENT LOCK THE %s TUPLE, READ %s FROM %s (1 ROW), WRITE ONLY IF IT EXISTS: EACH LIST CHANGED BY POSITION OR VALUE REPLACED BY WHAT THE CHANGES MAKE OF IT\n", c.ent.Name, fieldNames(s.readFields), c.t.name)
		} else {
			fmt.Fprintf(&b, "CLIENT LOCK THE %s TUPLE, READ WHETHER IT EXISTS IN %s (1 ROW), WRITE %s\n", c.ent.Name, c.t.name, what)
		}
		if c.t.nkey == 1 {
			fmt.Fprintf(&b, "STORE GUARD: THE BATCH APPLIES ONLY IF THAT ROW OF %s IS AS READ, ELSE READ AND DECIDE AGAIN (STORES WITH GUARDED WRITES)\n", c.t.name)
		}
	}
	for _, up := range s.ups {
		fmt.Fprintf(&b, "%s\n", up.u.Describe())
		explainPartitions(&b, up.t.x)
		explainElements(&b, s.Write, up)
		for _, si := range s.e.schema.Indexes {
			if s.e.schema.Local[si] == up.t.x {
				fmt.Fprintf(&b, "STORE KEEPS LOCAL INDEX %s ON %s IN THE SAME BATCH (NO SUPPORT READ)\n", si.Name, si.AttrName(si.Hash[0]))
			}
		}
		sps := up.supports
		if up.replace != nil {
			sps = append(sps[:len(sps):len(sps)], up.replace)
		}
		for i, sp := range sps {
			fmt.Fprintf(&b, "  support %d: %s\n", i+1, sp.sp.Query.Describe())
			for _, line := range strings.SplitAfter(strings.TrimSuffix(sp.prog.explain(), "\n"), "\n") {
				b.WriteString("    " + line)
			}
			b.WriteString("\n")
		}
	}
	for _, c := range s.checks {
		fmt.Fprintf(&b, "CHECK %s(%s) EXISTS: %s %s = %s (no upkeep reads it)\n", c.what, lang.PrintExpr(c.value), c.ent.Name, c.ent.ID().Name, lang.PrintExpr(c.value))
		fmt.Fprintf(&b, "CLIENT PARALLEL 1-WAY RANGE SCAN OVER %s [%s.%s = %s]\n    SERVER 1 ROW LIMIT\n", c.t.name, c.ent.Name, c.ent.ID().Name, lang.PrintExpr(c.value))
	}
	return b.String()
}

// explainElements says how a write changes the collections stored one
// cell per element of up's index: element cells alone, or the collection
// replaced (its family deleted, its elements put).
func explainElements(b *strings.Builder, w *catalog.Write, up *upkeepProg) {
	if w == nil {
		return
	}
	l := up.t.l
	for _, a := range l.Collections {
		ks := up.assigns[a]
		fam, name := layout.CollectionFamily(a), l.Attrs[a].Name
		if slices.ContainsFunc(ks, func(k int) bool { return w.Set[k].ReadsList() }) {
			fmt.Fprintf(b, "REPLACE %s WITH THE LIST READ, CHANGED: DELETE FAMILY %s OF EACH ROW, PUT ONE CELL PER ELEMENT\n", name, fam)
			continue
		}
		for _, k := range ks {
			explainElementOp(b, w.Set[k], name, fam)
		}
	}
}

// explainElementOp says how assignment as changes the cells of collection
// name, stored one cell per element in family fam.
func explainElementOp(b *strings.Builder, as catalog.Assign, name, fam string) {
	switch {
	case as.Op == lang.AssignValue || as.Op == lang.AssignDelete && as.Key == nil:
		fmt.Fprintf(b, "REPLACE %s: DELETE FAMILY %s OF EACH ROW, PUT ONE CELL PER ELEMENT\n", name, fam)
	case as.Op == lang.AssignRemove || as.Op == lang.AssignDelete:
		fmt.Fprintf(b, "REMOVE ELEMENTS OF %s: DELETE THEIR CELLS IN FAMILY %s (THE COLLECTION IS NOT READ)\n", name, fam)
	case as.Op == lang.AssignElement:
		fmt.Fprintf(b, "SET AN ENTRY OF %s: PUT ITS CELL IN FAMILY %s, OR DELETE IT FOR NULL (THE MAP IS NOT READ)\n", name, fam)
	default:
		fmt.Fprintf(b, "ADD ELEMENTS TO %s: PUT THEIR CELLS IN FAMILY %s (THE COLLECTION IS NOT READ)\n", name, fam)
	}
}

// checkTTL refuses a write USING TTL that the schema cannot expire
// consistently. Cells expire without any upkeep running, and a later
// write cannot know that a tuple's cells will expire (it writes its own
// without expiry): so an expiring tuple must have rows that every later
// write changes alike, or some would outlive the others. An INSERT …
// USING TTL is refused unless every index holding the entity's tuples is
// a column family of the entity alone (a row joining other tuples is
// written anew by CONNECT, and their UPDATEs write their fields into it)
// or a local index of one (its entries follow the cells), keyed by the
// entity's key alone (an UPDATE of a key attribute rewrites a row), and
// all of them hold the same fields (an UPDATE puts the field it sets in
// every row holding it: a row without it would vanish while the others
// stay). An UPDATE … USING TTL takes the same schema: its expiring cells
// are then in every row of the tuple, and vanish from all at once.
func (e *Engine) checkTTL(w *catalog.Write) error {
	if w.TTL == nil {
		return nil
	}
	refuse := func(x *catalog.Index, why string) error {
		return fmt.Errorf("%s … USING TTL: %s %s (%s) %s, so some of a tuple's rows would outlive its expiring cells: a relation's cells expire only where every index holding it is a column family of %s alone, keyed by its key, all holding the same fields", w.Kind, kindName(x), x.Name, x.Describe(), why, w.Entity.Name)
	}
	var first *catalog.Index
	var fields []*catalog.Field
	for _, x := range e.schema.Indexes {
		if !slices.ContainsFunc(x.Graph.Nodes, func(nd catalog.Node) bool { return nd.Entity == w.Entity }) {
			continue
		}
		switch {
		case e.schema.Local[x] != nil:
			continue // the store's entries follow the base's cells
		case x.Kind == catalog.SI:
			return refuse(x, "is a table of its own, whose entry an UPDATE of "+x.AttrName(x.Hash[0])+" writes anew")
		case len(x.Graph.Nodes) > 1:
			return refuse(x, "holds "+w.Entity.Name+" in rows joining other tuples")
		}
		var held []*catalog.Field
		for _, a := range x.Attrs() {
			switch {
			case a.Field == w.Entity.ID():
			case x.InKey(a):
				return refuse(x, "holds "+x.AttrName(a)+" in its key")
			default:
				held = append(held, a.Field)
			}
		}
		slices.SortFunc(held, func(a, b *catalog.Field) int { return strings.Compare(a.Name, b.Name) })
		if first == nil {
			first, fields = x, held
		} else if !slices.Equal(held, fields) {
			return refuse(x, fmt.Sprintf("holds %s where %s holds %s", heldNames(held), first.Name, heldNames(fields)))
		}
	}
	return nil
}

func kindName(x *catalog.Index) string {
	if x.Kind == catalog.SI {
		return "secondary index"
	}
	return "column family"
}
