// Package exec owns the runtime: one Engine runs plans and writes against
// a store.Store for both kinds of schema a store's catalog holds — the
// client's relations with their layouts (Query, Apply, VerifyRelation) and
// the advised schema, if any (Prepare, Load, Verify) — with one set of
// write locks (Locks) shared by the engines of a DB's successive catalog
// versions, reads that decode the cells the store lends into unboxed
// tuples, and writes applied as one batch each.
//
// # The client's relations
//
// Plans over one relation's layouts (package plan) and its writes:
//   - A read issues exactly the store calls its plan lists: one ReadCells
//     (store.ReadCells: ReadRows on stores that do not lend cells) per plan
//     Read, the reads of one access in parallel.
//   - Reads decode the cells the store lends straight into unboxed tuples
//     (types.Datum, layout.CellDecoder): a scanned row allocates only the
//     bytes of its STRING and BYTES values.
//   - A write statement becomes one store Apply holding every mutation for
//     every layout of the relation; all encoding happens before it, so a
//     failing write changes nothing (atomic on backends with AtomicBatch).
//   - A writer locks the tuples it writes (Locks: striped, by relation and
//     key, shared with the advised schema's writers) before it reads their
//     old values, and holds them until its batch is applied, so writers of
//     one tuple in this process are serialized and the layouts of a
//     relation never disagree because of interleaved writers; writers of
//     different tuples run in parallel. An UPDATE or DELETE locks the
//     tuples its read finds and reads again until the read finds nothing
//     unlocked (when the WHERE fixes the keys, they are locked first and
//     one read suffices). Readers take no locks and see whole batches or
//     nothing. Coordination across processes is not provided.
//   - A conditional write (plan.Cond: IF NOT EXISTS, IF EXISTS, IF …)
//     names one tuple, whose lock it takes before it reads it; it decides
//     on what it read and writes, or not, before the lock goes (ApplyIf).
//     The locks serialize the writers of one Engine's locks (one DB);
//     writers in other processes sharing the store (Bigtable) are met by
//     the store: the batch applies under a store.Guard — the row the
//     decision read is unchanged — and when it is not, the write reads and
//     decides again. The guarded row is the tuple's row in a layout
//     addressed by its key (a relation with none has only the locks). On
//     an advised schema (Stmt.ExecIf) the condition is IF NOT EXISTS, IF
//     EXISTS or comparisons of the entity's fields, read from a CF of the
//     entity keyed by its key alone (the guarded row), under the entity's
//     lock.
//   - Writes encode into a scratch taken from a pool, reused from batch to
//     batch: it relies on the store contract that Apply does not retain
//     its inputs.
//
// # Advised schemas
//
// The Engine runs the schemas the advisor recommends: the column families
// (CFs) and secondary indexes (SIs) of a catalog.Schema stored on a
// store.Store, queries written against the conceptual model executed on
// the plans package planner chooses (the planner the advisor costs plans
// with; exec does not link the advisor or the solver), entity-level writes
// that keep every copy correct, bulk loading and verification.
//
// Physical mapping.
//
// Every index is one table named after it, with one family "v": its
// layout is layout.Default, built by catalog.Index.Layout (package layout
// owns the bytes; testdata/store-bytes.golden pins them).
//
//   - A CF row is one tuple of the join its graph describes. Its row key is
//     [salt][partition key][clustering key]: with SALT_BUCKETS = n a bucket
//     byte (keyenc.SaltBucket of the encoded partition key, Phoenix's hash;
//     the table is pre-split at each bucket; with PARTITION_BUCKETS = n
//     the byte hashes the whole key, so a partition spreads over n
//     buckets: a read of a partition reads n ranges — a first step in
//     parallel, merged; a later step in its one read, each partition's
//     rows put back in clustering order, or, when it alone decides a
//     LIMIT, in a limited read per bucket, in parallel — and a point
//     lookup one row),
//     then the partition key
//     attributes (in name order: the order DEFINE COLUMN FAMILY prints them
//     in, and the order of the values of a SPLIT ON point), then the
//     clustering key attributes (in order), each in keyenc's ordered,
//     self-delimiting, nullable encoding, so byte order is value order and a
//     partition is one contiguous key range. An unsalted CF with SPLIT ON is
//     pre-split at each point's encoding (catalog.SplitPoint), which is the
//     row-key prefix of the partitions starting with the point's values, so
//     a split never cuts a partition whose key it names in full. Each value
//     attribute is one cell, qualifier =
//     the attribute in path notation (items.bids.date), value in keyenc's
//     natural encoding; NULL is the absence of the cell. A row with no
//     non-NULL value holds the empty-qualifier marker cell.
//   - A CF with static columns (catalog.Index.Static: fields of its root,
//     which alone forms the partition key) keeps them in the partition
//     row, keyed [salt][partition key] alone, family "s", one cell per
//     non-NULL static column and the marker: it sorts before the
//     partition's rows and exists for every tuple of the root. Reads that
//     return a static column read it in the same call (a reverse read, in
//     a parallel call decoded first: plan.Read.Partitions); a row limit
//     pushed to the store leaves room for it (plan.Read.Slack). Writes of
//     the root keep it (plan.Upkeep.Static); rows never hold static cells.
//   - An SI row points at one row of its base CF, as Cassandra's index
//     tables do: its key is the indexed attribute, the base CF's partition
//     key, then the key of every entity of the graph (catalog.Index
//     KeyAttrs), ordered-encoded; it holds only the marker cell. An SI
//     lookup is a prefix scan of the indexed value; the step after it reads
//     the base rows the entries name, all in one round trip.
//   - On a store that keeps local indexes (store.Capabilities.LocalIndexes:
//     Pebble, mem), an SI whose base stores the indexed attribute as a
//     value cell has no table (catalog.Schema.Local): the base's table
//     declares a store index on that cell, the store maintains its entries
//     in the base's own write batch (no upkeep, no support read), and an SI
//     step with the base step after it is one ReadIndex returning the base
//     rows (advised_local.go). The choice is made when the schema is first
//     deployed and recorded with it in the catalog.
//   - A write-only index (catalog.Schema.WriteOnly: a migration builds or
//     drops it) is kept by every write and read by no plan; each write
//     that changes one of its rows also marks the row in table MarkTable,
//     in the same batch, so that Backfill (migrate.go) recomputes the rows
//     its bulk copy may have written from data older than a write.
//
// EXPLAIN prints each step's table and key; the trace store shows the
// store operations themselves.
//
// Execution.
//
// A plan's first lookup is bound from the statement's parameters and read
// as a client relation is: its index viewed as a relation
// (catalog.IndexRelation), the lookup a SELECT over it planned by the
// client's planner (package plan: point lookups, prefix and range scans,
// salted fan-out; a prepared statement re-keys the plan, plan.KeyRebind)
// and run by the client's executor. Every
// later lookup is one store round trip carrying the keys of all the rows the
// previous steps produced (never one round trip per row; with the
// PerPartition executor, Engine.SetExecutor, one per partition probed, as
// NoSE's Cassandra executor ran joins); its rows are
// joined to those rows on the shared entity keys. Client-side filters run
// after the step that fetched their attributes, then the sort, the limit and
// the projection. A query with a LIMIT and no client sort, whose later
// steps may drop rows, is pipelined (firstBatch; CLIENT PIPELINED in
// EXPLAIN): the later steps join the first step's rows in batches while
// its read goes on, each batch four times the one before, and the read
// stops at the LIMIT — one more round trip per later step and batch, in
// place of reading and joining the whole first range; a one-step plan
// whose client filters drop rows stops its read once LIMIT rows pass
// them. A query whose WHERE has OR or IN runs as a union
// (advised_union.go): one plan per conjunct of its disjunctive normal form,
// each path instance (the keys of every node of the path) kept once, then
// sorted and limited; conjuncts that differ only in the values of the
// first step's key (an IN list on it) share one program, whose first read
// is one skip scan of every value. A query no key lookup can start reads a whole column
// family first (cost.Scan, FULL SCAN in EXPLAIN), or the range of rows a
// range on its first partition-key attribute bounds (in every salt bucket,
// in parallel, when the family is salted). Lookups read the cells the
// store lends (store.ReadCells) and decode them into unboxed tuples
// (types.Datum, layout.CellDecoder); keys are encoded from those tuples
// directly, and results are Datums.
//
// Write semantics.
//
// Relationships are foreign keys of their to-one side, as in SQL. INSERT …
// AND CONNECT TO fails when a support query finds no tuple with the linked
// key (the schema reads it anyway); a link no index stores is not checked.
// DELETE leaves the tuples referencing the deleted ones unconnected (their
// rows through it go). CONNECT on a to-one relationship replaces the old
// partner; DISCONNECT of a pair that is not connected changes nothing.
// INSERT of an existing key and UPDATE of a missing one are upserts, as in
// Cassandra, when the predicates fix the rows without a support query.
//
// Writes and isolation.
//
// An UPDATE or DELETE whose WHERE has OR or IN writes each conjunct of its
// disjunctive normal form (advised_union.go) in one batch, each computed
// from the store as it was before the batch, so a tuple several conjuncts
// match is written alike by each and counted once.
//
// A write runs the support queries of every index upkeep the planner lists,
// computes every put and delete, and applies them in one store batch (atomic
// on Pebble). Writers lock the entities they write and every entity their
// support queries read (exec.Locks: striped locks, shared with the writes
// of the client's relations through the same DB, acquired in a global
// order; when the
// reads reveal an entity not yet locked, the write tries to lock it too,
// keeping what it holds, and runs its support queries again — and if that
// lock is busy, or the reads keep finding more, it takes every stripe, so it
// always finishes), so concurrent writes of one process are serializable
// with respect to the entities they touch and copies never disagree. Readers take no
// locks: each round trip sees only whole batches, so a multi-step query reads
// committed data per step (read committed), not one snapshot.
//
// A write that connects a tuple to another entity (INSERT … AND CONNECT TO,
// CONNECT) fails when that entity does not exist, as load refuses a
// dangling foreign key: a support query that reads the entity finds it
// missing, or, when no upkeep reads it, one read of a column family of that
// entity alone checks it (EXPLAIN shows it as CHECK … EXISTS; the rule is
// planner.Checks/ReadsLinked/CanCheck, which the advisor prices). A
// write's checks are issued together, so it waits for one round trip
// however many entities it connects to. A schema without such a family
// cannot tell, and the write goes unchecked.
//
// A write locks the entities it names, runs its support queries, then
// locks the entities they found; it reads them again only if a writer of
// this process held one of those since the reads began (Locks.Unchanged),
// so an uncontended write reads each support query once, as the advisor
// costs it.
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package exec
