// Package txnstore makes every Apply all-or-nothing, as readers see it, on a
// store that is atomic per row only (Bigtable): a logical write that
// changes several rows — several layouts, copies in several column
// families, secondary-index entries — is never seen half done, and once
// acknowledged is never lost, even if its writer dies halfway. It needs
// nothing of the store but per-row atomic writes and one conditional row
// mutation (Bigtable's CheckAndMutateRow); it never relies on clocks.
//
// # Protocol: row locks and a commit record
//
// Every table gets a hidden family "_kvs". Its cell "txn" is the row's
// lock: the id of the multi-row write that owns the row until that write
// is applied to it. A write id is 16 bytes: the writer's clock in
// microseconds when the write was first tried, then 8 random bytes. Ids
// order writers by age only to settle conflicts (below); no effect of a
// write is ordered by a clock, so clock skew between processes costs at
// most fairness.
//
// A write of one row is one conditional row mutation: apply the mutations
// if the row has no lock. A write of several rows, with a fresh id w:
//  1. prepares: writes its intent — its mutations and the status
//     "prepared" — as the row w of table "_kvschema_intents";
//  2. locks every row it changes (in parallel): set txn=w if the row has
//     no lock;
//  3. commits: turns the intent's status from "prepared" into "committed"
//     with a conditional mutation. This is the moment the write happens:
//     before it, no row shows any of it; after it, every reader or writer
//     that meets one of its rows finishes it first;
//  4. applies each row's mutations and removes its lock, in one
//     conditional mutation per row (only while txn=w), in parallel;
//  5. deletes the intent.
//
// A lock is removed only by applying its write (once committed) or by
// aborting its write (never committed), so a row receives the committed
// writes that change it in the order they committed, whoever finishes
// them.
//
// Conflicts. A writer that finds a row locked by another write u reads u's
// intent:
//   - committed: it finishes u (steps 4 and 5 for every row of u) and
//     tries the row again;
//   - gone: u was aborted, or finished just now; it removes u's lock if it
//     is still there and tries again;
//   - prepared: wait-die. A write older than u waits for u; a younger one
//     gives up its own locks and tries again later with a new id but its
//     first clock value, so it ends up the oldest. A write that stays
//     prepared for Options.LockTimeout, as this process measures it (its
//     writer presumably died between steps 1 and 3), is aborted: its
//     intent is deleted with a conditional mutation (only while still
//     prepared), after which its writer's commit cannot succeed.
//
// Readers never wait: a row locked by a prepared write is returned as it
// is (the write has not happened yet); a row locked by a committed write
// is finished first and read again.
//
// Cell expiry (Mutation.Expires) is the inner store's: the intent keeps
// each SetCell's Expires (see intent.go) and finishing a write applies it
// as is, so a cell whose instant passed before its write was finished is
// absent from the start; reads, conditions and guards read through the
// inner store at store.Now(ctx), which drops expired cells. The
// bookkeeping cells (locks, intents) never expire. The protocol itself
// still relies on no clock.
//
// # Guarantees
//
//   - A write is atomic and linearizable at its commit: every row a read
//     returns shows it wholly or not at all, and once a read has returned
//     any row in the state after a write w, every read that starts later
//     sees all of w (monotonic reads across rows).
//   - A read of several rows, like any Bigtable scan, is not a snapshot:
//     rows read before a write committed show the state before it, rows
//     after show the state after (read committed per row, as Bigtable).
//   - Apply returning nil means every row holds the write. An error
//     wrapping ErrPending means the write is committed and will be
//     finished by the next reader or writer that meets one of its rows, or
//     by Repair. An error wrapping ErrAmbiguous means the store failed at
//     the commit (for a write of one row, at its one mutation) and the
//     outcome could not be learned: the write is either committed (and
//     finished as above) or never will be. Any other error means nothing
//     was written, and nothing of it ever will be.
//   - Writers in several processes may write the same rows at once:
//     conflicting writes are serialized by the rows' locks. Isolation of
//     what a caller read before writing is the caller's business; a
//     caller that must know a row is as it read it guards its write with
//     that row (ApplyGuards, store.Guarded): the row is locked with the
//     others, checked once all are held, and the write commits only if the
//     check holds (the engine's lightweight transactions). Its other
//     read-modify-writes are serialized by locks of one process only.
//
// TestModel checks these guarantees against a model of the store's
// content, on random interleavings of writers of several processes paused
// at any store call, cancelled or killed there, single row mutations
// failing before or after they apply, and readers.
//
// Bookkeeping left by dead writers (intents, locks) costs readers one
// intent lookup per locked row; Repair clears it. Loads, whose rows no one
// writes meanwhile, skip it all (ApplyRows).
package txnstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema/store"
)

const (
	// Family is the hidden bookkeeping family of every table.
	Family = "_kvs"
	// IntentTable holds the intents of multi-row writes in progress.
	IntentTable  = "_kvschema_intents"
	intentFamily = "i"
)

var (
	lockQ    = []byte("txn") // a row's lock: the owning write's id
	seqQ     = []byte("seq") // the last write's version, in format-1 stores
	intentQ  = []byte("m")   // the intent's mutations
	statusQ  = []byte("s")   // the intent's status
	prepared = []byte("p")
	commited = []byte("c")
)

// ErrPending marks an Apply error after the commit: the write is durable
// and will be finished by readers, the next writer or Repair.
var ErrPending = errors.New("write committed but not yet applied to every row")

// ErrAmbiguous marks an Apply error at the commit whose outcome could not
// be learned: the write either happened (wholly, for every reader) or never
// will.
var ErrAmbiguous = errors.New("the store failed at the commit: the write happened wholly or not at all, and which is unknown")

// errDie: a write lost a conflict to an older one and must start again.
var errDie = errors.New("txnstore: lost a conflict to an older write")

// Inner is what txnstore needs of the store underneath: per-row atomic
// writes and conditional row mutations.
type Inner interface {
	store.Store
	store.Conditional
}

// Options tune a Store.
type Options struct {
	// LockTimeout is how long a writer waits for a row locked by a
	// prepared (not committed) write before it aborts that write, whose
	// writer presumably died. A live writer aborted this way tries again.
	// Default 5 s.
	LockTimeout time.Duration
	// Now is the clock write priorities come from (default time.Now).
	Now func() time.Time
}

// DefaultLockTimeout is Options.LockTimeout's default.
const DefaultLockTimeout = 5 * time.Second

// Store is the all-or-nothing store over an Inner.
type Store struct {
	inner Inner
	opts  Options

	mu       sync.Mutex
	families map[string][]string      // user families of known tables
	calls    map[string]*call         // writes this process is finishing
	own      map[string]chan struct{} // this process's writes before their commit
	met      map[string]time.Time     // prepared writes of others: when first met

	rolledForward, aborted, conflicts atomic.Int64
}

// call is one finishing of a committed write, shared by the callers of
// this process that need it.
type call struct {
	done chan struct{}
	err  error
}

// New wraps inner.
func New(inner Inner, opts ...Options) *Store {
	s := &Store{inner: inner, families: map[string][]string{}, calls: map[string]*call{}, own: map[string]chan struct{}{}, met: map[string]time.Time{}}
	if len(opts) > 0 {
		s.opts = opts[0]
	}
	if s.opts.LockTimeout <= 0 {
		s.opts.LockTimeout = DefaultLockTimeout
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	return s
}

// Inner returns the wrapped store.
func (s *Store) Inner() Inner { return s.inner }

// DropTable implements store.TableDropper with the inner store's; it
// fails with an error wrapping errors.ErrUnsupported when the inner store
// has none. A table being dropped has no writer left, so no intent of
// this log names it.
func (s *Store) DropTable(ctx context.Context, name string) error {
	d, ok := s.inner.(store.TableDropper)
	if !ok {
		return fmt.Errorf("txnstore: the inner store drops no tables (%T): %w", s.inner, errors.ErrUnsupported)
	}
	return d.DropTable(ctx, name)
}

// RolledForward counts the writes this Store value finished for others
// (or for itself after a failure): a measure of recovery work.
func (s *Store) RolledForward() int64 { return s.rolledForward.Load() }

// Aborted counts the prepared writes this Store value aborted.
func (s *Store) Aborted() int64 { return s.aborted.Load() }

// Conflicts counts the times a write of this Store value found a row
// locked by another write.
func (s *Store) Conflicts() int64 { return s.conflicts.Load() }

// newID returns a fresh write id with the given priority.
func newID(prio uint64) []byte {
	id := binary.BigEndian.AppendUint64(make([]byte, 0, 16), prio)
	var r [8]byte
	_, _ = rand.Read(r[:])
	return append(id, r[:]...)
}

// older reports whether write a has priority over write b: it was first
// tried earlier (ties broken by the random part).
func older(a, b []byte) bool { return bytes.Compare(a, b) < 0 }

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

// userRow strips the hidden cells from r, returning the lock (nil if none)
// and whether any user cell is left.
func userRow(r store.Row) (out store.Row, lock []byte, ok bool) {
	out.Key = r.Key
	for _, c := range r.Cells {
		if c.Family == Family {
			if bytes.Equal(c.Qualifier, lockQ) {
				lock = c.Value
			}
			continue
		}
		out.Cells = append(out.Cells, c)
	}
	return out, lock, len(out.Cells) > 0
}

// maxRereads bounds how often a read finishes writes on one row before it
// gives up (a row rewritten by multi-row writes faster than it can be read).
const maxRereads = 16

// settle returns row r (just read) as of the writes committed when it was
// read: a lock of a committed write is finished and the row read again.
func (s *Store) settle(ctx context.Context, table string, r store.Row) (store.Row, bool, error) {
	for range maxRereads {
		out, lock, ok := userRow(r)
		if lock == nil {
			return out, ok, nil
		}
		lock = slices.Clone(lock)
		st, err := s.intent(ctx, lock)
		if err != nil {
			return store.Row{}, false, err
		}
		switch st.state {
		case statePrepared:
			// Not committed when the row was read (the intent was read
			// after the row): the row shows the state before it.
			return out, ok, nil
		case stateCommitted:
			err = s.finish(ctx, lock, st, true)
		case stateGone:
			err = s.unlock(ctx, table, r.Key, lock)
		}
		if err != nil {
			return store.Row{}, false, err
		}
		var found bool
		if r, found, err = s.inner.ReadRow(ctx, table, r.Key); err != nil || !found {
			return store.Row{}, false, err
		}
	}
	return store.Row{}, false, fmt.Errorf("txnstore: %s row %q: still being rewritten after %d reads", table, r.Key, maxRereads)
}

// ReadRow reads one row, finishing the committed write on it if any.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if table == IntentTable {
		return store.Row{}, false, fmt.Errorf("txnstore: table %s: %w", table, store.ErrNoTable)
	}
	r, found, err := s.inner.ReadRow(ctx, table, key)
	if err != nil || !found {
		return store.Row{}, false, err
	}
	return s.settle(ctx, table, r)
}

// ReadRows streams the selected rows, each settled. Rows holding only
// bookkeeping (a lock of a row being inserted; a format-1 tombstone) are
// skipped, so a limited read asks the inner store for the rows still
// wanted and, if such rows took some of them, reads on after the last row
// seen (one more round trip, only then).
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if table == IntentTable {
		return fmt.Errorf("txnstore: table %s: %w", table, store.ErrNoTable)
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
		if err := cmp(cbErr, err); err != nil || stopped || limit == 0 || seen < opts.Limit {
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

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Conditions and mutations of the bookkeeping cells.

func lockIs(id []byte) store.Cond {
	return store.Cond{Family: Family, Qualifier: lockQ, Min: id, Max: store.KeySuccessor(id)}
}

var locked = store.Cond{Family: Family, Qualifier: lockQ, Min: []byte{}}

func statusIs(v []byte) store.Cond {
	return store.Cond{Family: intentFamily, Qualifier: statusQ, Min: v, Max: store.KeySuccessor(v)}
}

func setLock(table string, key, id []byte) store.Mutation {
	return store.Mutation{Kind: store.SetCell, Table: table, Row: key, Family: Family, Qualifier: lockQ, Value: id}
}

func delLock(table string, key []byte) store.Mutation {
	return store.Mutation{Kind: store.DeleteCell, Table: table, Row: key, Family: Family, Qualifier: lockQ}
}

// unlock removes the lock id from a row if it is still there: the lock of
// a write that was aborted or is finished.
func (s *Store) unlock(ctx context.Context, table string, key, id []byte) error {
	_, err := s.inner.ApplyIf(ctx, table, key, lockIs(id), []store.Mutation{delLock(table, key)}, nil)
	if errors.Is(err, store.ErrNoTable) {
		return nil
	}
	return err
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

// CheckMutations reports the first mutation Apply would refuse without
// asking the store (store.MutationChecker): one the inner store rejects, of
// an unknown kind, or of the intent table. Apply checks tables and families
// as well.
func (s *Store) CheckMutations(muts []store.Mutation) error {
	// Cell expiry is the inner store's (Capabilities().Expiry).
	if !s.inner.Capabilities().Expiry {
		if err := store.CheckNoExpiry("txnstore", muts); err != nil {
			return err
		}
	}
	if mc, ok := s.inner.(store.MutationChecker); ok {
		if err := mc.CheckMutations(muts); err != nil {
			return err
		}
	}
	for i, m := range muts {
		if m.Table == IntentTable {
			return fmt.Errorf("txnstore: mutation %d: table %s: %w", i, m.Table, store.ErrNoTable)
		}
		if !m.Kind.Valid() {
			return fmt.Errorf("txnstore: mutation %d: unknown kind %v", i, m.Kind)
		}
	}
	return nil
}

// contextChecker is an inner store whose refusals depend on what it reads
// (bigtablestore: whether a table keeps cell expiry, as its registry says).
type contextChecker interface {
	CheckMutationsContext(ctx context.Context, muts []store.Mutation) error
}

// check validates muts before anything is written: known tables and
// families, no hidden ones, nothing the inner store rejects — a write that
// could not be finished would hold its rows for ever.
func (s *Store) check(ctx context.Context, muts []store.Mutation) error {
	if err := s.CheckMutations(muts); err != nil {
		return err
	}
	if cc, ok := s.inner.(contextChecker); ok {
		if err := cc.CheckMutationsContext(ctx, muts); err != nil {
			return err
		}
	}
	for i, m := range muts {
		fams, err := s.tableFamilies(ctx, m.Table)
		if err != nil {
			return fmt.Errorf("txnstore: mutation %d: %w", i, err)
		}
		// SetCell, DeleteCell and DeleteFamily name a user family: never
		// the hidden one, which holds the row's lock.
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
	if err := s.ensureIntents(ctx); err != nil {
		return err
	}
	groups := group(muts)
	if len(groups) == 1 {
		return s.applyRow(ctx, groups[0])
	}
	_, err := s.multiRow(ctx, muts, groups, nil)
	return err
}

// multiRow runs the protocol for a write of several rows (or a guarded
// one), trying again with a new id as long as conflicts make it give way.
func (s *Store) multiRow(ctx context.Context, muts []store.Mutation, groups []*rowGroup, gs []store.Guard) (applied bool, err error) {
	prio := uint64(s.opts.Now().UnixMicro())
	for attempt := 0; ; attempt++ {
		applied, err := s.try(ctx, newID(prio), muts, groups, gs)
		if !errors.Is(err, errDie) {
			return applied, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return false, err
		}
	}
}

// ApplyGuards applies muts as Apply does if every guard of gs holds
// (store.Guarded), for writers in every process: each guard's row is
// locked with the rows the batch changes (step 2), the guard rows are read
// once every lock is held, in one read per table — so no write of them can
// come before the commit — and, if a guard refuses, the write is abandoned
// instead of committed. The intent does not list a guard's row when the
// batch leaves it unchanged: if this writer dies after its commit,
// whoever finishes the write leaves that row's lock, which the next writer
// to meet it removes (its intent is gone).
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	if err := s.check(ctx, muts); err != nil {
		return false, err
	}
	for _, g := range gs {
		if g.Table == IntentTable {
			return false, fmt.Errorf("txnstore: guard on table %s: %w", g.Table, store.ErrNoTable)
		}
	}
	if err := s.ensureIntents(ctx); err != nil {
		return false, err
	}
	groups := group(muts)
	for _, g := range gs {
		if !slices.ContainsFunc(groups, func(r *rowGroup) bool { return r.table == g.Table && bytes.Equal(r.key, g.Row) }) {
			groups = append(groups, &rowGroup{table: g.Table, key: g.Row})
		}
	}
	if len(groups) == 0 {
		return true, nil
	}
	return s.multiRow(ctx, muts, groups, gs)
}

// guardsHold reads the guards' rows, which this write has locked, one
// read per table, and asks each guard's Holds, in order, about its row's
// cells (the bookkeeping family left out), until one refuses.
func (s *Store) guardsHold(ctx context.Context, gs []store.Guard) (bool, error) {
	rows := map[string][]store.Cell{} // table 0x00 row → cells
	var tables []string
	keys := map[string][][]byte{}
	for _, g := range gs {
		if _, ok := keys[g.Table]; !ok {
			tables = append(tables, g.Table)
		}
		keys[g.Table] = append(keys[g.Table], g.Row)
	}
	for _, t := range tables {
		err := s.inner.ReadRows(ctx, t, store.RowSet{Keys: keys[t]}, store.ReadOptions{}, func(r store.Row) bool {
			var cells []store.Cell
			for _, c := range r.Cells {
				if c.Family != Family {
					cells = append(cells, store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Value: bytes.Clone(c.Value)})
				}
			}
			rows[t+"\x00"+string(r.Key)] = cells
			return true
		})
		if err != nil {
			return false, err
		}
	}
	for _, g := range gs {
		if !g.Holds(rows[g.Table+"\x00"+string(g.Row)]) {
			return false, nil
		}
	}
	return true, nil
}

// ApplyRows writes the rows of muts each atomically, independently and
// without locks (store.RowWriter): for loads, whose rows no one writes
// meanwhile. Rows locked by a write in progress are written all the same.
func (s *Store) ApplyRows(ctx context.Context, muts []store.Mutation) error {
	if err := s.check(ctx, muts); err != nil {
		return err
	}
	return s.inner.Apply(ctx, muts)
}

// applyRow writes the mutations of one row once it has no lock. The
// write's one mutation is its commit: if it fails, whether it was applied
// (its reply lost) is unknown.
func (s *Store) applyRow(ctx context.Context, g *rowGroup) error {
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err // not sent
		}
		held, err := s.inner.ApplyIf(ctx, g.table, g.key, locked, nil, g.muts)
		if err != nil {
			return fmt.Errorf("txnstore: %w: %w", ErrAmbiguous, err)
		}
		if !held {
			return nil
		}
		if _, err := s.resolveLock(ctx, g.table, g.key, nil, n); err != nil {
			return err
		}
	}
}

// try makes one attempt at a multi-row write with id id.
func (s *Store) try(ctx context.Context, id []byte, muts []store.Mutation, groups []*rowGroup, gs []store.Guard) (applied bool, err error) {
	done := make(chan struct{})
	s.mu.Lock()
	s.own[string(id)] = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.own, string(id))
		s.mu.Unlock()
		close(done)
	}()

	// 1. Prepare.
	intent := []store.Mutation{
		{Kind: store.SetCell, Table: IntentTable, Row: id, Family: intentFamily, Qualifier: intentQ, Value: encodeIntent(muts)},
		{Kind: store.SetCell, Table: IntentTable, Row: id, Family: intentFamily, Qualifier: statusQ, Value: prepared},
	}
	if err := s.inner.Apply(ctx, intent); err != nil {
		s.abandon(ctx, id, nil)
		return false, fmt.Errorf("txnstore: prepare: %w", err)
	}
	// 2. Lock every row; the first failure stops the others.
	if err := s.eachRow(ctx, groups, true, func(ctx context.Context, g *rowGroup) error {
		return s.lockRow(ctx, g.table, g.key, id)
	}); err != nil {
		s.abandon(ctx, id, groups)
		if errors.Is(err, errDie) {
			return false, errDie
		}
		return false, fmt.Errorf("txnstore: lock rows: %w", err)
	}
	// A guarded write decides now: every row it changes, and the guards',
	// is locked, so none of them changes before the commit.
	if len(gs) > 0 {
		holds, err := s.guardsHold(ctx, gs)
		if err != nil || !holds {
			s.abandon(ctx, id, groups)
			if err != nil {
				return false, fmt.Errorf("txnstore: read guard rows: %w", err)
			}
			return false, nil
		}
	}
	// 3. Commit.
	ok, err := s.inner.ApplyIf(ctx, IntentTable, id, statusIs(prepared), []store.Mutation{{Kind: store.SetCell, Table: IntentTable, Row: id, Family: intentFamily, Qualifier: statusQ, Value: commited}}, nil)
	if err != nil {
		if ok, err = s.settleCommit(ctx, id, groups, err); err != nil {
			return false, err
		}
	}
	if !ok {
		// Aborted by a writer that took this one for dead: start again.
		s.abandon(ctx, id, groups)
		return false, errDie
	}
	// 4. Apply, 5. forget: as anyone who finishes a committed write.
	if err := s.finish(ctx, id, intentState{state: stateCommitted, groups: groups}, false); err != nil {
		return true, fmt.Errorf("txnstore: %w: %w", ErrPending, err)
	}
	return true, nil
}

// settleCommit learns the outcome of a commit that failed with err by
// trying to abort the write: if that succeeds the write never happens; if
// the intent is committed, it did. It reports whether the write is
// committed, or an error: the commit's own (nothing written) or one
// wrapping ErrAmbiguous — also when the intent is gone, which it is both
// when another writer aborted the write and when a reader finished it.
func (s *Store) settleCommit(ctx context.Context, id []byte, groups []*rowGroup, err error) (bool, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	aborted, aerr := s.inner.ApplyIf(dctx, IntentTable, id, statusIs(prepared), []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: id}}, nil)
	if aerr == nil && aborted {
		s.release(dctx, id, groups)
		return false, fmt.Errorf("txnstore: commit: %w", err)
	}
	var st intentState
	if aerr == nil {
		st, aerr = s.intent(dctx, id)
	}
	switch {
	case aerr != nil:
		return false, fmt.Errorf("txnstore: commit: %w: %w (learning the outcome: %w)", ErrAmbiguous, err, aerr)
	case st.state == stateCommitted:
		return true, nil
	default:
		return false, fmt.Errorf("txnstore: commit: %w: %w (and the intent is gone: aborted, or finished by a reader)", ErrAmbiguous, err)
	}
}

// abandon gives up an attempt before its commit: it deletes the intent
// (only while prepared) and releases the rows locked so far. It works on even if ctx ended, for a little
// while, so that a cancelled write leaves nothing for others to wait for.
// Failures are ignored: what is left is a prepared write that others abort
// after LockTimeout.
func (s *Store) abandon(ctx context.Context, id []byte, groups []*rowGroup) {
	dctx, cancel := detached(ctx)
	defer cancel()
	// Only this writer commits, and it no longer will: its locks can go
	// even if deleting the intent failed.
	_, _ = s.inner.ApplyIf(dctx, IntentTable, id, statusIs(prepared), []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: id}}, nil)
	s.release(dctx, id, groups)
}

// release removes the locks id holds among groups' rows.
func (s *Store) release(ctx context.Context, id []byte, groups []*rowGroup) {
	_ = s.eachRow(ctx, groups, false, func(ctx context.Context, g *rowGroup) error {
		return s.unlock(ctx, g.table, g.key, id)
	})
}

// cleanupTimeout bounds the work a failed or cancelled attempt does to
// clean up after itself.
const cleanupTimeout = 5 * time.Second

func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// lockRow locks one row for write id.
func (s *Store) lockRow(ctx context.Context, table string, key, id []byte) error {
	for n := 0; ; n++ {
		held, err := s.inner.ApplyIf(ctx, table, key, locked, nil, []store.Mutation{setLock(table, key, id)})
		if err != nil || !held {
			return err
		}
		if mine, err := s.resolveLock(ctx, table, key, id, n); err != nil || mine {
			return err
		}
	}
}

// resolveLock deals with a row found locked, on behalf of a writer whose
// own id is self (nil for a one-row write, which holds no lock); n counts
// the writer's tries of this row. mine reports that the lock is self's;
// else a nil error means the writer should try the row again, and errDie
// that it must give up its locks first.
func (s *Store) resolveLock(ctx context.Context, table string, key, self []byte, n int) (mine bool, err error) {
	r, _, err := s.inner.ReadRow(ctx, table, key)
	if err != nil {
		return false, err
	}
	_, holder, _ := userRow(r)
	if holder == nil {
		return false, nil // released meanwhile
	}
	if bytes.Equal(holder, self) {
		return true, nil
	}
	s.conflicts.Add(1)
	holder = slices.Clone(holder)
	st, err := s.intent(ctx, holder)
	if err != nil {
		return false, err
	}
	switch st.state {
	case stateCommitted:
		return false, s.finish(ctx, holder, st, true)
	case stateGone:
		return false, s.unlock(ctx, table, key, holder)
	}
	if s.waited(holder) >= s.opts.LockTimeout {
		return false, s.abort(ctx, holder)
	}
	if self != nil && !older(self, holder) {
		return false, errDie
	}
	return false, s.wait(ctx, holder, n)
}

// waited returns how long this process has seen write id prepared.
func (s *Store) waited(id []byte) time.Duration {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.met[string(id)]
	if !ok {
		if len(s.met) >= 4096 {
			for k, t := range s.met {
				if now.Sub(t) > 2*s.opts.LockTimeout {
					delete(s.met, k)
				}
			}
		}
		s.met[string(id)] = now
		return 0
	}
	return now.Sub(first)
}

// wait waits a little for write id to end: until it ends if it is this
// process's own, else for a backoff that grows with n.
func (s *Store) wait(ctx context.Context, id []byte, n int) error {
	s.mu.Lock()
	done := s.own[string(id)]
	s.mu.Unlock()
	if done == nil {
		return sleep(ctx, backoff(n))
	}
	t := time.NewTimer(s.opts.LockTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// abort aborts the prepared write id (if still prepared).
func (s *Store) abort(ctx context.Context, id []byte) error {
	ok, err := s.inner.ApplyIf(ctx, IntentTable, id, statusIs(prepared), []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: id}}, nil)
	if ok {
		s.aborted.Add(1)
	}
	return err
}

// backoff is the pause before try n+1 of a contended row or write: 1 ms
// doubling to 64 ms, with jitter.
func backoff(n int) time.Duration {
	d := time.Millisecond << min(n, 6)
	return d/2 + mrand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The states of a write, from its intent.
const (
	stateGone      = iota // no intent: aborted or finished
	statePrepared         // not committed yet
	stateCommitted        // committed: to be finished
)

// intentState is what an intent says of its write.
type intentState struct {
	state  int
	legacy bool        // a format-1 intent (committed, versioned rows)
	groups []*rowGroup // committed: the mutations per row
}

// intent reads write id's intent.
func (s *Store) intent(ctx context.Context, id []byte) (intentState, error) {
	r, found, err := s.inner.ReadRow(ctx, IntentTable, id)
	if err != nil {
		return intentState{}, fmt.Errorf("txnstore: read intent: %w", err)
	}
	if !found {
		return intentState{}, nil
	}
	var status, enc []byte
	for _, c := range r.Cells {
		if c.Family != intentFamily {
			continue
		}
		switch {
		case bytes.Equal(c.Qualifier, statusQ):
			status = c.Value
		case bytes.Equal(c.Qualifier, intentQ):
			enc = c.Value
		}
	}
	if bytes.Equal(status, prepared) {
		return intentState{state: statePrepared}, nil
	}
	format, muts, err := decodeIntent(enc)
	if err != nil {
		return intentState{}, fmt.Errorf("txnstore: intent %x: %w", id, err)
	}
	switch {
	case format == intentFormat && bytes.Equal(status, commited):
	case format == legacyFormat && status == nil:
	default:
		return intentState{}, fmt.Errorf("txnstore: intent %x: %w: format %d with status %q", id, errIntent, format, status)
	}
	return intentState{state: stateCommitted, legacy: format == legacyFormat, groups: group(muts)}, nil
}

// finish finishes the committed write id (steps 4 and 5), sharing the work
// with the other callers of this process that need it at the same time.
// A caller that waited for another's finishing which failed tries itself.
// recovery says the write is another's (or an earlier failed one's): a
// finishing counts in RolledForward.
func (s *Store) finish(ctx context.Context, id []byte, st intentState, recovery bool) error {
	key := string(id)
	for {
		s.mu.Lock()
		c, running := s.calls[key]
		if !running {
			c = &call{done: make(chan struct{})}
			s.calls[key] = c
		}
		s.mu.Unlock()
		if running {
			select {
			case <-c.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if c.err == nil {
				return nil
			}
			continue // that finishing failed: try it ourselves
		}
		c.err = s.rollForward(ctx, id, st)
		if c.err == nil && recovery {
			s.rolledForward.Add(1)
		}
		s.mu.Lock()
		delete(s.calls, key)
		s.mu.Unlock()
		close(c.done)
		return c.err
	}
}

// rollForward applies a committed write to every row it still locks, then
// deletes its intent.
func (s *Store) rollForward(ctx context.Context, id []byte, st intentState) error {
	if st.legacy {
		return s.finishLegacy(ctx, id, st.groups)
	}
	// A failed row is tried twice more: a transient error need not leave
	// the write to others.
	for try := 0; ; try++ {
		err := s.eachRow(ctx, st.groups, false, func(ctx context.Context, g *rowGroup) error {
			muts := append(slices.Clip(g.muts), delLock(g.table, g.key))
			_, err := s.inner.ApplyIf(ctx, g.table, g.key, lockIs(id), muts, nil)
			if errors.Is(err, store.ErrNoTable) {
				return nil // the table was dropped since: nothing to apply
			}
			return err
		})
		if err == nil {
			break
		}
		if try == 2 || ctx.Err() != nil {
			return fmt.Errorf("txnstore: roll forward %x: %w", id, err)
		}
	}
	// Every row is applied (a row without the lock is: a committed
	// write's lock goes only with its mutations). The intent goes even if
	// the caller's context just ended; a failure leaves an intent no lock
	// names, which Repair deletes.
	dctx, cancel := detached(ctx)
	defer cancel()
	_ = s.inner.Apply(dctx, []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: id}})
	return nil
}

// finishLegacy rolls forward a format-1 write (stores written before row
// locks): its mutations, which carry the row version "seq", apply to every
// row no later write reached (seq below the write's version), then its
// markers are cleared.
func (s *Store) finishLegacy(ctx context.Context, v []byte, groups []*rowGroup) error {
	later := store.Cond{Family: Family, Qualifier: seqQ, Min: v}
	if err := s.eachRow(ctx, groups, false, func(ctx context.Context, g *rowGroup) error {
		_, err := s.inner.ApplyIf(ctx, g.table, g.key, later, nil, g.muts)
		if errors.Is(err, store.ErrNoTable) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("txnstore: roll forward %x: %w", v, err)
	}
	if err := s.eachRow(ctx, groups, false, func(ctx context.Context, g *rowGroup) error {
		return s.unlock(ctx, g.table, g.key, v)
	}); err != nil {
		return fmt.Errorf("txnstore: clear markers of %x: %w", v, err)
	}
	if err := s.inner.Apply(ctx, []store.Mutation{{Kind: store.DeleteRow, Table: IntentTable, Row: v}}); err != nil {
		return fmt.Errorf("txnstore: delete intent %x: %w", v, err)
	}
	return nil
}

// rowParallelism bounds the conditional mutations of one write in flight
// at once (one round trip each; Bigtable has no bulk form).
const rowParallelism = 16

// eachRow runs f for every row group, rowParallelism at a time. With stop,
// the first error cancels the context of the others and is the one
// returned; else every error is returned, joined.
func (s *Store) eachRow(ctx context.Context, groups []*rowGroup, stop bool, f func(context.Context, *rowGroup) error) error {
	if len(groups) == 1 {
		return f(ctx, groups[0])
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, rowParallelism)
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if errs[i] = f(ctx, g); errs[i] != nil && stop {
				cancel(errs[i])
			}
		})
	}
	wg.Wait()
	if stop {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			for _, err := range errs {
				if err != nil {
					return cause
				}
			}
		}
	}
	return errors.Join(errs...)
}

// Capabilities: writes are all-or-nothing for readers; cell expiry is the
// inner store's (the intent log keeps Mutation.Expires, the bookkeeping
// cells never expire).
func (s *Store) Capabilities() store.Capabilities {
	in := s.inner.Capabilities()
	return store.Capabilities{AtomicBatch: true, Expiry: in.Expiry, Engine: in.Engine}
}

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
