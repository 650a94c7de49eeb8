package countstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return countstore.New(memstore.New()) })
}

func TestCounts(t *testing.T) {
	ctx := context.Background()
	s := countstore.New(memstore.New())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}))
	must(s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("r1"), Family: "f", Qualifier: []byte("q"), Value: []byte("v1")}, // 2+1+1+2
		{Kind: store.SetCell, Table: "t", Row: []byte("r1"), Family: "f", Qualifier: []byte("qq"), Value: []byte("")},  // 2+1+2+0
		{Kind: store.SetCell, Table: "t", Row: []byte("r22"), Family: "f", Value: []byte("xyz")},                       // 3+1+0+3
		{Kind: store.DeleteCell, Table: "t", Row: []byte("r9"), Family: "f", Qualifier: []byte("q")},                   // 2+1+1
		{Kind: store.DeleteRow, Table: "t", Row: []byte("r8"), Family: "ignored"},                                      // 2
		{Kind: store.DeleteFamily, Table: "t", Row: []byte("r7"), Family: "f", Qualifier: []byte("ignored")},           // 2+1
	}))
	if err := s.Apply(ctx, []store.Mutation{{Kind: store.DeleteRow, Table: "missing", Row: []byte("r")}}); !errors.Is(err, store.ErrNoTable) {
		t.Fatalf("Apply to missing table: %v", err)
	}
	want := countstore.Stats{CreateTable: 1, Apply: 2, RoundTrips: 3, Mutations: 6, BytesWritten: 6 + 5 + 7 + 4 + 2 + 3}
	if got := s.Stats(); got != want {
		t.Fatalf("after writes: Stats = %v, want %v", got, want)
	}

	s.Reset()
	if _, ok, err := s.ReadRow(ctx, "t", []byte("r1")); !ok || err != nil {
		t.Fatalf("ReadRow: %v, %v", ok, err)
	}
	if _, ok, err := s.ReadRow(ctx, "t", []byte("none")); ok || err != nil {
		t.Fatalf("ReadRow of a missing row: %v, %v", ok, err)
	}
	// Both rows are read, but the callback stops after the first.
	must(s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool { return false }))
	must(s.ReadRows(ctx, "t", store.RowSet{Keys: [][]byte{[]byte("r22"), []byte("r1")}}, store.ReadOptions{}, func(store.Row) bool { return true }))
	if _, err := s.Tables(ctx); err != nil {
		t.Fatal(err)
	}
	s.Capabilities()
	// r1 = (2+1+1+2) + (2+1+2+0) = 11 bytes in 2 cells; r22 = 3+1+0+3 = 7 bytes.
	// Probes: 2 ReadRow + 1 range (All) + 2 keys.
	want = countstore.Stats{Tables: 1, ReadRow: 2, ReadRows: 2, RoundTrips: 5, Probes: 5, RowsRead: 4, CellsRead: 7, BytesRead: 11 + 11 + 11 + 7}
	got := s.Stats()
	if got != want {
		t.Fatalf("after reads: Stats = %v, want %v", got, want)
	}
	if str, want := got.String(), "rt=5 (tables=1 get=2 scan=2) rows=4 cells=7 read=40B muts=0 written=0B"; str != want {
		t.Errorf("String() = %q, want %q", str, want)
	}
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(*testing.T) store.Store { return countstore.New(memstore.New()) })
	type plain struct{ store.Store }
	err := countstore.New(plain{memstore.New()}).ReadIndex(t.Context(), "t", "i", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ReadIndex over a store without it: %v", err)
	}
}

// TestIndexCounts: a ReadIndex is one round trip, its values and ranges
// are probes, its rows are read.
func TestIndexCounts(t *testing.T) {
	ctx := t.Context()
	s := countstore.New(memstore.New())
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "i", Family: "f", Qualifier: []byte("q")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("r1"), Family: "f", Qualifier: []byte("q"), Value: []byte("v1")}, // 2+1+1+2
		{Kind: store.SetCell, Table: "t", Row: []byte("r2"), Family: "f", Qualifier: []byte("q"), Value: []byte("v2")},
	}); err != nil {
		t.Fatal(err)
	}
	s.Reset()
	values := store.RowSet{Keys: [][]byte{[]byte("v1")}, Ranges: []store.Range{{Start: []byte("v2")}}}
	if err := store.ReadIndex(ctx, s, "t", "i", values, store.ReadOptions{}, func(store.Row) bool { return true }); err != nil {
		t.Fatal(err)
	}
	want := countstore.Stats{ReadIndex: 1, RoundTrips: 1, Probes: 2, RowsRead: 2, CellsRead: 2, BytesRead: 12}
	if got := s.Stats(); got != want {
		t.Fatalf("after ReadIndex: Stats = %v, want %v", got, want)
	}
	if str, want := s.Stats().String(), "rt=1 (index=1) rows=2 cells=2 read=12B muts=0 written=0B"; str != want {
		t.Errorf("String() = %q, want %q", str, want)
	}
}

func TestGuarded(t *testing.T) {
	storetest.RunGuarded(t, func(*testing.T) []store.Store { return []store.Store{countstore.New(memstore.New())} })
}

// ApplyRows reaches the inner store's (a load's rows bypass an intent
// log's batches), counted as an Apply; a store without one gets Apply.
func TestApplyRows(t *testing.T) {
	ctx := context.Background()
	inner := &storetest.RowWriter{Store: memstore.New()}
	for _, s := range []*countstore.Store{countstore.New(inner), countstore.New(memstore.New())} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
		s.Reset()
		if err := store.ApplyRows(ctx, s, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Stats(), (countstore.Stats{Apply: 1, RoundTrips: 1, Mutations: 1, BytesWritten: 3}); got != want {
			t.Errorf("Stats = %v, want %v", got, want)
		}
		if _, ok, err := s.ReadRow(ctx, "t", []byte("r")); !ok || err != nil {
			t.Errorf("the row was not written: %v %v", ok, err)
		}
	}
	if inner.Calls != 1 {
		t.Errorf("the inner store's ApplyRows was called %d times, want 1", inner.Calls)
	}
}
