package datagen

import (
	"math/bits"
	"math/rand/v2"
)

// Rand is a deterministic stream of random numbers: a PCG (math/rand/v2).
// Generators give each entity its own (NewRand), so entities are
// independent of one another.
type Rand struct{ p rand.PCG }

// NewRand returns the stream of name (an entity's) under seed: a PCG
// seeded with seed and the FNV-1a hash of name.
func NewRand(seed uint64, name string) *Rand {
	r := &Rand{}
	r.p.Seed(seed, hashName(name))
	return r
}

// hashName is FNV-1a of name.
func hashName(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}

// Uint64 returns 64 uniform bits.
func (r *Rand) Uint64() uint64 { return r.p.Uint64() }

// Below returns a uniform number in [0, n) by Lemire's multiply-shift
// without rejection: the bias, below n/2^64, is immaterial here, and every
// call takes exactly one draw.
func (r *Rand) Below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.p.Uint64(), n)
	return hi
}

// Float64 returns a uniform number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.p.Uint64()>>11) * 0x1p-53 }

// Letters fills b with uniform lowercase letters, 12 per 64-bit draw.
func (r *Rand) Letters(b []byte) {
	for i := 0; i < len(b); {
		x := r.p.Uint64()
		for k := 0; k < 12 && i < len(b); k++ {
			b[i] = 'a' + byte(x%26)
			x /= 26
			i++
		}
	}
}

// Fill fills b with uniform bytes, 8 per draw.
func (r *Rand) Fill(b []byte) {
	for i := 0; i < len(b); i += 8 {
		x := r.p.Uint64()
		for k := 0; k < 8 && i+k < len(b); k++ {
			b[i+k] = byte(x >> (8 * k))
		}
	}
}
