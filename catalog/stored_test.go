package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/txnstore"
)

func TestSaveLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, open := range map[string]func() store.Store{
		"mem": func() store.Store { return memstore.New() },
		"txn": func() store.Store { return txnstore.New(memstore.New()) },
		"pebble": func() store.Store {
			st, err := pebblestore.Open(dir, pebblestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			if v, s, err := Load(ctx, st); v != 0 || s != (Stored{}) || err != nil {
				t.Fatalf("empty store: %d %+v %v", v, s, err)
			}
			for v := uint64(1); v <= 3; v++ {
				got, err := Save(ctx, st, v-1, Stored{Script: fmt.Sprintf("script %d", v)})
				if err != nil || got != v {
					t.Fatalf("save %d: %d %v", v, got, err)
				}
				if cur, err := Version(ctx, st); cur != v || err != nil {
					t.Fatalf("version after save %d: %d %v", v, cur, err)
				}
			}
			if _, err := Save(ctx, st, 2, Stored{Script: "stale"}); !errors.Is(err, ErrConflict) {
				t.Fatalf("save from a stale version: %v", err)
			}
			if _, err := Save(ctx, st, 0, Stored{Script: "stale"}); !errors.Is(err, ErrConflict) {
				t.Fatalf("save from version 0 over 3: %v", err)
			}
			if v, s, err := Load(ctx, st); v != 3 || s.Script != "script 3" || err != nil {
				t.Fatalf("load: %d %+v %v", v, s, err)
			}
		})
	}
}

// TestCatalogCells: every part of a catalog round-trips, and a version
// without an advised schema has none.
func TestCatalogCells(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	want := Stored{Script: "DEFINE RELATION r { k STRING KEY };", Model: "m", Schema: "s", Profile: `{"name":"p"}`}
	if _, err := Save(ctx, st, 0, want); err != nil {
		t.Fatal(err)
	}
	if v, got, err := Load(ctx, st); v != 1 || got != want || err != nil {
		t.Fatalf("load: %d %+v %v", v, got, err)
	}
	if _, err := Save(ctx, st, 1, Stored{Script: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, got, err := Load(ctx, st); got != (Stored{Script: "x"}) || err != nil {
		t.Fatalf("load: %+v %v", got, err)
	}
}

// barrierStore holds every read of the catalog table until n of them
// have been made: n clients all load the same version before any saves.
type barrierStore struct {
	*memstore.Store
	mu      sync.Mutex
	arrived int
	n       int
	open    chan struct{}
}

func (b *barrierStore) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	err := b.Store.ReadRows(ctx, table, rs, opts, fn)
	if table == Table {
		b.mu.Lock()
		b.arrived++
		if b.arrived == b.n {
			close(b.open)
		}
		b.mu.Unlock()
		<-b.open
	}
	return err
}

// TestConcurrentSaves: clients that loaded the same version and save at
// once, in different processes as far as the store can tell, cannot both
// succeed (a read then a write would let every one of them "win" and keep
// the last script).
func TestConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	const clients = 6
	for name, wrap := range map[string]func(*barrierStore) store.Store{
		"mem": func(b *barrierStore) store.Store { return b },
		"txn": func(b *barrierStore) store.Store { return txnstore.New(b) },
	} {
		t.Run(name, func(t *testing.T) {
			b := &barrierStore{Store: memstore.New()}
			st := wrap(b)
			for round := uint64(0); round < 5; round++ {
				b.mu.Lock()
				b.arrived, b.n, b.open = 0, clients, make(chan struct{})
				b.mu.Unlock()
				var wg sync.WaitGroup
				won := make(chan string, clients)
				for c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						script := fmt.Sprintf("round %d client %d", round, c)
						v, err := Save(ctx, st, round, Stored{Script: script})
						switch {
						case err == nil && v == round+1:
							won <- script
						case !errors.Is(err, ErrConflict):
							t.Errorf("client %d: %d %v", c, v, err)
						}
					}()
				}
				wg.Wait()
				close(won)
				var winners []string
				for s := range won {
					winners = append(winners, s)
				}
				if len(winners) != 1 {
					t.Fatalf("round %d: %d clients saved version %d: %v", round, len(winners), round+1, winners)
				}
				b.mu.Lock()
				b.n = -1 // reads pass freely
				b.mu.Unlock()
				if v, s, err := Load(ctx, st); v != round+1 || s.Script != winners[0] || err != nil {
					t.Fatalf("round %d: loaded %d %+v %v, want the winner's %q", round, v, s, err, winners[0])
				}
			}
		})
	}
}

// TestLegacyLayout: a store whose definitions an earlier kvschema saved
// (row "catalog", one cell per version, and row "version") loads as it
// is, and saving continues its numbering.
func TestLegacyLayout(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, store.TableSpec{Name: Table, Families: []string{family}}); err != nil {
		t.Fatal(err)
	}
	q := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	if err := st.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: Table, Row: []byte("catalog"), Family: family, Qualifier: q(1), Value: []byte("old 1")},
		{Kind: store.SetCell, Table: Table, Row: []byte("catalog"), Family: family, Qualifier: q(2), Value: []byte("old 2")},
		{Kind: store.SetCell, Table: Table, Row: []byte("version"), Family: family, Qualifier: []byte{}, Value: q(2)},
	}); err != nil {
		t.Fatal(err)
	}
	if v, s, err := Load(ctx, st); v != 2 || s.Script != "old 2" || err != nil {
		t.Fatalf("legacy load: %d %+v %v", v, s, err)
	}
	if _, err := Save(ctx, st, 1, Stored{Script: "stale"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale save over a legacy store: %v", err)
	}
	if v, err := Save(ctx, st, 2, Stored{Script: "new 3"}); v != 3 || err != nil {
		t.Fatalf("save after legacy: %d %v", v, err)
	}
	if v, s, err := Load(ctx, st); v != 3 || s.Script != "new 3" || err != nil {
		t.Fatalf("load after legacy: %d %+v %v", v, s, err)
	}
	if v, err := Version(ctx, st); v != 3 || err != nil {
		t.Fatalf("version after legacy: %d %v", v, err)
	}
}
