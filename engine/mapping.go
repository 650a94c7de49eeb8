package engine

import (
	"fmt"

	"github.com/kvschema/kvschema/keyenc"
	"github.com/kvschema/kvschema/physical"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// family is the one column family of every index table.
const family = "v"

// table maps one index onto a store table. Row values are []types.Value
// aligned with attrs: the key attributes, then the value attributes.
type table struct {
	x     *physical.Index
	name  string
	attrs []physical.Attr
	nkey  int
	qual  [][]byte       // per value attribute
	byQ   map[string]int // qualifier → position in attrs
	pos   map[physical.Attr]int
	nhash int // key attributes forming the partition key
	salt  int // SALT_BUCKETS; 0: unsalted
}

func newTable(x *physical.Index) *table {
	t := &table{x: x, name: x.Name, byQ: map[string]int{}, pos: map[physical.Attr]int{}}
	t.attrs = append(t.attrs, x.KeyAttrs()...)
	t.nkey = len(t.attrs)
	for _, a := range x.Stored() {
		if !containsAttr(t.attrs, a) {
			t.attrs = append(t.attrs, a)
		}
	}
	for i, a := range t.attrs {
		t.pos[a] = i
		if i >= t.nkey {
			q := []byte(x.AttrName(a))
			t.qual = append(t.qual, q)
			t.byQ[string(q)] = i
		}
	}
	t.nhash = len(x.Hash)
	t.salt = x.SaltBuckets
	return t
}

func containsAttr(as []physical.Attr, a physical.Attr) bool {
	for _, b := range as {
		if b == a {
			return true
		}
	}
	return false
}

// appendKey encodes the first n key attributes of vals (at least the
// partition key when the table is salted).
func (t *table) appendKey(dst []byte, vals []types.Value, n int) ([]byte, error) {
	return t.appendKeyFrom(dst, n, func(i int) types.Value { return vals[i] })
}

// appendKeyFrom encodes the first n key attributes, value(i) giving the
// i-th: [salt byte][partition key][clustering key…].
func (t *table) appendKeyFrom(dst []byte, n int, value func(int) types.Value) ([]byte, error) {
	start := len(dst)
	if t.salt > 0 {
		if n < t.nhash {
			return nil, fmt.Errorf("%s: a salted key needs its whole partition key", t.name)
		}
		dst = append(dst, 0) // the bucket, once the partition key is known
	}
	var err error
	for i := 0; i < n; i++ {
		a := t.attrs[i]
		if dst, err = keyenc.AppendOrdered(dst, a.Field.Type, value(i), true); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.name, t.x.AttrName(a), err)
		}
		if t.salt > 0 && i+1 == t.nhash {
			dst[start] = keyenc.SaltBucket(dst[start+1:], t.salt)
		}
	}
	return dst, nil
}

// put returns the mutations writing row vals (every attribute). NULL
// values delete their cell (point deletions: a row deletion would be a
// Pebble range tombstone per row), so a put also overwrites an older row
// with the same key.
func (t *table) put(muts []store.Mutation, vals []types.Value) ([]store.Mutation, error) {
	return t.write(muts, vals, nil)
}

// setCells returns the mutations changing, in an existing row, the value
// attributes i with set[i].
func (t *table) setCells(muts []store.Mutation, vals []types.Value, set []bool) ([]store.Mutation, error) {
	return t.write(muts, vals, set)
}

func (t *table) write(muts []store.Mutation, vals []types.Value, set []bool) ([]store.Mutation, error) {
	key, err := t.appendKey(nil, vals, t.nkey)
	if err != nil {
		return nil, err
	}
	cells, nulls := 0, 0
	for i := t.nkey; i < len(t.attrs); i++ {
		if set != nil && !set[i] {
			continue
		}
		if vals[i] == nil {
			muts = append(muts, store.Mutation{Kind: store.DeleteCell, Table: t.name, Row: key, Family: family, Qualifier: t.qual[i-t.nkey]})
			nulls++
			continue
		}
		v, err := keyenc.AppendNatural(nil, t.attrs[i].Field.Type, vals[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.name, t.x.AttrName(t.attrs[i]), err)
		}
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: t.name, Row: key, Family: family, Qualifier: t.qual[i-t.nkey], Value: v})
		cells++
	}
	if cells == 0 && (set == nil || nulls > 0) {
		// The marker keeps a row with no value in existence.
		muts = append(muts, store.Mutation{Kind: store.SetCell, Table: t.name, Row: key, Family: family, Qualifier: []byte{}, Value: []byte{}})
	}
	return muts, nil
}

// del returns the mutation deleting the row whose key attributes are vals.
func (t *table) del(muts []store.Mutation, vals []types.Value) ([]store.Mutation, error) {
	key, err := t.appendKey(nil, vals, t.nkey)
	if err != nil {
		return nil, err
	}
	return append(muts, store.Mutation{Kind: store.DeleteRow, Table: t.name, Row: key}), nil
}

// decode fills out (len(attrs)) from a stored row; absent cells are NULL.
// It returns the length of the partition-key prefix of the row key.
func (t *table) decode(r store.Row, out []types.Value) (int, error) {
	b := r.Key
	off, hashLen := 0, 0
	if t.salt > 0 {
		if len(b) == 0 || int(b[0]) >= t.salt {
			return 0, fmt.Errorf("table %s: row %q: bad salt byte", t.name, r.Key)
		}
		off = 1
	}
	for i := 0; i < t.nkey; i++ {
		v, n, err := keyenc.DecodeOrdered(t.attrs[i].Field.Type, b[off:], true)
		if err != nil {
			return 0, fmt.Errorf("table %s: row %q: %s: %w", t.name, r.Key, t.x.AttrName(t.attrs[i]), err)
		}
		out[i] = v
		off += n
		if i+1 == t.nhash {
			hashLen = off
		}
	}
	if off != len(b) {
		return 0, fmt.Errorf("table %s: row %q: %d bytes after the key", t.name, r.Key, len(b)-off)
	}
	for i := t.nkey; i < len(out); i++ {
		out[i] = nil
	}
	for _, c := range r.Cells {
		if c.Family != family || len(c.Qualifier) == 0 {
			continue
		}
		i, ok := t.byQ[string(c.Qualifier)]
		if !ok {
			return 0, fmt.Errorf("table %s: row %q: unknown cell %q", t.name, r.Key, c.Qualifier)
		}
		v, err := keyenc.DecodeNatural(t.attrs[i].Field.Type, c.Value)
		if err != nil {
			return 0, fmt.Errorf("table %s: row %q: %s: %w", t.name, r.Key, c.Qualifier, err)
		}
		out[i] = v
	}
	return hashLen, nil
}

// spec is the table to create, pre-split at every salt bucket or SPLIT ON
// point.
func (t *table) spec() store.TableSpec {
	return store.TableSpec{Name: t.name, Families: []string{family}, Splits: t.x.Splits()}
}
