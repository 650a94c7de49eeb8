package pebblestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		// NoSync keeps the suite fast; TestReopen covers synced writes.
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, "pebble:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := store.TableSpec{Name: "t", Families: []string{"f", "g"}, Splits: [][]byte{[]byte("m")}}
	if err := s.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r\x00"), Family: "g", Qualifier: []byte("q"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Name != "t" || strings.Join(specs[0].Families, ",") != "f,g" ||
		len(specs[0].Splits) != 1 || string(specs[0].Splits[0]) != "m" {
		t.Errorf("Tables after reopen = %+v", specs)
	}
	r, ok, err := s.ReadRow(ctx, "t", []byte("r\x00"))
	if err != nil || !ok || len(r.Cells) != 1 || r.Cells[0].Family != "g" || string(r.Cells[0].Value) != "v" {
		t.Errorf("ReadRow after reopen = %+v, %v, %v", r, ok, err)
	}
}

func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := s.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	c, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok, err := c.ReadRow(ctx, "t", []byte("r")); !ok || err != nil {
		t.Errorf("row missing from checkpoint: %v, %v", ok, err)
	}
}

func TestSnapshot(t *testing.T) {
	storetest.RunSnapshot(t, func(t *testing.T) store.Store {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestGuarded(t *testing.T) {
	storetest.RunGuarded(t, func(t *testing.T) []store.Store {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return []store.Store{s}
	})
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(t *testing.T) store.Store {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestView(t *testing.T) {
	storetest.RunView(t, func(t *testing.T) store.Store {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestSnapshotFiles checks where a snapshot lives, that a restored database
// is what a reopen finds (synced writes), that Checkpoint works after a
// Restore, and that Release removes the snapshot's files.
func TestSnapshotFiles(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "db")
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	set := func(row, value string) {
		t.Helper()
		err := s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: "f", Value: []byte(value)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	set("r", "saved")
	// Some of the content in sstables, some in the WAL only.
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	set("s", "saved")
	sn, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snapshots, _ := filepath.Glob(filepath.Join(parent, "db.snapshot-*"))
	if len(snapshots) != 1 {
		t.Fatalf("snapshot directories next to the database: %q, want one", snapshots)
	}
	set("r", "changed")
	if err := s.CreateTable(ctx, store.TableSpec{Name: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	set("t", "new")
	if err := sn.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := s.Checkpoint(ckpt); err != nil {
		t.Fatalf("Checkpoint after Restore: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for _, d := range []string{dir, ckpt} {
		s, err := pebblestore.Open(d, pebblestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		specs, err := s.Tables(ctx)
		if err != nil || len(specs) != 1 || specs[0].Name != "t" {
			t.Errorf("%s: Tables = %+v, %v; want t only", d, specs, err)
		}
		var got []string
		err = s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(r store.Row) bool {
			got = append(got, string(r.Key)+"="+string(r.Cells[0].Value))
			return true
		})
		if want := "r=saved s=saved"; err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: rows %q, %v; want %s", d, got, err, want)
		}
		s.Close()
	}

	if err := sn.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snapshots[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshot directory after Release: %v", err)
	}
}

func TestURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, rest := range []string{"", "?sync=false", "?cache=256MB&sync=false"} {
		s, err := store.Open(ctx, "pebble:"+dir+rest)
		if err != nil {
			t.Fatalf("%q: %v", rest, err)
		}
		s.Close()
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"pebble:":                        "want pebble:DIR",
		"pebble:?sync=false":             "want pebble:DIR",
		"pebble:" + dir + "?sync=maybe":  `sync="maybe": want true or false`,
		"pebble:" + dir + "?cache=1":     `cache="1": want a block cache size`,
		"pebble:" + dir + "?cache=big":   `cache="big": want a block cache size`,
		"pebble:" + dir + "?color=red":   `unknown parameter "color"`,
		"pebble:" + dir + "?sync=%zz":    "invalid URL escape",
		"pebble:" + file:                 "pebblestore: open " + file,
		"pebble:" + file + "/sub?sync=1": "pebblestore: open " + file + "/sub",
	} {
		s, err := store.Open(ctx, url)
		if err == nil {
			s.Close()
			t.Errorf("%q: no error", url)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %q does not mention %q", url, err, want)
		}
	}
}

func TestLockedDir(t *testing.T) {
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := pebblestore.Open(dir, pebblestore.Options{}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("second Open of %s: err = %v, want an error naming the directory", dir, err)
	}
}

func TestFamilyWithZeroByte(t *testing.T) {
	ctx := context.Background()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f\x00"}}); err == nil {
		t.Error("CreateTable accepted a family with 0x00")
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	err = s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Value: []byte("v")},
		{Kind: store.SetCell, Table: "t", Row: []byte("b"), Family: "f\x00x", Value: []byte("v")},
	})
	if err == nil || errors.Is(err, store.ErrNoTable) {
		t.Errorf("Apply with family f\\x00x: err = %v", err)
	}
	if _, ok, _ := s.ReadRow(ctx, "t", []byte("a")); ok {
		t.Error("rejected batch left a row")
	}
	err = s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "t", Row: []byte("a"), Family: "f", Value: []byte("v")},
		{Kind: store.DeleteFamily, Table: "t", Row: []byte("b"), Family: "f\x00"},
	})
	if err == nil || errors.Is(err, store.ErrNoTable) {
		t.Errorf("Apply with DeleteFamily of f\\x00: err = %v", err)
	}
	if _, ok, _ := s.ReadRow(ctx, "t", []byte("a")); ok {
		t.Error("rejected batch left a row")
	}
}

// TestDeleteFamilyBounds: the range deletion of a DeleteFamily covers the
// family's cells and no key of the families next to it in byte order —
// one that ends where it goes on (f\x01, f\xff, ff), one just below (e\xff)
// — whatever the qualifiers' bytes; an index on a cell of a neighbour
// keeps its entry, an element index on the family loses every entry of
// the row (the elements it reads are all the family's) and one on a
// neighbour none; and the deletion survives a reopen.
func TestDeleteFamilyBounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fams := []string{"e\xff", "f", "f\x01", "f\xff", "ff"}
	ix := store.IndexSpec{Name: "next", Family: "f\x01", Qualifier: []byte{}}
	own := store.IndexSpec{Name: "own", Family: "f", Qualifier: []byte{0xff, 0xff}}
	elems := store.IndexSpec{Name: "elems", Family: "f", Elements: true}
	nextElems := store.IndexSpec{Name: "nextelems", Family: "ff", Elements: true}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: fams, Indexes: []store.IndexSpec{ix, own, elems, nextElems}}); err != nil {
		t.Fatal(err)
	}
	var muts []store.Mutation
	for _, row := range []string{"r", "r\x00", "q\xff"} {
		for _, f := range fams {
			for _, q := range []string{"", "\x00", "\x01", "\xff\xff"} {
				muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: f, Qualifier: []byte(q), Value: []byte(row + f + q)})
			}
		}
	}
	if err := s.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, []store.Mutation{{Kind: store.DeleteFamily, Table: "t", Row: []byte("r"), Family: "f"}}); err != nil {
		t.Fatal(err)
	}
	check := func(s store.Store) {
		t.Helper()
		if err := s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(r store.Row) bool {
			n := 0
			for _, c := range r.Cells {
				if c.Family == "f" {
					n++
				}
			}
			if want := map[bool]int{true: 0, false: 4}[string(r.Key) == "r"]; n != want || len(r.Cells) != 4*len(fams)-(4-want) {
				t.Errorf("row %q: %d cells, %d of family f; want %d of f and every other family's", r.Key, len(r.Cells), n, want)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		storetest.CheckIndexes(t, s, "t")
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = pebblestore.Open(dir, pebblestore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
}

// TestChanged: a table's change number moves with every write to it, its
// creation and a change of families, and with nothing else; it is 0 for a
// missing table, and unknown once DB() hands the database out.
func TestChanged(t *testing.T) {
	ctx := context.Background()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	changed := func(table string) uint64 {
		t.Helper()
		n, ok := s.Changed(table)
		if !ok {
			t.Fatalf("Changed(%s) unknown", table)
		}
		return n
	}
	if n := changed("a"); n != 0 {
		t.Fatalf("missing table: %d", n)
	}
	for _, name := range []string{"a", "b"} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	a0, b0 := changed("a"), changed("b")
	if a0 == 0 || b0 == 0 || a0 == b0 {
		t.Fatalf("created: a %d, b %d", a0, b0)
	}
	put := func(table string) {
		t.Helper()
		if err := s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: table, Row: []byte("r"), Family: "f", Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	a1 := changed("a")
	if a1 == a0 || changed("b") != b0 {
		t.Fatalf("after a write to a: a %d (was %d), b %d (was %d)", a1, a0, changed("b"), b0)
	}
	if _, _, err := s.ReadRow(ctx, "a", []byte("r")); err != nil || changed("a") != a1 {
		t.Fatalf("a read changed a: %v, %d", err, changed("a"))
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "a", Families: []string{"f"}}); err != nil || changed("a") != a1 {
		t.Fatalf("re-creating a unchanged changed it: %v", err)
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "a", Families: []string{"g"}}); err != nil || changed("a") == a1 {
		t.Fatalf("a new family did not change a: %v", err)
	}
	s.DB()
	if _, ok := s.Changed("a"); ok {
		t.Fatal("Changed known after DB()")
	}
}

// TestLockedByAnotherProcess: opening a store another process holds fails
// at once with a message naming the directory and the holder.
func TestLockedByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("PEBBLESTORE_TEST_HOLD"); dir != "" {
		return // the holder's side runs in holdStore
	}
	dir := t.TempDir()
	holder := exec.Command(os.Args[0], "-test.run=^TestHoldStore$")
	holder.Env = append(os.Environ(), "PEBBLESTORE_TEST_HOLD="+dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		holder.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "holding") {
		t.Fatalf("holder: %q, %v", line, err)
	}
	_, err = pebblestore.Open(dir, pebblestore.Options{})
	want := fmt.Sprintf("%s is open in another process (pid %d on ", dir, holder.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a held store: %v, want %q", err, want)
	}
}

// TestHoldStore is the other process of TestLockedByAnotherProcess: it
// holds the store until its standard input closes.
func TestHoldStore(t *testing.T) {
	dir := os.Getenv("PEBBLESTORE_TEST_HOLD")
	if dir == "" {
		t.Skip("run by TestLockedByAnotherProcess")
	}
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin)
}

func TestExists(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Join(dir, "absent")} {
		if ok, err := pebblestore.Exists(d); ok || err != nil {
			t.Errorf("Exists(%s) = %v, %v before any store", d, ok, err)
		}
	}
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if ok, err := pebblestore.Exists(dir); !ok || err != nil {
		t.Errorf("Exists(%s) = %v, %v after Open", dir, ok, err)
	}
}

// indexedSpec is the table of the index tests below: a single-cell index
// on f:v and an element index on every cell of f (TestIndexReopen adds
// two more on g once the table has rows).
var indexedSpec = store.TableSpec{Name: "t", Families: []string{"f", "g"}, Indexes: []store.IndexSpec{
	{Name: "byv", Family: "f", Qualifier: []byte("v")},
	{Name: "byf", Family: "f", Qualifier: []byte{}, Elements: true},
}}

// TestIndexReopen: indexes, their metadata (of either kind) and entries,
// survive a reopen, including indexes added to a table with rows, and
// writes after it keep them.
func TestIndexReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, indexedSpec); err != nil {
		t.Fatal(err)
	}
	set := func(row, fam, q, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte(row), Family: fam, Qualifier: []byte(q), Value: []byte(v)}
	}
	if err := s.Apply(ctx, []store.Mutation{set("a", "f", "v", "2"), set("b", "f", "v", "1"), set("b", "g", "w", "x"), set("c", "g", "w", "y")}); err != nil {
		t.Fatal(err)
	}
	byW := store.IndexSpec{Name: "byw", Family: "g", Qualifier: []byte("w")}
	byG := store.IndexSpec{Name: "byg", Family: "g", Qualifier: []byte{}, Elements: true}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Indexes: []store.IndexSpec{byW, byG}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(append(slices.Clone(indexedSpec.Indexes), byW, byG)); len(specs) != 1 || fmt.Sprint(specs[0].Indexes) != want {
		t.Fatalf("Tables after reopen = %+v, want indexes %s", specs, want)
	}
	for _, tc := range []struct{ index, want string }{{"byw", "b,c"}, {"byf", "a,b"}, {"byg", "b,c"}} {
		var got []string
		if err := s.ReadIndex(ctx, "t", tc.index, store.All(), store.ReadOptions{}, func(r store.Row) bool {
			got = append(got, string(r.Key))
			return true
		}); err != nil || strings.Join(got, ",") != tc.want {
			t.Fatalf("ReadIndex(%s) after reopen = %q, %v; want %s", tc.index, got, err, tc.want)
		}
	}
	if err := s.Apply(ctx, []store.Mutation{set("a", "f", "v", "0"), set("a", "f", "x", "0"), {Kind: store.DeleteRow, Table: "t", Row: []byte("c")}, set("b", "g", "z", "0")}); err != nil {
		t.Fatal(err)
	}
	storetest.CheckIndexes(t, s, "t")
}

// TestIndexMetadata: an element index is recorded as such in the table's
// metadata, a single-cell index as versions before element indexes
// recorded it (no "elements" field); metadata in that older form — an
// index on the empty qualifier included — opens as single-cell indexes,
// and each kind keeps its entries after a reopen.
func TestIndexMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"f"}, Indexes: indexedSpec.Indexes}); err != nil {
		t.Fatal(err)
	}
	db := s.DB()
	v, closer, err := db.Get([]byte("mnew"))
	if err != nil {
		t.Fatal(err)
	}
	const wantMeta = `{"families":["f"],"indexes":[{"name":"byv","family":"f","qualifier":"dg=="},{"name":"byf","family":"f","qualifier":"","elements":true}],"expiry":true}`
	if string(v) != wantMeta {
		t.Errorf("metadata = %s, want %s", v, wantMeta)
	}
	closer.Close()
	// What a version before element indexes wrote.
	if err := db.Set([]byte("mold"), []byte(`{"families":["f"],"indexes":[{"name":"byq","family":"f","qualifier":""}],"expiry":true}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = pebblestore.Open(dir, pebblestore.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]store.TableSpec{
		{Name: "new", Families: []string{"f"}, Indexes: indexedSpec.Indexes},
		{Name: "old", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "byq", Family: "f", Qualifier: []byte{}}}},
	})
	if fmt.Sprint(specs) != want {
		t.Fatalf("Tables = %v, want %v", specs, want)
	}
	cell := func(table, q, v string) store.Mutation {
		return store.Mutation{Kind: store.SetCell, Table: table, Row: []byte("a"), Family: "f", Qualifier: []byte(q), Value: []byte(v)}
	}
	if err := s.Apply(ctx, []store.Mutation{cell("old", "", "1"), cell("old", "x", "2"), cell("new", "v", "1"), cell("new", "w", "2")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, index string
		want         int
	}{{"old", "byq", 1}, {"new", "byv", 1}, {"new", "byf", 2}} {
		n := 0
		if err := s.ReadIndex(ctx, tc.table, tc.index, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil || n != tc.want {
			t.Errorf("ReadIndex(%s, %s): %d rows, %v; want %d", tc.table, tc.index, n, err, tc.want)
		}
	}
	storetest.CheckIndexes(t, s, "old")
	storetest.CheckIndexes(t, s, "new")
}

// TestIndexCrash kills a process that writes indexed rows from several
// goroutines (SIGKILL, at a random time), reopens the store and checks
// that each index is the function of the rows, over several rounds on one
// store, with synced and unsynced writes.
func TestIndexCrash(t *testing.T) {
	if os.Getenv("PEBBLESTORE_TEST_CRASH") != "" {
		return // the writer's side runs in TestIndexCrashWriter
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	total := 0
	for round := range 6 {
		w := exec.Command(os.Args[0], "-test.run=^TestIndexCrashWriter$")
		w.Env = append(os.Environ(), "PEBBLESTORE_TEST_CRASH="+dir, fmt.Sprintf("PEBBLESTORE_TEST_CRASH_SYNC=%v", round%2 == 0))
		stdout, err := w.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "writing") {
			w.Process.Kill()
			w.Wait()
			t.Fatalf("writer: %q, %v", line, err)
		}
		time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		if err := w.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		w.Wait()

		s, err := pebblestore.Open(dir, pebblestore.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after the kill: %v", round, err)
		}
		storetest.CheckIndexes(t, s, "t")
		n := 0
		if err := s.ReadIndex(ctx, "t", "byv", store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		var seq store.Row
		seq, _, err = s.ReadRow(ctx, "t", []byte("seq"))
		if err != nil {
			t.Fatal(err)
		}
		if len(seq.Cells) > 0 {
			total, _ = strconv.Atoi(string(seq.Cells[0].Value))
		}
		t.Logf("round %d: %d rows indexed, %d batches committed in all", round, n, total)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if total == 0 {
		t.Fatal("the writers committed nothing")
	}
}

// TestIndexCrashWriter is the process TestIndexCrash kills: it writes
// batches that change indexed cells (values set, changed, deleted,
// elements set and deleted, families and rows deleted) until it is
// killed.
func TestIndexCrashWriter(t *testing.T) {
	dir := os.Getenv("PEBBLESTORE_TEST_CRASH")
	if dir == "" {
		t.Skip("run by TestIndexCrash")
	}
	ctx := context.Background()
	s, err := pebblestore.Open(dir, pebblestore.Options{NoSync: os.Getenv("PEBBLESTORE_TEST_CRASH_SYNC") != "true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, indexedSpec); err != nil {
		t.Fatal(err)
	}
	var seq atomic.Int64
	if r, ok, _ := s.ReadRow(ctx, "t", []byte("seq")); ok {
		n, _ := strconv.Atoi(string(r.Cells[0].Value))
		seq.Store(int64(n))
	}
	fmt.Println("writing")
	for g := range 4 {
		go func() {
			rnd := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(g)))
			for {
				var muts []store.Mutation
				for range 1 + rnd.IntN(4) {
					row := []byte(fmt.Sprint("r", rnd.IntN(50)))
					switch rnd.IntN(10) {
					case 0:
						muts = append(muts, store.Mutation{Kind: store.DeleteRow, Table: "t", Row: row})
					case 1:
						muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: "t", Row: row, Family: "f", Qualifier: []byte("v")})
					case 2:
						muts = append(muts, store.Mutation{Kind: store.DeleteFamily, Table: "t", Row: row, Family: "f"})
					case 3: // an element of byf
						muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: "t", Row: row, Family: "f", Qualifier: fmt.Append(nil, rnd.IntN(8))})
					case 4, 5:
						muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: row, Family: "f", Qualifier: fmt.Append(nil, rnd.IntN(8))})
					default:
						muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: row, Family: "f", Qualifier: []byte("v"), Value: fmt.Append(nil, rnd.IntN(20))})
					}
				}
				// "seq" counts batches, roughly (racing writers may lose counts).
				muts = append(muts, store.Mutation{Kind: store.SetCell, Table: "t", Row: []byte("seq"), Family: "g", Value: fmt.Append(nil, seq.Add(1))})
				if err := s.Apply(ctx, muts); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
		}()
	}
	select {}
}

// TestDropTable: dropping a table deletes its rows and its local index's
// entries and leaves the other tables alone; a table created again under
// its name starts empty, and the drop survives reopening.
func TestDropTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := store.TableSpec{Name: "a", Families: []string{"f"}, Indexes: []store.IndexSpec{{Name: "byv", Family: "f", Qualifier: []byte("v")}}}
	for _, sp := range []store.TableSpec{spec, {Name: "b", Families: []string{"f"}}} {
		if err := s.CreateTable(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	var muts []store.Mutation
	for i := range 100 {
		for _, tb := range []string{"a", "b"} {
			muts = append(muts, store.Mutation{Kind: store.SetCell, Table: tb, Row: fmt.Appendf(nil, "r%03d", i), Family: "f", Qualifier: []byte("v"), Value: fmt.Appendf(nil, "%d", i%7)})
		}
	}
	if err := s.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	if err := s.DropTable(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropTable(ctx, "missing"); err != nil {
		t.Fatal(err)
	}
	count := func(table string) (int, error) {
		n := 0
		err := s.ReadRows(ctx, table, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true })
		return n, err
	}
	if _, err := count("a"); !errors.Is(err, store.ErrNoTable) {
		t.Fatalf("reading a dropped table: %v, want ErrNoTable", err)
	}
	if n, err := count("b"); err != nil || n != 100 {
		t.Fatalf("the other table: %d rows, %v", n, err)
	}
	s.Close()
	if s, err = pebblestore.Open(dir, pebblestore.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tables, err := s.Tables(ctx); err != nil || len(tables) != 1 || tables[0].Name != "b" {
		t.Fatalf("tables after reopening: %v, %v", tables, err)
	}
	if err := s.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if n, err := count("a"); err != nil || n != 0 {
		t.Fatalf("the table created again: %d rows, %v", n, err)
	}
	n := 0
	if err := store.ReadIndex(ctx, s, "a", "byv", store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil || n != 0 {
		t.Fatalf("its index: %d entries, %v", n, err)
	}
}

// TestGuardedRowOnly: a guarded write holds back the writes of its guard
// row only: a write of another row (of the same table, or another)
// commits while it decides, and one of the guard row waits for its commit.
func TestGuardedRowOnly(t *testing.T) {
	ctx := context.Background()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"t", "u"} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(table, row, v string) []store.Mutation {
		return []store.Mutation{{Kind: store.SetCell, Table: table, Row: []byte(row), Family: "f", Qualifier: []byte("n"), Value: []byte(v)}}
	}
	// Guard t once: later writes of its rows take row locks.
	if _, err := s.ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("c"), Holds: func([]store.Cell) bool { return true }}}, set("t", "c", "0")); err != nil {
		t.Fatal(err)
	}
	// A row of t on another lock stripe than "c" (stripes are hashed with
	// a per-process seed).
	other := "other"
	for i := 0; pebblestore.RowLock("t", []byte(other)) == pebblestore.RowLock("t", []byte("c")); i++ {
		other = fmt.Sprintf("other%d", i)
	}
	var guardRow chan error
	applied, err := s.ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("c"), Holds: func([]store.Cell) bool {
		for _, m := range [][]store.Mutation{set("u", "c", "1"), set("t", other, "1")} {
			done := make(chan error, 1)
			go func() { done <- s.Apply(ctx, m) }()
			select {
			case err := <-done:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a write of %s %q waited for a guarded write of another row", m[0].Table, m[0].Row)
			}
		}
		guardRow = make(chan error, 1)
		go func() { guardRow <- s.Apply(ctx, set("t", "c", "plain")) }()
		select {
		case err := <-guardRow:
			t.Errorf("a write of the guard row committed (%v) while the guarded write decided", err)
		case <-time.After(100 * time.Millisecond):
		}
		return true
	}}}, set("t", "c", "guarded"))
	if err != nil || !applied {
		t.Fatalf("ApplyGuards = %v, %v", applied, err)
	}
	if err := <-guardRow; err != nil {
		t.Fatal(err)
	}
	r, _, err := s.ReadRow(ctx, "t", []byte("c"))
	if err != nil || len(r.Cells) != 1 || string(r.Cells[0].Value) != "plain" {
		t.Errorf("guard row %v (%v): the plain write should commit after the guarded one", r.Cells, err)
	}
}
