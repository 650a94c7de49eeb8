// Package scratch is a temporary, on-disk sorted map for work larger than
// memory: a load stages every tuple here, checks keys and foreign keys,
// and joins from here, so that the data set never has to fit in memory.
//
// A Map is a Pebble database in a fresh temporary directory, written
// without a write-ahead log (a crash loses the scratch space, and the work
// that uses it starts over) and removed by Close. Keys and values are
// opaque bytes; the caller owns their encoding.
//
// Invariants: a Batch sees its own writes and everything committed before
// it; an Iter sees what was committed when it was made. A Map is safe for
// concurrent readers once no Batch is open.
package scratch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// Map is a temporary sorted map on disk.
type Map struct {
	db  *pebble.DB
	dir string
}

// Open creates a Map in a new directory under parent (os.TempDir() when
// parent is ""). The directory is named after the process, and Open
// removes the maps of processes that are gone (killed before their Close:
// a load's map is as large as its data).
func Open(parent string) (*Map, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeStale(parent)
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-*", prefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	opts := &pebble.Options{
		Logger:     quiet{pebble.DefaultLogger},
		DisableWAL: true,
		// Large memtables: the map is written in bulk, then read.
		MemTableSize: 64 << 20,
		// Joins read the map at random (a child's parent): blocks are kept
		// uncompressed, so a cache miss costs a read from the OS's page
		// cache, not a decompression as well.
		CacheSize: 512 << 20,
	}
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	// Most Gets of a load look for a key that is not there yet (the
	// duplicate-key check): bloom filters answer them without reading.
	opts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := pebble.Open(dir, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Map{db: db, dir: dir}, nil
}

const prefix = "kvschema-scratch-"

// removeStale deletes the maps under parent whose process no longer runs.
func removeStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// alive reports whether process pid exists (a reused pid keeps a stale
// map: the safe side).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Close releases the map and deletes its directory.
func (m *Map) Close() error {
	return errors.Join(m.db.Close(), os.RemoveAll(m.dir))
}

// Get appends the value of key to dst; ok is false when key is absent.
func (m *Map) Get(dst, key []byte) (v []byte, ok bool, err error) {
	return get(m.db.Get, dst, key)
}

func get(fn func([]byte) ([]byte, io.Closer, error), dst, key []byte) ([]byte, bool, error) {
	v, c, err := fn(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, err
	}
	dst = append(dst, v...)
	return dst, true, c.Close()
}

// Batch is a set of writes, readable before it is committed.
type Batch struct {
	m *Map
	b *pebble.Batch
	// own are the batch's writes, for Get: a plain map costs less than
	// Pebble's indexed batch (a skiplist) for write-mostly batches.
	own map[string][]byte
}

// NewBatch starts a batch.
func (m *Map) NewBatch() *Batch {
	return &Batch{m: m, b: m.db.NewBatch(), own: map[string][]byte{}}
}

// Set writes key → value in the batch (both are copied).
func (b *Batch) Set(key, value []byte) error {
	b.own[string(key)] = append([]byte(nil), value...)
	return b.b.Set(key, value, nil)
}

// Get is Map.Get through the batch's own writes.
func (b *Batch) Get(dst, key []byte) ([]byte, bool, error) {
	if v, ok := b.own[string(key)]; ok {
		return append(dst, v...), true, nil
	}
	return b.m.Get(dst, key)
}

// Size is the batch's size in bytes.
func (b *Batch) Size() int { return b.b.Len() }

// Commit writes the batch to the map and empties it for reuse.
func (b *Batch) Commit() error {
	if err := b.b.Commit(pebble.NoSync); err != nil {
		return err
	}
	b.b.Reset()
	clear(b.own)
	return nil
}

// Close discards the batch's uncommitted writes.
func (b *Batch) Close() error { return b.b.Close() }

// Iter walks the keys of one prefix in order.
type Iter struct {
	it    *pebble.Iterator
	lower []byte
	upper []byte
}

// NewIter returns an iterator; position it with Prefix.
func (m *Map) NewIter() (*Iter, error) {
	it, err := m.db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// Prefix bounds the iterator to the keys that start with p and positions
// it on the first of them at or after from (p itself when from is nil);
// it reports whether there is one.
func (i *Iter) Prefix(p, from []byte) bool {
	i.lower = append(i.lower[:0], p...)
	i.upper = prefixEnd(append(i.upper[:0], p...))
	if i.upper == nil {
		i.it.SetBounds(i.lower, nil)
	} else {
		i.it.SetBounds(i.lower, i.upper)
	}
	if from == nil {
		return i.it.First()
	}
	return i.it.SeekGE(from)
}

// SeekGE moves to the first key at or after k within the prefix.
func (i *Iter) SeekGE(k []byte) bool { return i.it.SeekGE(k) }

// Next moves to the next key; it reports whether there is one.
func (i *Iter) Next() bool { return i.it.Next() }

// Key is the current key, valid until the iterator moves.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value is the current value, valid until the iterator moves.
func (i *Iter) Value() []byte { return i.it.Value() }

// Err is the error that stopped the iterator, if any.
func (i *Iter) Err() error { return i.it.Error() }

// Close releases the iterator and returns its error, if any.
func (i *Iter) Close() error { return i.it.Close() }

// prefixEnd turns p into the first key after every key starting with p
// (in place), or nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	for n := len(p) - 1; n >= 0; n-- {
		if p[n] != 0xff {
			p[n]++
			return p[:n+1]
		}
	}
	return nil
}

// quiet drops Pebble's informational messages, keeping its errors.
type quiet struct{ pebble.Logger }

func (quiet) Infof(string, ...any) {}
