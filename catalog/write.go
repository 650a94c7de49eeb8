package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// WriteKind classifies an entity-level write.
type WriteKind uint8

// Write kinds.
const (
	Insert WriteKind = iota + 1
	Update
	Delete
	Connect
	Disconnect
)

var writeNames = [...]string{Insert: "INSERT", Update: "UPDATE", Delete: "DELETE", Connect: "CONNECT", Disconnect: "DISCONNECT"}

func (k WriteKind) String() string { return writeNames[k] }

// Assign is one field set by an INSERT or UPDATE, or changed by one of
// CQL's operations on the elements of a collection stored one cell per
// element (Op; Key is a map's key).
type Assign struct {
	Field *Field
	Value lang.Expr // nil for AssignDelete
	Op    lang.AssignOp
	Key   lang.Expr
}

// OperandType is the type a's Value takes: the field's for AssignValue; a
// collection of the field's kind for elements added, removed or
// prepended, except a map's keys removed (a SET of its keys); a map's
// value type for AssignElement.
func (a Assign) OperandType() types.Type {
	t := a.Field.Type
	switch {
	case a.Op == AssignValue:
		return t
	case a.Op == lang.AssignElement:
		return t.Elem()
	case a.Op == lang.AssignRemove && t.Kind() == types.MapKind:
		return types.SetOf(t.Key())
	}
	return t
}

// KeyType is the type of a's Key: a map's key type, a list's position
// (BIGINT, from 0), or a set's element type.
func (a Assign) KeyType() types.Type {
	switch t := a.Field.Type; t.Kind() {
	case types.MapKind:
		return t.Key()
	case types.ListKind:
		return types.BigInt
	}
	return a.Field.Type.Elem()
}

// ReadsList reports whether a changes a list's elements by position
// (l[i] = v, DELETE l[i]) or by value (l = l - [v, …]): operations that
// need the list as stored, which the write reads from the tuple it names
// (Write.ReadsTuple), as Cassandra reads it.
func (a Assign) ReadsList() bool {
	return a.Field.Type.Kind() == types.ListKind && perElement(a.Field.Type) &&
		(a.Op == lang.AssignElement || a.Op == lang.AssignRemove || a.Op == lang.AssignDelete && a.Key != nil)
}

// AssignValue is an Assign's Op when the value is replaced whole.
const AssignValue = lang.AssignValue

// perElement reports whether a value of type t is a collection stored one
// cell per element (non-frozen), which only operations on its elements
// change in place and only CONTAINS tests.
func perElement(t types.Type) bool { return t.IsCollection() && !t.IsFrozen() }

// resolveAssign checks an UPDATE's assignment, or a DELETE's column, of
// field f.
func resolveAssign(f *Field, a lang.Assignment) (Assign, error) {
	as := Assign{Field: f, Value: a.Value, Op: a.Op, Key: a.Key}
	t := f.Type
	if a.Op != lang.AssignValue && !(a.Op == lang.AssignDelete && a.Key == nil) {
		if !perElement(t) {
			what := "not a collection"
			if t.IsCollection() {
				what = "frozen: one value, replaced whole (" + f.Name + " = …)"
			}
			return Assign{}, errAt(a.At, "%s has no elements to change: it is a %s, %s", f, t, what)
		}
		kind := t.Kind()
		switch {
		case kind == types.SetKind && (a.Op == lang.AssignElement || a.Op == lang.AssignDelete):
			return Assign{}, errAt(a.At, "%s is a %s: a set's elements are added and removed (%s = %s + {…}, %s = %s - {…})", f, t, f.Name, f.Name, f.Name, f.Name)
		case kind != types.ListKind && a.Op == lang.AssignPrepend:
			as.Op = lang.AssignAdd // v + s is s + v for a set or map
		}
	}
	if a.Op == lang.AssignDelete {
		if f.Key {
			return Assign{}, errAt(a.At, "DELETE cannot delete the key %s (delete the row instead: DELETE FROM …)", f)
		}
		if a.Key != nil {
			if err := checkValueOf(f, as.KeyType(), a.Key); err != nil {
				return Assign{}, err
			}
		}
		return as, nil
	}
	if a.Key != nil {
		if err := checkValueOf(f, as.KeyType(), a.Key); err != nil {
			return Assign{}, err
		}
	}
	return as, checkValueOf(f, as.OperandType(), a.Value)
}

// Link is one relationship set by INSERT … AND CONNECT TO nav(value).
type Link struct {
	Nav   *Nav // a to-one navigation leaving the inserted entity
	Value lang.Expr
}

// Write is an INSERT, UPDATE, DELETE, CONNECT or DISCONNECT resolved against
// a model. Its predicates range over Graph, whose root is Entity.
type Write struct {
	Kind   WriteKind
	Entity *Entity
	Graph  *Graph
	Set    []Assign
	Links  []Link
	Preds  []Pred    // UPDATE and DELETE: which tuples; CONNECT: the key
	Nav    *Nav      // CONNECT and DISCONNECT: the relationship
	Target lang.Expr // CONNECT and DISCONNECT: the other side's key
	Stmt   lang.Statement
	// Cond makes the write conditional on whether the one tuple it names
	// exists (a lightweight transaction).
	Cond WriteCond
	// Key is that tuple's key: the value an INSERT gives its key field,
	// or the one an UPDATE's or DELETE's WHERE fixes it to (Cond only).
	Key lang.Expr
	// CondPreds (IfValues) must all hold of the tuple's stored fields.
	CondPreds []Pred
	// TTL (USING TTL) is the seconds after which the cells the write puts
	// expire (a literal or parameter; nil: never): INSERT and UPDATE.
	TTL lang.Expr
}

// MaxTTL is the longest TTL, Cassandra's: 20 years, in seconds.
const MaxTTL = 20 * 365 * 24 * 60 * 60

// TTLSeconds checks a TTL's value (USING TTL n): a whole number of seconds
// from 1 to MaxTTL; NULL (a parameter bound to nothing) means none (0).
func TTLSeconds(v types.Value) (int64, error) {
	if v == nil {
		return 0, nil
	}
	n, err := types.Coerce(v, types.BigInt)
	if err != nil {
		return 0, fmt.Errorf("USING TTL takes a number of seconds: %v", err)
	}
	if s := n.(int64); s < 1 || s > MaxTTL {
		return 0, fmt.Errorf("USING TTL %d: a TTL is 1 to %d seconds (20 years)", s, MaxTTL)
	}
	return n.(int64), nil
}

// checkTTL checks a USING TTL clause's expression.
func checkTTL(e lang.Expr) error {
	switch x := e.(type) {
	case nil, *lang.Param:
		return nil
	case *lang.Literal:
		if _, err := TTLSeconds(x.Value); err != nil {
			return errAt(x.At, "%v", err)
		}
		return nil
	}
	return errAt(e.Pos(), "USING TTL takes a number of seconds or '?'")
}

// CondFields lists the fields a conditional write's condition compares,
// each once, in order of appearance (none for IF [NOT] EXISTS).
func (w *Write) CondFields() []*Field {
	var out []*Field
	for _, p := range w.CondPreds {
		if !slices.Contains(out, p.Ref.Field) {
			out = append(out, p.Ref.Field)
		}
	}
	return out
}

// ReadsTuple reports whether w reads the one tuple it names (Key) before
// it writes, under the tuple's lock: a conditional write, or one that
// changes a list's elements by position or value (Assign.ReadsList).
func (w *Write) ReadsTuple() bool {
	if w.Cond != Unconditional {
		return true
	}
	for _, a := range w.Set {
		if a.ReadsList() {
			return true
		}
	}
	return false
}

// ReadFields lists the fields w reads of the tuple it names: CondFields,
// then the lists it changes by position or value, each once.
func (w *Write) ReadFields() []*Field {
	out := w.CondFields()
	for _, a := range w.Set {
		if a.ReadsList() && !slices.Contains(out, a.Field) {
			out = append(out, a.Field)
		}
	}
	return out
}

// CondSource reports whether x can answer the read w makes of the tuple it
// names (ReadsTuple): a column family of w's entity alone, partitioned by
// its key alone, holding every field it reads (ReadFields). The runtime
// reads the tuple from such a family, one row under the tuple's lock; the
// advisor plans the read as one step over one.
func (w *Write) CondSource(x *Index) bool {
	if !w.ReadsTuple() || !x.KeyedBy(w.Entity) {
		return false
	}
	for _, f := range w.ReadFields() {
		if !x.Has(Attr{Node: 0, Field: f}) {
			return false
		}
	}
	return true
}

// CondQuery is the read w makes of the tuple it names (ReadsTuple), as a
// query the advisor can cost: the fields it reads (the key for IF [NOT]
// EXISTS) of w's entity, by key. Its plans are one read of a family
// w.CondSource accepts (Query.CondOf).
func (m *Model) CondQuery(w *Write) (*Query, error) {
	e := w.Entity
	var sel []string
	for _, f := range w.ReadFields() {
		sel = append(sel, e.Name+"."+f.Name)
	}
	if len(sel) == 0 {
		sel = append(sel, e.Name+"."+e.ID().Name)
	}
	src := fmt.Sprintf("SELECT %s FROM %s WHERE %s.%s = ?", strings.Join(sel, ", "), e.Name, e.Name, e.ID().Name)
	st, err := lang.ParseStatement("condition", src)
	if err != nil {
		return nil, err
	}
	q, err := m.ResolveSelect(st.(*lang.Select))
	if err != nil {
		return nil, err
	}
	q.CondOf = w
	return q, nil
}

// WriteCond is what a conditional write requires of the tuple it names.
type WriteCond uint8

// Conditions of a write.
const (
	Unconditional WriteCond = iota
	IfNotExists             // INSERT … IF NOT EXISTS
	IfExists                // UPDATE or DELETE … IF EXISTS
	IfValues                // UPDATE or DELETE … IF a = ? AND …: the tuple exists and CondPreds hold
)

// SetsField reports whether the write assigns f.
func (w *Write) SetsField(f *Field) bool {
	for _, a := range w.Set {
		if a.Field == f {
			return true
		}
	}
	return false
}

// LinksNav reports whether an INSERT connects the new tuple along nav.
func (w *Write) LinksNav(nav *Nav) bool {
	for _, l := range w.Links {
		if l.Nav == nav {
			return true
		}
	}
	return false
}

// ResolveWrite resolves an INSERT, UPDATE, DELETE, CONNECT or DISCONNECT.
func (m *Model) ResolveWrite(st lang.Statement) (*Write, error) {
	w, err := m.resolveWrite(st)
	if err != nil {
		return nil, err
	}
	return w, m.condition(w, st)
}

// condition resolves the IF clause of a write: IF NOT EXISTS, or, on an
// UPDATE or DELETE whose WHERE fixes the key by equality (the one tuple it
// names), IF EXISTS or IF followed by a conjunction of comparisons of the
// relation's own fields with values.
func (m *Model) condition(w *Write, st lang.Statement) error {
	var c *lang.Condition
	switch s := st.(type) {
	case *lang.Insert:
		if s.IfNotExists {
			w.Cond = IfNotExists
			for _, a := range w.Set {
				if a.Field.Key {
					w.Key = a.Value
				}
			}
		}
		return nil
	case *lang.Update:
		c = s.If
	case *lang.Delete:
		c = s.If
	}
	if c == nil && !w.ReadsTuple() {
		return nil
	}
	for _, p := range w.Preds {
		if p.Op == Eq && p.Ref.Node == 0 && p.Ref.Field == w.Entity.ID() {
			w.Key = p.Value
		}
	}
	if w.Key == nil {
		if c == nil {
			return errAt(st.Pos(), "changing a list's elements by position or value reads the list of the one tuple the write names: the WHERE must fix %s by equality (%s = ?)", w.Entity.ID(), w.Entity.ID())
		}
		return errAt(c.At, "a conditional write names one tuple: the WHERE must fix %s by equality (%s = ?)", w.Entity.ID(), w.Entity.ID())
	}
	if c == nil {
		return nil
	}
	if c.Exists {
		w.Cond = IfExists
		return nil
	}
	// On a graph of its own: the condition must not add to the write's.
	r := &resolver{m: m, g: &Graph{Nodes: slices.Clone(w.Graph.Nodes)}, clause: "the IF condition of a write on a model's relation"}
	preds, err := r.conjuncts(c.Expr)
	if err != nil {
		return err
	}
	if len(r.g.Nodes) > 1 {
		return errAt(c.At, "a write's condition may only name attributes of %s", w.Entity.Name)
	}
	for _, p := range preds {
		if p.Ref.Field.Key {
			return errAt(p.At, "the condition tests the key %s, which the WHERE fixes", p.Ref.Field)
		}
	}
	w.Cond, w.CondPreds = IfValues, preds
	return nil
}

func (m *Model) resolveWrite(st lang.Statement) (*Write, error) {
	switch s := st.(type) {
	case *lang.Insert:
		w, err := m.insert(s)
		if err != nil {
			return nil, err
		}
		w.TTL = s.TTL
		return w, checkTTL(s.TTL)
	case *lang.Update:
		w, r, err := m.start(Update, s.Relation, s.RelationAt.Or(s.At), st)
		if err != nil {
			return nil, err
		}
		if err := checkTTL(s.TTL); err != nil {
			return nil, err
		}
		w.TTL = s.TTL
		for _, a := range s.Set {
			f := w.Entity.Field(a.Column)
			switch {
			case f == nil && w.Entity.Nav(a.Column) != nil:
				return nil, errAt(a.At, "%s is a relationship: change it with CONNECT/DISCONNECT", a.Column)
			case f == nil:
				return nil, lang.UnknownAt(a.At, "relation %s has no attribute %s", w.Entity.Name, a.Column)
			case f.Key:
				return nil, errAt(a.At, "UPDATE cannot change the key %s (delete and insert instead)", f)
			}
			as, err := resolveAssign(f, a)
			if err != nil {
				return nil, err
			}
			w.Set = append(w.Set, as)
		}
		return w, m.where(w, r, s.Where)
	case *lang.Delete:
		kind := Delete
		if len(s.Columns) > 0 {
			kind = Update // DELETE c, m[k] FROM …: the rows stay
		}
		w, r, err := m.start(kind, s.Relation, s.RelationAt.Or(s.At), st)
		if err != nil {
			return nil, err
		}
		for _, a := range s.Columns {
			f := w.Entity.Field(a.Column)
			if f == nil {
				return nil, lang.UnknownAt(a.At, "relation %s has no attribute %s", w.Entity.Name, a.Column)
			}
			as, err := resolveAssign(f, a)
			if err != nil {
				return nil, err
			}
			w.Set = append(w.Set, as)
		}
		return w, m.where(w, r, s.Where)
	case *lang.Connect:
		kind := Connect
		if s.Disconnect {
			kind = Disconnect
		}
		w, _, err := m.start(kind, s.Relation, s.RelationAt.Or(s.At), st)
		if err != nil {
			return nil, err
		}
		if w.Nav = w.Entity.Nav(s.To.FK); w.Nav == nil {
			return nil, errAt(s.To.At, "relation %s has no relationship %s (its relationships: %s)", w.Entity.Name, s.To.FK, navNames(w.Entity))
		}
		if err := checkValue(w.Entity.ID(), s.Key); err != nil {
			return nil, err
		}
		if err := checkValue(w.Nav.To.ID(), s.To.Value); err != nil {
			return nil, err
		}
		w.Preds = []Pred{{Ref: FieldRef{Node: 0, Field: w.Entity.ID()}, Op: Eq, Value: s.Key, At: s.At}}
		w.Target = s.To.Value
		return w, nil
	}
	return nil, errAt(st.Pos(), "%s is not a write", lang.Print(st))
}

func (m *Model) start(kind WriteKind, rel string, at lang.Pos, st lang.Statement) (*Write, *resolver, error) {
	e := m.Entity(rel)
	if e == nil {
		return nil, nil, lang.UnknownAt(at, "unknown relation %s", rel)
	}
	g := &Graph{Nodes: []Node{{Entity: e, Parent: -1, Alias: e.Name}}}
	return &Write{Kind: kind, Entity: e, Graph: g, Stmt: st}, &resolver{m: m, g: g}, nil
}

func (m *Model) where(w *Write, r *resolver, e lang.Expr) error {
	preds, err := r.conjuncts(e)
	if err != nil {
		return err
	}
	if len(r.g.Nodes) > 1 {
		return errAt(e.Pos(), "a %s's WHERE may only name attributes of %s", w.Kind, w.Entity.Name)
	}
	w.Preds = preds
	return nil
}

func (m *Model) insert(s *lang.Insert) (*Write, error) {
	w, _, err := m.start(Insert, s.Relation, s.RelationAt.Or(s.At), s)
	if err != nil {
		return nil, err
	}
	if len(s.Rows) != 1 {
		return nil, errAt(s.At, "a workload INSERT inserts one tuple (found %d rows)", len(s.Rows))
	}
	cols := s.Columns
	if cols == nil {
		// INSERT INTO r VALUES (…): every attribute, in declaration order.
		for _, c := range w.Entity.Columns {
			cols = append(cols, c.Name)
		}
	}
	if len(cols) != len(s.Rows[0]) {
		return nil, errAt(s.At, "INSERT INTO %s: %d values for %d attributes", s.Relation, len(s.Rows[0]), len(cols))
	}
	seen := map[string]bool{}
	add := func(name string, v lang.Expr, at lang.Pos) error {
		if seen[name] {
			return errAt(at, "attribute %s is set twice", name)
		}
		seen[name] = true
		if f := w.Entity.Field(name); f != nil {
			if err := checkValue(f, v); err != nil {
				return err
			}
			w.Set = append(w.Set, Assign{Field: f, Value: v})
			return nil
		}
		nav := w.Entity.Nav(name)
		if nav == nil || nav.Many {
			return lang.UnknownAt(at, "relation %s has no attribute or foreign key %s", w.Entity.Name, name)
		}
		if err := checkValue(nav.To.ID(), v); err != nil {
			return err
		}
		w.Links = append(w.Links, Link{Nav: nav, Value: v})
		return nil
	}
	for i, c := range cols {
		if err := add(c, s.Rows[0][i], s.Rows[0][i].Pos()); err != nil {
			return nil, err
		}
	}
	for _, c := range s.Connect {
		if err := add(c.FK, c.Value, c.At); err != nil {
			return nil, err
		}
	}
	if !w.SetsField(w.Entity.ID()) {
		return nil, errAt(s.At, "INSERT INTO %s must set its key %s", s.Relation, w.Entity.ID().Name)
	}
	return w, nil
}

func checkValue(f *Field, v lang.Expr) error { return checkValueOf(f, f.Type, v) }

// checkValueOf checks that v, given for field f, is a value of type t or a
// parameter.
func checkValueOf(f *Field, t types.Type, v lang.Expr) error {
	switch x := v.(type) {
	case *lang.Param:
		return nil
	case *lang.Literal:
		if _, err := types.Coerce(x.Value, t); err != nil {
			return errAt(x.At, "%s: %v", f, err)
		}
		return nil
	}
	return errAt(v.Pos(), "%s takes a value or '?'", f)
}
