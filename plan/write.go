package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// WriteKind is what a write does to the tuples it finds or is given.
type WriteKind uint8

// Write kinds.
const (
	WriteUpsert WriteKind = iota + 1 // INSERT: replace the tuples with the same keys
	WriteUpdate                      // UPDATE: change the tuples the read finds
	WriteDelete                      // DELETE: remove the tuples the read finds
)

// Write is the plan of a write statement on one relation: which tuples it
// writes or how it finds them, which it locks first, and the cells it
// changes in every layout (Mutations). The executor (exec.Engine.Apply)
// runs exactly what it says; Explain prints it.
type Write struct {
	Relation *catalog.Relation
	Kind     WriteKind
	// Tuples (WriteUpsert) are the tuples, in the relation's types; ReadOld
	// says their stored tuples are read first (NeedsOld).
	Tuples  [][]types.Value
	ReadOld bool
	// Read (WriteUpdate, WriteDelete) finds the tuples to change; Keys are
	// the keys its WHERE fixes, each in the order of Relation.KeyIdx,
	// locked before it reads (nil: the tuples it finds are locked after,
	// and read again).
	Read *Plan
	Keys [][]types.Value
	// Sets (WriteUpdate) are the assignments, in statement order.
	Sets []Set
	// Cond makes the write conditional (a lightweight transaction): nil
	// for an unconditional one.
	Cond *Cond
	// TTL (USING TTL, upserts and updates) is the seconds after which the
	// cells the write puts expire; 0: never.
	TTL int64
	// Partitions (WriteDelete of a relation with static columns) are the
	// partitions a DELETE whose WHERE is the partition key's equalities
	// alone deletes whole, static values included, as Cassandra's
	// partition deletion: tuples with the partition key attributes set.
	// Any other DELETE leaves the static values.
	Partitions [][]types.Value
}

// ttl evaluates a USING TTL clause (nil: none).
func ttl(e lang.Expr, args []types.Value) (int64, error) {
	if e == nil {
		return 0, nil
	}
	v, err := Literal(e, args)
	if err != nil {
		return 0, err
	}
	n, err := catalog.TTLSeconds(v)
	if err != nil {
		return 0, errAt(e.Pos(), "%v", err)
	}
	return n, nil
}

// Cond is the condition of a conditional write: the write names one tuple
// (by the key of its one tuple, or by a WHERE fixing the whole key), reads
// it under its lock and applies only if
//   - NotExists (INSERT … IF NOT EXISTS): no tuple has that key;
//   - Exists (IF EXISTS): the tuple exists;
//   - else (IF Expr): the tuple exists and Expr, bound to the relation,
//     holds of it (an UPDATE or DELETE changes no tuple that does not
//     exist, so a condition on a missing one is false).
//
// As Cassandra's, a write that does not apply reports the values it was
// decided on: Columns are those attributes (every one for IF NOT EXISTS,
// none for IF EXISTS, those Expr reads for IF Expr).
type Cond struct {
	NotExists, Exists bool
	Expr              lang.Expr
	Columns           []int
}

// Holds reports whether the condition lets the write apply to current, the
// stored tuple (nil: none).
func (c *Cond) Holds(rel *catalog.Relation, current []types.Value) bool {
	switch {
	case c.NotExists:
		return current == nil
	case current == nil:
		return false
	case c.Exists:
		return true
	}
	t := make([]types.Datum, len(current))
	for i, v := range current {
		t[i], _ = types.DatumOf(v)
	}
	return Eval(c.Expr, rel, t)
}

// condition plans the IF clause of an UPDATE or DELETE of w, whose WHERE
// must name one tuple.
func (w *Write) condition(c *lang.Condition, args []types.Value) error {
	if c == nil {
		return nil
	}
	rel := w.Relation
	if len(w.Keys) != 1 {
		var keys []string
		for _, k := range rel.KeyIdx {
			keys = append(keys, rel.Attrs[k].Name+" = ?")
		}
		return errAt(c.At, "a conditional write names one tuple: its WHERE must fix every key attribute of %s by equality (%s)", rel.Name, strings.Join(keys, " AND "))
	}
	if c.Exists {
		w.Cond = &Cond{Exists: true}
		return nil
	}
	bound, err := Bind(c.Expr, rel, args)
	if err != nil {
		return err
	}
	w.Cond = &Cond{Expr: bound, Columns: appendRefs(nil, rel, bound)}
	return nil
}

// appendRefs appends the attributes bound expression e reads, each once,
// in order of appearance.
func appendRefs(dst []int, rel *catalog.Relation, e lang.Expr) []int {
	switch x := e.(type) {
	case *lang.ColumnRef:
		if a := rel.AttrIndex(x.Name); a >= 0 && !slices.Contains(dst, a) {
			dst = append(dst, a)
		}
	case *lang.Binary:
		dst = appendRefs(appendRefs(dst, rel, x.L), rel, x.R)
	case *lang.Not:
		dst = appendRefs(dst, rel, x.X)
	case *lang.IsNull:
		dst = appendRefs(dst, rel, x.X)
	case *lang.Contains:
		dst = appendRefs(appendRefs(dst, rel, x.X), rel, x.Elem)
	case *lang.In:
		dst = appendRefs(dst, rel, x.X)
		for _, v := range x.List {
			dst = appendRefs(dst, rel, v)
		}
	case *lang.Between:
		dst = appendRefs(appendRefs(appendRefs(dst, rel, x.X), rel, x.Lo), rel, x.Hi)
	}
	return dst
}

// Set is one assignment of an UPDATE.
type Set struct {
	Attr  int
	Value types.Value
}

// New returns the tuple that replaces old: old with the assignments made
// (a fresh slice), or nil for a delete.
func (w *Write) New(old []types.Value) []types.Value {
	if w.Kind == WriteDelete {
		return nil
	}
	nt := append([]types.Value(nil), old...)
	for _, s := range w.Sets {
		nt[s.Attr] = s.Value
	}
	return nt
}

// Literal is the value of a literal or parameter expression, as INSERT
// and SET take them.
func Literal(e lang.Expr, args []types.Value) (types.Value, error) {
	switch x := e.(type) {
	case *lang.Literal:
		return x.Value, nil
	case *lang.Param:
		return Arg(args, x)
	}
	return nil, errAt(e.Pos(), "expected a value or ?")
}

// Insert plans an INSERT: its rows as full tuples of the relation's types.
// Omitted attributes are NULL; key attributes must be given.
func Insert(st *lang.Insert, rel *catalog.Relation, args []types.Value) (*Write, error) {
	cols := make([]int, 0, len(rel.Attrs))
	rows, columns := st.Rows, st.Columns
	if len(st.Connect) > 0 {
		// AND CONNECT TO fk(v) sets the foreign-key attribute fk: in the
		// client a relationship is stored as the referencing attribute.
		row := append([]lang.Expr(nil), st.Rows[0]...)
		columns = append([]string(nil), st.Columns...)
		for _, c := range st.Connect {
			columns = append(columns, c.FK)
			row = append(row, c.Value)
		}
		rows = [][]lang.Expr{row}
	}
	if columns == nil {
		for i := range rel.Attrs {
			cols = append(cols, i)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range columns {
			a := rel.AttrIndex(c)
			if a < 0 {
				return nil, lang.UnknownAt(st.At, "relation %s has no attribute %s", rel.Name, c)
			}
			if seen[a] {
				return nil, errAt(st.At, "attribute %s is listed twice", c)
			}
			seen[a] = true
			cols = append(cols, a)
		}
	}
	w := &Write{Relation: rel, Kind: WriteUpsert, ReadOld: NeedsOld(rel), Tuples: make([][]types.Value, 0, len(rows))}
	var err error
	if w.TTL, err = ttl(st.TTL, args); err != nil {
		return nil, err
	}
	backing := make([]types.Value, len(rows)*len(rel.Attrs)) // one allocation for all tuples
	for _, row := range rows {
		at := st.At
		if len(row) > 0 {
			at = row[0].Pos()
		}
		if len(row) != len(cols) {
			return nil, errAt(at, "INSERT INTO %s: %d values for %d attributes", rel.Name, len(row), len(cols))
		}
		t := backing[:len(rel.Attrs):len(rel.Attrs)]
		backing = backing[len(rel.Attrs):]
		for i, e := range row {
			v, err := Literal(e, args)
			if err != nil {
				return nil, err
			}
			a := rel.Attrs[cols[i]]
			if t[cols[i]], err = types.Coerce(v, a.Type); err != nil {
				return nil, errAt(e.Pos(), "attribute %s: %v", a.Name, err)
			}
		}
		for _, k := range rel.KeyIdx {
			if t[k] == nil {
				return nil, errAt(at, "INSERT INTO %s: key attribute %s needs a value", rel.Name, rel.Attrs[k].Name)
			}
		}
		w.Tuples = append(w.Tuples, t)
	}
	if st.IfNotExists {
		if len(w.Tuples) != 1 {
			return nil, errAt(st.At, "IF NOT EXISTS makes an insert of one tuple conditional: write one row of VALUES")
		}
		all := make([]int, len(rel.Attrs))
		for i := range all {
			all[i] = i
		}
		w.Cond, w.ReadOld = &Cond{NotExists: true, Columns: all}, true
	}
	return w, nil
}

// Update plans an UPDATE: the read of the tuples to change (chosen under
// m), the keys its WHERE fixes, and the assignments. Key attributes
// cannot be assigned.
func Update(st *lang.Update, rel *catalog.Relation, args []types.Value, m cost.Model) (*Write, error) {
	w := &Write{Relation: rel, Kind: WriteUpdate}
	var err error
	if w.TTL, err = ttl(st.TTL, args); err != nil {
		return nil, err
	}
	for _, a := range st.Set {
		i := rel.AttrIndex(a.Column)
		if i < 0 {
			return nil, lang.UnknownAt(a.At, "relation %s has no attribute %s", rel.Name, a.Column)
		}
		if rel.Attrs[i].Key {
			return nil, errAt(a.At, "cannot UPDATE key attribute %s (DELETE and INSERT instead)", a.Column)
		}
		if a.Op != lang.AssignValue {
			return nil, errAt(a.At, "%s of relation %s is a %s, replaced whole: only a collection stored one cell per element, in a model's relation, changes element by element", a.Column, rel.Name, rel.Attrs[i].Type)
		}
		v, err := Literal(a.Value, args)
		if err != nil {
			return nil, err
		}
		if v, err = types.Coerce(v, rel.Attrs[i].Type); err != nil {
			return nil, errAt(a.Value.Pos(), "attribute %s: %v", a.Column, err)
		}
		w.Sets = append(w.Sets, Set{Attr: i, Value: v})
	}
	if _, err := w.find(st.Where, args, m); err != nil {
		return nil, err
	}
	return w, w.condition(st.If, args)
}

// Delete plans a DELETE: the read of the tuples to remove (chosen under
// m) and the keys its WHERE fixes.
func Delete(st *lang.Delete, rel *catalog.Relation, args []types.Value, m cost.Model) (*Write, error) {
	w := &Write{Relation: rel, Kind: WriteDelete}
	for _, a := range st.Columns {
		// DELETE c FROM …: c becomes NULL, the rows stay (CQL's).
		w.Kind = WriteUpdate
		i := rel.AttrIndex(a.Column)
		switch {
		case i < 0:
			return nil, lang.UnknownAt(a.At, "relation %s has no attribute %s", rel.Name, a.Column)
		case rel.Attrs[i].Key:
			return nil, errAt(a.At, "DELETE cannot delete key attribute %s (delete the row instead: DELETE FROM …)", a.Column)
		case a.Key != nil:
			return nil, errAt(a.At, "%s of relation %s is a %s, replaced whole: only a collection stored one cell per element, in a model's relation, loses an element", a.Column, rel.Name, rel.Attrs[i].Type)
		}
		w.Sets = append(w.Sets, Set{Attr: i})
	}
	bound, err := w.find(st.Where, args, m)
	if err != nil {
		return nil, err
	}
	if w.Kind == WriteDelete && st.If == nil {
		w.Partitions = wholePartitions(bound, rel)
	}
	return w, w.condition(st.If, args)
}

// find plans the read of an UPDATE or DELETE, and returns its bound WHERE.
func (w *Write) find(where lang.Expr, args []types.Value, m cost.Model) (lang.Expr, error) {
	bound, err := Bind(where, w.Relation, args)
	if err != nil {
		return nil, err
	}
	if w.Read, err = Reads(bound, w.Relation, m); err != nil {
		return nil, err
	}
	w.Keys, _ = FixedKeys(bound, w.Relation)
	return bound, nil
}

// wholePartitions returns the partitions a DELETE's bound WHERE names
// whole, for Write.Partitions: where rel has static columns and the WHERE
// is, in each of its disjuncts, an equality (or IN) on every partition key
// attribute and nothing else; nil otherwise.
func wholePartitions(where lang.Expr, rel *catalog.Relation) [][]types.Value {
	var part []int
	statics := false
	for i, a := range rel.Attrs {
		if a.Partition {
			part = append(part, i)
		}
		statics = statics || a.Static
	}
	if !statics || len(part) == 0 || where == nil {
		return nil
	}
	cs, ok := DNF(where)
	if !ok {
		return nil
	}
	var out [][]types.Value
	for _, c := range cs {
		// Each atom must fix one partition key attribute: anything else
		// (a clustering key, a value, a range) makes it a row deletion.
		for _, atom := range c {
			cons, unsat := ConstraintsOf(Conjunct{atom}, rel)
			if unsat {
				break // the disjunct holds of nothing: it names no partition
			}
			fixes := 0
			for a, k := range cons {
				if k == nil {
					continue
				}
				if !k.Fixed() || !rel.Attrs[a].Partition {
					return nil
				}
				fixes++
			}
			if fixes != 1 {
				return nil
			}
		}
		cons, unsat := ConstraintsOf(c, rel)
		if unsat {
			continue
		}
		tuples := [][]types.Value{make([]types.Value, len(rel.Attrs))}
		for _, a := range part {
			if !cons[a].Fixed() {
				return nil
			}
			var next [][]types.Value
			for _, t := range tuples {
				for _, v := range cons[a].Points {
					u := slices.Clone(t)
					u[a] = v
					next = append(next, u)
				}
			}
			if len(out)+len(next) > maxFixedKeys {
				return nil
			}
			tuples = next
		}
		out = append(out, tuples...) // a partition named twice is deleted twice
	}
	return out
}

// Explain describes the write in the vocabulary of the read plans: the
// read first, then what is locked and changed in which layouts.
func (w *Write) Explain() (string, error) {
	rel := w.Relation
	var b strings.Builder
	switch w.Kind {
	case WriteUpsert:
		changes := make([]Change, len(w.Tuples))
		for i, t := range w.Tuples {
			changes[i].New = t
		}
		muts, err := Mutations(rel, changes)
		if err != nil {
			return "", err
		}
		switch {
		case w.Cond != nil:
			b.WriteString("CLIENT LOCK THE KEY, READ ITS TUPLE: WRITE ONLY IF NONE EXISTS\n")
			explainGuard(&b, rel)
		case w.ReadOld:
			fmt.Fprintf(&b, "CLIENT READ OLD VALUES OF %d KEYS (an index-like layout is addressed by a non-key attribute)\n", len(w.Tuples))
		}
		fmt.Fprintf(&b, "UPSERT %d ROWS INTO %s: %d MUTATIONS OVER %s IN 1 ATOMIC BATCH\n", len(w.Tuples), rel.Name, len(muts), layoutNames(rel))
	default:
		b.WriteString(w.Read.Explain())
		if w.Keys != nil {
			fmt.Fprintf(&b, "CLIENT LOCK %d KEYS FIXED BY THE WHERE, THEN READ\n", len(w.Keys))
		} else {
			b.WriteString("CLIENT LOCK THE KEYS READ, THEN READ THEM AGAIN\n")
		}
		switch c := w.Cond; {
		case c == nil:
		case c.Exists:
			b.WriteString("CLIENT WRITE ONLY IF THE TUPLE EXISTS\n")
		default:
			fmt.Fprintf(&b, "CLIENT WRITE ONLY IF THE TUPLE EXISTS AND %s\n", lang.PrintExpr(c.Expr))
		}
		if w.Cond != nil && len(w.Keys) == 1 {
			explainGuard(&b, rel)
		}
		what := "DELETE OLD CELLS"
		verb := "DELETE"
		if w.Kind == WriteUpdate {
			what, verb = "DELETE OLD CELLS, PUT NEW CELLS", "UPDATE"
		}
		if len(w.Partitions) > 0 {
			what += fmt.Sprintf(", DELETE THE STATIC CELLS OF %d PARTITION", len(w.Partitions))
			if len(w.Partitions) > 1 {
				what += "S"
			}
		}
		fmt.Fprintf(&b, "%s MATCHING ROWS OF %s: %s OVER %s IN 1 ATOMIC BATCH\n", verb, rel.Name, what, layoutNames(rel))
	}
	return b.String(), nil
}

// explainGuard says how a conditional write on rel meets writers of other
// processes (exec's guarded batch): through the tuple's row in its first
// layout addressed by key, if any.
func explainGuard(b *strings.Builder, rel *catalog.Relation) {
	if x := rel.KeyIndex(); x != nil {
		fmt.Fprintf(b, "STORE GUARD: THE BATCH APPLIES ONLY IF THE TUPLE'S ROW OVER %s IS AS READ, ELSE READ AND DECIDE AGAIN (STORES WITH GUARDED WRITES)\n", x.Name)
		return
	}
	b.WriteString("NO STORE GUARD: NO LAYOUT IS ADDRESSED BY THE KEY (WRITERS OF OTHER PROCESSES ARE NOT CHECKED)\n")
}

func layoutNames(rel *catalog.Relation) string {
	var names []string
	for _, x := range rel.Indexes {
		if x.WriteOnly {
			names = append(names, x.Name+" (WRITE-ONLY)")
			continue
		}
		names = append(names, x.Name)
	}
	return strings.Join(names, ", ")
}

// Change replaces Old by New: Old nil is an insert, New nil a delete.
// Assigned marks the attributes an UPDATE assigns (nil for others): the
// static columns it writes whatever Old holds, and, in a layout that keeps
// each of them in a cell of its own (layout.InPlace), the only cells it
// writes. Expires (store.Mutation.Expires; 0: never) is the expiry of the
// cells the change puts: an insert's every cell, an update's assigned
// ones.
//
// A change with neither Old nor New, and Partition set (a tuple with the
// partition key attributes set: Write.Partitions), deletes that
// partition's static values in every layout.
type Change struct {
	Old, New  []types.Value
	Assigned  []bool
	Expires   int64
	Partition []types.Value
}

// Assigned marks the attributes the write assigns (UPDATE), for
// Change.Assigned; nil for other writes.
func (w *Write) Assigned() []bool {
	if w.Kind != WriteUpdate {
		return nil
	}
	out := make([]bool, len(w.Relation.Attrs))
	for _, s := range w.Sets {
		out[s.Attr] = true
	}
	return out
}

// Mutations turns changes into the store mutations for every layout of the
// relation: the old tuple's cells are deleted, then the new tuple's cells
// written (a later mutation of the same cell wins, so unchanged cells end up
// rewritten, not lost). For a blind upsert (Old unknown) only NULL branch
// cells are deleted: valid when no layout places a non-key attribute in its
// cell coordinates (see NeedsOld). An update whose assigned attributes a
// layout keeps in cells of their own changes only those cells there (as
// Cassandra's UPDATE: the tuple's other cells keep their expiry); an
// update with an expiry refuses a layout it would rewrite (its every cell
// would expire there, and only the assigned ones elsewhere).
func Mutations(rel *catalog.Relation, changes []Change) ([]store.Mutation, error) {
	return AppendMutations(make([]store.Mutation, 0, len(changes)*len(rel.Indexes)), new(layout.Arena), rel, changes)
}

// AppendMutations is Mutations appending to muts and encoding into arena.
func AppendMutations(muts []store.Mutation, arena *layout.Arena, rel *catalog.Relation, changes []Change) ([]store.Mutation, error) {
	del := func(cs []layout.Cell) { muts = layout.AppendMutations(muts, nil, cs) }
	for _, ch := range changes {
		for _, x := range rel.Indexes {
			l := x.Layout()
			if ch.Partition != nil {
				if l.HasStatic() {
					c, err := l.StaticRow(ch.Partition)
					if err != nil {
						return nil, err
					}
					del([]layout.Cell{c})
				}
				continue
			}
			if ch.Assigned != nil && ch.Old != nil && ch.New != nil {
				if l.InPlace(ch.Assigned) {
					var err error
					if muts, err = updateInPlace(muts, l, ch); err != nil {
						return nil, err
					}
					continue
				}
				if ch.Expires != 0 {
					return nil, fmt.Errorf("UPDATE … USING TTL: layout %s keeps an assigned attribute in its row key or in a cell with others, where the TTL would expire the whole tuple: give it attr_name/attr_value cells, or write the tuple again with INSERT … USING TTL", l.Name)
				}
			}
			if ch.Old != nil {
				cells, err := l.AllCells(ch.Old)
				if err != nil {
					return nil, err
				}
				del(cells)
			}
			if ch.New == nil {
				continue
			}
			if l.HasStatic() {
				var err error
				if muts, err = staticMutations(muts, l, ch); err != nil {
					return nil, err
				}
			}
			puts, nulls, err := l.PutCellsArena(ch.New, arena)
			if err != nil {
				return nil, err
			}
			if ch.Old == nil {
				del(nulls)
			}
			n := len(muts)
			muts = layout.AppendMutations(muts, puts, nil)
			Expire(muts[n:], ch.Expires)
		}
	}
	return muts, nil
}

// updateInPlace appends the mutations of an update of the attributes
// ch.Assigned marks, which l keeps in cells of their own: those cells
// (with ch.Expires), the existence marker if the update leaves none
// (without: the tuple lives on), and its static columns.
func updateInPlace(muts []store.Mutation, l *layout.Layout, ch Change) ([]store.Mutation, error) {
	if l.HasStatic() {
		var err error
		if muts, err = staticMutations(muts, l, ch); err != nil {
			return nil, err
		}
	}
	puts, deletes, err := l.UpdateCells(ch.New, ch.Assigned)
	if err != nil {
		return nil, err
	}
	marker := true // the puts are the marker alone unless an assigned value is not NULL
	for a, set := range ch.Assigned {
		if set && !l.Attrs[a].Static && ch.New[a] != nil {
			marker = false
		}
	}
	n := len(muts)
	muts = layout.AppendMutations(muts, puts, deletes)
	if !marker && ch.Expires != 0 {
		Expire(muts[n:], ch.Expires)
		// The row outlives the cells that expire, as the tuple does in
		// every layout: its marker, without expiry.
		c, err := l.MarkerCell(ch.New)
		if err != nil {
			return nil, err
		}
		muts = layout.AppendMutations(muts, []layout.Cell{c}, nil)
	}
	return muts, nil
}

// Expire gives the cells muts put the expiry expires (none for 0): the
// writes of a statement USING TTL.
func Expire(muts []store.Mutation, expires int64) {
	if expires == 0 {
		return
	}
	for i := range muts {
		if muts[i].Kind == store.SetCell {
			muts[i].Expires = expires
		}
	}
}

// staticMutations appends the writes of a change's static columns to
// their partition's row in l: those an update assigns (Change.Assigned;
// without it, those that differ from the tuple read), or an insert's
// non-NULL ones. A static column is the partition's: an insert that
// leaves it NULL, or a delete, leaves the partition's value, as in
// Cassandra.
func staticMutations(muts []store.Mutation, l *layout.Layout, ch Change) ([]store.Mutation, error) {
	changed := make([]bool, len(l.Attrs))
	some := false
	for _, a := range l.Static {
		switch {
		case ch.Assigned != nil:
			changed[a] = ch.Assigned[a]
		case ch.Old == nil:
			changed[a] = ch.New[a] != nil
		default:
			changed[a] = types.Compare(ch.Old[a], ch.New[a]) != 0
		}
		some = some || changed[a]
	}
	if !some {
		return muts, nil
	}
	puts, deletes, err := l.StaticCells(ch.New, changed)
	if err != nil {
		return nil, err
	}
	n := len(muts)
	muts = layout.AppendMutations(muts, puts, deletes)
	Expire(muts[n:], ch.Expires)
	return muts, nil
}

// NeedsOld reports whether an upsert must read the tuple it replaces: some
// layout addresses cells by a non-key attribute (an index-like layout), so
// the old value's cells sit elsewhere and must be deleted.
func NeedsOld(rel *catalog.Relation) bool {
	for _, x := range rel.Indexes {
		if x.Layout().CoordinatesUseNonKey() {
			return true
		}
	}
	return false
}
