package exec

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Dataset is entity data: per entity, tuples by key. A value may be
// unknown (Verify without a reference knows only what the indexes store).
type Dataset struct {
	m    *catalog.Model
	recs map[*catalog.Entity]map[string]*record
	// conflicts found while merging copies (Verify without a reference).
	conflicts []Difference
	// byParent caches childrenOf.
	byParent map[*catalog.Nav]map[string][]*record
}

type record struct {
	vals  []types.Value // Entity.Columns order
	known []bool
}

// NewDataset returns an empty dataset over m.
func NewDataset(m *catalog.Model) *Dataset {
	d := &Dataset{m: m, recs: map[*catalog.Entity]map[string]*record{}, byParent: map[*catalog.Nav]map[string][]*record{}}
	for _, e := range m.Entities {
		d.recs[e] = map[string]*record{}
	}
	return d
}

func encKey(e *catalog.Entity, v types.Value) string {
	b, err := keyenc.AppendOrdered(nil, e.ID().Type, v, true)
	if err != nil {
		return "\xff" + types.Format(v)
	}
	return string(b)
}

// Add adds one fully known tuple (Entity.Columns order).
func (d *Dataset) Add(e *catalog.Entity, row []types.Value) {
	known := make([]bool, len(row))
	for i := range known {
		known[i] = true
	}
	d.recs[e][encKey(e, row[e.Column(e.ID())])] = &record{vals: append([]types.Value(nil), row...), known: known}
}

// Len is the number of tuples of e.
func (d *Dataset) Len(e *catalog.Entity) int { return len(d.recs[e]) }

// learn merges what one index row says about one tuple's column.
func (d *Dataset) learn(e *catalog.Entity, key types.Value, col int, v types.Value, where string) {
	k := encKey(e, key)
	r := d.recs[e][k]
	if r == nil {
		r = &record{vals: make([]types.Value, len(e.Columns)), known: make([]bool, len(e.Columns))}
		kc := e.Column(e.ID())
		r.vals[kc], r.known[kc] = key, true
		d.recs[e][k] = r
	}
	if col < 0 {
		return
	}
	if r.known[col] {
		if types.Compare(r.vals[col], v) != 0 {
			d.conflicts = append(d.conflicts, Difference{Index: where, Kind: "stale",
				Row:    fmt.Sprintf("%s %s", e.Name, types.Format(key)),
				Detail: fmt.Sprintf("%s is %s here but %s in another copy", e.Columns[col].Name, types.Format(v), types.Format(r.vals[col]))})
		}
		return
	}
	r.vals[col], r.known[col] = v, true
}

// Difference is one way an index departs from the data it should hold.
type Difference struct {
	Index  string
	Kind   string // missing, extra, stale
	Row    string
	Detail string
}

func (d Difference) String() string {
	s := fmt.Sprintf("%s: %s row %s", d.Index, d.Kind, d.Row)
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	return s
}

// Report is the outcome of Verify.
type Report struct {
	Rows map[string]int // rows read per index
	// Partitions describes the partitions of each column family of the
	// advised schema as stored (seed 002: a partition is what one key
	// lookup reads; Cassandra's guidance keeps them under 100 MB).
	Partitions  map[string]PartitionStats
	Differences []Difference
}

// PartitionStats are the partitions of one column family as stored.
type PartitionStats struct {
	Count   int
	Largest Partition // by bytes
	// Estimate is the bytes of an average partition the model's
	// statistics predict (the advisor's size over its partitions).
	Estimate float64
}

// Partition is one stored partition: its key, its rows, and their bytes
// in the store's terms (row keys, families, qualifiers and values).
type Partition struct {
	Key   string
	Rows  int
	Bytes int64
}

// LargePartition is the size from which verify flags a partition:
// Cassandra's guidance for a partition's size.
const LargePartition = 100 << 20

// Clean reports whether no difference was found.
func (r *Report) Clean() bool { return len(r.Differences) == 0 }

// String writes the report.
func (r *Report) String() string {
	var b strings.Builder
	var names []string
	for n := range r.Rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%-40s %8d rows\n", n, r.Rows[n])
	}
	if len(r.Partitions) > 0 {
		b.WriteString("largest partition of each column family (rows, bytes stored; the model's average):\n")
		for _, n := range names {
			p, ok := r.Partitions[n]
			if !ok || p.Count == 0 {
				continue
			}
			fmt.Fprintf(&b, "%-40s %s  %d rows  %s  (%d partitions; estimate %s)", n, p.Largest.Key, p.Largest.Rows, units.Format(float64(p.Largest.Bytes)), p.Count, units.Format(p.Estimate))
			if p.Largest.Bytes > LargePartition {
				fmt.Fprintf(&b, "  over %s: a large partition", units.Format(LargePartition))
			}
			b.WriteString("\n")
		}
	}
	if r.Clean() {
		b.WriteString("verify: clean\n")
		return b.String()
	}
	fmt.Fprintf(&b, "verify: %d differences\n", len(r.Differences))
	for i, d := range r.Differences {
		if i == 50 {
			fmt.Fprintf(&b, "… and %d more\n", len(r.Differences)-50)
			break
		}
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Reference, if set, is the data the indexes must hold; else it is
	// rebuilt from the indexes themselves.
	Reference *Dataset
	// Progress, when set, is called as indexes are read, then compared.
	Progress func(VerifyEvent)
}

// VerifyEvent is one report of a verify's progress: Step "read" (the
// index's rows are read) or "compare" (the rows it must hold are derived
// and compared).
type VerifyEvent struct {
	Step     string
	Index    string
	Rows     int64 // rows read, or derived, so far
	Estimate int64 // rows expected (an estimate when reading); 0 unknown
	Done     bool  // the step is over for Index, with Rows rows
}

// Verify checks that every index holds exactly the rows its definition
// implies. With a reference dataset the expected rows are computed from it.
// Without one, the entity data is rebuilt from the indexes themselves:
// copies of one value that disagree are stale, and each index must hold
// every row that the data known from all indexes implies for it (rows no
// other index vouches for cannot be told from legitimate ones).
func (e *Engine) Verify(ctx context.Context, opt VerifyOptions) (*Report, error) {
	ctx = store.WithNow(ctx, store.Now(ctx)) // one instant: expiring cells vanish from every index at once
	if e.schema == nil {
		return nil, ErrNoSchema
	}
	ref := opt.Reference
	progress := func(ev VerifyEvent) {
		if opt.Progress != nil {
			opt.Progress(ev)
		}
	}
	rep := &Report{Rows: map[string]int{}, Partitions: map[string]PartitionStats{}}
	actual := map[*catalog.Index]map[string][]types.Value{}
	actualParts := map[*catalog.Index]map[string][]types.Value{} // partition rows
	data := ref
	if data == nil {
		data = NewDataset(e.m)
	}
	for _, x := range e.schema.Indexes {
		if !e.schema.Readable(x) {
			continue
		}
		t := e.tables[x]
		rows := map[string][]types.Value{}
		partRows := map[string][]types.Value{}
		var derr error
		// A partition's rows are contiguous (exec/doc.go): one pass finds
		// each one's size.
		var parts PartitionStats
		if x.Kind == catalog.CF && x.Partitions > 0 {
			parts.Estimate = x.PartitionBytes()
		}
		var cur Partition
		var curKey []byte
		endPartition := func() {
			if cur.Rows > 0 {
				parts.Count++
				if cur.Bytes > parts.Largest.Bytes {
					parts.Largest = cur
				}
			}
		}
		progress(VerifyEvent{Step: "read", Index: x.Name, Estimate: int64(x.Entries)})
		err := e.readIndexRows(ctx, x, &derr, func(r store.Row, vals []types.Value) bool {
			part := t.l.IsPartitionRow(r)
			if part {
				partRows[string(r.Key)] = vals
			} else {
				rows[string(r.Key)] = vals
			}
			if x.Kind == catalog.CF {
				pk, bucket, err := t.partitionOf(r.Key, vals)
				if err != nil {
					derr = err
					return false
				}
				if curKey == nil || string(pk) != string(curKey) {
					endPartition()
					cur, curKey = Partition{Key: t.describePartition(vals, bucket)}, pk
				}
				if !part {
					cur.Rows++
				}
				cur.Bytes += int64(len(r.Key))
				for _, c := range r.Cells {
					cur.Bytes += int64(len(c.Family) + len(c.Qualifier) + len(c.Value))
				}
			}
			if len(rows)%10000 == 0 {
				progress(VerifyEvent{Step: "read", Index: x.Name, Rows: int64(len(rows)), Estimate: int64(x.Entries)})
			}
			switch {
			case ref != nil || x.OnElements(): // an element is not the collection
			case part:
				data.learnStatic(t, vals)
			default:
				data.learnRow(t, vals)
			}
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		rep.Rows[x.Name] = len(rows)
		if x.Kind == catalog.CF {
			endPartition()
			rep.Partitions[x.Name] = parts
		}
		actual[x] = rows
		actualParts[x] = partRows
		progress(VerifyEvent{Step: "read", Index: x.Name, Rows: int64(len(rows)), Done: true})
	}
	rep.Differences = append(rep.Differences, data.conflicts...)
	for _, x := range e.schema.Indexes {
		if !e.schema.Readable(x) {
			continue
		}
		t := e.tables[x]
		progress(VerifyEvent{Step: "compare", Index: x.Name, Estimate: int64(len(actual[x]))})
		want := map[string][]types.Value{}
		wantKnown := map[string][]bool{}
		err := joinRows(data, t, func(vals []types.Value, known []bool) error {
			return e.entriesOf(x, vals, func(vals []types.Value) error {
				k, err := t.appendKey(nil, vals, t.nkey)
				if err != nil {
					return err
				}
				want[string(k)] = vals
				wantKnown[string(k)] = known
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		rep.Differences = append(rep.Differences, t.diffRows(want, wantKnown, actual[x])...)
		if t.l.HasStatic() {
			diffs, err := comparePartitionRows(data, t, actualParts[x])
			if err != nil {
				return nil, err
			}
			rep.Differences = append(rep.Differences, diffs...)
		}
		progress(VerifyEvent{Step: "compare", Index: x.Name, Rows: int64(len(want)), Done: true})
	}
	rep.sortDifferences()
	return rep, nil
}

// sortDifferences orders the differences by index, then row.
func (r *Report) sortDifferences() {
	sort.SliceStable(r.Differences, func(a, b int) bool {
		da, db := r.Differences[a], r.Differences[b]
		if da.Index != db.Index {
			return da.Index < db.Index
		}
		return da.Row < db.Row
	})
}

// partitionOf returns the stored partition of row key, whose values are
// vals: its row-key prefix and, with partition buckets, its bucket (-1
// without), the row key's leading byte (layout.Default).
func (t *table) partitionOf(key []byte, vals []types.Value) (prefix []byte, bucket int, err error) {
	if t.l.OpenSalt(t.nhash) == 0 {
		prefix, err = t.appendKey(nil, vals, t.nhash)
		return prefix, -1, err
	}
	ds := make([]types.Datum, t.nhash)
	for i := range ds {
		ds[i], _ = types.DatumOf(vals[i])
	}
	bucket = int(key[0])
	prefix, err = t.l.AppendKeyPrefixDatumsIn(nil, ds, t.nhash, bucket)
	return prefix, bucket, err
}

// describePartition writes the partition key of a row of t, and its
// bucket unless it is -1.
func (t *table) describePartition(vals []types.Value, bucket int) string {
	parts := make([]string, t.nhash, t.nhash+1)
	for i := range parts {
		parts[i] = t.x.AttrName(t.attrs[i]) + "=" + types.Format(vals[i])
	}
	if bucket >= 0 {
		parts = append(parts, fmt.Sprintf("bucket=%d", bucket))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (t *table) describeKey(vals []types.Value) string {
	parts := make([]string, t.nkey)
	for i := 0; i < t.nkey; i++ {
		parts[i] = t.x.AttrName(t.attrs[i]) + "=" + types.Format(vals[i])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// learnRow merges what one index row says about its tuples and links.
func (d *Dataset) learnRow(t *table, vals []types.Value) {
	g := t.x.Graph
	keyOfNode := make([]types.Value, len(g.Nodes))
	for i, a := range t.attrs {
		if a.Field.Key {
			keyOfNode[a.Node] = vals[i]
		}
	}
	for n, nd := range g.Nodes {
		d.learn(nd.Entity, keyOfNode[n], -1, nil, t.name)
	}
	for i, a := range t.attrs {
		e := g.Nodes[a.Node].Entity
		if a.Field.Key || t.l.Attrs[i].Static {
			continue // a static column is in the partition row (learnStatic)
		}
		if c := e.Column(a.Field); c >= 0 {
			d.learn(e, keyOfNode[a.Node], c, vals[i], t.name)
		}
	}
	// Each edge of the graph is a foreign key value of its to-one side.
	for n := 1; n < len(g.Nodes); n++ {
		nd := g.Nodes[n]
		child, parent := n, nd.Parent
		nav := nd.Via
		if !nav.Many {
			child, parent = nd.Parent, n
		} else {
			nav = nav.Reverse
		}
		e := g.Nodes[child].Entity
		for c, col := range e.Columns {
			if col.Nav == nav {
				d.learn(e, keyOfNode[child], c, keyOfNode[parent], t.name)
			}
		}
	}
}

// tuples is entity data a join reads: a Dataset in memory, or a load's
// staged data on disk. A reader serves one join at a time.
type tuples interface {
	// scan calls fn with every tuple of e.
	scan(e *catalog.Entity, fn func(*record) error) error
	// get returns e's tuple of key, or nil.
	get(e *catalog.Entity, key types.Value) (*record, error)
	// children calls fn with the tuples nav (to-many) reaches from the
	// tuple of key parent; node is the join's graph node they fill (nested
	// walks of one reader use distinct nodes).
	children(node int, nav *catalog.Nav, parent types.Value, fn func(*record) error) error
}

func (d *Dataset) scan(e *catalog.Entity, fn func(*record) error) error {
	for _, r := range d.recs[e] {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (d *Dataset) get(e *catalog.Entity, key types.Value) (*record, error) {
	return d.recs[e][encKey(e, key)], nil
}

func (d *Dataset) children(_ int, nav *catalog.Nav, parent types.Value, fn func(*record) error) error {
	for _, r := range d.childrenOf(nav)[encKey(nav.From, parent)] {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// childrenOf indexes the tuples of nav.To by the key of the tuple of
// nav.From (nav is to-many) that they reference.
func (d *Dataset) childrenOf(nav *catalog.Nav) map[string][]*record {
	if c, ok := d.byParent[nav]; ok {
		return c
	}
	c := map[string][]*record{}
	child := nav.To
	col := -1
	for i, cl := range child.Columns {
		if cl.Nav == nav.Reverse {
			col = i
		}
	}
	keys := make([]string, 0, len(d.recs[child]))
	for k := range d.recs[child] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := d.recs[child][k]
		if col >= 0 && r.known[col] && r.vals[col] != nil {
			pk := encKey(nav.From, r.vals[col])
			c[pk] = append(c[pk], r)
		}
	}
	d.byParent[nav] = c
	return c
}

// partitionRows calls fn with the partition row of every tuple of t's root
// (t has static columns): its key and static columns, and which are known.
func partitionRows(src tuples, t *table, fn func([]types.Value, []bool) error) error {
	root := t.x.Graph.Nodes[0].Entity
	return src.scan(root, func(r *record) error {
		vals := make([]types.Value, len(t.attrs))
		known := make([]bool, len(t.attrs))
		c := root.Column(root.ID())
		vals[0], known[0] = r.vals[c], r.known[c]
		for _, i := range t.l.Static {
			c := root.Column(t.attrs[i].Field)
			vals[i], known[i] = r.vals[c], r.known[c]
		}
		return fn(vals, known)
	})
}

// joinRows calls fn with every row of t implied by the data, and which of
// its values are known.
func joinRows(src tuples, t *table, fn func([]types.Value, []bool) error) error {
	g := t.x.Graph
	colOf := make([]int, len(t.attrs))
	for i, a := range t.attrs {
		colOf[i] = g.Nodes[a.Node].Entity.Column(a.Field)
	}
	fkCol := make([]int, len(g.Nodes)) // to-one nodes: the parent's foreign-key column
	for n := 1; n < len(g.Nodes); n++ {
		fkCol[n] = -1
		for i, cl := range g.Nodes[n].Via.From.Columns {
			if cl.Nav == g.Nodes[n].Via {
				fkCol[n] = i
			}
		}
	}
	recs := make([]*record, len(g.Nodes))
	var walk func(n int) error
	walk = func(n int) error {
		if n == len(g.Nodes) {
			vals := make([]types.Value, len(t.attrs))
			known := make([]bool, len(t.attrs))
			for i, a := range t.attrs {
				r := recs[a.Node]
				vals[i], known[i] = r.vals[colOf[i]], r.known[colOf[i]]
			}
			return fn(vals, known)
		}
		nd := g.Nodes[n]
		parent := recs[nd.Parent]
		if nd.Via.Many {
			return src.children(n, nd.Via, parent.vals[nd.Via.From.Column(nd.Via.From.ID())], func(r *record) error {
				recs[n] = r
				return walk(n + 1)
			})
		}
		col := fkCol[n]
		if col < 0 || !parent.known[col] || parent.vals[col] == nil {
			return nil
		}
		r, err := src.get(nd.Entity, parent.vals[col])
		if err != nil || r == nil {
			return err
		}
		recs[n] = r
		return walk(n + 1)
	}
	return src.scan(g.Nodes[0].Entity, func(r *record) error {
		recs[0] = r
		return walk(1)
	})
}

// readIndexRows calls fn with every row of index x, decoded (a partition
// row, layout.IsPartitionRow, with its key and static columns). A local index
// (catalog.Schema.Local) has no table: its rows are derived from the base
// rows the store's index returns — each one's SI tuple, its row key as an
// SI table would have it — so that verify compares the store's entries
// with the data as it does a table's. A decoding error stops the read
// into *derr.
func (e *Engine) readIndexRows(ctx context.Context, x *catalog.Index, derr *error, fn func(r store.Row, vals []types.Value) bool) error {
	t := e.tables[x]
	b := e.schema.Local[x]
	if b == nil {
		return e.st.ReadRows(ctx, t.name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			vals := make([]types.Value, len(t.attrs))
			if t.l.IsPartitionRow(r) {
				*derr = t.l.DecodePartitionRow(r, vals)
			} else {
				*derr = t.decode(r, vals)
			}
			if *derr != nil {
				return false
			}
			return fn(r, vals)
		})
	}
	bt := e.tables[b]
	bvals := make([]types.Value, len(bt.attrs))
	if x.OnElements() {
		return e.readElementEntries(ctx, x, derr, fn)
	}
	return store.ReadIndex(ctx, e.st, bt.name, x.Name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		if *derr = bt.decode(r, bvals); *derr != nil {
			return false
		}
		vals := make([]types.Value, len(t.attrs))
		for i, a := range t.attrs {
			vals[i] = bvals[bt.pos[a]]
		}
		key, err := t.appendKey(nil, vals, t.nkey)
		if err != nil {
			*derr = err
			return false
		}
		return fn(store.Row{Key: key, Cells: r.Cells}, vals)
	})
}

// readElementEntries is readIndexRows of a local index on a collection's
// elements (catalog.Index.OnElements). A read through it returns base
// rows, not the element each entry is for: so it reads the base rows, and
// for each element they hold, the rows the index returns for it, each as
// the SI row (element, base key …) — the entries of the elements the data
// has. An entry for an element no base row holds is counted apart: the
// index's entries, all read at once, must number as many as those.
func (e *Engine) readElementEntries(ctx context.Context, x *catalog.Index, derr *error, fn func(r store.Row, vals []types.Value) bool) error {
	t, bt := e.tables[x], e.tables[e.schema.Local[x]]
	elemType := t.l.Attrs[0].Type
	bvals := make([]types.Value, len(bt.attrs))
	hpos := bt.pos[x.Hash[0]]
	elems := map[string]types.Value{}
	err := e.st.ReadRows(ctx, bt.name, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		if bt.l.IsPartitionRow(r) {
			return true
		}
		if *derr = bt.decode(r, bvals); *derr != nil {
			return false
		}
		for _, el := range elementsOf(bvals[hpos]) {
			k, err := keyenc.AppendOrdered(nil, elemType, el, false)
			if err != nil {
				*derr = err
				return false
			}
			elems[string(k)] = el
		}
		return true
	})
	if err != nil || *derr != nil {
		return err
	}
	total := 0
	if err := store.ReadIndex(ctx, e.st, bt.name, x.Name, store.All(), store.ReadOptions{}, func(store.Row) bool {
		total++
		return true
	}); err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(elems))
	seen, stop := 0, false
	for _, k := range keys {
		err := store.ReadIndex(ctx, e.st, bt.name, x.Name, store.RowSet{Keys: [][]byte{[]byte(k)}}, store.ReadOptions{}, func(r store.Row) bool {
			if *derr = bt.decode(r, bvals); *derr != nil {
				return false
			}
			seen++
			vals := make([]types.Value, len(t.attrs))
			for i, a := range t.attrs {
				vals[i] = bvals[bt.pos[a]]
			}
			vals[0] = elems[k]
			key, err := t.appendKey(nil, vals, t.nkey)
			if err != nil {
				*derr = err
				return false
			}
			stop = !fn(store.Row{Key: key, Cells: r.Cells}, vals)
			return !stop
		})
		if err != nil || *derr != nil || stop {
			return err
		}
	}
	if total != seen {
		*derr = fmt.Errorf("index %s holds %d entries, %d of them for the elements its base %s holds", x.Name, total, seen, bt.name)
	}
	return nil
}

// entriesOf calls fn with the rows index x holds for vals, one row of the
// query of its rows: that row, except that a local index has no entry
// where its indexed cell is absent (NULL), and an index on a collection's
// elements has one per element (none for NULL).
func (e *Engine) entriesOf(x *catalog.Index, vals []types.Value, fn func([]types.Value) error) error {
	switch {
	case x.OnElements():
		for _, el := range elementsOf(vals[0]) {
			v := slices.Clone(vals)
			v[0] = el
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	case e.schema.Local[x] != nil && vals[0] == nil:
		return nil
	}
	return fn(vals)
}

// elementsOf lists what an index on collection c's elements has entries
// for: a set's elements, a map's keys (none for NULL).
func elementsOf(c types.Value) []types.Value {
	switch v := c.(type) {
	case types.Set:
		return v
	case types.Map:
		out := make([]types.Value, len(v))
		for i, en := range v {
			out[i] = en.Key
		}
		return out
	}
	return nil
}

// learnStatic merges what a partition row says: its root tuple exists, with
// those static columns.
func (d *Dataset) learnStatic(t *table, vals []types.Value) {
	root := t.x.Graph.Nodes[0].Entity
	d.learn(root, vals[0], -1, nil, t.name)
	for _, i := range t.l.Static {
		if c := root.Column(t.attrs[i].Field); c >= 0 {
			d.learn(root, vals[0], c, vals[i], t.name)
		}
	}
}

// comparePartitionRows compares the partition rows of t, got (by row key),
// with those the data implies: one per tuple of the root, holding its
// static columns.
func comparePartitionRows(data tuples, t *table, got map[string][]types.Value) ([]Difference, error) {
	return t.diffPartitions(func(yield func(vals []types.Value, known []bool) error) error {
		return partitionRows(data, t, yield)
	}, got)
}

// diffRows compares the rows t must hold (want, by row key; a value
// known false is not checked, nil known: all are) with those it holds.
func (t *table) diffRows(want map[string][]types.Value, known map[string][]bool, got map[string][]types.Value) []Difference {
	var diffs []Difference
	for k, vals := range want {
		g, ok := got[k]
		if !ok {
			diffs = t.rowDiff(diffs, "missing", vals)
			continue
		}
		var kn []bool
		if known != nil {
			kn = known[k]
		}
		diffs = t.staleDiffs(diffs, vals, g, kn)
	}
	for k, vals := range got {
		if _, ok := want[k]; !ok {
			diffs = t.rowDiff(diffs, "extra", vals)
		}
	}
	return diffs
}

// rowDiff appends the difference of kind ("missing", "extra") of row vals.
func (t *table) rowDiff(diffs []Difference, kind string, vals []types.Value) []Difference {
	return append(diffs, Difference{Index: t.x.Name, Kind: kind, Row: t.describeKey(vals)})
}

// staleDiffs appends a difference for each value of the row t holds (got)
// that is not the one it must hold (want): the row's values, not its
// static columns, and those known says are known (nil: all).
func (t *table) staleDiffs(diffs []Difference, want, got []types.Value, known []bool) []Difference {
	for i := t.nkey; i < len(t.attrs); i++ {
		if (known == nil || known[i]) && !t.l.Attrs[i].Static && types.Compare(got[i], want[i]) != 0 {
			diffs = append(diffs, Difference{Index: t.x.Name, Kind: "stale", Row: t.describeKey(want),
				Detail: fmt.Sprintf("%s is %s, want %s", t.x.AttrName(t.attrs[i]), types.Format(got[i]), types.Format(want[i]))})
		}
	}
	return diffs
}

// keyedRow is an index row, decoded, with its row key.
type keyedRow struct {
	key  []byte
	vals []types.Value
}

// diffSorted is diffRows for rows given as slices: it sorts both by key
// (got is usually read in key order already) and walks them together,
// which costs less than the maps diffRows builds on a large index. Of rows
// with equal keys in want (two tuples of the rows query with one row key),
// one counts, as in diffRows' map.
func (t *table) diffSorted(want, got []keyedRow) []Difference {
	byKey := func(a, b keyedRow) int { return bytes.Compare(a.key, b.key) }
	slices.SortFunc(want, byKey)
	if !slices.IsSortedFunc(got, byKey) {
		slices.SortFunc(got, byKey)
	}
	var diffs []Difference
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		c := 0
		switch {
		case i == len(want):
			c = 1
		case j == len(got):
			c = -1
		default:
			c = bytes.Compare(want[i].key, got[j].key)
		}
		switch {
		case c < 0 && i+1 < len(want) && bytes.Equal(want[i].key, want[i+1].key):
			i++ // the next row with this key counts
		case c < 0:
			diffs = t.rowDiff(diffs, "missing", want[i].vals)
			i++
		case c > 0:
			diffs = t.rowDiff(diffs, "extra", got[j].vals)
			j++
		default:
			if i+1 < len(want) && bytes.Equal(want[i].key, want[i+1].key) {
				i++
				continue
			}
			diffs = t.staleDiffs(diffs, want[i].vals, got[j].vals, nil)
			i++
			j++
		}
	}
	return diffs
}

// diffPartitions compares the partition rows t must hold (each, with the
// values known; nil known: all are) with those it holds (got, by row key).
func (t *table) diffPartitions(each func(yield func(vals []types.Value, known []bool) error) error, got map[string][]types.Value) ([]Difference, error) {
	var diffs []Difference
	want := map[string]bool{}
	describe := func(vals []types.Value) string {
		return t.describePartition(vals, -1) + " (the partition's static columns)"
	}
	err := each(func(vals []types.Value, known []bool) error {
		k, err := t.l.AppendPartitionKey(nil, vals)
		if err != nil {
			return err
		}
		want[string(k)] = true
		g, ok := got[string(k)]
		if !ok {
			diffs = append(diffs, Difference{Index: t.name, Kind: "missing", Row: describe(vals)})
			return nil
		}
		for _, i := range t.l.Static {
			if (known == nil || known[i]) && types.Compare(g[i], vals[i]) != 0 {
				diffs = append(diffs, Difference{Index: t.name, Kind: "stale", Row: describe(vals),
					Detail: fmt.Sprintf("%s is %s, want %s", t.x.AttrName(t.attrs[i]), types.Format(g[i]), types.Format(vals[i]))})
			}
		}
		return nil
	})
	for k, vals := range got {
		if !want[k] {
			diffs = append(diffs, Difference{Index: t.name, Kind: "extra", Row: describe(vals)})
		}
	}
	return diffs, err
}
