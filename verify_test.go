package kvschema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// TestVerifyRelations: Verify checks that every layout of a client
// relation holds the tuples of its primary layout — clean after writes,
// and a tuple a layout lacks, one it holds with another value and one the
// primary lacks are each reported, naming the layout and the tuple.
func TestVerifyRelations(t *testing.T) {
	ctx := context.Background()
	db, err := kvschema.New(ctx, memstore.New(), kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Verify(ctx, exec.VerifyOptions{}); err != exec.ErrNoSchema {
		t.Fatalf("verify of an empty store: %v, want ErrNoSchema", err)
	}
	if err := db.Script(ctx, "r.kvs", []byte(`
DEFINE RELATION r { k1 STRING KEY, k2 STRING KEY, v1 STRING, v2 INT };
DEFINE PRIMARY SCHEMA s1 FOR r { TABLE 's1', ROW suffix('-'){k1}:k2, FAMILY 'f', QUALIFIER '', VALUE suffix('-'){v1}:v2 };
DEFINE SCHEMA s2 FOR r { TABLE 's2', ROW size{k2}:k1, FAMILY 'f', QUALIFIER attr_name['k1','k2'], VALUE attr_value['k1','k2'] };
DEFINE SCHEMA s3 FOR r { ROW salt(3){ordered{v2}}:ordered{v2}:ordered{k1}:ordered{k2}, FAMILY 'g', VALUE ordered{v1} };
INSERT INTO r VALUES ('a1', 'b', 'x', 100), ('a2', 'c', 'y', 7), ('a3', 'd', 'q', 5);
UPDATE r SET v2 = 8 WHERE k1 = 'a2';
DELETE FROM r WHERE k1 = 'a3';
`), nil); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Verify(ctx, exec.VerifyOptions{})
	if err != nil || !rep.Clean() || rep.Rows["s1"] != 2 || rep.Rows["s2"] != 2 || rep.Rows["s3"] != 2 {
		t.Fatalf("verify after writes: %v\n%v", err, rep)
	}
	// Corrupt s2 behind the client's back: a tuple goes, one changes, one
	// appears (s2 holds one cell per value, qualified by its name).
	s2 := db.Catalog().Layout("s2")
	key := func(k1, k2 string) []byte {
		k, err := s2.RowKey([]types.Value{k1, k2, nil, nil})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if err := db.Store().Apply(ctx, []store.Mutation{
		{Kind: store.DeleteRow, Table: "s2", Row: key("a1", "b")},
		{Kind: store.SetCell, Table: "s2", Row: key("a2", "c"), Family: "f", Qualifier: []byte("v1"), Value: []byte("z")},
		{Kind: store.SetCell, Table: "s2", Row: key("a9", "e"), Family: "f", Qualifier: []byte("v1"), Value: []byte("w")},
	}); err != nil {
		t.Fatal(err)
	}
	rep, err = db.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"s2: missing row r (k1 = 'a1', k2 = 'b'): schema s1 holds it",
		"s2: stale row r (k1 = 'a2', k2 = 'c'): v1 is 'z' here but 'y' in schema s1",
		"s2: extra row r (k1 = 'a9', k2 = 'e'): schema s1 does not hold it",
	}
	var got []string
	for _, d := range rep.Differences {
		got = append(got, d.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
