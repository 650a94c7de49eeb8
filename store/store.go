// Package store owns the seam between kvschema and the key-value engines: one
// Store interface in the Bigtable/HBase cell model (table, row key, family,
// qualifier, value), the helpers shared by every backend, and opening a store
// from a URL.
//
// Invariants every backend keeps (checked by storetest.Run):
//   - Rows are ordered by their key bytes; cells within a row by (family,
//     qualifier bytes). A row exists exactly while it has at least one cell.
//   - ReadRows returns each selected row at most once, in key order (reverse
//     key order with ReadOptions.Reverse), however the RowSet's keys and
//     ranges overlap, and is one round trip.
//   - Apply is all-or-nothing when Capabilities().AtomicBatch is true: after
//     an error nothing of the batch is visible. Mutations apply in order, so a
//     later mutation of the same cell wins: a SetCell after a DeleteRow of
//     its row, or after a DeleteFamily of its family, in the same batch
//     survives it.
//   - Deletions are exact and idempotent: DeleteCell removes one cell,
//     DeleteFamily every cell of one family of one row (no other family,
//     no other row, whatever their names or keys share as prefixes),
//     DeleteRow every cell of one row. Deleting what is absent (a missing
//     cell, a family with no cells in the row, a row that does not exist)
//     is a no-op. A row whose last cells a deletion removes stops existing.
//   - Slices handed to callbacks may be reused after the callback returns;
//     callers copy what they keep. Slices passed in are not retained. The
//     row ReadRow returns belongs to the caller. Callbacks may call the
//     store.
//   - Family names are non-empty and contain no 0x00 byte.
//   - Close is idempotent; Tables reports each table's families and splits.
//   - Cell expiry (Cassandra's TTL, Capabilities.Expiry): a cell written
//     with Mutation.Expires stops existing for every read from that instant
//     on, as decided against Now(ctx): reads, the conditions of ApplyIf and
//     ApplyGuards and reads through local indexes see it as absent, and a
//     row whose cells have all expired does not exist. A store without the
//     capability refuses such a write (ErrNoExpiry), applying nothing.
//     Expired cells may stay stored until a later write or delete of the
//     cell, or a sweep (Sweeper).
//
// Stores may also implement Snapshotter, to save and restore their whole
// content (checked by storetest.RunSnapshot), Conditional, to change a
// row depending on its content (checked by storetest.RunConditional),
// Guarded, to apply a batch only if rows are as a writer read them
// (checked by storetest.RunGuarded), CellReader, to lend a read's cells
// (checked by storetest.Run against ReadRows), and Indexer, to keep local
// secondary indexes that TableSpec.Indexes declare and to read rows
// through them (checked by storetest.RunIndexer), and Sweeper, to remove
// expired cells for good (checked by storetest.Run).
package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Cell is one value of a row.
type Cell struct {
	Family    string
	Qualifier []byte
	Value     []byte
}

// Row is a row key and its cells, sorted by (Family, Qualifier).
type Row struct {
	Key   []byte
	Cells []Cell
}

// MutationKind says what a Mutation does.
type MutationKind uint8

// The mutation kinds of the Bigtable model. Their values are persisted
// (txnstore's intent log stores each mutation's kind as a byte), so they
// never change: a new kind takes the next value.
const (
	SetCell      MutationKind = iota + 1 // write Value at (Row, Family, Qualifier)
	DeleteCell                           // remove the cell at (Row, Family, Qualifier)
	DeleteRow                            // remove every cell of Row
	DeleteFamily                         // remove every cell of Row in Family (Bigtable's DeleteFromFamily)
)

// Valid reports whether k is one of the mutation kinds above: stores
// refuse a mutation of any other kind before applying anything.
func (k MutationKind) Valid() bool { return k >= SetCell && k <= DeleteFamily }

func (k MutationKind) String() string {
	switch k {
	case SetCell:
		return "SetCell"
	case DeleteCell:
		return "DeleteCell"
	case DeleteRow:
		return "DeleteRow"
	case DeleteFamily:
		return "DeleteFamily"
	}
	return fmt.Sprintf("MutationKind(%d)", uint8(k))
}

// Mutation is one change to one row of one table. Fields a kind does not
// use are ignored (nil, or empty, by convention): a DeleteRow has only
// Table and Row, a DeleteFamily Table, Row and Family.
type Mutation struct {
	Kind      MutationKind
	Table     string
	Row       []byte
	Family    string // SetCell, DeleteCell, DeleteFamily
	Qualifier []byte // SetCell, DeleteCell
	Value     []byte // SetCell
	// Expires, for a SetCell only, is the Unix time in microseconds at
	// which the cell written expires (Cassandra's TTL, as an instant): from
	// then on every read treats it as absent (see Expired). 0: never. A
	// later SetCell without Expires makes the cell permanent again; the
	// deletions remove it as usual. Other kinds ignore it. A store whose
	// Capabilities().Expiry is false refuses a batch with a SetCell whose
	// Expires is not 0 (ErrNoExpiry), applying nothing. Bigtable (Engine
	// "bigtable"), whose timestamps are whole milliseconds, keeps Expires
	// rounded up to the millisecond: such a cell lives until the first
	// whole millisecond at or after Expires.
	Expires int64
}

// Sweeper is a store that removes for good the cells that have expired
// (Mutation.Expires) at Now(ctx): reads skip them already, a sweep frees
// their space (Pebble has no compaction filter to drop them). It deletes a
// cell as DeleteCell would (its local index entries too), and writes may
// run meanwhile: a cell written again after the sweep read it stays. It
// reports the cells removed, per table as it goes.
type Sweeper interface {
	SweepExpired(ctx context.Context, progress func(table string, cells int64)) (int64, error)
}

// ErrNoExpiry is returned (wrapped, with the kind of store or table) for a
// SetCell with Expires on a store that keeps no cell expiry.
var ErrNoExpiry = errors.New("store: this store keeps no cell expiry (TTL)")

// CheckNoExpiry returns an error wrapping ErrNoExpiry, naming what (the
// kind of store), for the first SetCell of muts with Expires, or nil: a
// store without Capabilities().Expiry calls it before applying anything.
func CheckNoExpiry(what string, muts []Mutation) error {
	for i := range muts {
		if m := &muts[i]; m.Kind == SetCell && m.Expires != 0 {
			return fmt.Errorf("%s: mutation %d (%s %q): %w", what, i, m.Table, m.Row, ErrNoExpiry)
		}
	}
	return nil
}

// Expired reports whether a cell written with Mutation.Expires expires
// has expired at now.
func Expired(expires int64, now time.Time) bool {
	return expires != 0 && expires <= now.UnixMicro()
}

type nowKey struct{}

// WithNow returns a context whose reads (and the conditions of ApplyIf
// and ApplyGuards) decide cell expiry at t instead of the current time:
// a reader fixes one instant for several reads, tests move time.
func WithNow(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, nowKey{}, t)
}

// Now is the instant at which a call with ctx decides cell expiry: the
// one WithNow set, else time.Now().
func Now(ctx context.Context) time.Time {
	if t, ok := ctx.Value(nowKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}

// Range is the half-open row-key interval [Start, End). A nil End means
// unbounded above; a nil (or empty) Start means from the first row.
type Range struct {
	Start []byte
	End   []byte
}

// Contains reports whether key lies in r.
func (r Range) Contains(key []byte) bool {
	return bytes.Compare(key, r.Start) >= 0 && (r.End == nil || bytes.Compare(key, r.End) < 0)
}

// Empty reports whether r selects no key at all.
func (r Range) Empty() bool {
	return r.End != nil && bytes.Compare(r.Start, r.End) >= 0
}

// RowSet selects rows by explicit keys and by ranges; a row is selected if it
// matches any of them. The zero RowSet selects nothing; use All() for a full
// scan.
type RowSet struct {
	Keys   [][]byte
	Ranges []Range
}

// All selects every row of a table.
func All() RowSet { return RowSet{Ranges: []Range{{}}} }

// Normalize returns rs as a sorted list of disjoint, non-empty ranges (each
// key k becomes [k, k\x00)). Backends use it to serve a RowSet in one ordered
// pass.
func (rs RowSet) Normalize() []Range {
	out := make([]Range, 0, len(rs.Keys)+len(rs.Ranges))
	for _, k := range rs.Keys {
		out = append(out, Range{Start: k, End: KeySuccessor(k)})
	}
	for _, r := range rs.Ranges {
		if !r.Empty() {
			if r.Start == nil {
				r.Start = []byte{}
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Start, out[j].Start) < 0 })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.End == nil || bytes.Compare(r.Start, last.End) <= 0 {
				if last.End != nil && (r.End == nil || bytes.Compare(r.End, last.End) > 0) {
					last.End = r.End
				}
				continue
			}
		}
		merged = append(merged, r)
	}
	return merged
}

// KeySuccessor is the smallest key greater than k: k followed by 0x00.
func KeySuccessor(k []byte) []byte {
	s := make([]byte, len(k)+1)
	copy(s, k)
	return s
}

// PrefixSuccessor is the smallest key greater than every key with prefix p,
// or nil (unbounded) if there is none (p is empty or all 0xFF).
func PrefixSuccessor(p []byte) []byte {
	if s := AppendPrefixSuccessor(nil, p); len(s) > 0 {
		return s
	}
	return nil
}

// AppendPrefixSuccessor appends PrefixSuccessor(p) to dst and returns the
// extended buffer (dst unchanged when there is no successor).
func AppendPrefixSuccessor(dst, p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xFF {
			n := len(dst)
			dst = append(dst, p[:i+1]...)
			dst[n+i]++
			return dst
		}
	}
	return dst
}

// PrefixRange is the range of all keys starting with p.
func PrefixRange(p []byte) Range {
	return Range{Start: append([]byte{}, p...), End: PrefixSuccessor(p)}
}

// ReadOptions modify a ReadRows call.
type ReadOptions struct {
	Limit   int  // maximum rows returned; 0 means no limit
	Reverse bool // descending key order
}

// TableSpec describes a table to create.
type TableSpec struct {
	Name     string
	Families []string
	Splits   [][]byte // pre-split points (salt buckets, SPLIT ON); advisory
	// Indexes are the table's local secondary indexes, which only a store
	// that is an Indexer keeps (see there); others ignore them.
	Indexes []IndexSpec
}

// IndexSpec declares a local secondary index of a table, of one of two
// kinds. A single-cell index (Elements false) is on the cell (Family,
// Qualifier): the indexed value of a row is the value of that cell, and
// the index has one entry (value, row key) per row that has that cell,
// none for the others. An element index (Elements) is on every cell of
// Family, for collections stored one cell per element (a set's elements
// or a map's entries, each qualifier the order-preserving encoding of an
// element or key): see Elements. Entries are ordered by (indexed value
// bytes, row key bytes). The indexed cell of an entry, the cell it
// follows, is (Family, Qualifier) in a single-cell index and (Family,
// value) in an element index. Name is unique in its table, and one name
// always means the same cells (the same Family, Qualifier and Elements):
// Family is one of the table's families.
type IndexSpec struct {
	Name      string
	Family    string
	Qualifier []byte
	// Elements makes the index one on every cell of Family (Qualifier is then
	// empty): a row's indexed values are the qualifiers of its cells in Family,
	// one entry (qualifier, row key) per cell, so a row has as many entries as
	// the family has cells in it (none when it has none), and a read of
	// several values returns the row once per value it holds.
	Elements bool
}

// ErrNoIndex is returned (wrapped) for a read through an index its table
// does not have.
var ErrNoIndex = errors.New("no such index")

// MergeIndexes checks the indexes a CreateTable declares (add) against a
// table's current ones (old) and its families (after the call's are
// added), and returns the table's indexes after the call (old ones first,
// then the new ones in the order declared) and those it adds. A name
// declared again must name the same cells (Family, Qualifier and
// Elements); names are non-empty; families are the table's; an element
// index has an empty Qualifier. Backends that are Indexers call it from
// CreateTable.
func MergeIndexes(families []string, old, add []IndexSpec) (all, added []IndexSpec, err error) {
	all = slices.Clone(old)
	for _, ix := range add {
		switch {
		case ix.Name == "":
			return nil, nil, errors.New("index with an empty name")
		case ix.Family == "" || strings.IndexByte(ix.Family, 0) >= 0 || !slices.Contains(families, ix.Family):
			return nil, nil, fmt.Errorf("index %q: family %q is not one of the table's %q", ix.Name, ix.Family, families)
		case ix.Elements && len(ix.Qualifier) > 0:
			return nil, nil, fmt.Errorf("index %q: an element index is on every cell of family %s: it has no qualifier, not %q", ix.Name, ix.Family, ix.Qualifier)
		}
		i := slices.IndexFunc(all, func(o IndexSpec) bool { return o.Name == ix.Name })
		if i >= 0 {
			if o := all[i]; o.Family != ix.Family || !bytes.Equal(o.Qualifier, ix.Qualifier) || o.Elements != ix.Elements {
				return nil, nil, fmt.Errorf("index %q is on %s, not %s", ix.Name, o.cells(), ix.cells())
			}
			continue
		}
		ix.Qualifier = bytes.Clone(ix.Qualifier)
		if ix.Qualifier == nil {
			ix.Qualifier = []byte{}
		}
		all = append(all, ix)
		added = append(added, ix)
	}
	return all, added, nil
}

// cells describes the cells ix is on, for errors.
func (ix IndexSpec) cells() string {
	if ix.Elements {
		return fmt.Sprintf("every cell of %s (an element index)", ix.Family)
	}
	return fmt.Sprintf("%s:%q", ix.Family, ix.Qualifier)
}

// CloneIndexes deep-copies index specs (nil stays nil).
func CloneIndexes(ixs []IndexSpec) []IndexSpec {
	if ixs == nil {
		return nil
	}
	out := make([]IndexSpec, len(ixs))
	for i, ix := range ixs {
		out[i] = ix
		out[i].Qualifier = bytes.Clone(ix.Qualifier)
	}
	return out
}

// AppendIndexedValues appends to dst the values a row with cells (sorted,
// as in a Row) has for index ix, in ascending order, and returns the
// extended slice: for a single-cell index the value of its cell (Family,
// Qualifier), if it has one; for an element index the qualifiers of its
// cells in Family. The values are the cells' slices, not copies. The
// index holds one entry (value, row key) per value. Callers that index
// many rows pass the previous result, truncated, as dst.
func (ix IndexSpec) AppendIndexedValues(dst [][]byte, cells []Cell) [][]byte {
	for _, c := range cells {
		switch {
		case c.Family != ix.Family:
		case ix.Elements:
			dst = append(dst, c.Qualifier)
		case bytes.Equal(c.Qualifier, ix.Qualifier):
			return append(dst, c.Value)
		}
	}
	return dst
}

// HasValue reports whether value is one of the indexed values of a row
// with cells in ix (those AppendIndexedValues appends), without collecting
// them. ReadIndex checks so, on an entry's row as read (its live cells),
// that the entry's indexed cell has not expired.
func (ix IndexSpec) HasValue(cells []Cell, value []byte) bool {
	for _, c := range cells {
		if c.Family != ix.Family {
			continue
		}
		if ix.Elements {
			if bytes.Equal(c.Qualifier, value) {
				return true
			}
		} else if bytes.Equal(c.Qualifier, ix.Qualifier) {
			return bytes.Equal(c.Value, value)
		}
	}
	return false
}

// Indexer is implemented by stores that keep the local secondary indexes
// that TableSpec.Indexes declare (the embedded stores; Bigtable has none).
//
// Invariants: after every write that returned (Apply, ApplyIf,
// ApplyGuards, Restore) and after a crash, each index of a table holds
// exactly one entry (value, row key) per indexed value of each row stored
// (IndexSpec.AppendIndexedValues of its stored cells): in a single-cell
// index one per row that has the index's cell stored, value being that
// cell's value; in an element index one per cell of the index's family
// stored in the row, value being the cell's qualifier, whatever its value
// (so setting an element again changes no entry, a DeleteCell removes its
// element's entry, and a DeleteFamily of the family or a DeleteRow every
// entry of the row). Several mutations of one cell or row in a batch leave
// the entries of its final state, as they leave the rows. An expired cell
// (Mutation.Expires) keeps its entry while it is stored; ReadIndex skips
// an entry whose indexed cell has expired at Now(ctx). Writes maintain
// entries in the same atomic step as the rows. What that takes reading —
// the previous values of the single-cell indexes' cells they write or
// delete, the cells of an element index's family that a DeleteFamily or
// DeleteRow removes (a SetCell or DeleteCell of an element reads nothing:
// its entry is its qualifier and row) — the store reads in its own write
// path, ordered against every other writer of the row: no caller reads
// them. CreateTable that adds an index to a table with rows builds its
// entries, as one step with respect to writers. Sweeping expired cells
// (Sweeper) removes their entries too.
//
// Decorators implement it always, and fail with an error wrapping
// errors.ErrUnsupported when their inner store is no Indexer.
type Indexer interface {
	// ReadIndex calls fn, for each entry whose value values selects — its
	// keys are exact values, its ranges value ranges, as a RowSet selects
	// row keys; overlapping ones select an entry once — with the entry's
	// base row (the whole row, as ReadRows delivers it, lent until fn
	// returns), in (value, row key) order, reversed with opts.Reverse, at
	// most opts.Limit times, until fn returns false. So a row comes once
	// per selected value it has: at most once through a single-cell
	// index, once per selected element through an element index, each
	// time counting towards the limit. It reads one consistent state and
	// is one round trip. An index the table lacks fails with ErrNoIndex.
	ReadIndex(ctx context.Context, table, index string, values RowSet, opts ReadOptions, fn func(Row) bool) error
}

// ReadIndex reads through an index with st's Indexer; it fails with an
// error wrapping errors.ErrUnsupported when st is none.
func ReadIndex(ctx context.Context, st Store, table, index string, values RowSet, opts ReadOptions, fn func(Row) bool) error {
	ix, ok := st.(Indexer)
	if !ok {
		return fmt.Errorf("store: %T keeps no indexes: %w", st, errors.ErrUnsupported)
	}
	return ix.ReadIndex(ctx, table, index, values, opts, fn)
}

// Capabilities describe what a backend guarantees.
type Capabilities struct {
	// AtomicBatch: Apply is all-or-nothing across rows and tables: a read
	// sees each row before or after a batch, and once it has seen any row
	// after it, the whole batch.
	AtomicBatch bool
	// SnapshotReads: each ReadRows call reads one consistent state of the
	// table, so it sees a batch in all of its rows or in none (embedded
	// stores; a Bigtable scan reads each row at its own time).
	SnapshotReads bool
	// LocalIndexes: the store keeps the local secondary indexes that
	// TableSpec.Indexes declare and reads through them (Indexer): a
	// schema deployed on it keeps its secondary indexes there, not in
	// tables of their own. A decorator reports it only when it forwards
	// ReadIndex to an inner store that has it.
	LocalIndexes bool
	// Expiry: the store keeps Mutation.Expires, and its reads treat cells
	// expired at Now(ctx) as absent. A store without it refuses a SetCell
	// with Expires (ErrNoExpiry). A decorator reports its inner store's.
	Expiry bool
	// Engine names the kind of engine underneath every decorator:
	// "pebble", "bigtable" or "mem" ("" when unknown). An advised schema
	// records the engine it was advised for (its target); deploying it on
	// another kind is warned about.
	Engine string
}

// Store is a wide-column key-value engine in the Bigtable/HBase cell model.
// Every method is one round trip to the engine. Implementations are safe for
// concurrent use.
type Store interface {
	// CreateTable creates a table, or adds missing families to an existing
	// one (and, in an Indexer, missing indexes). It is idempotent.
	CreateTable(ctx context.Context, spec TableSpec) error
	// Tables lists the tables in name order.
	Tables(ctx context.Context) ([]TableSpec, error)
	// ReadRow reads one row; ok is false if it has no cells.
	ReadRow(ctx context.Context, table string, key []byte) (row Row, ok bool, err error)
	// ReadRows calls fn for every row selected by rs, in key order, until fn
	// returns false, the limit is reached or an error occurs.
	ReadRows(ctx context.Context, table string, rs RowSet, opts ReadOptions, fn func(Row) bool) error
	// Apply applies the mutations in order (atomically where the backend can).
	// Mutations of a table that does not exist fail with ErrNoTable.
	Apply(ctx context.Context, muts []Mutation) error
	Capabilities() Capabilities
	Close() error
}

// Snapshotter is implemented by stores that can save their whole content and
// later go back to it: benchmarks restore the store between runs that write,
// so that every run starts from the same data.
//
// Decorators (which cannot implement an interface only when their inner
// store does) implement it always, and their Snapshot fails with an error
// wrapping errors.ErrUnsupported when the inner store is no Snapshotter.
type Snapshotter interface {
	// Snapshot saves the store's current content: every table, with its
	// families and splits, and every row. Writes that returned before
	// Snapshot was called are in it.
	Snapshot(ctx context.Context) (Snapshot, error)
}

// Viewer is implemented by stores that can read from a point in time: a
// View sees the store's rows as they were when View was called, whatever
// is written after, until it is closed (a read-only transaction's
// snapshot). The embedded stores implement it (pebblestore with one Pebble
// iterator, memstore with copy-on-write trees); Bigtable has no
// point-in-time reads.
type Viewer interface {
	View(ctx context.Context) (View, error)
}

// View is a read-only Store fixed at a point in time (see Viewer). Every
// write through it fails with ErrReadOnly. Tables lists the store's
// current tables; rows of a table created after the view are not in it.
// Close releases what the view pins; a store may wait for its views to be
// closed before it closes or restores a snapshot. A View is safe for
// concurrent use, and a read callback may read it. It may have the read
// capabilities of its store (CellReader).
type View interface {
	Store
}

// ErrReadOnly is the error of a write through a View.
var ErrReadOnly = errors.New("store: the view is read-only")

// Snapshot is a saved content of a store.
type Snapshot interface {
	// Restore makes the store's content exactly what it was when the
	// snapshot was taken: tables created since are gone, families added
	// since are dropped, rows written since are undone. Each call running
	// meanwhile sees the content from before Restore or the restored one,
	// never a mix. Restore may wait for running calls, so it must not be
	// called from a ReadRows callback. The Store value stays usable, and a
	// snapshot can be restored any number of times, until the store is
	// closed.
	Restore(ctx context.Context) error
	// Release frees the snapshot's resources (memory, files); Restore
	// fails after it. Releasing twice is harmless.
	Release() error
}

// Cond is a condition on one cell of a row: it holds when the row has the
// cell (Family, Qualifier) and Min <= its value < Max, bytewise (a nil Max
// is no upper bound).
type Cond struct {
	Family    string
	Qualifier []byte
	Min, Max  []byte
}

// Holds reports whether cond holds for row r.
func (c Cond) Holds(r Row) bool {
	for _, cell := range r.Cells {
		if cell.Family == c.Family && bytes.Equal(cell.Qualifier, c.Qualifier) {
			return bytes.Compare(cell.Value, c.Min) >= 0 && (c.Max == nil || bytes.Compare(cell.Value, c.Max) < 0)
		}
	}
	return false
}

// TableDropper is implemented by stores that delete a table with every
// row it holds in one step (an embedded store's range deletion, Bigtable's
// DeleteTable): a migration drops the table of an index it removed so,
// instead of deleting its rows one by one. Dropping a table that does not
// exist does nothing.
type TableDropper interface {
	DropTable(ctx context.Context, name string) error
}

// Conditional is implemented by stores that can change one row depending on
// its current content, atomically (Bigtable's CheckAndMutateRow, HBase's
// checkAndMutate). Stores that are atomic per row only build consistency
// across rows on it (package txnstore).
type Conditional interface {
	// ApplyIf applies then to the row if cond holds for it, else
	// otherwise, as one atomic step; matched reports whether cond held.
	// Every mutation must be of this table and row. It is one round trip.
	ApplyIf(ctx context.Context, table string, row []byte, cond Cond, then, otherwise []Mutation) (matched bool, err error)
}

// ChangeCounter is implemented by stores that see every write made to
// them, such as an embedded store one process has open: a reader that
// cached what it read of a table can tell whether the table may have
// changed since, without reading it again.
type ChangeCounter interface {
	// Changed returns a number that differs from every earlier one for
	// table after each write to it is applied and when the table is
	// created or replaced (0 while it does not exist). ok is false when
	// the store cannot tell (writes may bypass it): read again.
	Changed(table string) (n uint64, ok bool)
}

// CellReader is implemented by stores that can lend a read's cells in the
// engine's own memory instead of assembling rows (an embedded store's
// iterator): the typed read path decodes each cell where it lies.
//
// ReadCells selects what ReadRows(ctx, table, rs, opts) selects, with the
// same order of rows, limit and round trip, and calls fn with each cell of
// each row, first being true for the first cell of a row, until fn returns
// false. A row's cells come in (family, qualifier) order, or in reverse
// reads in either that order or its reverse. row and the cell's Qualifier
// and Value are lent: valid only until fn returns.
type CellReader interface {
	ReadCells(ctx context.Context, table string, rs RowSet, opts ReadOptions, fn func(row []byte, c Cell, first bool) bool) error
}

// ReadCells reads cells with st's CellReader if it has one, else from the
// rows of ReadRows.
func ReadCells(ctx context.Context, st Store, table string, rs RowSet, opts ReadOptions, fn func(row []byte, c Cell, first bool) bool) error {
	if cr, ok := st.(CellReader); ok {
		return cr.ReadCells(ctx, table, rs, opts, fn)
	}
	return st.ReadRows(ctx, table, rs, opts, func(r Row) bool {
		for i, c := range r.Cells {
			if !fn(r.Key, c, i == 0) {
				return false
			}
		}
		return true
	})
}

// Guard is a condition on the current content of one row (Guarded). Holds
// gets the row as stored when the batch would apply — its cells, none when
// the row is absent, lent: valid only during the call — and decides.
type Guard struct {
	Table string
	Row   []byte
	Holds func(cells []Cell) bool
}

// Guarded is implemented by stores that apply a batch only if a condition
// on one row holds, as one step for every writer of the store, in every
// process that shares it: no write of the row comes between the check and
// the batch. A read-modify-write (a lightweight transaction) guards the
// batch with "the row I decided on is unchanged". Decorators implement it
// always, and fail with an error wrapping errors.ErrUnsupported when their
// inner store is none; so do stores that can offer it only in part.
type Guarded interface {
	// ApplyGuards applies muts, all-or-nothing, if every guard holds, as
	// one step — no write of any guard's row comes between its check and
	// the batch; applied reports whether it did. Guards may be on rows of
	// any tables. It asks the guards in order and stops at the first that
	// refuses: when it applies nothing, the last guard asked refused (a
	// store that tries again, as txnstore, asks again). With no guard it
	// applies muts. A batch that keeps many rows (a migration's catch-up
	// deleting the markers it recomputed) pays one guarded step instead
	// of one per row.
	ApplyGuards(ctx context.Context, gs []Guard, muts []Mutation) (applied bool, err error)
}

// ApplyGuards applies muts under gs with st's Guarded;
// supported is false (and nothing is written) when st offers none.
func ApplyGuards(ctx context.Context, st Store, gs []Guard, muts []Mutation) (applied, supported bool, err error) {
	g, ok := st.(Guarded)
	if !ok {
		return false, false, nil
	}
	applied, err = g.ApplyGuards(ctx, gs, muts)
	if errors.Is(err, errors.ErrUnsupported) {
		return false, false, nil
	}
	return applied, true, err
}

// SameCells reports whether a and b hold the same cells in the same order.
func SameCells(a, b []Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Family != b[i].Family || !bytes.Equal(a[i].Qualifier, b[i].Qualifier) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// RowWriter is implemented by stores whose Apply pays for atomicity across
// rows (txnstore: locks and an intent per batch) and that can write rows
// without it. ApplyRows applies each row's mutations atomically and the
// rows independently: after an error any subset of them may be written.
// Loads use it for rows no one reads or writes meanwhile.
type RowWriter interface {
	ApplyRows(ctx context.Context, muts []Mutation) error
}

// ApplyRows writes muts with st's RowWriter if it has one, else with Apply.
func ApplyRows(ctx context.Context, st Store, muts []Mutation) error {
	if rw, ok := st.(RowWriter); ok {
		return rw.ApplyRows(ctx, muts)
	}
	return st.Apply(ctx, muts)
}

// MutationChecker is implemented by stores that reject some mutations
// (row keys or names their engine does not accept), so that layers which
// must not fail halfway (txnstore) can refuse a batch before writing any of
// it.
type MutationChecker interface {
	// CheckMutations reports the first mutation the store would reject.
	CheckMutations(muts []Mutation) error
}

// GroupByRow splits muts into the mutations of each (table, row), keeping
// their order within a row and the rows' order of first appearance: the
// unit a store atomic per row applies at once.
func GroupByRow(muts []Mutation) [][]Mutation {
	var out [][]Mutation
	index := map[string]int{}
	for _, m := range muts {
		id := m.Table + "\x00" + string(m.Row)
		i, ok := index[id]
		if !ok {
			i = len(out)
			index[id] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	return out
}

// CheckRowMutations checks that every mutation of muts is of (table, row),
// as ApplyIf requires.
func CheckRowMutations(table string, row []byte, muts []Mutation) error {
	for i, m := range muts {
		if m.Table != table || !bytes.Equal(m.Row, row) {
			return fmt.Errorf("conditional mutation %d: %s row %q is not the checked row %s %q", i, m.Table, m.Row, table, row)
		}
	}
	return nil
}

// ErrNoTable is returned (wrapped) for operations on a table that does not exist.
var ErrNoTable = errors.New("no such table")

// ErrClosed is returned by operations on a closed store.
var ErrClosed = errors.New("store is closed")

// Opener opens a store from the part of a URL after "scheme:".
type Opener func(ctx context.Context, rest string) (Store, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register makes a backend available under a URL scheme. Backends call it
// from init.
func Register(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[scheme]; dup {
		panic("store: Register called twice for scheme " + scheme)
	}
	openers[scheme] = open
}

// Open opens a store URL such as "mem:" or "pebble:/path/to/dir". The backend
// package must be imported (package store/all imports all of them).
func Open(ctx context.Context, url string) (Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok {
		return nil, fmt.Errorf("store URL %q: want SCHEME:…, e.g. mem: or pebble:DIR", url)
	}
	openersMu.RLock()
	open := openers[scheme]
	openersMu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("store URL %q: unknown scheme %q (known: %s)", url, scheme, strings.Join(Schemes(), ", "))
	}
	return open(ctx, rest)
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// CloneRow deep-copies a row, for callers that keep rows past a callback.
func CloneRow(r Row) Row {
	out := Row{Key: append([]byte(nil), r.Key...), Cells: make([]Cell, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = Cell{Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Value: append([]byte(nil), c.Value...)}
	}
	return out
}
