package layout

import (
	"bytes"
	"fmt"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// Bound is one side of a key range over one ROW element: the values above
// Value (Upper false) or below it (Upper true), Value itself included when
// Inclusive.
type Bound struct {
	Value     types.Value
	Upper     bool
	Inclusive bool
}

// KeyRange returns the rows, among those whose key starts with prefix,
// whose ROW element e (the element right after the prefix) holds a value
// within every bound. NULL lies within none: when e's attribute is
// nullable, the rows holding NULL there are left out, wherever NULL sorts
// (first in the ordered encoding, last in the descending one). A bound on
// an element in the natural encoding, which does not keep order, is an
// error. The range may be empty (Range.Empty).
func (l *Layout) KeyRange(prefix []byte, e Element, bounds []Bound) (store.Range, error) {
	r := store.PrefixRange(prefix)
	if e.Kind != ElemAttr {
		return r, fmt.Errorf("schema %s: a key range is over an attribute element", l.Name)
	}
	if e.Enc != Ordered && e.Enc != Desc {
		if len(bounds) > 0 {
			return r, fmt.Errorf("schema %s: attribute %s is encoded without order: no key range bounds it", l.Name, l.Attrs[e.Attr].Name)
		}
		return r, nil
	}
	desc := e.Enc == Desc
	empty := false
	// lower raises the start to k, or past every key starting with k.
	lower := func(k []byte, past bool) {
		if past {
			if k = store.PrefixSuccessor(k); k == nil {
				empty = true // nothing sorts after k
				return
			}
		}
		if bytes.Compare(k, r.Start) > 0 {
			r.Start = k
		}
	}
	// upper lowers the end to k, or past every key starting with k.
	upper := func(k []byte, past bool) {
		if past {
			if k = store.PrefixSuccessor(k); k == nil {
				return // unbounded
			}
		}
		if r.End == nil || bytes.Compare(k, r.End) < 0 {
			r.End = k
		}
	}
	if l.Attrs[e.Attr].Nullable {
		null, err := l.AppendValue(bytes.Clone(prefix), e, nil)
		if err != nil {
			return r, err
		}
		if desc {
			upper(null, false)
		} else {
			lower(null, true)
		}
	}
	for _, b := range bounds {
		if b.Value == nil {
			empty = true // NULL bounds nothing: no value compares with it
			continue
		}
		k, err := l.AppendValue(bytes.Clone(prefix), e, b.Value)
		if err != nil {
			return r, err
		}
		// Descending, a bound below the value is a bound above its bytes.
		// The encodings are prefix-free: the keys holding the value itself
		// are those starting with k.
		if b.Upper != desc {
			upper(k, b.Inclusive)
		} else {
			lower(k, !b.Inclusive)
		}
	}
	if empty {
		r.End = r.Start
	}
	return r, nil
}
