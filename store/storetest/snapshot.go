package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kvschema/kvschema/store"
)

// RunSnapshot checks, as subtests of t, a store's store.Snapshotter: that
// Restore brings back exactly the content at Snapshot time (tables,
// families, splits and rows), as often as asked, that the store works on
// after it, that Release and Close make Restore fail, and that reads
// running during a Restore succeed and see one content or the other. open
// must return a fresh, empty store for each call; the suite closes it. A
// store that is no Snapshotter, or whose Snapshot fails with
// errors.ErrUnsupported (a decorator of one that is not), skips the suite.
func RunSnapshot(t *testing.T, open func(t *testing.T) store.Store) {
	runCases(t, open, []testCase{
		{"Restore", testSnapshotRestore},
		{"TwoSnapshots", testTwoSnapshots},
		{"Released", testSnapshotReleased},
		{"Closed", testSnapshotClosed},
		{"ReadsDuringRestore", testReadsDuringRestore},
	})
}

// snapshot takes a snapshot of s, released when the test ends, or skips the
// test if s cannot.
func snapshot(t *testing.T, s store.Store) store.Snapshot {
	t.Helper()
	sp, ok := s.(store.Snapshotter)
	if !ok {
		t.Skipf("%T is no store.Snapshotter", s)
	}
	sn, err := sp.Snapshot(t.Context())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%T: Snapshot: %v", s, err)
	}
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	t.Cleanup(func() {
		if err := sn.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return sn
}

func restore(t *testing.T, sn store.Snapshot) {
	t.Helper()
	if err := sn.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v", err)
	}
}

// content renders everything s holds: each table with its families and
// splits, then its rows.
func content(t testing.TB, s store.Store) string {
	t.Helper()
	specs, err := s.Tables(t.Context())
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	var b strings.Builder
	for _, sp := range specs {
		fmt.Fprintf(&b, "table %q families=%q splits=%q\n", sp.Name, sp.Families, sp.Splits)
		if rows := format(readRows(t, s, sp.Name, store.All(), store.ReadOptions{})); rows != "" {
			b.WriteString(rows)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func wantContent(t testing.TB, s store.Store, what, want string) {
	t.Helper()
	if got := content(t, s); got != want {
		t.Errorf("content %s =\n%s\nwant\n%s", what, got, want)
	}
}

// byKey formats each row by its key.
func byKey(rows []store.Row) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		out[string(r.Key)] = format([]store.Row{r})
	}
	return out
}

// fillForSnapshot creates tables a and b and writes rows to both.
func fillForSnapshot(t *testing.T, s store.Store) {
	if err := s.CreateTable(t.Context(), store.TableSpec{Name: "a", Families: []string{"f", "g"}, Splits: keys("m", "\xff")}); err != nil {
		t.Fatal(err)
	}
	create(t, s, "b", "f")
	for _, k := range edgeKeys {
		apply(t, s, set("a", k, "f", "q", "v"+k), set("a", k, "g", k, "w"))
	}
	apply(t, s, set("b", "r1", "f", "", "1"), set("b", "r2", "f", "q", "2"))
}

func testSnapshotRestore(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	want := content(t, s)
	sn := snapshot(t, s)

	// Every kind of change: a new table, a new family, overwritten, deleted
	// and new cells, deleted families, deleted and new rows.
	create(t, s, "c", "f")
	create(t, s, "a", "h")
	apply(t, s,
		set("a", "a", "f", "q", "changed"),
		del("a", "b", "g", "b"),
		delFamily("a", "ab", "g"),
		delFamily("b", "r2", "f"), // its only family
		delRow("a", "\xff"),
		set("a", "new", "h", "q", "v"),
		set("b", "r3", "f", "", "3"),
		delRow("b", "r1"),
		set("c", "r", "f", "", "c"),
	)
	if content(t, s) == want {
		t.Fatal("writes did not change the content")
	}
	restore(t, sn)
	wantContent(t, s, "after Restore", want)

	// Again, after other writes.
	for _, k := range edgeKeys {
		apply(t, s, delRow("a", k))
	}
	create(t, s, "d", "f", "g")
	apply(t, s, set("d", "r", "g", "", ""), set("b", "r2", "f", "q", "changed"))
	restore(t, sn)
	wantContent(t, s, "after a second Restore", want)

	// The store works on after a Restore.
	apply(t, s, set("a", "after", "g", "q", "v"), del("b", "r2", "f", "q"))
	wantRow(t, s, "a", "after", `"after" g:"q"="v"`)
	wantRow(t, s, "b", "r2", "")
	create(t, s, "e", "f")
	apply(t, s, set("e", "r", "f", "", "e"))
	wantRows(t, s, "e", store.All(), store.ReadOptions{}, `"r" f:""="e"`)
	restore(t, sn)
	wantContent(t, s, "after a third Restore", want)
	wantRow(t, s, "a", "after", "")
}

func testTwoSnapshots(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	want1 := content(t, s)
	sn1 := snapshot(t, s)
	create(t, s, "c", "f")
	apply(t, s, set("c", "r", "f", "", "c"), delRow("a", "a"))
	want2 := content(t, s)
	sn2 := snapshot(t, s)
	apply(t, s, delRow("c", "r"), set("b", "r9", "f", "", "9"))

	restore(t, sn1)
	wantContent(t, s, "after Restore of the first snapshot", want1)
	restore(t, sn2)
	wantContent(t, s, "after Restore of the second snapshot", want2)
	restore(t, sn1)
	wantContent(t, s, "after Restore of the first snapshot again", want1)
	if err := sn1.Release(); err != nil {
		t.Fatal(err)
	}
	restore(t, sn2)
	wantContent(t, s, "after Restore of the second snapshot, the first released", want2)
}

func testSnapshotReleased(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	sn := snapshot(t, s)
	if err := sn.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	apply(t, s, delRow("b", "r1"))
	want := content(t, s)
	if err := sn.Restore(t.Context()); err == nil {
		t.Error("Restore after Release: no error")
	}
	wantContent(t, s, "after a failed Restore", want)
	apply(t, s, set("b", "r1", "f", "", "1"))
	wantRow(t, s, "b", "r1", `"r1" f:""="1"`)
}

func testSnapshotClosed(t *testing.T, s store.Store) {
	fillForSnapshot(t, s)
	sn := snapshot(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sn.Restore(t.Context()); err == nil {
		t.Error("Restore after Close: no error")
	}
	if _, err := s.(store.Snapshotter).Snapshot(t.Context()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Snapshot after Close: err = %v, want ErrClosed", err)
	}
}

// testReadsDuringRestore restores the store again and again while readers
// run (meant for -race). Content alternates between the snapshot's and one
// written by a single batch, so with atomic batches every ReadRows call
// sees exactly one of the two.
func testReadsDuringRestore(t *testing.T, s store.Store) {
	ctx := t.Context()
	create(t, s, "t", "f")
	for i := range 10 {
		k := fmt.Sprintf("k%d", i)
		apply(t, s, set("t", k, "f", "a", "s"), set("t", k, "f", "b", "s"))
	}
	var batch []store.Mutation
	for i := 1; i < 15; i++ {
		k := fmt.Sprintf("k%d", i)
		batch = append(batch, set("t", k, "f", "a", "w"), set("t", k, "f", "b", "w"))
	}
	batch = append(batch, delRow("t", "k0"))
	savedRows := readRows(t, s, "t", store.All(), store.ReadOptions{})
	saved := format(savedRows)
	sn := snapshot(t, s)
	apply(t, s, batch...)
	writtenRows := readRows(t, s, "t", store.All(), store.ReadOptions{})
	written := format(writtenRows)
	caps := s.Capabilities()
	savedByKey, writtenByKey := byKey(savedRows), byKey(writtenRows)

	var stop atomic.Bool
	var reads, readers atomic.Int64 // reads done, readers still reading
	var wg sync.WaitGroup
	defer func() { // also when a Restore fails the test
		stop.Store(true)
		wg.Wait()
	}()
	readers.Store(3)
	for r := range 3 {
		wg.Go(func() {
			defer readers.Add(-1)
			for !stop.Load() {
				var rows []store.Row
				err := s.ReadRows(ctx, "t", store.All(), store.ReadOptions{Reverse: r == 1}, func(row store.Row) bool {
					rows = append(rows, store.CloneRow(row))
					return true
				})
				if err != nil {
					t.Errorf("ReadRows during Restore: %v", err)
					return
				}
				if r == 1 {
					for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
						rows[i], rows[j] = rows[j], rows[i]
					}
				}
				if got := format(rows); caps.SnapshotReads && got != saved && got != written {
					t.Errorf("ReadRows during Restore =\n%s\nwant the saved content\n%s\nor the written one\n%s", got, saved, written)
				}
				if caps.AtomicBatch {
					// Each row as saved or as written (present or not).
					for _, row := range rows {
						got := format([]store.Row{row})
						if got != savedByKey[string(row.Key)] && got != writtenByKey[string(row.Key)] {
							t.Errorf("ReadRows during Restore: row %s, want %q or %q", got, savedByKey[string(row.Key)], writtenByKey[string(row.Key)])
						}
					}
					return
				}
				if _, _, err := s.ReadRow(ctx, "t", []byte("k1")); err != nil {
					t.Errorf("ReadRow during Restore: %v", err)
					return
				}
				if _, err := s.Tables(ctx); err != nil {
					t.Errorf("Tables during Restore: %v", err)
					return
				}
				reads.Add(1)
			}
		})
	}
	for range 10 {
		// Let the readers read between restores, however fast these are.
		for n := reads.Load(); reads.Load() == n && readers.Load() > 0; {
			runtime.Gosched()
		}
		restore(t, sn)
		apply(t, s, batch...)
	}
	restore(t, sn)
	wantRows(t, s, "t", store.All(), store.ReadOptions{}, saved)
}
