// Package catalog owns what a store's definitions mean and how they are
// kept: the conceptual model (entities, fields, relationships), the
// physical structures over it (column families and secondary indexes, each
// with its layout), the client's relations with their hand-written layouts
// (seed 003's DEFINE RELATION / DEFINE SCHEMA), the resolution of
// statements into query and write graphs, and the versioned copy of all of
// it in the store.
//
// Model (model.go, query.go, write.go). Entities with typed fields and
// statistics and the relationships between them are built from the same
// DEFINE RELATION statements the client runs (a foreign key attribute
// `seller BIGINT REFERENCES users REVERSE items_sold` is one relationship
// navigable in both directions), or from an SQL schema: CREATE TABLE
// parses into the same DEFINE RELATION, and Definitions applies a dump's
// ALTER TABLE … ADD PRIMARY KEY / FOREIGN KEY to it, so the two are freely
// mixed and give the same model. Workload statements — NoSE path notation
// or SQL joins along foreign keys — resolve into query graphs.
//   - Definitions is the one reading of a model script's relations: each
//     foreign key references a defined relation's key and names its
//     reverse (given, or derived from the referencing relation's name, and
//     its attribute's when it references the same relation several times).
//     Model.Defs holds those definitions, complete: printed, they are the
//     model in kvschema's language, and Build reads them back as the same
//     model.
//   - Every entity of a model (Build) has exactly one key field (ID), a
//     positive row count, and every field a positive size and a
//     cardinality in [1, count]. One reader (readRelation) reads DEFINE
//     RELATION for the model and for the client's relations alike; an
//     Entity's Key is a list of fields, so a client relation's entity may
//     have several, and no statistics. Unmeasured builds the same entities
//     without requiring statistics (Count 0 where ROWS is missing), only to
//     read a model's data before measuring it.
//   - Every relationship has a to-one side (the referencing attribute) and
//     a to-many side (its reverse); Nav.Reverse links them. Foreign-key
//     attributes are not Fields: they are navigations, as in NoSE.
//   - No name of an entity, field or navigation contains '.' (the rule of
//     lang.CheckDefName, which the parser applies and Build applies again
//     to definitions built by hand), so a path (items.seller.rating) names
//     one field, and a data file column (a name of Entity.Columns) is never
//     a path.
//
// Indexes (index.go, ddl.go). Column families (CFs) materialize a join of
// entities along relationships, keyed by a partition key and a clustering
// key; secondary indexes (SIs) index a CF's non-partition-key attribute.
// DEFINE COLUMN FAMILY / DEFINE SECONDARY INDEX build them (ParseSchema),
// and each has its layout (layout.Default), built once with the index
// (BuildLayouts for an advisor's recommendation).
//   - An Index's Graph is canonical: rooted at the node of its first
//     partition-key attribute, children in order of navigation name, so two
//     indexes over the same shape have equal graphs and equal Keys.
//   - A CF's key holds the key of every entity of its graph (each CF row is
//     one tuple of the join); its partition-key attributes belong to one
//     node.
//   - An SI has one partition-key attribute (the indexed attribute) and one
//     value attribute (the partition key of its base CFs), over the graph
//     of its base CFs.
//   - Entries, Size and Partitions are pure functions of the model's
//     statistics.
//
// Relations (relation.go). A Catalog of the client's relations is built by
// applying DEFINE RELATION and DEFINE SCHEMA statements in order; each
// layout is compiled by package layout. Relations have composite keys and
// no statistics; each carries its Entity, read as the model reads one.
// Each DEFINE SCHEMA is an Index too, as a DEFINE COLUMN FAMILY is: a CF
// over its relation alone (Index.Relation), partitioned by the attributes
// its row key holds, clustered by the key attributes its family or
// qualifier hold (wide rows), with its other stored attributes as values,
// in the layout its definition writes by hand. Catalog.Indexes lists the
// indexes of both kinds.
//   - A relation has at least one key attribute; attribute names are unique
//     case-insensitively.
//   - Two layouts never share both a table and a family.
//
// Names of relations, attributes, relationships and indexes are
// case-insensitive everywhere: lookups fold case, names differing only in
// case clash, and each keeps its declared spelling. Errors carry the
// file:line:col of the definition at fault.
//
// Storage (stored.go). The definitions live in the store itself,
// versioned, as seed 003 kept its schemas in ZooKeeper: opening a store
// loads the newest version, so every client of a store sees the same
// definitions. Table "__kvschema", family "d". Version v (v ≥ 1) is the
// row "catalog/" + v as 8 bytes big-endian. Its cell "script" holds the
// client's definitions (canonical text); when an advised schema is
// deployed, cells "model", "schema" and "profile" hold its model script,
// its DEFINE COLUMN FAMILY / SECONDARY INDEX script and its cost profile
// (JSON). Every version holds the whole catalog.
//   - Versions are dense and only grow: a client saves version prev+1 only
//     if that row does not exist yet, with one conditional row mutation
//     (store.Conditional), so of two clients that loaded version prev and
//     save at once exactly one succeeds, whichever process it runs in.
//     Since version rows sort in version order, the newest is found with
//     one reverse scan of one row.
//   - A store without conditional mutations (an embedded store, which one
//     process holds open) is saved with a read then a write; the caller
//     serializes its saves (kvschema.DB does).
//   - Stores written by earlier kvschema versions are read as they are:
//     the client's row "catalog" with one cell per version (the next save
//     continues their numbering in the new layout), and the advised schema
//     in table "__kvschema_engine" (LegacyAdvised).
//   - A migration's states are directives in the stored schema script
//     (migration.go: WriteOnlyDirective, DroppingDirective), so each state
//     is one version and an interrupted migration resumes from the newest.
//     A client layout added or dropped online has its states in the
//     stored script of the client's definitions the same way (layouts.go:
//     WriteOnlyLayoutsDirective, DroppingLayoutsDirective).
//
// Stability: this package is a stage of kvschema's pipeline, not an API;
// it changes as the pipeline does. Programs use package kvschema (the
// root), its database/sql driver, and the store seam (package store).
package catalog
