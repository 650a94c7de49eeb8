package kvschema_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

// fig6 is seed 003's Fig. 6, verbatim.
var fig6 = examples.Fig6

func openTraced(t *testing.T, s store.Store) (*kvschema.DB, *bytes.Buffer) {
	t.Helper()
	var trace bytes.Buffer
	db, err := kvschema.New(context.Background(), s, kvschema.Options{Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(context.Background(), "fig6.kvs", []byte(fig6), nil); err != nil {
		t.Fatal(err)
	}
	trace.Reset()
	return db, &trace
}

// TestSeed003Golden checks §4 of seed 003: the INSERT produces exactly the
// key-values shown there and the SELECT scans s1 from a1-b to a1-c.
func TestSeed003Golden(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	db, trace := openTraced(t, s)

	if _, err := db.Exec(ctx, "INSERT INTO r VALUES ('a1', 'b', 'x', 100)"); err != nil {
		t.Fatal(err)
	}
	wantPuts := []string{
		`batch begin`,
		`put "s1", "a1-b", "f:", "x-\x00\x00\x00d"`,
		`put "s2", "\x01ba1", "f:v1", "x"`,
		`put "s2", "\x01ba1", "f:v2", "\x00\x00\x00d"`,
		`batch end (3 mutations)`,
	}
	if diff := cmp.Diff(wantPuts, lines(trace.String())); diff != "" {
		t.Errorf("INSERT trace (-want +got):\n%s", diff)
	}

	// The store holds exactly those key-values.
	got := dump(t, s, "s1", "s2")
	want := []string{
		`s1 "a1-b" f: "x-\x00\x00\x00d"`,
		`s2 "\x01ba1" f:v1 "x"`,
		`s2 "\x01ba1" f:v2 "\x00\x00\x00d"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored key-values (-want +got):\n%s", diff)
	}

	trace.Reset()
	rows, err := db.Query(ctx, "SELECT * FROM r WHERE k1='a1' AND k2='b'")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`scan 's1', {STARTROW=>'a1-b', STOPROW=>'a1-c'}`}, lines(trace.String())); diff != "" {
		t.Errorf("SELECT trace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]types.Value{{"a1", "b", "x", int64(100)}}, rows.All()); diff != "" {
		t.Errorf("SELECT rows (-want +got):\n%s", diff)
	}
	plan, err := db.Explain(ctx, "SELECT * FROM r WHERE k1='a1' AND k2='b'")
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{
		"CLIENT PARALLEL 1-WAY RANGE SCAN OVER s1 ['a1','b']",
		"CLIENT FILTER BY k2 = 'b'",
		"LAYOUT s1 CHOSEN: 2 leading key element(s) fixed",
		"LAYOUT s2 REJECTED: 2 leading key element(s) fixed",
	} {
		if !strings.Contains(plan, frag) {
			t.Errorf("EXPLAIN lacks %q:\n%s", frag, plan)
		}
	}
}

// TestSeed003Fig4 is the query of seed 003 Fig. 4: k2 fixed and a range on
// k1 scans s2 between the bounds.
func TestSeed003Fig4(t *testing.T) {
	ctx := context.Background()
	db, trace := openTraced(t, memstore.New())
	for _, k1 := range []string{"a", "a0", "a1", "a2", "a20", "a3"} {
		if _, err := db.Exec(ctx, "INSERT INTO r VALUES (?, 'b', 'x', 1)", k1); err != nil {
			t.Fatal(err)
		}
	}
	trace.Reset()
	rows, err := db.Query(ctx, "SELECT k1 FROM r WHERE k2 = 'b' AND k1 >= 'a0' AND k1 <= 'a2'")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`scan 's2', {STARTROW=>'\x01ba0', STOPROW=>'\x01ba2\x00'}`}, lines(trace.String())); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]types.Value{{"a0"}, {"a1"}, {"a2"}}, rows.All()); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// dump lists every cell of the tables as `table "row" fam:qual "value"`.
func dump(t *testing.T, s store.Store, tables ...string) []string {
	t.Helper()
	var out []string
	for _, table := range tables {
		err := s.ReadRows(context.Background(), table, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			for _, c := range r.Cells {
				out = append(out, table+` "`+esc(r.Key)+`" `+c.Family+":"+esc(c.Qualifier)+` "`+esc(c.Value)+`"`)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func esc(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '\\' && c != '"' {
			sb.WriteByte(c)
		} else {
			sb.WriteString(`\x`)
			sb.WriteString(strings.ToLower(string("0123456789ABCDEF"[c>>4]) + string("0123456789ABCDEF"[c&15])))
		}
	}
	return sb.String()
}
