// Package txnstore makes every Apply all-or-nothing, as readers see it, on a
// store that is atomic per row only (Bigtable): a logical write that
// changes several rows — several layouts, copies in several column
// families, secondary-index entries — is never seen half done, and once
// acknowledged is never lost, even if its writer dies halfway.
//
// # Protocol (an intent log rolled forward)
//
// Every table gets a hidden family "_kvs" with two cells per row: "seq",
// the version of the last write applied to the row, and "txn", present
// while a multi-row write applied to the row is unfinished. A version is
// 12 bytes: a hybrid-logical-clock microsecond count (strictly increasing in
// a process), then a random writer id; byte order is write order.
//
// A write of one row is one row-atomic mutation that also sets seq. A write
// of several rows, at version v:
//  1. commits: it writes the intent — every mutation, expanded with the
//     bookkeeping cells — as one row of table "_kvschema_intents" keyed by
//     v. From here on the write will happen;
//  2. applies: every row's mutations plus seq=v and txn=v, in one bulk
//     write (rows atomically, in any order);
//  3. clears txn=v from every row, in one bulk write;
//  4. deletes the intent.
//
// A DeleteRow keeps the row as a tombstone holding only seq, so that an
// older write rolled forward late cannot bring it back (see Repair).
//
// A reader that meets a row with txn=v finishes the write before it returns
// that row: it reads the intent; if it is there, it rolls every row forward
// with a conditional mutation (apply v's mutations unless the row's seq is
// already ≥ v, so a write that overtook v is never undone), clears txn=v
// where it is still v and deletes the intent; then it reads the row again.
// If the intent is gone, v finished meanwhile and the row is read again.
// The first read or write of a Store value, and Repair, roll forward every
// intent left in the log (by writers that died) the same way.
//
// # Guarantee
//
//   - Every row a read returns shows each write wholly or not at all, and
//     once a read has returned any row in the state after a write w, w has
//     been applied to every row it changes: every read that starts later
//     sees all of w (monotonic reads across rows).
//   - A read of several rows, like any Bigtable scan, is not a snapshot:
//     rows read before a write reached them show the state before it, rows
//     after show the state after (read committed per row, as Bigtable).
//   - Apply returning nil means every row holds the write. An error before
//     the commit means nothing was written; an error after it
//     (errors.Is(err, ErrPending)) means the write is durable and will be
//     finished by the next reader that meets one of its rows, the next
//     Store value (process) to read or write, or Repair — until then, reads
//     of rows it did not reach show the state before it.
//   - Writers must not write the same rows from several processes at once:
//     the intent log orders the writes of one process (kvschema's engine
//     serializes writers of one entity with locks); concurrent writers in
//     different processes to the same rows may leave copies disagreeing,
//     exactly as on the embedded stores, which are single-process.
package txnstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/store"
)

const (
	// Family is the hidden bookkeeping family of every table.
	Family = "_kvs"
	// IntentTable holds the intents of unfinished multi-row writes.
	IntentTable  = "_kvschema_intents"
	intentFamily = "i"
)

var (
	seqQ    = []byte("seq")
	txnQ    = []byte("txn")
	intentQ = []byte("m")
)

// ErrPending marks an Apply error after the commit: the write is durable
// and will be finished by readers, the next writer or Repair.
var ErrPending = errors.New("write committed but not yet applied to every row")

// Inner is what txnstore needs of the store underneath: per-row atomic
// writes and conditional row mutations.
type Inner interface {
	store.Store
	store.Conditional
}

// Store is the all-or-nothing store over an Inner.
type Store struct {
	inner  Inner
	writer [4]byte

	clockMu sync.Mutex
	last    uint64 // last version's clock value

	mu        sync.Mutex
	families  map[string][]string // user families of known tables
	recovered bool
	resolving map[string]chan struct{} // versions being rolled forward

	rolledForward atomic.Int64
}

// New wraps inner.
func New(inner Inner) *Store {
	s := &Store{inner: inner, families: map[string][]string{}, resolving: map[string]chan struct{}{}}
	_, _ = rand.Read(s.writer[:])
	return s
}

// Inner returns the wrapped store.
func (s *Store) Inner() Inner { return s.inner }

// RolledForward counts the writes this Store value finished for others
// (or for itself after a failure): a measure of recovery work.
func (s *Store) RolledForward() int64 { return s.rolledForward.Load() }

// version returns a fresh version, greater than every earlier one of s.
func (s *Store) version() []byte {
	s.clockMu.Lock()
	now := uint64(time.Now().UnixMicro())
	if now <= s.last {
		now = s.last + 1
	}
	s.last = now
	s.clockMu.Unlock()
	v := binary.BigEndian.AppendUint64(nil, now)
	return append(v, s.writer[:]...)
}

// observe moves the clock past a version seen in the store, so that this
// writer's versions follow those of the writers whose intents it finished.
func (s *Store) observe(v []byte) {
	if len(v) < 8 {
		return
	}
	t := binary.BigEndian.Uint64(v)
	s.clockMu.Lock()
	s.last = max(s.last, t)
	s.clockMu.Unlock()
}

// CreateTable creates the table with the hidden family too.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if spec.Name == IntentTable {
		return fmt.Errorf("txnstore: table name %s is reserved", IntentTable)
	}
	if slices.Contains(spec.Families, Family) {
		return fmt.Errorf("txnstore: table %s: family name %s is reserved", spec.Name, Family)
	}
	if err := s.ensureIntents(ctx); err != nil {
		return err
	}
	inner := spec
	inner.Families = append(slices.Clip(spec.Families), Family)
	if err := s.inner.CreateTable(ctx, inner); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range spec.Families {
		if !slices.Contains(s.families[spec.Name], f) {
			s.families[spec.Name] = append(s.families[spec.Name], f)
		}
	}
	return nil
}

func (s *Store) ensureIntents(ctx context.Context) error {
	s.mu.Lock()
	_, ok := s.families[IntentTable]
	s.mu.Unlock()
	if ok {
		return nil
	}
	if err := s.inner.CreateTable(ctx, store.TableSpec{Name: IntentTable, Families: []string{intentFamily}}); err != nil {
		return err
	}
	s.mu.Lock()
	s.families[IntentTable] = []string{intentFamily}
	s.mu.Unlock()
	return nil
}

// Tables lists the user tables with their user families.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	specs, err := s.inner.Tables(ctx)
	if err != nil {
		return nil, err
	}
	out := specs[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, spec := range specs {
		if spec.Name == IntentTable {
			continue
		}
		spec.Families = slices.DeleteFunc(spec.Families, func(f string) bool { return f == Family })
		s.families[spec.Name] = slices.Clone(spec.Families)
		out = append(out, spec)
	}
	return out, nil
}

// userRow strips the hidden cells from r, returning the marker's version
// (nil if none) and whether any user cell is left.
func userRow(r store.Row) (out store.Row, marker []byte, ok bool) {
	out.Key = r.Key
	for _, c := range r.Cells {
		if c.Family == Family {
			if bytes.Equal(c.Qualifier, txnQ) {
				marker = c.Value
			}
			continue
		}
		out.Cells = append(out.Cells, c)
	}
	return out, marker, len(out.Cells) > 0
}

// maxRereads bounds how often a read follows new markers on one row before
// it gives up (a row rewritten by multi-row writes faster than it can be
// read).
const maxRereads = 16

// settle returns row r (just read) with every write it takes part in
// finished: it rolls forward the write a marker names and reads the row
// again.
func (s *Store) settle(ctx context.Context, table string, r store.Row) (store.Row, bool, error) {
	var prev []byte
	for range maxRereads {
		out, marker, ok := userRow(r)
		if marker == nil || bytes.Equal(marker, prev) {
			// No write in progress; or the marker's intent is gone and the
			// row still shows it: a writer died between its last two steps,
			// so the write is complete and the marker stale (Repair clears it).
			return out, ok, nil
		}
		if err := s.resolve(ctx, slices.Clone(marker)); err != nil {
			return store.Row{}, false, err
		}
		prev = slices.Clone(marker)
		var found bool
		var err error
		if r, found, err = s.inner.ReadRow(ctx, table, r.Key); err != nil {
			return store.Row{}, false, err
		}
		if !found {
			return store.Row{}, false, nil
		}
	}
	return store.Row{}, false, fmt.Errorf("txnstore: %s row %q: still being rewritten after %d reads", table, r.Key, maxRereads)
}

// ReadRow reads one row, finishing the write in progress on it if any.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if table == IntentTable {
		return store.Row{}, false, fmt.Errorf("txnstore: table %s: %w", table, store.ErrNoTable)
	}
	if err := s.recoverOnce(ctx); err != nil {
		return store.Row{}, false, err
	}
	r, found, err := s.inner.ReadRow(ctx, table, key)
	if err != nil || !found {
		return store.Row{}, false, err
	}
	return s.settle(ctx, table, r)
}

// ReadRows streams the selected rows, each settled. Tombstones are skipped,
// so a limited read asks the inner store for the rows still wanted and, if
// tombstones took some of them, reads on after the last row seen (one more
// round trip, only then).
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if table == IntentTable {
		return fmt.Errorf("txnstore: table %s: %w", table, store.ErrNoTable)
	}
	if err := s.recoverOnce(ctx); err != nil {
		return err
	}
	limit := opts.Limit
	n := 0
	for {
		var cbErr error
		var last []byte
		seen, stopped := 0, false
		if limit > 0 {
			opts.Limit = limit - n
		}
		err := s.inner.ReadRows(ctx, table, rs, opts, func(r store.Row) bool {
			seen++
			last = append(last[:0], r.Key...)
			out, ok, err := s.settle(ctx, table, r)
			if err != nil {
				cbErr = err
				return false
			}
			if !ok {
				return true
			}
			n++
			if !fn(out) || (limit > 0 && n >= limit) {
				stopped = true
				return false
			}
			return true
		})
		if err := cmpErr(cbErr, err); err != nil || stopped || limit == 0 || seen < opts.Limit {
			return err // done: stopped, unlimited, or the selection ran out
		}
		rs = beyond(rs, last, opts.Reverse)
	}
}

// beyond restricts rs to the keys after last in reading order.
func beyond(rs store.RowSet, last []byte, reverse bool) store.RowSet {
	var out store.RowSet
	for _, r := range rs.Normalize() {
		if reverse {
			if bytes.Compare(r.Start, last) >= 0 {
				continue
			}
			if r.End == nil || bytes.Compare(r.End, last) > 0 {
				r.End = last
			}
		} else {
			next := store.KeySuccessor(last)
			if r.End != nil && bytes.Compare(r.End, next) <= 0 {
				continue
			}
			if bytes.Compare(r.Start, next) < 0 {
				r.Start = next
			}
		}
		out.Ranges = append(out.Ranges, r)
	}
	return out
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// unmark deletes the marker of a row.
func unmark(table string, key []byte) store.Mutation {
	return store.Mutation{Kind: store.DeleteCell, Table: table, Row: key, Family: Family, Qualifier: txnQ}
}

// rowGroup is the mutations of one row, in order.
type rowGroup struct {
	table string
	key   []byte
	muts  []store.Mutation
}

// group splits muts by row (store.GroupByRow).
func group(muts []store.Mutation) []*rowGroup {
	rows := store.GroupByRow(muts)
	out := make([]*rowGroup, len(rows))
	for i, r := range rows {
		out[i] = &rowGroup{table: r[0].Table, key: r[0].Row, muts: r}
	}
	return out
}

// check validates muts before anything is written: known tables and
// families, no hidden ones, nothing the inner store rejects — a write that
// could not be finished would stay in the log for ever.
func (s *Store) check(ctx context.Context, muts []store.Mutation) error {
	if mc, ok := s.inner.(store.MutationChecker); ok {
		if err := mc.CheckMutations(muts); err != nil {
			return err
		}
	}
	for i, m := range muts {
		fams, err := s.tableFamilies(ctx, m.Table)
		if err != nil {
			return fmt.Errorf("txnstore: mutation %d: %w", i, err)
		}
		if m.Kind < store.SetCell || m.Kind > store.DeleteRow {
			return fmt.Errorf("txnstore: mutation %d: unknown kind %v", i, m.Kind)
		}
		if m.Kind != store.DeleteRow && !slices.Contains(fams, m.Family) {
			return fmt.Errorf("txnstore: mutation %d: table %s has no family %q", i, m.Table, m.Family)
		}
	}
	return nil
}

// tableFamilies returns a table's user families, asking the store once for
// a table not seen yet.
func (s *Store) tableFamilies(ctx context.Context, table string) ([]string, error) {
	if table == IntentTable {
		return nil, fmt.Errorf("table %s: %w", table, store.ErrNoTable)
	}
	s.mu.Lock()
	fams, ok := s.families[table]
	s.mu.Unlock()
	if ok {
		return fams, nil
	}
	// A one-row read tells a missing table cheaply; listing the tables
	// (one call per table on Bigtable) is for the families of existing ones.
	if _, _, err := s.inner.ReadRow(ctx, table, nil); err != nil {
		return nil, err
	}
	if _, err := s.Tables(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	fams, ok = s.families[table]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("table %q: %w", table, store.ErrNoTable)
	}
	return fams, nil
}

// Apply writes muts all-or-nothing (see the package doc).
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if len(muts) == 0 {
		return ctx.Err()
	}
	if err := s.check(ctx, muts); err != nil {
		return err
	}
	if err := s.recoverOnce(ctx); err != nil {
		return err
	}
	v := s.version()
	groups := group(muts)
	for _, g := range groups {
		g.muts = append(g.muts, store.Mutation{Kind: store.SetCell, Table: g.table, Row: g.key, Family: Family, Qualifier: seqQ, Value: v})
	}
	if len(groups) == 1 {
		return s.inner.Apply(ctx, groups[0].muts)
	}
	var expanded []store.Mutation
	for _, g := range groups {
		expanded = append(expanded, g.muts...)
	}
	// 1. Commit.
	if err := s.inner.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: IntentTable, Row: v, Family: intentFamily, Qualifier: intentQ, Value: encodeIntent(expanded)}}); err != nil {
		return fmt.Errorf("txnstore: commit: %w", err)
	}
	// 2. Apply, marking every row.
	marked := make([]store.Mutation, 0, len(expanded)+len(groups))
	for _, g := range groups {
		marked = append(marked, g.muts...)
		marked = append(marked, store.Mutation{Kind: store.SetCell, Table: g.table, Row: g.key, Family: Family, Qualifier: txnQ, Value: v})
	}
	if err := s.inner.Apply(ctx, marked); err != nil {
		// Some rows may hold the write: finish it the way a reader would.
		if rerr := s.resolve(ctx, v); rerr != nil {
			return fmt.Errorf("txnstore: %w: %w (finishing it: %w)", ErrPending, err, rerr)
		}
		return nil
	}
	// 3. Clear the markers; 4. forget the intent. The write is whole
	// already: a failure here leaves work a reader or Repair finishes, and
	// the write stays acknowledged.
	unmarks := make([]store.Mutation, len(groups))
	for i, g := range groups {
		unmarks[i] = unmark(g.table, g.key)
	}
	if s.inner.Apply(ctx, unmarks) == nil {
		_ = s.inner.Apply(ctx, []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: v}})
	}
	return nil
}

// recoverOnce rolls forward the intents left by dead writers before this
// Store value's first read or write, so that its writes follow theirs and
// its reads see them whole.
func (s *Store) recoverOnce(ctx context.Context) error {
	s.mu.Lock()
	done := s.recovered
	s.mu.Unlock()
	if done {
		return nil
	}
	if _, err := s.RollForward(ctx, nil); err != nil {
		return err
	}
	s.mu.Lock()
	s.recovered = true
	s.mu.Unlock()
	return nil
}

// RollForward finishes every write left in the intent log, oldest first,
// calling progress (if set) after each; it returns how many it finished.
func (s *Store) RollForward(ctx context.Context, progress func(done int)) (int, error) {
	var versions [][]byte
	err := s.inner.ReadRows(ctx, IntentTable, store.All(), store.ReadOptions{}, func(r store.Row) bool {
		versions = append(versions, slices.Clone(r.Key))
		return true
	})
	if errors.Is(err, store.ErrNoTable) {
		return 0, nil // nothing was ever written through txnstore
	}
	if err != nil {
		return 0, fmt.Errorf("txnstore: read intents: %w", err)
	}
	for i, v := range versions {
		if err := s.resolve(ctx, v); err != nil {
			return i, err
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	return len(versions), nil
}

// resolve finishes the write at version v if its intent is still there.
// Concurrent calls for one version in this process share the work.
func (s *Store) resolve(ctx context.Context, v []byte) error {
	id := string(v)
	s.mu.Lock()
	if ch, ok := s.resolving[id]; ok {
		s.mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ch := make(chan struct{})
	s.resolving[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.resolving, id)
		s.mu.Unlock()
		close(ch)
	}()

	r, found, err := s.inner.ReadRow(ctx, IntentTable, v)
	if err != nil {
		return fmt.Errorf("txnstore: read intent: %w", err)
	}
	if !found {
		return nil // finished meanwhile
	}
	var muts []store.Mutation
	for _, c := range r.Cells {
		if c.Family == intentFamily && bytes.Equal(c.Qualifier, intentQ) {
			if muts, err = decodeIntent(c.Value); err != nil {
				return fmt.Errorf("txnstore: intent %x: %w", v, err)
			}
		}
	}
	s.observe(v)
	groups := group(muts)
	// Roll every row forward unless a write at v or later reached it.
	applied := store.Cond{Family: Family, Qualifier: seqQ, Min: v}
	if err := s.eachRow(ctx, groups, func(g *rowGroup) error {
		_, err := s.inner.ApplyIf(ctx, g.table, g.key, applied, nil, g.muts)
		if errors.Is(err, store.ErrNoTable) {
			return nil // the table was dropped since: nothing to apply
		}
		return err
	}); err != nil {
		return fmt.Errorf("txnstore: roll forward %x: %w", v, err)
	}
	// Clear the markers that still name v.
	marker := store.Cond{Family: Family, Qualifier: txnQ, Min: v, Max: store.KeySuccessor(v)}
	if err := s.eachRow(ctx, groups, func(g *rowGroup) error {
		_, err := s.inner.ApplyIf(ctx, g.table, g.key, marker, []store.Mutation{unmark(g.table, g.key)}, nil)
		if errors.Is(err, store.ErrNoTable) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("txnstore: clear markers of %x: %w", v, err)
	}
	if err := s.inner.Apply(ctx, []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: v}}); err != nil {
		return fmt.Errorf("txnstore: delete intent %x: %w", v, err)
	}
	s.rolledForward.Add(1)
	return nil
}

// rowParallelism bounds the conditional mutations of one roll-forward in
// flight at once (one round trip each; Bigtable has no bulk form).
const rowParallelism = 16

func (s *Store) eachRow(ctx context.Context, groups []*rowGroup, f func(*rowGroup) error) error {
	sem := make(chan struct{}, rowParallelism)
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(g)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Capabilities: writes are all-or-nothing for readers.
func (s *Store) Capabilities() store.Capabilities { return store.Capabilities{AtomicBatch: true} }

// Close closes the inner store.
func (s *Store) Close() error { return s.inner.Close() }

// Snapshot saves the inner store's content, when it can (store.Snapshotter).
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	sn, ok := s.inner.(store.Snapshotter)
	if !ok {
		return nil, fmt.Errorf("txnstore: %T cannot snapshot: %w", s.inner, errors.ErrUnsupported)
	}
	inner, err := sn.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return &snapshot{Snapshot: inner, s: s}, nil
}

type snapshot struct {
	store.Snapshot
	s *Store
}

// Restore restores the inner store and forgets the tables known since.
func (sn *snapshot) Restore(ctx context.Context) error {
	err := sn.Snapshot.Restore(ctx)
	sn.s.mu.Lock()
	sn.s.families = map[string][]string{}
	sn.s.mu.Unlock()
	return err
}
