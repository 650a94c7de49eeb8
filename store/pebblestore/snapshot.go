package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvschema/kvschema/store"
)

var _ store.Snapshotter = (*Store)(nil)

// snapshot is a checkpoint of the database in dir/db, dir being a
// directory of its own next to the database's.
type snapshot struct {
	store *Store

	mu       sync.Mutex // serializes Restore and Release
	dir      string
	released bool
}

// Snapshot writes a checkpoint of the database, including writes not yet
// synced, to a new directory DIR.snapshot-N/db next to the database
// directory DIR. Sstables are hard-linked where the file system allows it.
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.exit()
	dir, err := os.MkdirTemp(filepath.Dir(s.dir), filepath.Base(s.dir)+".snapshot-")
	if err != nil {
		return nil, fmt.Errorf("pebblestore: snapshot: %w", err)
	}
	// The checkpoint goes one level down because Checkpoint wants a
	// directory that does not exist yet, and MkdirTemp is what makes the
	// name unique.
	if err := s.db.Checkpoint(filepath.Join(dir, "db"), pebble.WithFlushedWAL()); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pebblestore: snapshot: %w", err)
	}
	return &snapshot{store: s, dir: dir}, nil
}

// Restore replaces the database with a copy of the checkpoint (see the
// package doc). ctx is checked when Restore starts only: once it has closed
// the database, stopping halfway would leave none.
func (sn *snapshot) Restore(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if sn.released {
		return errors.New("pebblestore: restore: snapshot released")
	}
	s := sn.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admit(); err != nil { // one Restore at a time
		return err
	}
	s.restoring = true
	defer func() {
		s.restoring = false
		s.resumed.Broadcast()
	}()
	for s.running > 0 {
		s.idle.Wait()
	}
	if s.closed { // by a Close that waited along, and closes the database
		return store.ErrClosed
	}
	if err := s.swap(filepath.Join(sn.dir, "db")); err != nil {
		s.closed = true
		s.spare = nil
		return fmt.Errorf("pebblestore: restore from %s: %w (the store is closed)", sn.dir, err)
	}
	return nil
}

// swap closes the database, replaces the files of its directory with
// those of the checkpoint in from, and opens it again. It is called with
// s.mu held and no call running.
func (s *Store) swap(from string) error {
	for _, r := range s.spare {
		r.closeIter() // Pebble refuses to close with iterators open
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	if err := replaceFiles(s.dir, from, s.opts.NoSync); err != nil {
		return err
	}
	db, err := pebble.Open(s.dir, s.pebbleOptions())
	if err != nil {
		return err
	}
	tables, err := loadTables(db)
	if err != nil {
		db.Close()
		return err
	}
	s.db = db
	s.tables.Store(&tables)
	s.gen.Add(1) // no iterator of the old database may be reused
	return nil
}

// Release removes the checkpoint's directory.
func (sn *snapshot) Release() error {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.released = true
	if err := os.RemoveAll(sn.dir); err != nil {
		return fmt.Errorf("pebblestore: release snapshot: %w", err)
	}
	return nil
}

// replaceFiles empties dir and fills it with the files of from. Sstables
// and blob files, which Pebble never changes once written, are hard-linked
// (copied if the file system refuses); every other file (manifest, WAL,
// options, markers) is copied, since Pebble may append to it or recycle
// it, and must not change the checkpoint's. Unless noSync, the copies and
// dir are synced.
func replaceFiles(dir, from string, noSync bool) error {
	old, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range old {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	files, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range files {
		src, dst := filepath.Join(from, e.Name()), filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", src)
		}
		if immutable(e.Name()) && os.Link(src, dst) == nil {
			continue
		}
		if err := copyFile(src, dst, noSync); err != nil {
			return err
		}
	}
	if noSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// immutable reports whether Pebble's file name is that of a file it never
// changes once written.
func immutable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

func copyFile(src, dst string, noSync bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil && !noSync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
