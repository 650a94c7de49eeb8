// Package lang owns the kvschema language: its lexer, its recursive-descent
// parser and its printer. Definitions (DEFINE RELATION, DEFINE SCHEMA, DROP
// SCHEMA) and statements (INSERT, SELECT, UPDATE, DELETE, EXPLAIN) share one lexer and
// one parser.
//
// It also reads the SQL that applications already have, into the same AST:
//   - SQL DDL (sqlddl.go), the subset PostgreSQL and MySQL dumps share:
//     CREATE TABLE parses into a DefineRelation (column types mapped onto
//     kvschema's, PRIMARY KEY, REFERENCES and FOREIGN KEY; NOT NULL,
//     UNIQUE, DEFAULT, CHECK, indexes and table options accepted and
//     ignored; statistics from annotation comments such as `-- ROWS n`,
//     `-- SIZE n CARDINALITY n`, `-- REVERSE name`), ALTER TABLE … ADD
//     PRIMARY KEY / FOREIGN KEY into an AlterTable. ParseModel reads a
//     model file, skipping a dump's other statements (SET, CREATE INDEX,
//     DROP TABLE, …) with a Note each.
//   - SQL queries as a query log has them: comma joins (FROM a x, b y WHERE
//     y.fk = x.id) read as JOIN … ON; `backquoted` names; Parameterize
//     turns constants into parameters; ParseStatementAt positions a
//     statement taken from a line of a file.
//
// Invariants:
//   - Parse(Print(x)) equals x for every AST the parser can produce, ignoring
//     positions (compare with EqualIgnoringPos).
//   - Every error from the parser is an *Error carrying file:line:col and what
//     was expected; the parser never panics on any input.
//   - The AST is purely syntactic: names are not resolved and types are not
//     checked here (the layout and plan packages do that and report errors at
//     the positions recorded in the AST).
//   - The one rule about names: no relation, attribute, relationship, column
//     family or index name that a definition gives or requires, nor any step
//     of a path in a column family or index, contains '.', the separator of
//     path notation (CheckDefName). Names that statements only refer to are
//     not checked; they resolve to nothing.
package lang

import (
	"fmt"

	"github.com/kvschema/kvschema/types"
)

// Pos is a source position. Line and Col are 1-based; Col counts bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

// Or returns p, or q when p is the zero Pos (a node built by a program
// rather than parsed, say an AST's RelationAt).
func (p Pos) Or(q Pos) Pos {
	if p == (Pos{}) {
		return q
	}
	return p
}

// Statement is any top-level statement of a script.
type Statement interface {
	Pos() Pos
	statement()
}

// DefineRelation is `DEFINE RELATION name [ROWS n] { attr TYPE [KEY] [SIZE n]
// [CARDINALITY n] [REFERENCES rel[(attr)] [REVERSE name]], … }` (seed 003
// Fig. 6, extended with the statistics and foreign keys the advisor needs, so
// that one definition serves both the client and the conceptual model).
// Attributes keep their declaration order.
//
// SQL's `CREATE TABLE` parses into a DefineRelation too (see createTable):
// column types map onto kvschema's, PRIMARY KEY columns are Key,
// REFERENCES / FOREIGN KEY columns reference, and the statistics come from
// annotation comments (`-- ROWS n` on the `CREATE TABLE t (` line, `-- SIZE
// n CARDINALITY n REVERSE name` on a column's line). It prints as DEFINE
// RELATION.
type DefineRelation struct {
	At    Pos
	Name  string
	Rows  int64 // estimated number of tuples; 0 when not declared
	Attrs []AttrDef
}

// AttrDef is one attribute of a relation.
type AttrDef struct {
	At   Pos
	Name string
	Type types.Type
	Key  bool // part of the relation's primary key
	// Partition (PARTITION KEY, which implies Key): part of the partition
	// key, Cassandra's, that static columns are shared by; Static
	// (STATIC): one value per partition, Cassandra's static column. A
	// client relation's only: a model's column families choose theirs.
	Partition, Static bool
	Size              int64 // average encoded size in bytes; 0 when not declared
	Cardinality       int64 // number of distinct values; 0 when not declared
	// References names the relation this attribute is a foreign key to (the
	// many-to-one side); Reverse names the one-to-many navigation back from
	// that relation ("" when not given: the model derives one, see
	// catalog.Definitions). RefAttr is the referenced attribute as SQL's
	// REFERENCES t(attr) names it ("" when not named); the model requires it
	// to be the referenced relation's key. All are empty for an ordinary
	// attribute.
	References string
	RefAttr    string
	Reverse    string
}

// AlterTable is SQL's `ALTER TABLE [ONLY] t ADD [CONSTRAINT c] PRIMARY KEY
// (a, …)` or `ALTER TABLE [ONLY] t ADD [CONSTRAINT c] FOREIGN KEY (a)
// REFERENCES r[(k)] [REVERSE name]`, as SQL dumps (pg_dump) add keys after
// their CREATE TABLEs. It changes the definition of relation t, defined
// elsewhere in the model: the model (catalog.Definitions) applies it there,
// as if the key or the foreign key had been declared with the attribute.
// Exactly one of PrimaryKey and ForeignKey is set. The REVERSE clause is
// kvschema's; a dump gives it as a comment (`-- REVERSE name`) on a line of
// the statement.
type AlterTable struct {
	At         Pos
	Relation   string
	RelationAt Pos
	PrimaryKey []string // ADD PRIMARY KEY (a, …); nil for a foreign key
	ForeignKey string   // ADD FOREIGN KEY (a): the attribute a; "" for a primary key
	AttrAt     Pos      // where the first attribute is named
	References string   // the referenced relation
	RefAttr    string   // the referenced attribute, "" when not named
	Reverse    string   // the name of the reverse relationship, "" when not given
}

// Note is something a parse did with its input that the reader should
// know, though it is no error: a statement of an SQL dump that ParseModel
// skipped, say.
type Note struct {
	Pos  Pos
	Kind string // what was skipped: "SET", "CREATE INDEX", "ALTER TABLE … OWNER TO", …
	Msg  string
}

func (n Note) String() string { return (&Error{Pos: n.Pos, Msg: n.Msg}).Error() }

// DefineSchema is `DEFINE [PRIMARY] SCHEMA name FOR relation { TABLE …, ROW …,
// FAMILY …, QUALIFIER …, VALUE …, SPLIT ON ('k1', x'00ff', …) }`: one physical
// layout of a relation. Each field but SPLIT ON is a concatenation of elements
// (written e1:e2:…).
type DefineSchema struct {
	At        Pos
	Primary   bool
	Name      string
	Relation  string
	Table     Concat
	Row       Concat
	Family    Concat
	Qualifier Concat
	Value     Concat
	// SplitOn lists raw row keys to pre-split the layout's table at (HBase's
	// SPLITS => ['a', 'm']): a ROW is an arbitrary concatenation, so the
	// points are bytes, not values. nil when there is no SPLIT ON.
	SplitOn []*Const
}

// DropSchema is `DROP SCHEMA name`: the layout name (DEFINE SCHEMA) leaves
// its relation, and its rows are deleted.
type DropSchema struct {
	At   Pos
	Name string
}

// Concat is a field value: its elements' encodings concatenated in order. An
// empty Concat prints as the empty string constant.
type Concat []Elem

// Elem is one element of a field.
type Elem interface {
	Pos() Pos
	elem()
}

// AttrRef is a bare attribute name: the attribute's value in its natural
// encoding (STRING as its bytes, INT 100 as \x00\x00\x00d, …).
type AttrRef struct {
	At   Pos
	Name string
}

// Const is a string or binary literal: 'f', x'00ff', or the empty string.
type Const struct {
	At    Pos
	Value []byte
}

// Modifier is `name(args){body}` or `name{body}`:
//
//	suffix('x'){…}  body followed by the bytes x
//	prefix('x'){…}  the bytes x followed by body
//	size{…}         body preceded by its byte length (1 byte); size(2){…} and
//	                size(4){…} use a 2- or 4-byte big-endian length
//	ordered{…}      attributes inside use the order-preserving, self-delimiting
//	                key encoding
//	desc{…}         like ordered, with every byte inverted (descending order)
//	salt(N){…}      one byte: hash of the body's encoding mod N (N in 1..256)
//
// Args holds the literal arguments in order: strings as []byte, numbers as
// int64.
type Modifier struct {
	At   Pos
	Name string
	Args []types.Value
	Body Concat
}

// AttrNames is `attr_name['a','b']`: one branch per attribute of the relation
// not listed, yielding that attribute's name. It turns one tuple into several
// key-values (seed 003 Fig. 3).
type AttrNames struct {
	At      Pos
	Exclude []string
}

// AttrValues is `attr_value['a','b']`: the value (natural encoding) of the
// attribute named by the AttrNames branch of the same key-value. Its Exclude
// list must equal that AttrNames' list.
type AttrValues struct {
	At      Pos
	Exclude []string
}

// Insert is `INSERT INTO r [(c1, c2, …)] VALUES (…), (…)` or NoSE's
// `INSERT INTO r SET c1 = v1, … [AND CONNECT TO fk(v), …]` (SetForm: one row,
// Columns in the order written).
type Insert struct {
	At         Pos
	Relation   string
	RelationAt Pos      // where the relation is named
	Columns    []string // nil: all attributes in declaration order
	Rows       [][]Expr
	SetForm    bool
	Connect    []Connection // SetForm only
	// IfNotExists makes the insert conditional (a lightweight transaction,
	// as Cassandra's INSERT … IF NOT EXISTS): its one tuple is written only
	// if no tuple with its key exists.
	IfNotExists bool
	// TTL (USING TTL n, Cassandra's) is the seconds after which the cells
	// the insert writes expire; nil: never.
	TTL Expr
}

// Condition is the IF clause of a conditional UPDATE or DELETE (a
// lightweight transaction, as Cassandra's): IF EXISTS, or IF followed by a
// condition on the current values of the one tuple the WHERE names.
type Condition struct {
	At     Pos
	Exists bool // IF EXISTS
	Expr   Expr // IF expr (nil with Exists)
}

// Connection is `fk(value)` in INSERT … AND CONNECT TO and in CONNECT.
type Connection struct {
	At    Pos
	FK    string
	Value Expr
}

// Connect is NoSE's `CONNECT r(key) TO fk(value)` or `DISCONNECT r(key) FROM
// fk(value)`: it sets or clears one relationship of an existing tuple.
type Connect struct {
	At         Pos
	Disconnect bool
	Relation   string
	RelationAt Pos // where the relation is named
	Key        Expr
	To         Connection
}

// Transaction is `BEGIN`, `COMMIT` or `ROLLBACK` (each optionally followed
// by TRANSACTION or WORK): it opens or ends the transaction the statements
// after it run in, in a session (a script, the shell).
type Transaction struct {
	At Pos
	Op TxOp
}

// TxOp is what a Transaction statement does.
type TxOp uint8

// The transaction statements.
const (
	Begin TxOp = iota + 1
	Commit
	Rollback
)

func (o TxOp) String() string {
	switch o {
	case Begin:
		return "BEGIN"
	case Commit:
		return "COMMIT"
	case Rollback:
		return "ROLLBACK"
	}
	return fmt.Sprintf("TxOp(%d)", uint8(o))
}

// Select is `SELECT * | c1, q.c2, q.* FROM r [alias] [.fk1.fk2…] [JOIN r2
// [alias] ON e …] [WHERE e] [ORDER BY c [ASC|DESC], …] [LIMIT n]`.
//
// The FROM clause is either NoSE's path notation (Path: foreign-key names
// walked from Relation, as in `FROM items.bids.user`) or SQL joins along
// foreign keys (Joins); a single-relation SELECT has neither. Both name the
// same query graph; the model package resolves them.
type Select struct {
	At         Pos
	Star       bool
	Columns    []ColumnRef // ColumnRef.Star marks `q.*`
	Relation   string
	RelationAt Pos      // where the relation is named
	Alias      string   // SQL alias of Relation; "" when absent
	Path       []string // foreign-key steps after Relation (path notation)
	Joins      []Join
	Where      Expr // nil when absent
	GroupBy    []ColumnRef
	Having     Expr // nil when absent; its operands may be aggregates (ColumnRef.Agg)
	OrderBy    []OrderItem
	Limit      Expr // nil when absent; a *Literal (integer) or a *Param
}

// Aggregates are the aggregate functions a select list takes.
var Aggregates = []string{"COUNT", "MIN", "MAX", "SUM", "AVG"}

// Aggregated reports whether s computes aggregates (an aggregate function
// in its select list, or GROUP BY).
func (s *Select) Aggregated() bool {
	if len(s.GroupBy) > 0 || s.Having != nil {
		return true
	}
	for _, c := range s.Columns {
		if c.Agg != "" {
			return true
		}
	}
	for _, o := range s.OrderBy {
		if o.Agg != "" {
			return true
		}
	}
	return false
}

// Join is `JOIN relation [alias] ON e` in a SELECT's FROM clause.
type Join struct {
	At       Pos
	Relation string
	Alias    string
	On       Expr
}

// OrderItem is one ORDER BY term.
type OrderItem struct {
	At     Pos
	Qual   []string // qualifier path, as in ColumnRef
	Column string
	Desc   bool
	// An aggregate of a grouped query (ORDER BY COUNT(*) DESC): Agg, and
	// Star and Distinct as in ColumnRef.
	Agg            string
	Star, Distinct bool
}

// Ref is the ORDER BY term as a ColumnRef (an attribute or an aggregate).
func (o OrderItem) Ref() ColumnRef {
	return ColumnRef{At: o.At, Qual: o.Qual, Name: o.Column, Agg: o.Agg, Star: o.Star, Distinct: o.Distinct}
}

// Update is `UPDATE r [USING TTL n] SET c = e, … [WHERE e]`.
type Update struct {
	At         Pos
	Relation   string
	RelationAt Pos  // where the relation is named
	TTL        Expr // USING TTL n: the seconds after which the cells written expire; nil: never
	Set        []Assignment
	Where      Expr
	If         *Condition // nil: unconditional
}

// Assignment is one `column = expr` of an UPDATE, or one of CQL's
// operations on the elements of a collection (Op), or one column a DELETE
// names.
type Assignment struct {
	At     Pos
	Column string
	Op     AssignOp
	Key    Expr // AssignElement, AssignDelete: the element's key (nil: the whole column)
	Value  Expr // nil for AssignDelete
}

// AssignOp is what an Assignment does to its column.
type AssignOp uint8

// Assignment operations. All but AssignValue apply to a collection stored
// one cell per element (a non-frozen SET, LIST or MAP), without reading it.
const (
	AssignValue   AssignOp = iota // c = v: the value replaced whole
	AssignAdd                     // c = c + v: a set's elements added, a list's appended, a map's entries put
	AssignRemove                  // c = c - v: a set's elements removed, a map's keys (v is a set) removed
	AssignPrepend                 // c = v + c: a list's elements prepended
	AssignElement                 // c[k] = v: a map's entry put
	AssignDelete                  // DELETE c, DELETE c[k]: the column set NULL, or a map's key removed
)

// Delete is `DELETE FROM r [WHERE e]` (NoSE's `DELETE r …` parses too), or
// CQL's `DELETE c, m[k] FROM r WHERE …`, which deletes columns or a map's
// entries of the rows, not the rows.
type Delete struct {
	At         Pos
	Columns    []Assignment // AssignDelete each; none: the rows are deleted
	Relation   string
	RelationAt Pos // where the relation is named
	Where      Expr
	If         *Condition // nil: unconditional
}

// Explain is `EXPLAIN stmt` for a SELECT, INSERT, UPDATE or DELETE.
type Explain struct {
	At   Pos
	Stmt Statement
}

// Expr is a scalar or boolean expression.
type Expr interface {
	Pos() Pos
	expr()
}

// Literal is a constant: string, []byte, int64, float64, bool, time.Time or
// nil (NULL), or a collection of them as written (`{…}` a types.Set, `[…]`
// a types.List, `{k: v, …}` a types.Map; types.Coerce makes it canonical
// for the attribute it meets). A leading minus sign on a number is folded into the literal.
type Literal struct {
	At    Pos
	Value types.Value
}

// Param is a `?` placeholder. Index is its 0-based ordinal in the statement,
// counted left to right in source order.
type Param struct {
	At     Pos
	Index  int    // 0-based: the argument it takes
	Dollar bool   // written $n (n = Index+1), not ?
	Name   string // written :Name; each distinct name takes the next Index
}

// ColumnRef names an attribute: `c` of the statement's relation, or `q.c`
// where the qualifier q is a relation, an alias or a path of foreign-key
// names (`seller.region.id` has Qual [seller region]). Star marks `q.*` in a
// select list (Name is then empty). In a select list, Agg names the
// aggregate function applied to it (COUNT, MIN, MAX, SUM, AVG; COUNT(*)
// has Star and no Qual), "" for a plain attribute.
type ColumnRef struct {
	At       Pos
	Qual     []string
	Name     string
	Star     bool
	Agg      string
	Distinct bool // COUNT(DISTINCT c)
}

// DefineColumnFamily is `DEFINE COLUMN FAMILY name FOR relation { PARTITION
// KEY (a, …), CLUSTERING KEY (b, …), STATIC (s, …), VALUES (c, …) }`: a
// column family over a join of relations along foreign keys, as the advisor
// recommends it. Its attributes are paths from the root relation
// (items.seller.region.id); the join is the tree those paths span.
// CLUSTERING KEY and VALUES may be empty lists; STATIC (Cassandra's static
// columns: attributes of the relation after FOR, one value per partition,
// stored once) may be left out. A trailing `, SALT_BUCKETS = n` (Phoenix)
// prefixes every row key with a bucket byte hashed from the partition key. A
// trailing `, SPLIT ON ((v1, v2), …)` or `, SPLIT ON (v1, …)` (Phoenix)
// pre-splits the table where the partitions with those leading
// partition-key values start; the two exclude each other, as the salt byte
// already splits the table at every bucket. A trailing `,
// PARTITION_BUCKETS = n` (Cassandra's bucketing of large partitions, seed
// 001/002) spreads each partition over n buckets: the bucket, hashed from
// the whole key, joins the partition key, so a stored partition holds about
// 1/n of the rows and a read of one partition reads n. It needs a
// clustering key, and excludes SALT_BUCKETS, SPLIT ON and STATIC.
type DefineColumnFamily struct {
	At          Pos
	Name        string
	Relation    string
	Partition   []ColumnRef
	Clustering  []ColumnRef
	Static      []ColumnRef // static columns: one value per partition; nil for none
	Values      []ColumnRef
	SaltBuckets int          // 0: unsalted
	SplitOn     []SplitPoint // nil: no SPLIT ON
	// PartitionBuckets (0: none) is n of PARTITION_BUCKETS.
	PartitionBuckets int
}

// SplitPoint is one point of a column family's SPLIT ON: constants for the
// leading attributes of the partition key, at most one per attribute, in the
// order the row key encodes them. That order is the partition-key
// attributes sorted by path name (items.id before items.name), which is the
// order kvschema prints PARTITION KEY in, not necessarily the order written.
// `SPLIT ON (1000, 2000)` is short for `SPLIT ON ((1000), (2000))`.
type SplitPoint struct {
	At     Pos
	Values []types.Value // literals as the parser reads them; never NULL
}

// DefineIndex is `DEFINE SECONDARY INDEX name ON family (attribute)`: an index
// from a non-partition-key attribute of a column family to its partition
// key.
type DefineIndex struct {
	At     Pos
	Name   string
	Family string
	Column ColumnRef
}

// DefineWorkload is `DEFINE WORKLOAD name MIXES (m1, m2, …) { GROUP … }`: the
// statements an application runs, grouped into transactions, each group
// weighted per mix (every statement of a group carries the group's weight,
// as in NoSE).
type DefineWorkload struct {
	At     Pos
	Name   string
	Mixes  []string
	Groups []Group
}

// Group is `GROUP name WEIGHTS (mix w, …) { stmt; [-- tag] … }`. A mix not
// listed does not run the group.
type Group struct {
	At         Pos
	Name       string
	Weights    []MixWeight
	Statements []Tagged
}

// MixWeight is one `mix weight` of a group.
type MixWeight struct {
	At     Pos
	Mix    string
	Weight float64
}

// Tagged is a workload statement with the tag of the `-- tag` comment that
// follows it on the same line ("" when there is none).
type Tagged struct {
	Tag  string
	Stmt Statement
}

// Op is a binary operator.
type Op uint8

// Binary operators, in no particular order.
const (
	OpAnd Op = iota + 1
	OpOr
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var opText = [...]string{OpAnd: "AND", OpOr: "OR", OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">="}

// Holds reports whether a comparison whose result is cmp (<0, 0, >0, as
// from types.Compare) satisfies o; false for AND, OR and unknown operators.
func (o Op) Holds(cmp int) bool {
	switch o {
	case OpEq:
		return cmp == 0
	case OpNe:
		return cmp != 0
	case OpLt:
		return cmp < 0
	case OpLe:
		return cmp <= 0
	case OpGt:
		return cmp > 0
	case OpGe:
		return cmp >= 0
	}
	return false
}

func (o Op) String() string {
	if int(o) < len(opText) && opText[o] != "" {
		return opText[o]
	}
	return "?op"
}

// Binary is `L op R`. Comparisons take scalar operands; AND/OR boolean ones.
type Binary struct {
	At Pos
	Op Op
	L  Expr
	R  Expr
}

// Not is `NOT X`.
type Not struct {
	At Pos
	X  Expr
}

// In is `X [NOT] IN (e1, e2, …)`.
type In struct {
	At   Pos
	X    Expr
	List []Expr
	Not  bool
}

// Between is `X [NOT] BETWEEN Lo AND Hi` (inclusive).
type Between struct {
	At  Pos
	X   Expr
	Lo  Expr
	Hi  Expr
	Not bool
}

// Contains is Cassandra's `X CONTAINS Elem` (a SET or LIST holds Elem, a
// MAP holds it as a value) or `X CONTAINS KEY Elem` (a MAP has the key).
type Contains struct {
	At   Pos
	X    Expr
	Elem Expr
	Key  bool
}

// IsNull is `X IS [NOT] NULL`.
type IsNull struct {
	At  Pos
	X   Expr
	Not bool
}

func (s *DefineRelation) Pos() Pos     { return s.At }
func (s *AlterTable) Pos() Pos         { return s.At }
func (s *DefineSchema) Pos() Pos       { return s.At }
func (s *DropSchema) Pos() Pos         { return s.At }
func (s *Insert) Pos() Pos             { return s.At }
func (s *Select) Pos() Pos             { return s.At }
func (s *Update) Pos() Pos             { return s.At }
func (s *Delete) Pos() Pos             { return s.At }
func (s *Explain) Pos() Pos            { return s.At }
func (s *Connect) Pos() Pos            { return s.At }
func (s *Transaction) Pos() Pos        { return s.At }
func (s *DefineColumnFamily) Pos() Pos { return s.At }
func (s *DefineIndex) Pos() Pos        { return s.At }
func (s *DefineWorkload) Pos() Pos     { return s.At }

func (*DefineRelation) statement()     {}
func (*AlterTable) statement()         {}
func (*DefineSchema) statement()       {}
func (*DropSchema) statement()         {}
func (*Insert) statement()             {}
func (*Select) statement()             {}
func (*Update) statement()             {}
func (*Delete) statement()             {}
func (*Explain) statement()            {}
func (*Connect) statement()            {}
func (*Transaction) statement()        {}
func (*DefineColumnFamily) statement() {}
func (*DefineIndex) statement()        {}
func (*DefineWorkload) statement()     {}

func (e *AttrRef) Pos() Pos    { return e.At }
func (e *Const) Pos() Pos      { return e.At }
func (e *Modifier) Pos() Pos   { return e.At }
func (e *AttrNames) Pos() Pos  { return e.At }
func (e *AttrValues) Pos() Pos { return e.At }

func (*AttrRef) elem()    {}
func (*Const) elem()      {}
func (*Modifier) elem()   {}
func (*AttrNames) elem()  {}
func (*AttrValues) elem() {}

func (e *Literal) Pos() Pos   { return e.At }
func (e *Param) Pos() Pos     { return e.At }
func (e *ColumnRef) Pos() Pos { return e.At }
func (e *Binary) Pos() Pos    { return e.At }
func (e *Not) Pos() Pos       { return e.At }
func (e *In) Pos() Pos        { return e.At }
func (e *Between) Pos() Pos   { return e.At }
func (e *IsNull) Pos() Pos    { return e.At }
func (e *Contains) Pos() Pos  { return e.At }

func (*Literal) expr()   {}
func (*Param) expr()     {}
func (*ColumnRef) expr() {}
func (*Binary) expr()    {}
func (*Not) expr()       {}
func (*In) expr()        {}
func (*Between) expr()   {}
func (*IsNull) expr()    {}
func (*Contains) expr()  {}
