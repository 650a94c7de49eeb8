package keyenc

import "github.com/kvschema/kvschema/types"

// AppendNatural appends the natural encoding of v, a non-NULL canonical
// value of type t, to dst.
func AppendNatural(dst []byte, t types.Type, v types.Value) ([]byte, error) {
	switch t {
	case types.String:
		s, ok := v.(string)
		if !ok {
			return dst, mismatch(t, v)
		}
		return append(dst, s...), nil
	case types.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return dst, mismatch(t, v)
		}
		return append(dst, b...), nil
	}
	u, err := fixedBits(t, v)
	if err != nil {
		return dst, err
	}
	return appendUint(dst, u, t.FixedWidth()), nil
}

// DecodeNatural decodes b, the whole natural encoding of a value of type t.
// Fixed-width types need exactly their width in bytes.
func DecodeNatural(t types.Type, b []byte) (types.Value, error) {
	switch t {
	case types.String:
		return string(b), nil
	case types.Bytes:
		return append([]byte{}, b...), nil
	}
	w := t.FixedWidth()
	if w == 0 {
		return nil, unsupported(t)
	}
	if len(b) != w {
		return nil, malformed(t, "natural", "has %d bytes, want %d", len(b), w)
	}
	return fixedValue(t, getUint(b, w), "natural")
}
