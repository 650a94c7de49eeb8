package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memstore.New() })
}

func TestSnapshot(t *testing.T) {
	storetest.RunSnapshot(t, func(*testing.T) store.Store { return memstore.New() })
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(*testing.T) store.Store { return memstore.New() })
	// store.ReadIndex says when a store keeps no indexes.
	type plain struct{ store.Store }
	err := store.ReadIndex(t.Context(), plain{memstore.New()}, "t", "i", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("store.ReadIndex of a store without indexes: %v", err)
	}
}

// TestSnapshotSharedData checks that a Restore through one handle of a
// named store is seen by its other handles, which share the data.
func TestView(t *testing.T) {
	storetest.RunView(t, func(*testing.T) store.Store { return memstore.New() })
}

func TestSnapshotSharedData(t *testing.T) {
	ctx := context.Background()
	a, err := store.Open(ctx, "mem:snapshot-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(ctx, "mem:snapshot-test")
	if err != nil {
		t.Fatal(err)
	}
	sn, err := a.(store.Snapshotter).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Release()
	if err := b.CreateTable(ctx, store.TableSpec{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := sn.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if specs, err := b.Tables(ctx); err != nil || len(specs) != 0 {
		t.Errorf("other handle after Restore: Tables = %v, %v; want none", specs, err)
	}
}

func TestURL(t *testing.T) {
	ctx := context.Background()
	open := func(url string) store.Store {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	create := func(s store.Store) {
		if err := s.CreateTable(ctx, store.TableSpec{Name: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(s store.Store) int {
		specs, err := s.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(specs)
	}

	create(open("mem:"))
	if n := count(open("mem:")); n != 0 {
		t.Errorf(`a fresh "mem:" has %d tables, want 0`, n)
	}

	a := open("mem:shared-test")
	create(a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := count(open("mem:shared-test")); n != 1 {
		t.Errorf(`"mem:shared-test" reopened has %d tables, want 1`, n)
	}
	if n := count(open("mem:other-test")); n != 0 {
		t.Errorf(`"mem:other-test" has %d tables, want 0`, n)
	}
}

func TestConditional(t *testing.T) {
	storetest.RunConditional(t, func(*testing.T) store.Store { return memstore.New() })
	storetest.RunGuarded(t, func(*testing.T) []store.Store { return []store.Store{memstore.New()} })
}
