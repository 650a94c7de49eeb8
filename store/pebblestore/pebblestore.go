// Package pebblestore owns kvschema's Store on Pebble, an embedded LSM
// engine: one Pebble database holds every table of a store.
//
// Key layout:
//
//	'm' + table name                                     → table metadata (JSON: families, splits, indexes)
//	't' + enc(table) + enc(row) + family + 0x00 + qualifier → cell value (see below)
//	'i' + enc(table) + enc(index) + enc(value) + row        → empty (an index entry)
//
// An index entry's value is the indexed value: the value of the indexed
// cell in a single-cell index, the element (the cell's qualifier) in an
// element index (store.IndexSpec.Elements).
//
// enc escapes each 0x00 as 0x00 0xFF and ends with 0x00 0x01. It keeps byte
// order and no encoding is a prefix of another, so
//   - a table's rows sort by key bytes, and the rows [a, b) are exactly the
//     keys in ['t'+enc(table)+enc(a), 't'+enc(table)+enc(b));
//   - an index's entries sort by (value, row key), and the entries of the
//     values [a, b) are exactly the keys in ['i'+enc(table)+enc(index)+enc(a),
//     'i'+enc(table)+enc(index)+enc(b));
//   - a row's cells are contiguous, under 't'+enc(table)+enc(row), sorted
//     by (family, qualifier): family names contain no 0x00 (CreateTable and
//     Apply reject those that do), so the 0x00 after the family sorts below
//     any longer family.
//
// Cell values and expiry (store.Mutation.Expires): a table whose metadata
// has "expiry": true — every table created since cell expiry exists —
// stores each value behind a one-byte header: 0x00 then the value (a cell
// that never expires), or 0x01, the Expires instant (Unix µs, 8 bytes big
// endian), then the value. A table without the flag, created by an earlier
// version, keeps raw values as before and refuses a SetCell with Expires
// (store.ErrNoExpiry, naming the table: recreate it, or copy its rows into
// a new table, to keep expiring cells in it). Reads check the flag once
// per table and the header byte per value, and skip the cells expired at
// store.Now(ctx): a row all of whose cells expired is not read, and
// ReadCells lends values past their header, uncopied. Expired cells stay
// on disk (Pebble has no compaction filter) until a write or delete of the
// cell, or a sweep (SweepExpired). Index entries follow the stored cells,
// expired or not (index.go), and ReadIndex skips an entry whose indexed
// cell expired.
//
// Invariants, besides those of package store:
//   - Apply is one Pebble batch, committed atomically (AtomicBatch); unless
//     the store was opened with NoSync it is durable when Apply returns.
//     DeleteRow is one range deletion over the row's prefix, DeleteFamily
//     one over the family's cells in the row ('t' + enc(table) + enc(row) +
//     family + 0x00 up to the same with 0x01 in place of the 0x00: family
//     names have no 0x00, so no key of another family lies between).
//   - Apply maintains the entries of the indexes (store.Indexer) in the
//     same batch as the rows (see index.go): the commit is atomic and the
//     WAL replays whole batches, so no crash separates an entry from its
//     row. It reads the previous values of the indexed cells it changes,
//     and the elements (cells) a DeleteFamily or DeleteRow removes from an
//     element index's family, from the database, holding the locks of
//     those rows (rowLocks), which every writer of an indexed cell or of
//     an element index's family takes, so none commits between that read
//     and this commit.
//   - ApplyGuards reads its guard rows and commits holding
//     their locks, which every writer of a row of a guarded table takes.
//   - CreateTable writes the table's metadata in one write; an in-memory
//     copy, loaded at Open, answers every table lookup.
//   - The database's Comparer orders keys bytewise but splits a data key
//     after its row (see comparer), so that a row is a Pebble prefix.
//   - A ReadRows call reads through one Pebble iterator (one consistent
//     snapshot): exact keys only, sorted, with a prefix seek per key;
//     otherwise re-bounded for each normalized range. ReadRow is one
//     prefix seek.
//   - Reads and Apply reuse spare readers: ReadRows allocates nothing per
//     row, ReadRow allocates only the row it returns. A spare reader keeps
//     its iterator for the next call until an Apply, flush or compaction
//     makes it stale (see reader), so a read sees every Apply that
//     returned before it started; Close closes the spare iterators.
//   - Close waits for running calls (so it must not be called from a
//     ReadRows callback); calls after it fail with store.ErrClosed.
//   - Snapshot is a Pebble checkpoint in a new directory next to the
//     database's, DIR.snapshot-N/db (sstables hard-linked, so it is cheap
//     and shares their disk space). Restore holds new calls back while it
//     waits for the running ones (else a steady stream of calls could put
//     it off forever), closes the database, replaces DIR's files with a
//     copy of the checkpoint's and opens it again; the Store value stays
//     usable. So, like Close, Restore must not be called from a ReadRows
//     callback; and a ReadRows callback that calls the store while a
//     Restore waits would wait for the Restore, which waits for the scan: do
//     not restore while such scans run (benchmarks restore between runs).
//     If the process dies during a Restore, DIR may be left half copied;
//     the snapshot's directory still holds the whole content, as a Pebble
//     database. If a Restore fails once it has closed the database, the
//     store stays closed.
//
// URLs: "pebble:DIR" opens the database in DIR, creating it if needed;
// "pebble:DIR?sync=false" skips the fsync of each write: faster, but the
// latest writes may be lost in a crash.
package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/store"
)

func init() {
	store.Register("pebble", func(_ context.Context, rest string) (store.Store, error) {
		dir, opts, err := parseURL(rest)
		if err != nil {
			return nil, err
		}
		return Open(dir, opts)
	})
}

// parseURL parses the part of a pebble URL after "pebble:".
func parseURL(rest string) (dir string, opts Options, err error) {
	dir, query, _ := strings.Cut(rest, "?")
	if dir == "" {
		return "", opts, fmt.Errorf("store URL %q: want pebble:DIR[?sync=false][&cache=SIZE]", "pebble:"+rest)
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return "", opts, fmt.Errorf("store URL %q: %w", "pebble:"+rest, err)
	}
	for k, v := range params {
		val := v[len(v)-1]
		switch k {
		case "sync":
			sync, err := strconv.ParseBool(val)
			if err != nil {
				return "", opts, fmt.Errorf("store URL %q: sync=%q: want true or false", "pebble:"+rest, val)
			}
			opts.NoSync = !sync
		case "cache":
			n, err := units.Parse(val)
			if err != nil || n < 1<<20 || n > 1<<40 {
				return "", opts, fmt.Errorf("store URL %q: cache=%q: want a block cache size from 1MiB to 1TiB (e.g. 256MB)", "pebble:"+rest, val)
			}
			opts.CacheSize = int64(n)
		default:
			return "", opts, fmt.Errorf("store URL %q: unknown parameter %q (known: sync, cache)", "pebble:"+rest, k)
		}
	}
	return dir, opts, nil
}

// Options configure Open.
type Options struct {
	// NoSync skips the fsync of each write: faster, but the latest writes
	// may be lost in a crash.
	NoSync bool
	// CacheSize is the size in bytes of Pebble's block cache; 0 means
	// DefaultCacheSize.
	CacheSize int64
}

// DefaultCacheSize is the block cache size unless Options say otherwise.
// Pebble reserves the memory of its memtables (up to two of 64 MiB: see
// pebbleOptions) in the block cache: a cache not well above that leaves
// reads uncached, every point read decompressing a block from disk (a
// 64 MiB cache made a backfill of 200,000 rows that reads each row's
// indexed cell take 40 s, half of it in snappy).
const DefaultCacheSize = 256 << 20

// Store is a store.Store on a Pebble database. It is safe for concurrent
// use.
type Store struct {
	db    *pebble.DB // replaced by Restore, under mu, while no call runs
	write *pebble.WriteOptions
	dir   string  // the database directory, absolute
	opts  Options // as given to Open, to reopen the database in Restore

	ddl sync.Mutex // serializes CreateTable
	// guard orders table changes (CreateTable adding an index, DropTable)
	// and the first guard on a table against every write: a write holds
	// it shared while it commits, they exclusively.
	guard sync.RWMutex
	// rowLocks order the writers of a row (hashed to a stripe) that must
	// not commit between another's read of it and its commit: the writers
	// of its indexed cells, and of the rows of guarded tables. A write
	// takes them under guard's read lock.
	rowLocks [rowLockStripes]sync.Mutex
	// guarded holds the tables ApplyGuards has guarded a row of (never
	// changed, replaced under guard's write lock): every write of their
	// rows takes the rows' locks, so a guarded write holds its guard
	// row's lock from its read of the row to its commit, and writes of
	// other rows run meanwhile.
	guarded atomic.Pointer[map[string]bool]
	// rangeDels counts the range deletions written since apply last
	// flushed the memtable (maxMemRangeDels).
	rangeDels atomic.Int64
	tables    atomic.Pointer[map[string]*table] // replaced, never changed, under ddl

	mu        sync.Mutex // guards running, closed, restoring and spare
	idle      sync.Cond  // signalled when running drops to 0
	resumed   sync.Cond  // signalled when a Restore ends, and by Close
	running   int
	closed    bool
	restoring bool      // a Restore waits for running calls or swaps the database: new calls wait
	spare     []*reader // readers not in use, at most maxSpare
	maxSpare  int

	// gen counts the events after which an iterator cached by a reader is
	// stale (see reader): every Apply, and every flush and compaction, so
	// that cached iterators do not keep obsolete memtables and sstables
	// alive. Flushes and compactions also start a sweep of the spare
	// readers' iterators, unless one is pending.
	gen      atomic.Uint64
	sweeping atomic.Bool
	// direct is set once DB() has handed out the database: writes may then
	// bypass Apply and gen, so readers no longer cache iterators.
	direct atomic.Bool
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.ChangeCounter = (*Store)(nil)
)

type table struct {
	spec    store.TableSpec
	prefix  []byte       // 't' + enc(name)
	indexes []tableIndex // in the order of spec.Indexes
	// expiry: values have the header of cell expiry (metadata.Expiry).
	expiry bool
	// changed is the stamp of the table's latest change: its creation (or
	// load at Open and Restore) or a committed Apply that wrote to it.
	changed atomic.Uint64
}

// stamps numbers table changes, across stores: a new stamp is larger than
// every earlier one, so a table that was replaced never repeats a value.
var stamps atomic.Uint64

// metadata is the value stored under 'm' + table name.
type metadata struct {
	Families []string    `json:"families"`
	Splits   [][]byte    `json:"splits,omitempty"`
	Indexes  []indexMeta `json:"indexes,omitempty"`
	// Expiry: the table's values have the header of cell expiry (see the
	// package doc). Tables created by versions before cell expiry lack it.
	Expiry bool `json:"expiry,omitempty"`
}

// indexMeta is the metadata of an index (store.IndexSpec).
type indexMeta struct {
	Name      string `json:"name"`
	Family    string `json:"family"`
	Qualifier []byte `json:"qualifier"`
	// Elements: an element index. Omitted when false, so a single-cell
	// index's metadata is what versions before element indexes wrote, and
	// theirs, without the field, reads as single-cell indexes.
	Elements bool `json:"elements,omitempty"`
}

// Open opens the database in dir, creating it if needed.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("pebblestore: open: empty directory name")
	}
	// Snapshots go next to the directory, so its parent must be known
	// whatever the working directory becomes.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s := &Store{write: pebble.Sync, dir: abs, opts: opts, maxSpare: 2 * runtime.GOMAXPROCS(0)}
	s.idle.L = &s.mu
	s.resumed.L = &s.mu
	if opts.NoSync {
		s.write = pebble.NoSync
	}
	db, err := pebble.Open(dir, s.pebbleOptions())
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
			// Pebble's LOCK file is held: say by whom, as far as known.
			owner := ""
			if b, rerr := os.ReadFile(filepath.Join(abs, ownerFile)); rerr == nil {
				owner = " (" + strings.TrimSpace(string(b)) + ")"
			}
			return nil, fmt.Errorf("pebblestore: %s is open in another process%s; a Pebble store is used by one process at a time: close the other one first: %w", dir, owner, err)
		}
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	// Say who holds the store, for the message above (best effort: the
	// lock itself is Pebble's).
	host, _ := os.Hostname()
	_ = os.WriteFile(filepath.Join(abs, ownerFile), []byte(fmt.Sprintf("pid %d on %s", os.Getpid(), host)), 0o644)
	s.db = db
	tables, err := loadTables(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s.tables.Store(&tables)
	return s, nil
}

// ownerFile names, in a store's directory, the process that last opened
// it.
const ownerFile = "kvschema.owner"

// Exists reports whether dir holds a Pebble database (Open of a directory
// that does not creates one).
func Exists(dir string) (bool, error) {
	d, err := pebble.Peek(dir, vfs.Default)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return d.Exists, nil
}

// pebbleOptions are the options of the database, for Open and Restore.
func (s *Store) pebbleOptions() *pebble.Options {
	popts := &pebble.Options{
		Logger:    quietLogger{pebble.DefaultLogger},
		CacheSize: s.opts.CacheSize,
		Comparer:  comparer,
		// Pebble's 4 MiB default memtable turns every bulk-load batch into a
		// flushable batch and floods L0 with small files; 64 MiB absorbs
		// them (measured: loads ~1.4× faster).
		MemTableSize: 64 << 20,
		EventListener: &pebble.EventListener{
			FlushEnd:      func(pebble.FlushInfo) { s.lsmChanged() },
			CompactionEnd: func(pebble.CompactionInfo) { s.lsmChanged() },
		},
	}
	// Index blocks of 256 KiB (CockroachDB's setting) instead of the 4 KiB
	// data block size: sstables keep a one-level index, so a point read
	// binary-searches one index block instead of two. Every level inherits
	// L0's value.
	popts.Levels[0].IndexBlockSize = 256 << 10
	// A Bloom filter per sstable over row prefixes (Comparer.Split): a
	// point read of a row a table does not hold — the previous value a
	// write of a new row reads to keep a local index, an existence check
	// — skips the sstable instead of decoding its blocks (a backfill of
	// 200,000 new rows spent 60% of its time so).
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		popts.Levels[i].FilterType = pebble.TableFilter
	}
	if popts.CacheSize == 0 {
		popts.CacheSize = DefaultCacheSize
	}
	return popts
}

// quietLogger drops Pebble's informational messages (it prints some at
// every Open), keeping its errors.
type quietLogger struct{ pebble.Logger }

func (quietLogger) Infof(string, ...any) {}

func loadTables(db *pebble.DB) (map[string]*table, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{metaPrefix}, UpperBound: []byte{metaPrefix + 1}})
	if err != nil {
		return nil, err
	}
	tables := map[string]*table{}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		var meta metadata
		if err == nil {
			err = json.Unmarshal(v, &meta)
		}
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("metadata of table %q: %w", it.Key()[1:], err)
		}
		name := string(it.Key()[1:])
		tables[name] = newTable(name, meta)
	}
	return tables, it.Close()
}

func newTable(name string, meta metadata) *table {
	t := &table{
		spec:   store.TableSpec{Name: name, Families: meta.Families, Splits: meta.Splits},
		prefix: tablePrefix(name),
		expiry: meta.Expiry,
	}
	for _, m := range meta.Indexes {
		ix := store.IndexSpec{Name: m.Name, Family: m.Family, Qualifier: m.Qualifier, Elements: m.Elements}
		if ix.Qualifier == nil {
			ix.Qualifier = []byte{}
		}
		t.spec.Indexes = append(t.spec.Indexes, ix)
		t.indexes = append(t.indexes, tableIndex{spec: ix, prefix: indexKeyPrefix(name, m.Name)})
	}
	t.changed.Store(stamps.Add(1))
	return t
}

// Changed implements store.ChangeCounter: every write reaches the database
// through Apply, unless DB() has handed it out.
func (s *Store) Changed(table string) (uint64, bool) {
	if s.direct.Load() {
		return 0, false
	}
	if t := (*s.tables.Load())[table]; t != nil {
		return t.changed.Load(), true
	}
	return 0, true
}

// DB is the underlying database, for benchmarks that compare with raw
// Pebble. From the first call on, reads stop caching iterators, which
// would not notice writes made directly to the database. Values written
// there must carry the expiry header of their table (see the package
// doc). A Restore closes it and opens another: call DB again after one.
func (s *Store) DB() *pebble.DB {
	s.direct.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db
}

// Checkpoint writes a consistent copy of the database, including writes not
// yet synced, to dir, which must not exist.
func (s *Store) Checkpoint(dir string) error {
	if err := s.enter(context.Background()); err != nil {
		return err
	}
	defer s.exit()
	return s.db.Checkpoint(dir, pebble.WithFlushedWAL())
}

// Compact flushes the memtable and compacts the whole keyspace, so that
// reads measured afterwards do not race background compactions (benchmarks
// call it after loading).
func (s *Store) Compact(ctx context.Context) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	if err := s.db.Flush(); err != nil {
		return err
	}
	return s.db.Compact(ctx, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, true)
}

// enter admits a call unless the store is closed, after any Restore under
// way; exit ends it.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admit(); err != nil {
		return err
	}
	s.running++
	return nil
}

// admit waits, with s.mu held, until no Restore is under way, and fails if
// the store is closed.
func (s *Store) admit() error {
	for s.restoring && !s.closed {
		s.resumed.Wait()
	}
	if s.closed {
		return store.ErrClosed
	}
	return nil
}

func (s *Store) exit() {
	s.mu.Lock()
	if s.running--; s.running == 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
}

// enterReader is enter for calls that use a reader, which it takes from
// the spare ones (with their cached iterators) in the same critical
// section; exitReader(r) ends the call and keeps r as a spare if there is
// room, else closes its iterator.
func (s *Store) enterReader(ctx context.Context) (*reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var r *reader
	s.mu.Lock()
	if err := s.admit(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	s.running++
	if n := len(s.spare); n > 0 {
		r = s.spare[n-1]
		s.spare[n-1] = nil
		s.spare = s.spare[:n-1]
	}
	s.mu.Unlock()
	if r == nil {
		r = new(reader)
	}
	return r, nil
}

// enterTable is enterReader for a call reading table name, which it looks
// up; exitReader(r) ends the call unless err is set.
func (s *Store) enterTable(ctx context.Context, name string) (*reader, *table, error) {
	r, err := s.enterReader(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.table(name)
	if err != nil {
		s.exitReader(r)
		return nil, nil, err
	}
	r.nowCtx = ctx
	return r, t, nil
}

func (s *Store) exitReader(r *reader) {
	r.trim()
	r.nowCtx = nil // the call's: a pooled reader keeps no context
	if r.it != nil && r.gen != s.gen.Load() {
		r.closeIter() // stale: do not keep what it pins
	}
	s.mu.Lock()
	if len(s.spare) < s.maxSpare {
		s.spare, r = append(s.spare, r), nil
	}
	if s.running--; s.running == 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
	if r != nil {
		r.closeIter()
	}
}

// lsmChanged makes the cached iterators stale after a flush or compaction
// and closes the spare ones, which would keep the memtables and sstables
// it made obsolete alive, in a goroutine: Pebble may call it holding its
// own locks, which closing an iterator takes.
func (s *Store) lsmChanged() {
	s.gen.Add(1)
	if !s.sweeping.Swap(true) {
		go func() {
			s.sweeping.Store(false)
			gen := s.gen.Load()
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, r := range s.spare {
				if r.it != nil && r.gen != gen {
					r.closeIter()
				}
			}
		}()
	}
}

// Close waits for running calls and closes the database. Closing twice is
// harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.resumed.Broadcast() // calls waiting for a Restore fail now
	for s.running > 0 {
		s.idle.Wait()
	}
	spare := s.spare
	s.spare = nil
	s.mu.Unlock()
	for _, r := range spare {
		r.closeIter()
	}
	return s.db.Close()
}

// Capabilities reports atomic batches.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{AtomicBatch: true, SnapshotReads: true, LocalIndexes: true, Expiry: true, Engine: "pebble"}
}

func (s *Store) table(name string) (*table, error) {
	if t := (*s.tables.Load())[name]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("pebblestore: table %q: %w", name, store.ErrNoTable)
}

func checkFamily(f string) error {
	if strings.IndexByte(f, 0) >= 0 {
		return fmt.Errorf("family %q contains 0x00", f)
	}
	return nil
}

// CreateTable creates the table or adds the families and indexes it lacks.
// Families are listed in the order first declared; splits are kept from
// the first call. The metadata of a table, and the entries of the indexes
// it adds built from the table's rows, are one batch, committed while no
// write runs (under guard's write lock).
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	if spec.Name == "" {
		return errors.New("pebblestore: create table: empty name")
	}
	for _, f := range spec.Families {
		if err := checkFamily(f); err != nil {
			return fmt.Errorf("pebblestore: create table %q: %w", spec.Name, err)
		}
	}
	s.ddl.Lock()
	defer s.ddl.Unlock()
	tables := *s.tables.Load()
	old := tables[spec.Name]
	meta := metadata{Splits: cloneAll(spec.Splits), Expiry: true}
	var oldIndexes []store.IndexSpec
	if old != nil {
		meta = metadata{Families: slices.Clone(old.spec.Families), Splits: old.spec.Splits, Expiry: old.expiry}
		oldIndexes = old.spec.Indexes
	}
	n := len(meta.Families)
	for _, f := range spec.Families {
		if !slices.Contains(meta.Families, f) {
			meta.Families = append(meta.Families, f)
		}
	}
	indexes, added, err := store.MergeIndexes(meta.Families, oldIndexes, spec.Indexes)
	if err != nil {
		return fmt.Errorf("pebblestore: create table %q: %w", spec.Name, err)
	}
	if old != nil && len(meta.Families) == n && len(added) == 0 {
		return nil
	}
	for _, ix := range indexes {
		meta.Indexes = append(meta.Indexes, indexMeta{Name: ix.Name, Family: ix.Family, Qualifier: ix.Qualifier, Elements: ix.Elements})
	}
	v, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	t := newTable(spec.Name, meta)
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(append([]byte{metaPrefix}, spec.Name...), v, nil); err != nil {
		return fmt.Errorf("pebblestore: create table %q: %w", spec.Name, err)
	}
	if old != nil && len(added) > 0 {
		// No write may commit between the scan and the batch (nor use the
		// old table, without the index, after it): hold them all back.
		s.guard.Lock()
		defer s.guard.Unlock()
		if err := s.buildIndexes(b, t, t.indexes[len(oldIndexes):]); err != nil {
			return fmt.Errorf("pebblestore: create table %q: %w", spec.Name, err)
		}
	}
	if err := b.Commit(s.write); err != nil {
		return fmt.Errorf("pebblestore: create table %q: %w", spec.Name, err)
	}
	next := maps.Clone(tables)
	next[spec.Name] = t
	s.tables.Store(&next)
	s.gen.Add(1) // after the commit: see reader
	return nil
}

// DropTable implements store.TableDropper: one batch deletes the table's
// metadata and range-deletes its rows and its local indexes' entries.
func (s *Store) DropTable(ctx context.Context, name string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.exit()
	s.ddl.Lock()
	defer s.ddl.Unlock()
	tables := *s.tables.Load()
	t := tables[name]
	if t == nil {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	err := b.Delete(append([]byte{metaPrefix}, name...), nil)
	prefixes := [][]byte{t.prefix}
	for _, ix := range t.indexes {
		prefixes = append(prefixes, ix.prefix)
	}
	for _, p := range prefixes {
		if err == nil {
			err = b.DeleteRange(p, endOfPrefix(slices.Clone(p)), nil)
		}
	}
	if err != nil {
		return fmt.Errorf("pebblestore: drop table %q: %w", name, err)
	}
	// No write of the table may commit around the batch.
	s.guard.Lock()
	defer s.guard.Unlock()
	if err := b.Commit(s.write); err != nil {
		return fmt.Errorf("pebblestore: drop table %q: %w", name, err)
	}
	next := maps.Clone(tables)
	delete(next, name)
	s.tables.Store(&next)
	s.gen.Add(1)
	return nil
}

// Tables lists the tables in name order.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.exit()
	return specsOf(*s.tables.Load()), nil
}

// specsOf lists the specs of tables, in name order, as copies.
func specsOf(tables map[string]*table) []store.TableSpec {
	out := make([]store.TableSpec, 0, len(tables))
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		sp := tables[name].spec
		out = append(out, store.TableSpec{Name: name, Families: slices.Clone(sp.Families), Splits: cloneAll(sp.Splits), Indexes: store.CloneIndexes(sp.Indexes)})
	}
	return out
}

// ReadRow reads one row with a prefix seek (see comparer). The row
// returned is the caller's.
func (s *Store) ReadRow(ctx context.Context, name string, key []byte) (row store.Row, found bool, err error) {
	r, t, err := s.enterTable(ctx, name)
	if err != nil {
		return store.Row{}, false, err
	}
	defer s.exitReader(r)
	return s.readRowWith(r, t, key)
}

// readRowWith is ReadRow with reader r.
func (s *Store) readRowWith(r *reader, t *table, key []byte) (row store.Row, found bool, err error) {
	it, err := r.iter(s, false)
	if err != nil {
		return store.Row{}, false, err
	}
	if found, err = r.readRow(it, t, key); err != nil {
		return store.Row{}, false, r.fail(err)
	}
	if !found {
		return store.Row{}, false, nil
	}
	return r.ownedRow(), true, nil
}

// readRow assembles the row of key from its cells, which SeekPrefixGE and
// Next yield in order and nothing else, and reports whether it has any.
func (r *reader) readRow(it *pebble.Iterator, t *table, key []byte) (bool, error) {
	return r.readRowWith(it, t, key, true)
}

// readRowAt is readRow with a plain seek instead of a prefix seek: for an
// iterator whose reads move on through the table (rows of an index's
// entries, in key order), where a prefix seek would consult every level's
// filters again each time.
// When the row is a little ahead of where it stands (the last row read
// left it just past that row's cells), it steps there instead: a seek
// starts from the table's index blocks, which a block cache smaller than
// the data would load again for every row, where stepping stays in the
// data blocks, as a scan does.
func (r *reader) readRowAt(it *pebble.Iterator, t *table, key []byte) (bool, error) {
	return r.readRowWith(it, t, key, false)
}

// rowSteps is how far readRowAt steps before it seeks.
const rowSteps = 8

func (r *reader) readRowWith(it *pebble.Iterator, t *table, key []byte, prefix bool) (bool, error) {
	r.key = appendEnc(append(r.key[:0], t.prefix...), key)
	r.buf, r.cells = r.buf[:0], r.cells[:0]
	r.encLen = len(r.key) - len(t.prefix)
	r.escaped = r.encLen != len(key)+2
	if r.escaped {
		r.decoded = append(r.decoded[:0], key...)
	}
	var ok bool
	switch {
	case prefix:
		ok = it.SeekPrefixGE(r.key)
	case it.Valid() && bytes.Compare(it.Key(), r.key) < 0:
		ok = true
		for i := 0; ok && bytes.Compare(it.Key(), r.key) < 0; i++ {
			if i == rowSteps {
				ok = it.SeekGE(r.key)
				break
			}
			ok = it.Next()
		}
	default:
		ok = it.SeekGE(r.key)
	}
	r.skipped = false
	for ; ok && (prefix || bytes.HasPrefix(it.Key(), r.key)); ok = it.Next() {
		k := it.Key()[len(t.prefix):]
		cell := r.encLen
		if len(r.buf) == 0 {
			cell = 0 // copy the row's encoded key along with the first cell
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, err
		}
		if err := r.addCell(t, k[cell:], len(k)-r.encLen, v); err != nil {
			return false, err
		}
	}
	return len(r.cells) > 0, it.Error()
}

// ReadRows reads the rows of rs with one iterator: a prefix seek per key
// if rs has keys only, else re-bounded for each normalized range.
func (s *Store) ReadRows(ctx context.Context, name string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) (err error) {
	r, t, err := s.enterTable(ctx, name)
	if err != nil {
		return err
	}
	defer s.exitReader(r)
	return s.readRowsWith(r, t, rs, opts, fn)
}

// readRowsWith is ReadRows with reader r.
func (s *Store) readRowsWith(r *reader, t *table, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if len(rs.Ranges) == 0 {
		return r.readKeys(s, t, rs.Keys, opts, fn)
	}
	ranges := readRanges(rs, opts.Reverse)
	if len(ranges) == 0 {
		return nil
	}
	it, err := r.iter(s, true)
	if err != nil {
		return err
	}
	n := 0
	emit := func(row store.Row) bool {
		n++
		return fn(row) && n != opts.Limit
	}
	for _, rg := range ranges {
		r.setBounds(it, t, rg)
		more, err := r.scan(it, t, opts.Reverse, emit)
		if err != nil {
			return r.fail(err)
		}
		if !more {
			return nil
		}
	}
	return nil
}

// readRanges returns the ranges of rs, which has some, in read order.
func readRanges(rs store.RowSet, reverse bool) []store.Range {
	ranges := rs.Ranges
	// A single non-empty range is already normalized: skipping Normalize
	// saves an allocation on the commonest call.
	if len(rs.Keys) > 0 || len(ranges) != 1 || ranges[0].Empty() {
		ranges = rs.Normalize()
		if reverse {
			slices.Reverse(ranges) // Normalize's slice is ours
		}
	}
	return ranges
}

// readKeys reads the rows of keys, in key order, with one iterator and a
// prefix seek per distinct key: ascending seeks step forward instead of
// seeking afresh when the next row is near.
func (r *reader) readKeys(s *Store, t *table, keys [][]byte, opts store.ReadOptions, fn func(store.Row) bool) error {
	if len(keys) == 0 {
		return nil
	}
	keys = r.sortKeys(keys, opts.Reverse)
	defer clear(r.keys) // keep none of the caller's keys
	it, err := r.iter(s, false)
	if err != nil {
		return err
	}
	n := 0
	for _, k := range keys {
		found, err := r.readRow(it, t, k)
		if err != nil {
			return r.fail(err)
		}
		if found {
			if n++; !fn(r.row(false)) || n == opts.Limit {
				return nil
			}
		}
	}
	return nil
}

// sortKeys returns keys in read order without duplicates, in r.keys
// unless there is just one.
func (r *reader) sortKeys(keys [][]byte, reverse bool) [][]byte {
	if len(keys) < 2 {
		return keys
	}
	r.keys = append(r.keys[:0], keys...)
	slices.SortFunc(r.keys, bytes.Compare)
	r.keys = slices.CompactFunc(r.keys, bytes.Equal)
	if reverse {
		slices.Reverse(r.keys)
	}
	return r.keys
}

// reader assembles rows from the cells an iterator yields, in buffers
// reused from call to call, and caches that iterator from call to call.
//
// Creating and closing a Pebble iterator costs about as much as a point
// read itself, so a reader keeps its iterator while the store has no
// newer state than the iterator's snapshot: until the next Apply, flush or
// compaction bumps the store's gen. Since gen is loaded before the
// iterator is created, and Apply bumps it after its commit, a call that
// finds gen unchanged starts after no Apply the iterator does not see.
type reader struct {
	it      *pebble.Iterator // cached iterator, or nil
	gen     uint64           // the store's gen before it was created
	bounded bool             // whether it has bounds
	// pinned: a View's reader, whose iterator is never replaced (it is
	// the view's point in time).
	pinned bool

	keys    [][]byte     // the sorted keys of a ReadRows by keys
	key     []byte       // iterator bounds (Pebble copies them), or a key being written
	buf     []byte       // the row's encoded key, then each cell's family, 0x00, qualifier and value
	encLen  int          // length of the row's encoded key; 0 between rows
	escaped bool         // whether that encoding has escapes, so decoded holds the key
	decoded []byte       // the row's key if escaped
	cells   []store.Cell // the row's cells in iteration order, slicing buf in that order
	// now is the instant (Unix µs) at which the call reads expiry: when
	// nowCtx is set, store.Now(nowCtx), taken when the first expiring
	// value is met (a read of permanent cells never asks the clock);
	// skipped says whether readRow skipped an expired cell of the row.
	now     int64
	nowCtx  context.Context
	skipped bool
	val     []byte // a value being written, with its expiry header
}

// iter returns the reader's iterator, which sees every Apply that returned
// before the call started, after dropping its bounds unless bounded.
func (r *reader) iter(s *Store, bounded bool) (*pebble.Iterator, error) {
	if r.pinned {
		if r.it == nil {
			return nil, errors.New("pebblestore: view unusable after an earlier error")
		}
		if r.bounded && !bounded {
			r.it.SetBounds(nil, nil)
			r.bounded = false
		}
		return r.it, nil
	}
	gen := s.gen.Load()
	if r.it != nil && (r.gen != gen || s.direct.Load()) {
		r.closeIter()
	}
	if r.it == nil {
		it, err := s.db.NewIter(nil)
		if err != nil {
			return nil, err
		}
		r.it, r.gen, r.bounded = it, gen, false
	} else if r.bounded && !bounded {
		r.it.SetBounds(nil, nil)
		r.bounded = false
	}
	return r.it, nil
}

// fail drops the iterator after an error, returning err or else the
// iterator's own.
func (r *reader) fail(err error) error {
	if cerr := r.closeIter(); err == nil {
		err = cerr
	}
	return err
}

func (r *reader) closeIter() error {
	if r.it == nil {
		return nil
	}
	err := r.it.Close()
	r.it = nil
	return err
}

// maxKeptBuf bounds the buffers a spare reader keeps.
const maxKeptBuf = 1 << 20

// trim drops buffers grown too big by a large row, so that spare readers
// stay small.
func (r *reader) trim() {
	if cap(r.buf) > maxKeptBuf {
		r.buf = nil
	}
	if cap(r.cells) > maxKeptBuf/64 {
		r.cells = nil
	}
	if cap(r.keys) > maxKeptBuf/64 {
		r.keys = nil
	}
	if cap(r.key) > maxKeptBuf {
		r.key = nil
	}
	if cap(r.decoded) > maxKeptBuf {
		r.decoded = nil
	}
	if cap(r.val) > maxKeptBuf {
		r.val = nil
	}
}

// setBounds bounds it to the rows of rg.
func (r *reader) setBounds(it *pebble.Iterator, t *table, rg store.Range) {
	b := appendEnc(append(r.key[:0], t.prefix...), rg.Start)
	n := len(b)
	b = append(b, t.prefix...)
	if rg.End == nil {
		endOfPrefix(b[n:])
	} else {
		b = appendEnc(b, rg.End)
	}
	r.key = b
	it.SetBounds(b[:n], b[n:]) // which Pebble copies
	r.bounded = true
}

// scan positions it at one end of its bounds and walks to the other,
// calling emit with each complete row until emit returns false. It reports
// whether emit wanted more.
func (r *reader) scan(it *pebble.Iterator, t *table, reverse bool, emit func(store.Row) bool) (bool, error) {
	r.encLen = 0
	ok := false
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, reverse) {
		k := it.Key()[len(t.prefix):]
		// No encoding is a prefix of another: a key with the current row's
		// encoding as prefix belongs to that row.
		cell := r.encLen
		if r.encLen == 0 || !bytes.HasPrefix(k, r.buf[:r.encLen]) {
			if r.encLen > 0 && len(r.cells) > 0 && !emit(r.row(reverse)) { // no cells: all expired
				return false, nil
			}
			if err := r.startRow(k); err != nil {
				return false, err
			}
			cell = 0 // copy the row's encoded key along with the first cell
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return false, err
		}
		if err := r.addCell(t, k[cell:], len(k)-r.encLen, v); err != nil {
			return false, err
		}
	}
	if err := it.Error(); err != nil {
		return false, err
	}
	if r.encLen > 0 && len(r.cells) > 0 {
		return emit(r.row(reverse)), nil
	}
	return true, nil
}

func step(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// startRow starts assembling the row of k, a data key without its table
// prefix.
func (r *reader) startRow(k []byte) error {
	prev := r.buf[:r.encLen] // the last row's encoding; empty at a read's start
	r.buf, r.cells = r.buf[:0], r.cells[:0]
	if r.escaped && len(prev) > 0 {
		// Rows read in order mostly share a long prefix (the leading key
		// attributes, the zeros of small integers): decode only the
		// encoding's part after it, keeping the last row's decoding of
		// the rest.
		return r.nextEscapedRow(prev, k)
	}
	// One pass finds the encoding's end, and decodes it if it turns out to
	// have escapes: else the key is the encoding without its terminator.
	for i := 0; i+1 < len(k); i++ {
		if k[i] != 0 {
			continue
		}
		switch k[i+1] {
		case 0x01:
			r.encLen, r.escaped = i+2, false
			return nil
		case 0xFF:
			if cap(r.decoded) < len(k) {
				r.decoded = make([]byte, len(k))
			}
			r.decoded = r.decoded[:cap(r.decoded)]
			copy(r.decoded, k[:i+1])
			n, enc, err := decodeEnc(r.decoded[i+1:], k[i+2:])
			if err != nil {
				return err
			}
			r.decoded = r.decoded[:i+1+n]
			r.encLen, r.escaped = i+2+enc, true
			return nil
		}
		return errCorrupt
	}
	return errCorrupt
}

// nextEscapedRow decodes into r.decoded the key of the row whose encoding
// starts k, given prev, the encoding of the last row decoded there (with
// escapes, so r.decoded holds its key). It decodes the part of k after the
// two encodings' common prefix, backed off to a byte that starts an
// escape pair or a plain byte: a 0x00 is always a pair's first byte.
func (r *reader) nextEscapedRow(prev, k []byte) error {
	m := commonPrefix(prev, k)
	if m > 0 && prev[m-1] == 0 {
		m--
	}
	// prev[m:] decodes to the last len(r.decoded)-keep bytes of its key.
	keep := len(r.decoded)
	for i := m; i < len(prev)-2; i++ {
		if prev[i] == 0 {
			i++ // 0x00 0xFF is one 0x00
		}
		keep--
	}
	if need := keep + len(k) - m; cap(r.decoded) < need {
		r.decoded = append(make([]byte, 0, 2*need), r.decoded[:keep]...)
	}
	n, enc, err := decodeEnc(r.decoded[keep:cap(r.decoded)], k[m:])
	if err != nil {
		return err
	}
	r.decoded = r.decoded[:keep+n]
	r.encLen = m + enc
	return nil
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// addCell appends to buf the last n bytes of key, which are a cell's
// family, 0x00 and qualifier (key may start with more), and its value v, and
// appends the cell. When buf must grow, the cells already in it are
// re-pointed to the new copy.
func (r *reader) addCell(t *table, key []byte, n int, v []byte) error {
	if t.expiry {
		var live bool
		var err error
		if v, live, err = r.unwrapValue(v); err != nil {
			return err
		}
		if !live {
			r.skipped = true
			if len(r.buf) == 0 { // keep the row's encoded key all the same
				r.buf = append(r.buf, key[:len(key)-n]...)
			}
			return nil
		}
	}
	fq := key[len(key)-n:]
	f := bytes.IndexByte(fq, 0)
	if f < 0 {
		return errCorrupt
	}
	if need := len(key) + len(v); cap(r.buf)-len(r.buf) < need {
		buf := make([]byte, len(r.buf), 2*cap(r.buf)+need)
		copy(buf, r.buf)
		r.buf = buf
		if len(r.cells) > 0 { // else buf does not even hold the row's key yet
			pointCells(r.cells, buf[r.encLen:])
		}
	}
	r.buf = append(r.buf, key...)
	q := len(r.buf) - n + f + 1
	r.buf = append(r.buf, v...)
	v0, end := len(r.buf)-len(v), len(r.buf)
	r.cells = append(r.cells, store.Cell{Family: t.family(fq[:f]), Qualifier: r.buf[q:v0:v0], Value: r.buf[v0:end:end]})
	return nil
}

// The header of a value in a table with expiry (see the package doc).
const (
	valuePermanent = 0x00 // then the value
	valueExpiring  = 0x01 // then Expires, 8 bytes big endian, then the value
)

// unwrapValue returns the value stored as v in a table with expiry, and
// whether it is live at now (Unix µs). The value is v's, not a copy.
func unwrapValue(v []byte, now int64) (value []byte, live bool, err error) {
	if len(v) > 0 && v[0] == valuePermanent {
		return v[1:], true, nil
	}
	if len(v) >= 9 && v[0] == valueExpiring {
		return v[9:], int64(binary.BigEndian.Uint64(v[1:9])) > now, nil
	}
	return nil, false, errCorruptValue
}

// unwrapValue is unwrapValue at the reader's instant (see reader.now),
// which it takes from the clock only for an expiring value.
func (r *reader) unwrapValue(v []byte) (value []byte, live bool, err error) {
	if len(v) > 0 && v[0] == valuePermanent {
		return v[1:], true, nil
	}
	if r.nowCtx != nil {
		r.now, r.nowCtx = store.Now(r.nowCtx).UnixMicro(), nil
	}
	return unwrapValue(v, r.now)
}

// errCorruptValue is the error of a value without a valid expiry header in
// a table with expiry.
var errCorruptValue = errors.New("pebblestore: malformed value (no valid expiry header)")

// appendValue appends to dst the value m writes in a table with expiry.
func appendValue(dst []byte, m *store.Mutation) []byte {
	if m.Expires == 0 {
		return append(append(dst, valuePermanent), m.Value...)
	}
	dst = binary.BigEndian.AppendUint64(append(dst, valueExpiring), uint64(m.Expires))
	return append(dst, m.Value...)
}

// pointCells re-slices cells to their qualifiers and values in data, which
// holds, for each cell in order, its family, 0x00, qualifier and value.
func pointCells(cells []store.Cell, data []byte) {
	off := 0
	for i := range cells {
		c := &cells[i]
		q := off + len(c.Family) + 1
		v := q + len(c.Qualifier)
		end := v + len(c.Value)
		c.Qualifier, c.Value = data[q:v:v], data[v:end:end]
		off = end
	}
}

// rowKey is the key of the row being assembled.
func (r *reader) rowKey() []byte {
	if r.escaped {
		return r.decoded[:len(r.decoded):len(r.decoded)]
	}
	n := r.encLen - 2 // without escapes, the encoding is the key and a terminator
	return r.buf[:n:n]
}

// row is the assembled row, in the reader's buffers. Backward iteration
// yields cells in reverse order; row puts them back (the row is complete,
// so nothing depends on their order in buf any more).
func (r *reader) row(reverse bool) store.Row {
	if reverse {
		slices.Reverse(r.cells)
	}
	return store.Row{Key: r.rowKey(), Cells: r.cells}
}

// ownedRow copies the assembled (forward) row out of the reader's buffers
// in two allocations.
func (r *reader) ownedRow() store.Row {
	key, data := r.rowKey(), r.buf[r.encLen:]
	buf := make([]byte, len(key)+len(data))
	copy(buf, key)
	copy(buf[len(key):], data)
	cells := slices.Clone(r.cells)
	pointCells(cells, buf[len(key):])
	return store.Row{Key: buf[:len(key):len(key)], Cells: cells}
}

// family returns the table's family named b, without allocating when it is
// declared.
func (t *table) family(b []byte) string {
	for _, f := range t.spec.Families {
		if f == string(b) {
			return f
		}
	}
	return string(b)
}

// Apply applies muts in one atomic batch.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	r, err := s.enterReader(ctx)
	if err != nil {
		return err
	}
	defer s.exitReader(r)
	if len(muts) == 0 {
		return nil
	}
	s.guard.RLock()
	defer s.guard.RUnlock()
	return s.apply(r, muts, nil)
}

// ApplyGuards applies muts if every guard of gs holds (store.Guarded): no
// other write of a guard's row commits between its read of the row and
// this commit — it holds the locks of all the guards' rows, with the
// batch's, from the first read to the commit (see guarded) — while writes
// of other rows do. (Other processes cannot open the database.)
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	r, err := s.enterReader(ctx)
	if err != nil {
		return false, err
	}
	defer s.exitReader(r)
	tables := make([]*table, len(gs))
	for i, g := range gs {
		if tables[i], err = s.table(g.Table); err != nil {
			return false, err
		}
		if !(*s.guardedTables())[g.Table] {
			// The first guard of the table: the writes of its rows under
			// way took no row lock; those after this see it guarded.
			s.guard.Lock()
			if old := *s.guardedTables(); !old[g.Table] {
				next := maps.Clone(old)
				next[g.Table] = true
				s.guarded.Store(&next)
			}
			s.guard.Unlock()
		}
	}
	s.guard.RLock()
	defer s.guard.RUnlock()
	rows := make([]int, 0, len(gs))
	for _, g := range gs {
		if l := rowLock(g.Table, g.Row); !slices.Contains(rows, l) {
			rows = append(rows, l)
		}
	}
	locks := rowStripes(*s.tables.Load(), *s.guardedTables(), muts, rows...)
	s.lockRows(locks)
	defer s.unlockRows(locks)
	now := store.Now(ctx).UnixMicro()
	for i, g := range gs {
		r.now, r.nowCtx = now, nil
		row, _, err := s.readRowWith(r, tables[i], g.Row)
		if err != nil {
			return false, err
		}
		if !g.Holds(row.Cells) {
			return false, nil
		}
	}
	if len(muts) == 0 {
		return true, nil
	}
	return true, s.apply(r, muts, locks)
}

// guardedTables returns the tables a guard has been put on.
func (s *Store) guardedTables() *map[string]bool {
	if p := s.guarded.Load(); p != nil {
		return p
	}
	return &noTables
}

var noTables = map[string]bool{}

// apply writes muts in one batch with reader r's buffers, with the
// entries of the indexes they change. The caller holds guard's read lock,
// and the row locks muts take (rowStripes) if it passes them as held, else
// apply takes them.
func (s *Store) apply(r *reader, muts []store.Mutation, held []int) error {
	var err error
	tables := *s.tables.Load()
	guarded := *s.guardedTables()
	indexed := needsIndexes(tables, muts)
	if held == nil && (indexed || len(guarded) > 0) {
		if locks := rowStripes(tables, guarded, muts); len(locks) > 0 {
			s.lockRows(locks)
			defer s.unlockRows(locks)
		}
	}
	var ix *indexWrites
	if indexed {
		ix = newIndexWrites(s)
	}
	b := s.db.NewBatch()
	defer b.Close()
	var touched []*table
	dels := 0     // range deletions in the batch (one a DeleteRow or DeleteFamily)
	checked := "" // the family last checked: batches repeat a few
	for i := range muts {
		m := &muts[i]
		t := tables[m.Table]
		if t == nil {
			return fmt.Errorf("pebblestore: mutation %d: table %q: %w", i, m.Table, store.ErrNoTable)
		}
		if n := len(touched); n == 0 || touched[n-1] != t && !slices.Contains(touched, t) {
			touched = append(touched, t)
		}
		key := appendEnc(append(r.key[:0], t.prefix...), m.Row)
		var err error
		switch m.Kind {
		case store.SetCell, store.DeleteCell:
			if m.Family != checked {
				if err := checkFamily(m.Family); err != nil {
					return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
				}
				checked = m.Family
			}
			key = append(append(append(key, m.Family...), 0), m.Qualifier...)
			if ix != nil && len(t.indexes) > 0 {
				if err := ix.cell(t, m, key); err != nil {
					return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
				}
			}
			switch {
			case m.Kind != store.SetCell:
				err = b.Delete(key, nil)
			case t.expiry:
				r.val = appendValue(r.val[:0], m)
				err = b.Set(key, r.val, nil)
			case m.Expires != 0:
				return fmt.Errorf("pebblestore: mutation %d: table %q was created by a version without cell expiry: recreate it, or copy its rows into a new table, to write cells with a TTL: %w", i, m.Table, store.ErrNoExpiry)
			default:
				err = b.Set(key, m.Value, nil)
			}
		case store.DeleteRow:
			n := len(key)
			if ix != nil && len(t.indexes) > 0 {
				if err := ix.deleteRow(t, m.Row, key); err != nil {
					return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
				}
			}
			key = append(key, key...)
			err = b.DeleteRange(key[:n], endOfPrefix(key[n:]), nil)
			dels++
		case store.DeleteFamily:
			if m.Family != checked {
				if err := checkFamily(m.Family); err != nil {
					return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
				}
				checked = m.Family
			}
			key = append(append(key, m.Family...), 0) // the family's first key
			if ix != nil && len(t.indexes) > 0 {
				if err := ix.deleteFamily(t, m.Row, m.Family, key); err != nil {
					return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
				}
			}
			n := len(key)
			key = append(key, key...)
			key[len(key)-1] = 1 // above every key family 0x00 qualifier, below the next family's
			err = b.DeleteRange(key[:n], key[n:], nil)
			dels++
		default:
			return fmt.Errorf("pebblestore: mutation %d: unknown kind %v", i, m.Kind)
		}
		if err != nil {
			return fmt.Errorf("pebblestore: mutation %d: %w", i, err)
		}
		r.key = key
	}
	if ix != nil {
		if err := ix.write(b); err != nil {
			return fmt.Errorf("pebblestore: apply: %w", err)
		}
	}
	err = b.Commit(s.write)
	s.gen.Add(1) // after the commit: see reader
	stamp := stamps.Add(1)
	for _, t := range touched {
		t.changed.Store(stamp)
	}
	if err != nil {
		return fmt.Errorf("pebblestore: apply: %w", err)
	}
	if dels > 0 && s.rangeDels.Add(int64(dels)) >= maxMemRangeDels {
		// Flush the memtable's tombstones into a table, fragmented once
		// there, unless a flush this started is under way.
		if s.rangeDels.Swap(0) >= maxMemRangeDels {
			if _, err := s.db.AsyncFlush(); err != nil {
				return fmt.Errorf("pebblestore: flushing range deletions: %w", err)
			}
		}
	}
	return nil
}

// maxMemRangeDels is how many range deletions (DeleteRow, DeleteFamily)
// the memtable may gather before apply flushes it: Pebble fragments all of
// a memtable's tombstones again for the first iterator after each new
// one, so a 64 MiB memtable full of them made every read slower with each
// (measured: 36% of a migration's CPU, under writers that delete rows); a
// flushed table keeps them fragmented. Measured on RUBiS's
// browsing-to-bidding migration at scale 0.01 (one run each): never
// flushing for them, the writes after the migration ran at 2.9× their p50
// before it; flushing every 512, the verify's writes at 12× (small tables
// to compact, on two cores); every 4096, 1.7× and 3.2×, and the backfill
// fastest.
const maxMemRangeDels = 4096

func cloneAll(bs [][]byte) [][]byte {
	if bs == nil {
		return nil
	}
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = bytes.Clone(b)
	}
	return out
}
