package pebblestore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
)

// pendingRestore sets up a Restore that waits for a scan: it returns the
// store (row r of table t is "changed", "saved" in the snapshot), a func
// that ends the scan (called anyway when the test ends, so that Close does
// not wait for it), and the results of the scan and of the Restore.
func pendingRestore(t *testing.T) (s *Store, endScan func(), scanErr, restoreErr <-chan error) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	set := func(v string) {
		t.Helper()
		if err := s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "t", Row: []byte("r"), Family: "f", Value: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	set("saved")
	sn, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sn.Release() })
	set("changed")

	inScan, end := make(chan struct{}), make(chan struct{})
	endScan = sync.OnceFunc(func() { close(end) })
	t.Cleanup(endScan)
	scanned, restored := make(chan error, 1), make(chan error, 1)
	go func() {
		scanned <- s.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(store.Row) bool {
			close(inScan)
			<-end
			return true
		})
	}()
	<-inScan
	go func() { restored <- sn.Restore(ctx) }()
	for {
		s.mu.Lock()
		restoring := s.restoring
		s.mu.Unlock()
		if restoring {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	return s, endScan, scanned, restored
}

// TestRestoreHoldsCallsBack checks that calls made while a Restore waits
// for running ones wait for it, and then see the restored content.
func TestRestoreHoldsCallsBack(t *testing.T) {
	s, endScan, scanErr, restoreErr := pendingRestore(t)
	type result struct {
		row store.Row
		err error
	}
	read := make(chan result, 1)
	go func() {
		row, _, err := s.ReadRow(context.Background(), "t", []byte("r"))
		read <- result{row, err}
	}()
	select {
	case r := <-read:
		t.Fatalf("ReadRow returned during a pending Restore: %+v", r)
	case err := <-restoreErr:
		t.Fatalf("Restore returned while a scan runs: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	endScan()
	if err := <-scanErr; err != nil {
		t.Errorf("scan: %v", err)
	}
	if err := <-restoreErr; err != nil {
		t.Fatalf("Restore: %v", err)
	}
	r := <-read
	if r.err != nil || len(r.row.Cells) != 1 || string(r.row.Cells[0].Value) != "saved" {
		t.Errorf("ReadRow held back by Restore = %+v, %v; want the saved row", r.row, r.err)
	}
}

// TestCloseDuringRestore checks that a Close while a Restore waits makes
// the Restore and the calls it holds back fail with store.ErrClosed.
func TestCloseDuringRestore(t *testing.T) {
	s, endScan, scanErr, restoreErr := pendingRestore(t)
	read := make(chan error, 1)
	go func() {
		_, _, err := s.ReadRow(context.Background(), "t", []byte("r"))
		read <- err
	}()
	time.Sleep(10 * time.Millisecond) // most likely, ReadRow waits now
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	// Close, still waiting for the scan, fails the held-back call at once.
	select {
	case err := <-read:
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("ReadRow held back by Restore, then Close: err = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("ReadRow held back by Restore still waits after Close")
	}
	endScan()
	if err := <-scanErr; err != nil {
		t.Errorf("scan: %v", err)
	}
	if err := <-restoreErr; !errors.Is(err, store.ErrClosed) {
		t.Errorf("Restore, then Close: err = %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}
