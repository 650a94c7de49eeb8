// Package stats measures a conceptual model's statistics from its data: per
// relation the number of rows, and per attribute (fields and foreign-key
// columns alike) the number of distinct non-NULL values and the average
// size of a value. It reads the data one row at a time — data files
// (package dataio) or the tables of a SQLite database — and never holds a
// data set in memory, and it writes what it measured into a model's
// definitions (Apply) or compares it with a model's statistics (Compare).
//
// Invariants:
//   - Rows is exact.
//   - Distinct is exact while an attribute has at most Options.Exact
//     distinct values (a set of their 64-bit hashes: exact but for hash
//     collisions, whose probability below the default threshold is under
//     1e-8); past it, the set becomes a HyperLogLog sketch of precision 14
//     (Flajolet et al. 2007, standard error 1.04/√16384 ≈ 0.8%) holding the
//     same hashes, so the switch loses nothing already counted and memory
//     per attribute stays bounded. Attr.Exact says which one answered.
//   - Size is the length in bytes of a value's natural encoding, as
//     keyenc and the layouts store it: the type's fixed width (INT and
//     FLOAT 4, BIGINT, DOUBLE and TIMESTAMP 8, BOOL 1), or for STRING and
//     BYTES the length of the UTF-8 text or of the bytes. The cost model
//     multiplies SIZE by row counts to size indexes, so that is the unit
//     it needs. NULLs count towards neither the distinct values nor the
//     average size.
//   - The statistics written into a model are valid for it: ROWS ≥ 1,
//     CARDINALITY in [1, ROWS], and a measured SIZE ≥ 1 (SIZE 0 would read
//     as "not declared"; an attribute NULL in every row keeps its SIZE).
package stats
