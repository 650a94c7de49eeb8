package plan

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// maxKeys bounds the key combinations a skip scan enumerates (IN lists
// multiply); past it the remaining elements are scanned instead.
const maxKeys = 10000

// AccessKind is how an access reads its layout, in Phoenix's vocabulary.
type AccessKind uint8

// Access kinds, best first.
const (
	PointLookup AccessKind = iota // exact row keys
	SkipScan                      // several ranges or keys, one pass
	RangeScan                     // one key range
	FullScan                      // the whole layout
)

// Read is one store call: rows of one table selected by keys and ranges.
// Table "" means every table of a layout whose TABLE has attributes.
type Read struct {
	Table  string
	Bucket int // salt bucket for salted fan-out, -1 otherwise
	Rows   store.RowSet
	// Partitions are the keys of the partition rows holding the static
	// columns (layout.Static) of the partitions the read fixes, when the
	// plan needs them: read in the same call as Rows (a partition row
	// sorts before its rows), or, for a reverse read, which would meet
	// them last, in a forward call made first (layout's
	// CellDecoder.PreloadPartitions). PreloadRows: the read does not fix
	// its partitions and is reverse; its rows are read forward first for
	// their partition rows.
	Partitions  [][]byte
	PreloadRows bool
	// Slack is the number of partition rows the read may meet (one per
	// partition it fixes, in a layout with static columns): a store's row
	// limit counts them, and the executor raises the limit by Slack.
	Slack int
}

// Access is how one conjunct (or several merged ones) is read from one
// layout.
type Access struct {
	Layout *layout.Layout
	Kind   AccessKind
	Reads  []Read // executed in parallel when more than one
	// FanOut is the number of salt buckets scanned in parallel (0: none).
	FanOut int
	// FixedElems counts leading ROW attribute elements pinned by equality;
	// RangeElem is true when the next one is bounded by a range. Together
	// they are seed 003's "how much of the front is fixed" score.
	FixedElems int
	RangeElem  bool
	// Complete: every ROW element is fixed, the keys are exact.
	Complete bool
	// ProvidesOrder: the key order yields the query's ORDER BY (set by the
	// planner before choosing, for cost models to weigh).
	ProvidesOrder bool
	// parts and rangeCons keep what EXPLAIN's key bounds are computed from,
	// only when asked (Bounds).
	parts     []partial
	rangeCons *Constraint
	rangeDesc bool
	// Exact lists the attributes whose constraints the key ranges enforce
	// exactly; predicates on other attributes remain as filters.
	Exact map[int]bool
	// Conjuncts are the conjunct indexes this access serves.
	Conjuncts []int
}

// NumKeys is the number of point keys across reads.
func (a *Access) NumKeys() int {
	n := 0
	for _, r := range a.Reads {
		n += len(r.Rows.Keys)
	}
	return n
}

// NumRanges is the number of ranges across reads.
func (a *Access) NumRanges() int {
	n := 0
	for _, r := range a.Reads {
		n += len(r.Rows.Ranges)
	}
	return n
}

// partial is one combination of fixed values while walking a layout's key.
type partial struct {
	table []byte
	key   []byte
	tuple []types.Value // fixed attribute values; nil = not fixed
	salt  int           // fan-out bucket or -1
}

func (p partial) clone() partial {
	return partial{
		table: append([]byte(nil), p.table...),
		key:   append([]byte(nil), p.key...),
		tuple: append([]types.Value(nil), p.tuple...),
		salt:  p.salt,
	}
}

// walker derives an Access for one layout and one conjunct.
type walker struct {
	l     *layout.Layout
	cons  Constraints
	parts []partial
	acc   *Access
	exact map[int]bool // attributes whose constraint the key enforces exactly
}

// Derive computes the access path of a conjunct on a layout.
func Derive(l *layout.Layout, cons Constraints) *Access {
	n := len(l.Attrs)
	w := walker{l: l, cons: cons, acc: &Access{Layout: l}, exact: map[int]bool{}}
	w.parts = []partial{{tuple: make([]types.Value, n), salt: -1}}
	tableFixed := true
	if l.StaticTable() == "" {
		tableFixed = w.walkTable()
	}
	ranges := w.walkRow()
	w.finish(ranges, tableFixed)
	w.acc.Exact = w.exact
	return w.acc
}

// values lists the candidate values for attribute a in partial p: the value
// already fixed, or the constraint's points; nil if not fixed.
func (w *walker) values(p *partial, a int) []types.Value {
	if p.tuple[a] != nil {
		return p.tuple[a : a+1]
	}
	if c := w.cons[a]; c.Fixed() {
		return c.Points
	}
	return nil
}

// expand multiplies the partials by the values of the attributes in es,
// encoding es onto the key (or table). ok is false if some attribute is not
// fixed or the combinations exceed maxKeys; the partials are then unchanged.
func (w *walker) expand(field string, es []layout.Element, toTable bool) bool {
	var buf [4]int
	attrs := buf[:0]
	var collect func([]layout.Element)
	collect = func(es []layout.Element) {
		for _, e := range es {
			if e.Kind == layout.ElemAttr && !slices.Contains(attrs, e.Attr) {
				attrs = append(attrs, e.Attr)
			}
			collect(e.Body)
		}
	}
	collect(es)
	out := []partial{}
	for i := range w.parts {
		combos := []partial{w.parts[i]}
		for _, a := range attrs {
			vals := w.values(&w.parts[i], a)
			if vals == nil || len(out)+len(combos)*len(vals) > maxKeys {
				return false
			}
			next := make([]partial, 0, len(combos)*len(vals))
			for _, c := range combos {
				for _, v := range vals {
					cp := c.clone()
					cp.tuple[a] = v
					next = append(next, cp)
				}
			}
			combos = next
		}
		for _, c := range combos {
			var err error
			if toTable {
				c.table, err = w.l.AppendElements(c.table, field, es, c.tuple)
			} else {
				c.key, err = w.l.AppendElements(c.key, field, es, c.tuple)
			}
			// A value the layout cannot store (e.g. containing its
			// separator) matches no row: drop the combination.
			if err == nil {
				out = append(out, c)
			}
		}
	}
	w.parts = out
	return true
}

// walkTable fixes the table name; false if it depends on unfixed attributes.
func (w *walker) walkTable() bool {
	es := w.l.Table.Elems
	return w.expand("TABLE", es, true)
}

// walkRow extends the partials element by element and returns the key
// ranges when it stopped at a range-bounded element (nil otherwise).
func (w *walker) walkRow() []store.Range {
	es := w.l.Row.Elems
	w.acc.Complete = false
	for i := 0; i < len(es); i++ {
		e := es[i]
		// An attribute is encoded together with a following constant.
		span := es[i : i+1]
		if e.Kind == layout.ElemAttr && i+1 < len(es) && es[i+1].Kind == layout.ElemConst {
			span = es[i : i+2]
		}
		switch e.Kind {
		case layout.ElemConst:
			for j := range w.parts {
				w.parts[j].key = append(w.parts[j].key, e.Lit...)
			}
			continue
		case layout.ElemSalt:
			if w.expand("ROW", span, false) {
				continue
			}
			// Salt not determined: fan out over every bucket.
			var out []partial
			for _, p := range w.parts {
				for b := 0; b < e.Buckets; b++ {
					cp := p.clone()
					cp.key = append(cp.key, byte(b))
					cp.salt = b
					out = append(out, cp)
				}
			}
			w.parts = out
			w.acc.FanOut = e.Buckets
			continue
		case layout.ElemAttr:
			if w.expand("ROW", span, false) {
				w.acc.FixedElems++
				if !(i == len(es)-1 && trailingNatural(w.l)) {
					w.exact[e.Attr] = true
				}
				i += len(span) - 1
				continue
			}
			if c := w.cons[e.Attr]; c.Bounded() {
				last := i == len(es)-1
				if rs, ok := w.rangeFor(e, c, last); ok {
					w.acc.RangeElem = true
					w.exact[e.Attr] = true
					w.acc.rangeCons, w.acc.rangeDesc = c, e.Enc == layout.Desc
					return rs
				}
			}
			return nil
		case layout.ElemSize:
			if w.expand("ROW", span, false) {
				w.acc.FixedElems++
				// A length-prefixed body matches its values exactly.
				for _, b := range e.Body {
					if b.Kind == layout.ElemAttr {
						w.exact[b.Attr] = true
					}
				}
				continue
			}
			return nil
		}
		return nil
	}
	w.acc.Complete = true
	return nil
}

// rangeFor turns a range constraint on element e into key ranges appended to
// every partial, when e's encoding preserves order there.
func (w *walker) rangeFor(e layout.Element, c *Constraint, last bool) ([]store.Range, bool) {
	b, ok := elemBounds(w.l, e, c, last)
	if !ok {
		return nil, false
	}
	if b.empty {
		return w.emptyRanges(), true
	}
	// One range per partial, in partial order, even when empty: finish
	// pairs them up, and an empty result must read nothing rather than
	// fall back to a prefix scan.
	out := make([]store.Range, 0, len(w.parts))
	for _, p := range w.parts {
		r, _ := b.under(nil, p.key)
		out = append(out, r)
	}
	return out, true
}

// elemRange is the byte bounds of a range constraint on one key element
// alone: start and end (when set) follow the key before the element.
type elemRange struct {
	start, end       []byte
	startSet, endSet bool
	empty            bool // no key qualifies
}

// under appends to dst the range of the keys starting with prefix whose
// element is within b, and returns it; Start and End are in dst's memory.
func (b elemRange) under(dst, prefix []byte) (store.Range, []byte) {
	n := len(dst)
	dst = append(dst, prefix...)
	if b.startSet {
		dst = append(dst, b.start...)
	}
	r := store.Range{Start: dst[n:len(dst):len(dst)]}
	n = len(dst)
	if b.endSet {
		// Non-nil even when empty: a nil End would mean unbounded.
		dst = append(append(dst, prefix...), b.end...)
		if r.End = dst[n:len(dst):len(dst)]; r.End == nil {
			r.End = []byte{} // dst was nil, and nothing was appended
		}
	} else if end := appendPrefixSuccessor(dst, prefix); end != nil {
		dst = end
		r.End = dst[n:len(dst):len(dst)]
	}
	return r, dst
}

// elemBounds computes the bounds of c on element e of l, when e's encoding
// preserves order there (ok).
func elemBounds(l *layout.Layout, e layout.Element, c *Constraint, last bool) (elemRange, bool) {
	a := l.Attrs[e.Attr]
	enc := func(v types.Value) ([]byte, error) { return l.AppendValue(nil, e, v) }
	var start, end []byte
	var startSet, endSet bool
	loV, hiV, loIncl, hiIncl, hasLo, hasHi := c.Lo, c.Hi, c.LoIncl, c.HiIncl, c.HasLo, c.HasHi
	switch e.Enc {
	case layout.Ordered, layout.Desc:
		if e.Enc == layout.Desc {
			// Descending: the high value comes first in key order.
			loV, hiV, loIncl, hiIncl, hasLo, hasHi = hiV, loV, hiIncl, loIncl, hasHi, hasLo
		}
		if hasLo {
			b, err := enc(loV)
			if err != nil {
				return elemRange{}, false
			}
			if loIncl {
				start = b
			} else if start = store.PrefixSuccessor(b); start == nil {
				// Nothing sorts after the bound's encoding: no key qualifies.
				return elemRange{empty: true}, true
			}
			startSet = true
		} else if !a.Key {
			// A range never matches NULL: skip the NULL marker.
			if e.Enc == layout.Ordered {
				start, startSet = []byte{0x01}, true
			}
		}
		if hasHi {
			b, err := enc(hiV)
			if err != nil {
				return elemRange{}, false
			}
			if hiIncl {
				end = store.PrefixSuccessor(b)
			} else {
				end = b
			}
			endSet = end != nil
		} else if !a.Key && e.Enc == layout.Desc {
			end, endSet = []byte{0xFF}, true // NULL sorts last descending
		}
	case layout.Natural:
		switch a.Type {
		case types.String, types.Bytes:
			// Raw bytes compare like the values, but only at the end of
			// the key, where nothing follows them.
			if !last {
				return elemRange{}, false
			}
			if hasLo {
				b, _ := enc(loV)
				if !loIncl {
					b = store.KeySuccessor(b)
				}
				start, startSet = b, true
			}
			if hasHi {
				b, _ := enc(hiV)
				if hiIncl {
					b = store.KeySuccessor(b)
				}
				end, endSet = b, true
			}
		case types.Int, types.BigInt, types.Timestamp:
			// Two's complement big-endian orders like the values within
			// one sign.
			lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
			if a.Type == types.Int {
				lo, hi = math.MinInt32, math.MaxInt32
			}
			if hasLo {
				lo = asInt(loV)
				if !loIncl {
					lo++
				}
			}
			if hasHi {
				hi = asInt(hiV)
				if !hiIncl {
					hi--
				}
			}
			if (lo < 0) != (hi < 0) || lo > hi {
				return elemRange{}, false
			}
			start, _ = enc(fromInt(a.Type, lo))
			b, _ := enc(fromInt(a.Type, hi))
			end, startSet, endSet = store.PrefixSuccessor(b), true, true
			endSet = end != nil
		default:
			return elemRange{}, false
		}
	}
	return elemRange{start: start, end: end, startSet: startSet, endSet: endSet}, true
}

// emptyRanges is one empty range per partial: a range constraint no key
// can meet.
func (w *walker) emptyRanges() []store.Range {
	out := make([]store.Range, len(w.parts))
	for i, p := range w.parts {
		// A non-nil End: nil would mean unbounded.
		out[i] = store.Range{Start: p.key, End: append([]byte{}, p.key...)}
	}
	return out
}

func asInt(v types.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case time.Time:
		return x.UnixMicro()
	}
	return 0
}

func fromInt(t types.Type, i int64) types.Value {
	if t == types.Timestamp {
		return time.UnixMicro(i).UTC()
	}
	return i
}

// finish turns the partials into reads.
func (w *walker) finish(ranges []store.Range, tableFixed bool) {
	acc := w.acc
	acc.parts = w.parts
	keysAreExact := acc.Complete && !trailingNatural(w.l)
	// One read per (table, fan-out bucket); a handful at most, so a slice.
	add := func(p partial) *Read {
		table := w.l.StaticTable()
		if table == "" && tableFixed {
			table = string(p.table)
		}
		for i := range acc.Reads {
			if r := &acc.Reads[i]; r.Table == table && r.Bucket == p.salt {
				return r
			}
		}
		acc.Reads = append(acc.Reads, Read{Table: table, Bucket: p.salt})
		return &acc.Reads[len(acc.Reads)-1]
	}
	switch {
	case ranges != nil:
		// rangeFor built one range per partial, in partial order.
		for i, p := range w.parts {
			if !ranges[i].Empty() {
				r := add(p)
				r.Rows.Ranges = append(r.Rows.Ranges, ranges[i])
			}
		}
	case keysAreExact:
		for _, p := range w.parts {
			r := add(p)
			r.Rows.Keys = append(r.Rows.Keys, p.key)
		}
	default:
		for _, p := range w.parts {
			r := add(p)
			r.Rows.Ranges = append(r.Rows.Ranges, store.PrefixRange(p.key))
		}
	}
	switch {
	case len(acc.Reads) == 0:
		acc.Kind = PointLookup // nothing can match: zero keys
	case keysAreExact:
		acc.Kind = PointLookup
	case acc.FixedElems == 0 && !acc.RangeElem:
		acc.Kind = FullScan
	case acc.NumRanges()+acc.NumKeys() > len(acc.Reads):
		acc.Kind = SkipScan
	default:
		acc.Kind = RangeScan
	}
}

// Bounds describes the key bounds per ROW element for EXPLAIN, in
// Phoenix's style: the min and max of each fixed element, then the range
// bounds of a range-bounded one ('*' when open, '~' marking DESC values).
func (a *Access) Bounds() (lo, hi []string) {
	fixed := 0
	for _, e := range a.Layout.Row.Elems {
		if fixed == a.FixedElems {
			break
		}
		if e.Kind != layout.ElemAttr && e.Kind != layout.ElemSize {
			continue
		}
		fixed++
		var vals []types.Value
		attrs := []int{e.Attr}
		if e.Kind == layout.ElemSize {
			attrs = attrs[:0]
			for _, b := range e.Body {
				if b.Kind == layout.ElemAttr {
					attrs = append(attrs, b.Attr)
				}
			}
		}
		for _, p := range a.parts {
			for _, at := range attrs {
				if p.tuple[at] != nil {
					vals = append(vals, p.tuple[at])
				}
			}
		}
		if len(vals) == 0 {
			lo, hi = append(lo, "*"), append(hi, "*")
			continue
		}
		sort.Slice(vals, func(i, j int) bool { return types.Compare(vals[i], vals[j]) < 0 })
		l, h := types.Format(vals[0]), types.Format(vals[len(vals)-1])
		if e.Kind == layout.ElemAttr && e.Enc == layout.Desc {
			l, h = "~"+h, "~"+l
		}
		lo, hi = append(lo, l), append(hi, h)
	}
	if c := a.rangeCons; c != nil {
		l, h := "*", "*"
		if c.HasLo {
			l = types.Format(c.Lo)
		}
		if c.HasHi {
			h = types.Format(c.Hi)
		}
		if a.rangeDesc {
			l, h = "~"+h, "~"+l
		}
		lo, hi = append(lo, l), append(hi, h)
	}
	// Drop trailing unbounded markers: Phoenix prints only what is bound.
	for len(lo) > 0 && lo[len(lo)-1] == "*" && hi[len(hi)-1] == "*" {
		lo, hi = lo[:len(lo)-1], hi[:len(hi)-1]
	}
	return lo, hi
}

// trailingNatural reports whether the row key ends in a natural
// variable-length attribute: its fixed value is then matched as a key
// prefix, as seed 003 does (scan a1-b … a1-c), not as an exact key.
func trailingNatural(l *layout.Layout) bool {
	es := l.Row.Elems
	if len(es) == 0 {
		return false
	}
	e := es[len(es)-1]
	return e.Kind == layout.ElemAttr && e.Enc == layout.Natural && l.Attrs[e.Attr].Type.FixedWidth() == 0
}

// orderKeys is the sequence of (attribute, descending) pairs the layout's
// key order yields for rows matching an access, skipping elements fixed to
// a single value; it stops at the first element whose byte order is not its
// value order.
func orderKeys(acc *Access, single func(attr int) bool) (attrs []int, desc []bool) {
	l := acc.Layout
	es := l.Row.Elems
	for i, e := range es {
		switch e.Kind {
		case layout.ElemConst:
			continue
		case layout.ElemSalt:
			if acc.FanOut > 0 {
				continue // one read per bucket, merged in order
			}
			for _, b := range e.Body {
				if b.Kind == layout.ElemAttr && !single(b.Attr) {
					// Several values hash to several buckets read in one
					// pass: key order is bucket order first.
					return attrs, desc
				}
			}
			continue
		case layout.ElemAttr:
			if single(e.Attr) {
				continue // ties: any order of this element works
			}
			switch e.Enc {
			case layout.Ordered:
				attrs, desc = append(attrs, e.Attr), append(desc, false)
				continue
			case layout.Desc:
				attrs, desc = append(attrs, e.Attr), append(desc, true)
				continue
			case layout.Natural:
				t := l.Attrs[e.Attr].Type
				if (t == types.String || t == types.Bytes) && i == len(es)-1 {
					attrs, desc = append(attrs, e.Attr), append(desc, false)
				}
				if t == types.Bool {
					attrs, desc = append(attrs, e.Attr), append(desc, false)
					continue
				}
			}
		}
		return attrs, desc
	}
	return attrs, desc
}

// readPartitions adds to each read of a layout with static columns the
// partition rows holding them (Read.Partitions), when the plan uses a
// static column, and the slack a pushed-down row limit needs for the
// partition rows a read meets, needed or not (Read.Slack). A read that
// does not fix its partitions meets an unknown number of them: it pushes
// no limit down.
func (p *Plan) readPartitions() {
	for _, acc := range p.Accesses {
		l := acc.Layout
		if !l.HasStatic() {
			continue
		}
		need := false
		for _, a := range l.Static {
			need = need || p.Unneeded == nil || !p.Unneeded[a]
		}
		if acc.FixedElems < l.PartitionKeys() {
			p.PerRead = 0
			if need && p.Reverse {
				for i := range acc.Reads {
					acc.Reads[i].PreloadRows = true
				}
			}
			continue
		}
		for i := range acc.Reads {
			r := &acc.Reads[i]
			seen := map[string]bool{}
			for _, part := range acc.parts {
				if part.salt != r.Bucket {
					continue
				}
				k, err := l.AppendPartitionKey(nil, part.tuple)
				if err != nil || seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				r.Slack++
				if need {
					r.Partitions = append(r.Partitions, k)
				}
			}
		}
	}
}
