package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

// rawValue is the value stored under the cell (table, row, f:q), as
// written, header included.
func rawValue(t *testing.T, s *Store, table, row, qualifier string) []byte {
	t.Helper()
	v, closer, err := s.DB().Get(append(appendEnc(tablePrefix(table), []byte(row)), "f\x00"+qualifier...))
	if err != nil {
		t.Fatalf("raw value of %s %q f:%q: %v", table, row, qualifier, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...)
}

func readValue(t *testing.T, s store.Store, ctx context.Context, table, row string) string {
	t.Helper()
	r, ok, err := s.ReadRow(ctx, table, []byte(row))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<absent>"
	}
	var vs []string
	for _, c := range r.Cells {
		vs = append(vs, c.Family+":"+string(c.Qualifier)+"="+string(c.Value))
	}
	return strings.Join(vs, " ")
}

// TestExpiryOldTable checks a table created before cell expiry — its
// metadata without the flag, its values raw: it still reads as before,
// refuses Expires (store.ErrNoExpiry, naming the table, nothing applied),
// keeps writing raw values, and stays so when CreateTable adds to it.
func TestExpiryOldTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// What an earlier version wrote: metadata without "expiry", raw values.
	db := s.DB()
	if err := db.Set([]byte("mold"), []byte(`{"families":["f"],"indexes":[{"name":"byq","family":"f","qualifier":"cQ=="}]}`), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"a", "b"} {
		if err := db.Set(append(appendEnc(tablePrefix("old"), []byte(row)), "f\x00q"...), []byte("raw-"+row), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Set(append(appendEnc(indexKeyPrefix("old", "byq"), []byte("raw-"+row)), row...), nil, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := readValue(t, s, ctx, "old", "a"); got != "f:q=raw-a" {
		t.Errorf("old table's row a = %s", got)
	}
	var cells []string
	if err := s.ReadCells(ctx, "old", store.All(), store.ReadOptions{}, func(row []byte, c store.Cell, _ bool) bool {
		cells = append(cells, string(row)+"="+string(c.Value))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cells, " "); got != "a=raw-a b=raw-b" {
		t.Errorf("ReadCells of the old table = %s", got)
	}
	var viaIndex []string
	if err := s.ReadIndex(ctx, "old", "byq", store.All(), store.ReadOptions{}, func(r store.Row) bool {
		viaIndex = append(viaIndex, string(r.Key))
		return true
	}); err != nil || strings.Join(viaIndex, " ") != "a b" {
		t.Errorf("ReadIndex of the old table = %v, %v", viaIndex, err)
	}

	ttl := store.Mutation{Kind: store.SetCell, Table: "old", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("ttl"), Expires: time.Now().Add(time.Hour).UnixMicro()}
	plain := store.Mutation{Kind: store.SetCell, Table: "old", Row: []byte("c"), Family: "f", Qualifier: []byte("q"), Value: []byte("plain")}
	err = s.Apply(ctx, []store.Mutation{plain, ttl})
	if !errors.Is(err, store.ErrNoExpiry) || !strings.Contains(err.Error(), `"old"`) {
		t.Fatalf("Apply with Expires on an old table: %v, want ErrNoExpiry naming it", err)
	}
	if got := readValue(t, s, ctx, "old", "c"); got != "<absent>" {
		t.Errorf("refused batch applied in part: row c = %s", got)
	}
	if _, err := s.ApplyGuards(ctx, nil, []store.Mutation{ttl}); !errors.Is(err, store.ErrNoExpiry) {
		t.Errorf("ApplyGuards with Expires on an old table: %v, want ErrNoExpiry", err)
	}
	// Adding a family keeps the table old; writes stay raw.
	if err := s.CreateTable(ctx, store.TableSpec{Name: "old", Families: []string{"f", "g"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{plain}); err != nil {
		t.Fatal(err)
	}
	if got := string(rawValue(t, s, "old", "c", "q")); got != "plain" {
		t.Errorf("raw value written to an old table = %q, want it raw", got)
	}
	if err := s.Apply(ctx, []store.Mutation{ttl}); !errors.Is(err, store.ErrNoExpiry) {
		t.Errorf("Apply with Expires on an old table after CreateTable: %v", err)
	}
	specs, err := s.Tables(ctx)
	if err != nil || len(specs) != 1 || strings.Join(specs[0].Families, ",") != "f,g" {
		t.Errorf("Tables = %+v, %v", specs, err)
	}
}

// TestExpiryNewTable checks the values of a table with expiry: their
// header on disk, and expiry kept across a reopen and through a View.
func TestExpiryNewTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	T := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	before, at := store.WithNow(ctx, T.Add(-time.Microsecond)), store.WithNow(ctx, T)
	if err := s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Qualifier: []byte("q"), Value: []byte("permanent")},
		{Kind: store.SetCell, Table: "t", Row: []byte("b"), Family: "f", Qualifier: []byte("q"), Value: []byte("expiring"), Expires: T.UnixMicro()},
		{Kind: store.SetCell, Table: "t", Row: []byte("c"), Family: "f", Qualifier: []byte("q"), Value: []byte{}},
	}); err != nil {
		t.Fatal(err)
	}
	if got := string(rawValue(t, s, "t", "a", "q")); got != "\x00permanent" {
		t.Errorf("stored permanent value %q", got)
	}
	if got := string(rawValue(t, s, "t", "b", "q")); len(got) != 9+len("expiring") || got[0] != 1 || int64(binary.BigEndian.Uint64([]byte(got[1:9]))) != T.UnixMicro() || got[9:] != "expiring" {
		t.Errorf("stored expiring value %q, want 0x01, 8 bytes, value", got)
	}
	check := func(s store.Store, when string) {
		t.Helper()
		if got := readValue(t, s, before, "t", "b"); got != "f:q=expiring" {
			t.Errorf("%s: row b before T = %s", when, got)
		}
		if got := readValue(t, s, at, "t", "b"); got != "<absent>" {
			t.Errorf("%s: row b at T = %s", when, got)
		}
		if got := readValue(t, s, at, "t", "c"); got != "f:q=" {
			t.Errorf("%s: row c (empty value) = %s", when, got)
		}
	}
	check(s, "written")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s, "reopened")
	// CreateTable adding a family keeps the flag.
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"g"}}); err != nil {
		t.Fatal(err)
	}
	check(s, "after CreateTable")
	v, err := s.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	check(v, "view")
}
