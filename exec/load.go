package exec

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/scratch"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Row is one entity tuple offered to Load, with where it came from.
type Row struct {
	Entity *catalog.Entity
	Values []types.Value // Entity.Columns order; may be reused after the call
	File   string
	Line   int
}

// LoadError is a bad input row: its file, line and field.
type LoadError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *LoadError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: field %s: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// LoadOptions configure Load.
type LoadOptions struct {
	// Identity names the data set (e.g. a hash of the files, or the
	// generator's parameters). A load interrupted after some indexes were
	// complete resumes with the others when run again with the same
	// identity; a different identity on a store holding data is an error.
	Identity string
	// BatchBytes bounds the size of one store batch, its mutations'
	// table, row, family, qualifier and value bytes and 8 bytes each
	// (default 2 MiB: a batch the intent log of bigtable: URLs records as
	// one cell stays well under the 4 MiB a gRPC server such as Bigtable's
	// emulator accepts in one message).
	BatchBytes int
	// Progress, when set, is called as the data is read and as indexes
	// fill (never concurrently).
	Progress func(LoadEvent)
	// TempDir is where the load stages the data it reads (os.TempDir()
	// when ""): every tuple is written there once, checked, and joined
	// from there, so a data set need not fit in memory. It needs about the
	// data's size, twice for tuples with foreign keys.
	TempDir string
	// BeforeWrite, when set, is called once every row has been read and
	// checked, before anything is written; an error stops the load there.
	// A load that deploys its schema does so here, so that bad data
	// leaves the store as it was, definitions included.
	BeforeWrite func() error
}

// LoadEvent is one report of a load's progress.
type LoadEvent struct {
	// Index is the index being written; "" while the data is read and
	// checked.
	Index string
	// Rows are the entity rows read so far (Index ""), or the rows written
	// to Index so far.
	Rows int64
	// Estimate is the number of rows Index is expected to get (from the
	// model's statistics, so only an estimate); 0 when unknown.
	Estimate int64
	// Done: Index is complete, with Rows rows.
	Done bool
	// Earlier: Index was loaded by an earlier run of the same load (Done
	// is set, Rows is 0).
	Earlier bool
}

// LoadStats describe a load.
type LoadStats struct {
	EntityRows  int64 // tuples read
	IndexRows   int64 // rows written, all indexes together
	Skipped     int   // indexes already loaded by an earlier run
	Read, Write time.Duration
}

// Load reads every tuple rows offers, stages it on disk (LoadOptions.TempDir),
// checks them (types, keys, duplicate keys, foreign keys), and only then writes the rows every index implies,
// joins for denormalized CFs included, in large batches. Nothing is written
// when a row is bad. Writes are idempotent puts, and each finished index is
// recorded, so an interrupted load run again finishes without duplicates.
func (e *Engine) Load(ctx context.Context, rows func(yield func(Row) error) error, opt LoadOptions) (*LoadStats, error) {
	if e.schema == nil {
		return nil, ErrNoSchema
	}
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = 2 << 20
	}
	st := &LoadStats{}
	start := time.Now()
	sm, err := scratch.Open(opt.TempDir)
	if err != nil {
		return nil, fmt.Errorf("load: staging area: %w", err)
	}
	defer sm.Close()
	data := newStaged(e.m, sm)
	w := &stager{s: data, b: sm.NewBatch(), last: map[*catalog.Entity][]byte{}, commitBytes: 8 << 20}
	defer func() { w.b.Close() }()
	err = rows(func(r Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ent := r.Entity
		if _, ok := data.entNo[ent]; !ok {
			// An entity of another build of the model: the same by name.
			if ent = e.m.Entity(r.Entity.Name); ent == nil {
				return &LoadError{File: r.File, Line: r.Line, Msg: fmt.Sprintf("unknown entity %q", r.Entity.Name)}
			}
		}
		if len(r.Values) != len(ent.Columns) {
			return &LoadError{File: r.File, Line: r.Line, Msg: fmt.Sprintf("%d values for the %d columns of %s", len(r.Values), len(ent.Columns), ent.Name)}
		}
		for i, c := range ent.Columns {
			v := r.Values[i]
			if v == nil {
				if c.Field != nil && c.Field.Key {
					return &LoadError{File: r.File, Line: r.Line, Field: c.Name, Msg: "missing key"}
				}
				continue
			}
			cv, err := types.Coerce(v, c.Type)
			if err != nil {
				return &LoadError{File: r.File, Line: r.Line, Field: c.Name, Msg: err.Error()}
			}
			r.Values[i] = cv
		}
		if err := w.add(ent, r.Values, r.File, r.Line); err != nil {
			return err
		}
		st.EntityRows++
		if opt.Progress != nil && st.EntityRows%50000 == 0 {
			opt.Progress(LoadEvent{Rows: st.EntityRows})
		}
		return nil
	})
	if err == nil {
		err = w.b.Commit()
	}
	if err != nil {
		return nil, err
	}
	// Foreign keys must name loaded tuples.
	if err := data.checkForeignKeys(); err != nil {
		return nil, err
	}
	st.Read = time.Since(start)
	if opt.BeforeWrite != nil {
		if err := opt.BeforeWrite(); err != nil {
			return nil, err
		}
	}
	identity := opt.Identity
	if identity == "" {
		identity = "unnamed data set"
	}
	done, err := e.loadState(ctx, identity)
	if err != nil {
		return nil, err
	}
	wstart := time.Now()
	// Indexes load in parallel, one per worker: each is an independent
	// join and its own stream of batches.
	var todo []*catalog.Index
	for _, x := range e.schema.Indexes {
		if e.schema.Local[x] != nil {
			continue // the store builds it from its base's rows
		}
		if done[x.Name] {
			st.Skipped++
			if opt.Progress != nil {
				opt.Progress(LoadEvent{Index: x.Name, Done: true, Earlier: true})
			}
		} else {
			todo = append(todo, x)
		}
	}
	var (
		mu       sync.Mutex
		firstErr error
		next     int
		wg       sync.WaitGroup
	)
	progress := func(ev LoadEvent) {
		if opt.Progress != nil {
			mu.Lock()
			opt.Progress(ev)
			mu.Unlock()
		}
	}
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(todo)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(todo) || firstErr != nil {
					mu.Unlock()
					return
				}
				x := todo[next]
				next++
				mu.Unlock()
				n, err := e.loadIndex(ctx, data, x, opt.BatchBytes, progress)
				mu.Lock()
				st.IndexRows += n
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("loading %s: %w", x.Name, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	st.Write = time.Since(wstart)
	return st, nil
}

// loadState returns the indexes an earlier run of the same load finished,
// and records the load's identity in the catalog (package catalog). A
// load an earlier kvschema recorded in the engine's own table resumes from
// there.
func (e *Engine) loadState(ctx context.Context, identity string) (map[string]bool, error) {
	old, done, ok, err := catalog.LoadProgress(ctx, e.st)
	if err != nil {
		return nil, err
	}
	if ok {
		if old != identity {
			return nil, fmt.Errorf("the store already holds another data set (%s), and a load fills an empty store once: to replace the data, load %s into a new store; to add or change rows, write them with INSERT, UPDATE and DELETE (kvschema exec, the Go API)", old, identity)
		}
		// Recorded again: a load an earlier kvschema recorded in its own
		// table moves to the catalog's.
		var names []string
		for x := range done {
			names = append(names, x)
		}
		sort.Strings(names)
		return done, catalog.StartLoad(ctx, e.st, identity, names)
	}
	return map[string]bool{}, catalog.StartLoad(ctx, e.st, identity, nil)
}

// loadIndex writes every row of x the data implies, then records x done.
// mutationBytes is the size LoadOptions.BatchBytes bounds: what a store
// or an intent records of each mutation (txnstore's intent: a kind byte and
// five length-prefixed parts).
func mutationBytes(muts []store.Mutation) int {
	n := 0
	for _, m := range muts {
		n += len(m.Table) + len(m.Row) + len(m.Family) + len(m.Qualifier) + len(m.Value) + 8
	}
	return n
}

func (e *Engine) loadIndex(ctx context.Context, data *staged, x *catalog.Index, batchBytes int, progress func(LoadEvent)) (n int64, err error) {
	t := e.tables[x]
	src := data.reader()
	defer func() {
		if cerr := src.close(); err == nil {
			err = cerr
		}
	}()
	var muts []store.Mutation
	size := 0
	progress(LoadEvent{Index: x.Name, Estimate: int64(x.Entries)})
	flush := func() error {
		if len(muts) == 0 {
			return nil
		}
		// Rows no one else writes: no need for batches all-or-nothing.
		err := store.ApplyRows(ctx, e.st, muts)
		muts, size = muts[:0], 0
		return err
	}
	if t.l.HasStatic() {
		// The partition row of every root tuple, with its static columns.
		err = partitionRows(src, t, func(vals []types.Value, _ []bool) error {
			puts, deletes, err := t.l.StaticCells(vals, nil)
			if err != nil {
				return err
			}
			before := len(muts)
			muts = layout.AppendMutations(muts, puts, deletes)
			size += mutationBytes(muts[before:])
			if size >= batchBytes {
				return flush()
			}
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	err = joinRows(src, t, func(vals []types.Value, _ []bool) error {
		before := len(muts)
		var err error
		if muts, err = t.putNew(muts, vals); err != nil {
			return err
		}
		size += mutationBytes(muts[before:])
		n++
		if size >= batchBytes {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(LoadEvent{Index: x.Name, Rows: n, Estimate: int64(x.Entries)})
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, err
	}
	if err := catalog.IndexLoaded(ctx, e.st, x.Name); err != nil {
		return n, err
	}
	progress(LoadEvent{Index: x.Name, Rows: n, Done: true})
	return n, nil
}
