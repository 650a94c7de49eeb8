// Package planner plans queries and writes over a set of indexes (column
// families and secondary indexes): for a query, the DAG of every plan and
// its cheapest path; for a write, the upkeep of each index it changes with
// the support queries that upkeep needs. Both the runtime (package exec)
// and the advisor (which chooses indexes by solving an integer program over
// these DAGs) plan with it, so a deployed schema runs the plans the advisor
// costed.
//
// Plans are priced through the cost.Model seam only; the planner never
// reads a backend's constants. Estimates (rows per step) come from the
// model's statistics: equality keeps 1/cardinality of the rows, a range
// 1/10 (NoSE's assumption). A query with a LIMIT prices the plans the
// runtime pipelines (no client sort, a first lookup that does not stop at
// the LIMIT itself) on the share of their rows read before the LIMIT is
// met, 2·LIMIT over the query's estimated result (DAG.pipeline).
//
// Invariants: a DAG's states are interned by what they achieved, every arc
// sets at least one more bit of that (so the DAG is acyclic and a sweep in
// order of bits is topological), and ties between equal-cost paths go to
// the earlier arc, so equal inputs give equal plans.
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package planner
