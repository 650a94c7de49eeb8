package kvschema_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/store/memstore"
)

// TestBadInput: every bad statement fails with a clear, positioned message
// and leaves the store exactly as it was.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	db, err := kvschema.New(ctx, s, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(ctx, "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO r VALUES ('a1', 'b', 'x', 100)"); err != nil {
		t.Fatal(err)
	}
	before := dump(t, s, "s1", "s2")
	cases := []struct {
		stmt string
		want string // fragment of the error
	}{
		{"INSERT INTO r VALUES ('a1', 'b', 'x')", "1:23: INSERT INTO r: 3 values for 4 attributes"},
		{"INSERT INTO r VALUES ('a1', 'b', 'x', 'y')", "1:39: attribute v2: cannot use 'y' (string) as INT"},
		{"INSERT INTO r VALUES ('a1', 'b', 'x', 3000000000)", "out of range for INT"},
		{"INSERT INTO r (k1, v1) VALUES ('a1', 'x')", "key attribute k2 needs a value"},
		{"INSERT INTO r (k1, nope) VALUES ('a1', 'x')", "relation r has no attribute nope"},
		{"INSERT INTO nope VALUES (1)", "1:13: unknown relation nope"},
		{"INSERT INTO r VALUES ('a-1', 'b', 'x', 1)", "schema s1, ROW: attribute k1: value 'a-1' contains the separator \"-\""},
		{"INSERT INTO r VALUES ('a1', 'b', 'x-y', 1)", "attribute v1: value 'x-y' contains the separator"},
		{"INSERT INTO r VALUES ('a1', 'b', NULL, 1)", "attribute v1: is NULL, which the natural encoding cannot store"},
		{"INSERT INTO r VALUES ('" + strings.Repeat("k", 5000) + "', 'b', 'x', 1)", "row key is 5002 bytes; the limit is 4096"},
		{"INSERT INTO r VALUES ('a2', '" + strings.Repeat("k", 300) + "', 'x', 1)", "size{…} body is 300 bytes; a 1-byte length holds at most 255"},
		// Two rows: the second is bad, so the first must not be written either.
		{"INSERT INTO r VALUES ('a3', 'b', 'x', 1), ('a4', 'b', 'x', 'bad')", "attribute v2: cannot use 'bad'"},
		{"SELECT * FROM r WHERE k1 = 5", "1:28: type mismatch: k1 is STRING"},
		{"SELECT * FROM r WHERE nope = 5", "1:23: relation r has no attribute nope"},
		{"SELECT nope FROM r", "relation r has no attribute nope"},
		{"SELECT * FROM r ORDER BY nope", "ORDER BY: relation r has no attribute nope"},
		{"SELECT * FROM r WHERE k1 = ?", "missing value for parameter 1"},
		{"SELECT * FROM r LIMIT -1", "LIMIT"},
		{"SELECT * FRM r", "1:10:"},
		{"UPDATE r SET k1 = 'z' WHERE k1 = 'a1'", "cannot UPDATE key attribute k1"},
		{"UPDATE r SET v2 = 'z' WHERE k1 = 'a1'", "attribute v2: cannot use 'z'"},
		{"UPDATE r SET v1 = 'a-b' WHERE k1 = 'a1'", "contains the separator"},
		{"DELETE FROM r WHERE v2 = 'x'", "type mismatch: v2 is INT"},
		{"DEFINE SCHEMA s3 FOR r { TABLE 's3', ROW k1:k2 }", "attribute k1 in ROW has variable length"},
		{"DEFINE SCHEMA s3 FOR r { TABLE 's3', ROW ordered{k1} }", "key attribute k2 must appear in TABLE, ROW, FAMILY or QUALIFIER"},
		{"DEFINE SCHEMA s3 FOR r { TABLE 's3', ROW ordered{k1}:ordered{k2} }", "attribute v1 is stored nowhere"},
		{"DEFINE SCHEMA s3 FOR r { TABLE 's1', ROW ordered{k1}:ordered{k2}, VALUE ordered{v1}:v2 }", `table "s1" and family "f" are already used by schema s1`},
		{"DEFINE SCHEMA s3 FOR nope { ROW k }", "unknown relation nope"},
		{"DEFINE PRIMARY SCHEMA s3 FOR r { TABLE 's3', ROW ordered{k1}:ordered{k2}, VALUE ordered{v1}:v2 }", "already has a primary schema (s1)"},
		{"DEFINE SCHEMA s3 FOR r { TABLE 's3', ROW ordered{k1}:salt(4){k2}, VALUE ordered{v1}:v2 }", "salt(N){…} must be the first element of ROW"},
		{"DEFINE RELATION r { a INT KEY }", "relation r is already defined"},
		{"DEFINE RELATION q { a INT }", "relation q has no key attribute"},
	}
	for _, c := range cases {
		_, err := db.Exec(ctx, c.stmt)
		if err == nil {
			t.Errorf("%s: no error", c.stmt)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got  %v\n want …%s…", trunc(c.stmt), err, c.want)
		}
		if diff := cmp.Diff(before, dump(t, s, "s1", "s2")); diff != "" {
			t.Errorf("%s changed the store (-before +after):\n%s", trunc(c.stmt), diff)
		}
	}
	// The catalog is unchanged too.
	if got := len(db.Catalog().Relation("r").Layouts()); got != 2 {
		t.Errorf("layouts of r = %d, want 2", got)
	}
	// Script errors name the file.
	err = db.Script(ctx, "bad.kvs", []byte("SELECT * FROM r;\nSELECT * FROM r WHERE k1 = 1;"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "bad.kvs:2:28: type mismatch") {
		t.Errorf("script error = %v", err)
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
