package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/scratch"
	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/types"
)

// staged is a load's entity data on disk (package scratch), so that a data
// set larger than memory can be checked and joined:
//
//	'e' entity# key               → origin, tuple   (every tuple, by key)
//	'c' fk# parent-key child-key  → origin, tuple   (children by parent)
//
// where entity# numbers the model's entities and fk# its foreign-key
// columns, keys are in the ordered key encoding (self-delimiting, so a
// parent key is a prefix of its children's entries), the origin is the
// tuple's file (a number, see files) and line, and the tuple is its columns
// in the nullable ordered encoding. Entries are sorted by key: roots are
// read in key order, and the children of a parent are one prefix.
type staged struct {
	m      *catalog.Model
	sm     *scratch.Map
	entNo  map[*catalog.Entity]int
	fkNo   map[*catalog.Nav]int // to-one nav of a foreign-key column → fk#
	files  []string
	fileNo map[string]int
	known  map[*catalog.Entity][]bool // all true: staged tuples are complete
}

func newStaged(m *catalog.Model, sm *scratch.Map) *staged {
	s := &staged{m: m, sm: sm, entNo: map[*catalog.Entity]int{}, fkNo: map[*catalog.Nav]int{},
		fileNo: map[string]int{}, known: map[*catalog.Entity][]bool{}}
	for i, e := range m.Entities {
		s.entNo[e] = i
		k := make([]bool, len(e.Columns))
		for c, col := range e.Columns {
			k[c] = true
			if col.Nav != nil {
				s.fkNo[col.Nav] = len(s.fkNo)
			}
		}
		s.known[e] = k
	}
	return s
}

func (s *staged) entityPrefix(dst []byte, e *catalog.Entity) []byte {
	return binary.AppendUvarint(append(dst, 'e'), uint64(s.entNo[e]))
}

func (s *staged) fkPrefix(dst []byte, fk *catalog.Nav) []byte {
	return binary.AppendUvarint(append(dst, 'c'), uint64(s.fkNo[fk]))
}

// entityKey appends e's entry key for key.
func (s *staged) entityKey(dst []byte, e *catalog.Entity, key types.Value) ([]byte, error) {
	return keyenc.AppendOrdered(s.entityPrefix(dst, e), e.ID().Type, key, false)
}

// encode appends a tuple's entry value.
func (s *staged) encode(dst []byte, e *catalog.Entity, vals []types.Value, file string, line int) ([]byte, error) {
	f, ok := s.fileNo[file]
	if !ok {
		f = len(s.files)
		s.files = append(s.files, file)
		s.fileNo[file] = f
	}
	dst = binary.AppendUvarint(dst, uint64(f))
	dst = binary.AppendUvarint(dst, uint64(line))
	for i, c := range e.Columns {
		var err error
		if dst, err = keyenc.AppendOrdered(dst, c.Type, vals[i], true); err != nil {
			return dst, fmt.Errorf("field %s: %v", c.Name, err)
		}
	}
	return dst, nil
}

// origin decodes where an entry's tuple came from.
func (s *staged) origin(v []byte) (string, int) {
	f, n := binary.Uvarint(v)
	line, _ := binary.Uvarint(v[n:])
	if int(f) < len(s.files) {
		return s.files[f], int(line)
	}
	return "?", int(line)
}

// decode reads an entry's tuple.
func (s *staged) decode(e *catalog.Entity, v []byte) (*record, error) {
	_, n := binary.Uvarint(v)
	v = v[n:]
	_, n = binary.Uvarint(v)
	v = v[n:]
	r := &record{vals: make([]types.Value, len(e.Columns)), known: s.known[e]}
	for i, c := range e.Columns {
		x, n, err := keyenc.DecodeOrdered(c.Type, v, true)
		if err != nil {
			return nil, fmt.Errorf("staged %s tuple: %v", e.Name, err)
		}
		r.vals[i], v = x, v[n:]
	}
	return r, nil
}

// stager writes tuples into a staged data set, checking keys as it goes.
type stager struct {
	s          *staged
	b          *scratch.Batch
	key, val   []byte
	child, old []byte
	// last is each entity's greatest key staged so far: data usually
	// comes in key order, and a key above it needs no duplicate check.
	last map[*catalog.Entity][]byte
	// commitBytes is the batch size at which the stager commits.
	commitBytes int
}

// add stages one checked, coerced tuple; a duplicate key is a LoadError.
func (w *stager) add(e *catalog.Entity, vals []types.Value, file string, line int) error {
	s := w.s
	id := vals[e.Column(e.ID())]
	var err error
	if w.key, err = s.entityKey(w.key[:0], e, id); err != nil {
		return &LoadError{File: file, Line: line, Field: e.ID().Name, Msg: err.Error()}
	}
	if last, ok := w.last[e]; ok && bytes.Compare(w.key, last) <= 0 {
		old, dup, err := w.b.Get(w.old[:0], w.key)
		if err != nil {
			return err
		}
		w.old = old
		if dup {
			f, l := s.origin(old)
			return &LoadError{File: file, Line: line, Field: e.ID().Name, Msg: fmt.Sprintf("duplicate key %s (first at %s:%d)", types.Format(id), f, l)}
		}
	} else {
		w.last[e] = append(last[:0], w.key...)
	}
	if w.val, err = s.encode(w.val[:0], e, vals, file, line); err != nil {
		return &LoadError{File: file, Line: line, Msg: err.Error()}
	}
	if err := w.b.Set(w.key, w.val); err != nil {
		return err
	}
	idKey := w.key[len(s.entityPrefix(w.child[:0], e)):]
	for c, col := range e.Columns {
		if col.Nav == nil || vals[c] == nil {
			continue
		}
		w.child = s.fkPrefix(w.child[:0], col.Nav)
		if w.child, err = keyenc.AppendOrdered(w.child, col.Nav.To.ID().Type, vals[c], false); err != nil {
			return &LoadError{File: file, Line: line, Field: col.Name, Msg: err.Error()}
		}
		w.child = append(w.child, idKey...)
		if err := w.b.Set(w.child, w.val); err != nil {
			return err
		}
	}
	if w.b.Size() >= w.commitBytes {
		return w.b.Commit()
	}
	return nil
}

// checkForeignKeys reports the first foreign key (in file order of the
// entities' columns) that names no staged tuple.
func (s *staged) checkForeignKeys() error {
	it, err := s.sm.NewIter()
	if err != nil {
		return err
	}
	defer it.Close()
	var pre, parent, last []byte
	for _, e := range s.m.Entities {
		for c, col := range e.Columns {
			fk := col.Nav
			if fk == nil {
				continue
			}
			pre = s.fkPrefix(pre[:0], fk)
			pt := fk.To.ID().Type
			haveLast := false
			for ok := it.Prefix(pre, nil); ok; ok = it.Next() {
				k := it.Key()[len(pre):]
				_, n, err := keyenc.DecodeOrdered(pt, k, false)
				if err != nil {
					return err
				}
				if haveLast && string(k[:n]) == string(last) {
					continue
				}
				last, haveLast = append(last[:0], k[:n]...), true
				parent = append(s.entityPrefix(parent[:0], fk.To), k[:n]...)
				var found bool
				if _, found, err = s.sm.Get(nil, parent); err != nil {
					return err
				}
				if !found {
					r, err := s.decode(e, it.Value())
					if err != nil {
						return err
					}
					f, l := s.origin(it.Value())
					return &LoadError{File: f, Line: l, Field: col.Name, Msg: fmt.Sprintf("no %s has %s = %s (dangling foreign key)", fk.To.Name, fk.To.ID().Name, types.Format(r.vals[c]))}
				}
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stagedReader reads a staged data set for one join at a time (tuples).
type stagedReader struct {
	s     *staged
	iters map[int]*scratch.Iter // per graph node being walked
	key   []byte
	val   []byte
}

func (s *staged) reader() *stagedReader {
	return &stagedReader{s: s, iters: map[int]*scratch.Iter{}}
}

func (r *stagedReader) close() error {
	var err error
	for _, it := range r.iters {
		if e := it.Close(); err == nil {
			err = e
		}
	}
	return err
}

func (r *stagedReader) iter(node int) (*scratch.Iter, error) {
	if it := r.iters[node]; it != nil {
		return it, nil
	}
	it, err := r.s.sm.NewIter()
	if err != nil {
		return nil, err
	}
	r.iters[node] = it
	return it, nil
}

func (r *stagedReader) each(it *scratch.Iter, prefix []byte, e *catalog.Entity, fn func(*record) error) error {
	for ok := it.Prefix(prefix, nil); ok; ok = it.Next() {
		rec, err := r.s.decode(e, it.Value())
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return it.Err()
}

func (r *stagedReader) scan(e *catalog.Entity, fn func(*record) error) error {
	it, err := r.iter(0)
	if err != nil {
		return err
	}
	return r.each(it, r.s.entityPrefix(nil, e), e, fn)
}

func (r *stagedReader) get(e *catalog.Entity, key types.Value) (*record, error) {
	var err error
	if r.key, err = r.s.entityKey(r.key[:0], e, key); err != nil {
		return nil, err
	}
	v, ok, err := r.s.sm.Get(r.val[:0], r.key)
	if err != nil || !ok {
		return nil, err
	}
	r.val = v
	return r.s.decode(e, v)
}

func (r *stagedReader) children(node int, nav *catalog.Nav, parent types.Value, fn func(*record) error) error {
	fk := nav.Reverse
	if _, ok := r.s.fkNo[fk]; !ok {
		return nil // no foreign-key column holds the relationship
	}
	it, err := r.iter(node)
	if err != nil {
		return err
	}
	p, err := keyenc.AppendOrdered(r.s.fkPrefix(nil, fk), nav.From.ID().Type, parent, false)
	if err != nil {
		return err
	}
	return r.each(it, p, nav.To, fn)
}
