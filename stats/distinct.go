package stats

// DefaultExact is the number of distinct values per attribute counted
// exactly before a HyperLogLog sketch takes over: a set of that many
// hashes takes some 10 MB, and the relation being measured holds one per
// attribute at once.
const DefaultExact = 1 << 18

// Distinct counts the distinct hashes added to it: exactly, in a set,
// until the set would exceed its limit, then with a HyperLogLog sketch
// fed the set's hashes and every later one.
type Distinct struct {
	limit int
	set   map[uint64]struct{}
	hll   *HLL
}

// NewDistinct returns a counter exact up to limit distinct hashes (at
// least 1).
func NewDistinct(limit int) *Distinct {
	return &Distinct{limit: max(limit, 1), set: map[uint64]struct{}{}}
}

// Add adds a hash.
func (d *Distinct) Add(x uint64) {
	if d.hll != nil {
		d.hll.Add(x)
		return
	}
	if _, ok := d.set[x]; ok {
		return
	}
	if len(d.set) < d.limit {
		d.set[x] = struct{}{}
		return
	}
	d.hll = &HLL{}
	for y := range d.set {
		d.hll.Add(y)
	}
	d.hll.Add(x)
	d.set = nil
}

// Exact tells whether Count is exact: the sketch has not taken over.
func (d *Distinct) Exact() bool { return d.hll == nil }

// Count is the number of distinct hashes added, exact or estimated.
func (d *Distinct) Count() int64 {
	if d.hll != nil {
		return int64(d.hll.Estimate() + 0.5)
	}
	return int64(len(d.set))
}
