// Package bench owns kvschema's schema benchmark, the comparison of seed
// 000 §4 run on kvschema's own engines, for any conceptual model and
// workload (RUBiS's, the paper's, when the Config names no model): for each
// schema variant (the normalized baseline, column families only, column
// families and secondary indexes) it advises a schema for one mix under one
// storage budget, loads the same data — files (package dataio) or rows
// generated from the model (package datagen, or package rubis for RUBiS) —
// runs every statement of the mix with parameters sampled from the data,
// and reports per-statement latency percentiles, per-transaction means, the
// mix's weighted mean, and how well the advisor's predicted costs rank the
// measured latencies (Spearman). For RUBiS the report sets the SI schema's
// ratios to the others beside the paper's Fig. 4. A budget sweep (sweep.go)
// does the same at each of several budgets and reports the predicted and
// measured weighted means against the budget. Join steps run batched (one
// store request per step) or per partition, as NoSE's executor ran them
// (exec.Executor).
//
// Invariants:
//   - Every variant runs the same statements with the same parameter
//     sequence on the same data: the store is restored from a snapshot
//     after each statement that writes. The data is read once to measure
//     and sample it, then again for each variant's load, from the same
//     source (the files, or the generator run on the model as given).
//   - The advisor sees the data's statistics: the model is rewritten with
//     each relation's ROWS and each plain attribute's CARDINALITY as
//     measured, and SIZE where the model gives none.
//   - Parameters come from the data: each run draws one sampled row per
//     entity its parameters refer to; an INSERT's key lies beyond the
//     data's greatest key, so it is new.
//   - The plans measured are the plans costed: the engine plans each
//     statement with the advisor's planner over the deployed schema, with
//     the profile the schema was advised with.
//   - Round trips are simulated by store/rttstore under the engine and
//     counted by store/countstore; one pass per configured delay runs the
//     same schemas.
//   - In a sweep, a schema identical to one already measured (same DDL but
//     comments) is measured once: identical schemas report one latency,
//     never two runs' noise as a difference.
//   - Timing is measured, never asserted: tests check the pipeline and the
//     report's consistency, not the numbers.
package bench
