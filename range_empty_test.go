package kvschema_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
)

// TestRangeBelowEmptyString: a < ” on a key stored as raw bytes at the
// end of the row key bounds the scan by the empty key, which no row is
// below; the range once came out unbounded (a nil end) and read every row.
func TestRangeBelowEmptyString(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(t *testing.T) store.Store{
		"mem":      func(*testing.T) store.Store { return memstore.New() },
		"bigtable": func(t *testing.T) store.Store { return txnstore.New(bttestserver.Open(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			db, err := kvschema.New(ctx, open(t), kvschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Script(ctx, "s.kvs", []byte(`
DEFINE RELATION r { a0 STRING KEY, a1 STRING };
DEFINE PRIMARY SCHEMA l0 FOR r { TABLE 't_l0', ROW a0, VALUE ordered{a1} };
INSERT INTO r (a0, a1) VALUES ('a', 'x'), ('b', 'y');`), nil); err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string]string{
				"SELECT a0 FROM r WHERE a0 < ''":  "[]",
				"SELECT a0 FROM r WHERE a0 < 'b'": "[[a]]",
			} {
				rows, err := db.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(rows.All()); got != want {
					t.Errorf("%s: %s, want %s", q, got, want)
				}
			}
		})
	}
}

// TestLayoutTablesSkipReserved: a layout whose TABLE is an attribute reads
// every table its pattern matches — but never kvschema's own (the
// catalog's, whose family here is the layout's too, used to answer as
// a tuple that failed to decode).
func TestLayoutTablesSkipReserved(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Script(ctx, "defs", []byte(`DEFINE RELATION t { k STRING KEY, v STRING };
DEFINE PRIMARY SCHEMA s FOR t { TABLE k, ROW v, FAMILY 'd', QUALIFIER '', VALUE '' };
INSERT INTO t VALUES ('a', 'x');`), nil); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, "SELECT * FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if got := rows.All(); len(got) != 1 || got[0][0] != "a" {
		t.Fatalf("%v", got)
	}
}
