package kvschema_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// TestConcurrentWritersKeepLayoutsEqual: goroutines upsert, update and
// delete overlapping keys of a relation with an index-like layout (keyed by
// a non-key attribute), by key and by non-key predicates, one tuple and
// several per statement. Writers lock the tuples they write (and those
// their WHERE finds, reading again under the locks), so afterwards every
// layout holds exactly the same tuples.
func TestConcurrentWritersKeepLayoutsEqual(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "pebble:"+filepath.Join(t.TempDir(), "db")+"?sync=false")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := kvschema.New(ctx, st, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defs := `
DEFINE RELATION acct { id BIGINT KEY, owner STRING, balance BIGINT };
DEFINE PRIMARY SCHEMA acct_by_id FOR acct { TABLE 'acct', ROW ordered{id}, QUALIFIER attr_name['id'], VALUE attr_value['id'] };
DEFINE SCHEMA acct_by_owner FOR acct { TABLE 'acct_owner', ROW salt(4){ordered{owner}}:ordered{owner}:ordered{balance}:ordered{id} };
`
	if err := db.Script(ctx, "defs", []byte(defs), nil); err != nil {
		t.Fatal(err)
	}
	const workers, ops, keys = 8, 150, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ops {
				id := int64((w*7 + i) % keys)
				var err error
				switch i % 7 {
				case 0, 1:
					_, err = db.Exec(ctx, "INSERT INTO acct VALUES (?, ?, ?)", id, fmt.Sprintf("o%d", (w+i)%3), int64(w*1000+i))
				case 2:
					_, err = db.Exec(ctx, "UPDATE acct SET balance = ?, owner = ? WHERE id = ?", int64(-i), fmt.Sprintf("o%d", w%3), id)
				case 3:
					_, err = db.Exec(ctx, "DELETE FROM acct WHERE id = ? AND balance < ?", id, int64(0))
				case 4:
					// Found by a non-key attribute: locked after the read.
					_, err = db.Exec(ctx, "UPDATE acct SET balance = ? WHERE owner = ?", int64(w*1000+i), fmt.Sprintf("o%d", i%3))
				case 5:
					_, err = db.Exec(ctx, "DELETE FROM acct WHERE balance > ? AND balance < ?", int64(w*1000), int64(w*1000+50))
				case 6:
					_, err = db.Exec(ctx, "INSERT INTO acct VALUES (?, 'o1', ?), (?, 'o2', ?)", id, int64(i), (id+1)%keys, int64(w))
				}
				if err != nil {
					errs <- err
					return
				}
				if _, err := db.Query(ctx, "SELECT * FROM acct WHERE owner = ?", fmt.Sprintf("o%d", i%3)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var results [][]string
	for _, layout := range []string{"acct_by_id", "acct_by_owner"} {
		r, err := kvschema.New(ctx, st, kvschema.Options{CostModel: onlyLayout(layout)})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := r.Query(ctx, "SELECT id, owner, balance FROM acct")
		if err != nil {
			t.Fatal(err)
		}
		got := normalizeRows(rows.All())
		sort.Strings(got)
		results = append(results, got)
	}
	if diff := cmp.Diff(results[0], results[1]); diff != "" {
		t.Errorf("layouts disagree (-acct_by_id +acct_by_owner):\n%s", diff)
	}
	if len(results[0]) == 0 {
		t.Error("no tuples left: the test exercised nothing")
	}
}

// onlyLayout is a cost model under which only one layout is worth
// reading.
type onlyLayout string

func (o onlyLayout) Read(a cost.Access) float64 {
	if a.Index == string(o) {
		return 0
	}
	return 1
}

func (o onlyLayout) Write(puts, deletes float64) float64 { return 0 }

func (o onlyLayout) Sort(float64) float64 { return 0 }

// normalizeRows formats rows for comparison.
func normalizeRows(rows [][]types.Value) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = types.Format(v)
		}
		out[i] = strings.Join(parts, "|")
	}
	return out
}
