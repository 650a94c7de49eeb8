package prefixstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/prefixstore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		// Another namespace's table with the same name must stay invisible.
		inner := memstore.New()
		if err := inner.CreateTable(context.Background(), store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
		return prefixstore.New(inner, "ns.")
	})
}

func TestNamespacesAreSeparate(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	a, b := prefixstore.New(inner, "a."), prefixstore.New(inner, "b.")
	for _, s := range []*prefixstore.Store{a, b} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	muts := []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Qualifier: []byte("q"), Value: []byte("in a")}}
	if err := a.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if muts[0].Table != "t" {
		t.Fatalf("Apply changed the caller's mutation: table %q", muts[0].Table)
	}
	if _, ok, err := b.ReadRow(ctx, "t", []byte("r")); ok || err != nil {
		t.Fatalf("namespace b sees a's row: %v %v", ok, err)
	}
	row, ok, err := inner.ReadRow(ctx, "a.t", []byte("r"))
	if !ok || err != nil || string(row.Cells[0].Value) != "in a" {
		t.Fatalf("inner a.t: %v %v %v", row, ok, err)
	}
	tabs, err := a.Tables(ctx)
	if err != nil || len(tabs) != 1 || tabs[0].Name != "t" {
		t.Fatalf("a.Tables() = %v, %v; want only t", tabs, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Tables(ctx); err != nil {
		t.Fatalf("closing a namespace closed the inner store: %v", err)
	}
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(t *testing.T) store.Store {
		// Another namespace's table with the same name and index must stay
		// invisible.
		inner := memstore.New()
		other := prefixstore.New(inner, "b.")
		spec := store.TableSpec{Name: "t", Families: []string{"f", "g"}, Indexes: []store.IndexSpec{{Name: "byv", Family: "f", Qualifier: []byte("v")}}}
		if err := other.CreateTable(t.Context(), spec); err != nil {
			t.Fatal(err)
		}
		if err := other.Apply(t.Context(), []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("v"), Value: []byte("1")}}); err != nil {
			t.Fatal(err)
		}
		return prefixstore.New(inner, "a.")
	})
	type plain struct{ store.Store }
	err := prefixstore.New(plain{memstore.New()}, "a.").ReadIndex(t.Context(), "t", "i", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ReadIndex over a store without it: %v", err)
	}
}

func TestGuarded(t *testing.T) {
	storetest.RunGuarded(t, func(t *testing.T) []store.Store {
		inner := memstore.New()
		return []store.Store{prefixstore.New(inner, "a."), prefixstore.New(inner, "a.")}
	})
}
