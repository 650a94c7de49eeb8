package keyenc

import "github.com/kvschema/kvschema/types"

// AppendNatural appends the natural encoding of v, a non-NULL canonical
// value of type t, to dst.
func AppendNatural(dst []byte, t types.Type, v types.Value) ([]byte, error) {
	if t.IsCollection() {
		if v == nil {
			return dst, mismatch(t, v)
		}
		return types.AppendCollection(dst, t, v)
	}
	if !known(t) {
		return dst, unsupported(t)
	}
	d, err := datumOf(t, v)
	if err != nil {
		return dst, err
	}
	return AppendNaturalDatum(dst, t, d)
}

// AppendNaturalDatum is AppendNatural for a Datum.
func AppendNaturalDatum(dst []byte, t types.Type, d types.Datum) ([]byte, error) {
	if t.IsCollection() {
		// A frozen collection is its own encoding (types.AppendCollection),
		// which a Datum of t holds; another collection Datum is re-encoded,
		// so that t's element types are checked.
		if d.Type == t {
			return append(dst, d.Str()...), nil
		}
		return AppendNatural(dst, t, d.Value())
	}
	if !known(t) {
		return dst, unsupported(t)
	}
	if t == types.String || t == types.Bytes {
		if err := checkDatum(t, d); err != nil {
			return dst, err
		}
		return append(dst, d.Str()...), nil
	}
	u, err := fixedBits(t, d)
	if err != nil {
		return dst, err
	}
	return appendUint(dst, u, t.FixedWidth()), nil
}

// DecodeNatural decodes b, the whole natural encoding of a value of type t.
// Fixed-width types need exactly their width in bytes.
func DecodeNatural(t types.Type, b []byte) (types.Value, error) {
	d, err := DecodeNaturalDatum(t, b, nil)
	if err != nil {
		return nil, err
	}
	return boxed(d), nil
}

// DecodeNaturalDatum is DecodeNatural without boxing: the Datum holds a
// copy of the bytes of a STRING or BYTES value, made by s (nil: one
// allocation per value), never b's memory.
func DecodeNaturalDatum(t types.Type, b []byte, s *types.Strings) (types.Datum, error) {
	if t.IsCollection() {
		return types.CollectionDatum(t, b, s)
	}
	if t == types.String || t == types.Bytes {
		return s.Datum(t, b), nil
	}
	w := t.FixedWidth()
	if w == 0 {
		return types.Null, unsupported(t)
	}
	if len(b) != w {
		return types.Null, malformed(t, "natural", "has %d bytes, want %d", len(b), w)
	}
	return fixedDatum(t, getUint(b, w), "natural")
}
