package kvschema_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestSchemaSplitOn: a layout's SPLIT ON keys pre-split its table, rows on
// both sides of a split read back, and the keys survive a reopen (the
// definitions are kept printed).
func TestSchemaSplitOn(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	db, err := kvschema.New(ctx, s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const defs = `DEFINE RELATION r { k STRING KEY, v INT };
DEFINE PRIMARY SCHEMA s FOR r { TABLE 'r_by_k', ROW k, VALUE v, SPLIT ON ('m', x'00ff', 'g') };`
	if err := db.Script(ctx, "defs.kvs", []byte(defs), nil); err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "g", "ga", "l", "m", "z"} {
		if _, err := db.Exec(ctx, "INSERT INTO r VALUES (?, ?)", k, i); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(ctx, "SELECT k, v FROM r WHERE k >= 'ga' AND k <= 'm'")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]types.Value{{"ga", int64(2)}, {"l", int64(3)}, {"m", int64(4)}}
	if diff := cmp.Diff(want, rows.All()); diff != "" {
		t.Errorf("rows across the split at 'm' (-want +got):\n%s", diff)
	}
	splits := func() string {
		specs, err := s.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range specs {
			if sp.Name == "r_by_k" {
				return fmt.Sprintf("%q", sp.Splits)
			}
		}
		return "no table r_by_k"
	}
	if got := splits(); got != `["\x00\xff" "g" "m"]` {
		t.Errorf("table splits %s", got)
	}
	again, err := kvschema.New(ctx, s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", again.Catalog().Layout("s").Splits); got != `["\x00\xff" "g" "m"]` {
		t.Errorf("reopened layout splits %s", got)
	}
}
