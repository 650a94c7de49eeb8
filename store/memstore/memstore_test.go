package memstore_test

import (
	"context"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memstore.New() })
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
