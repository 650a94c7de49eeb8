// Package export writes a physical schema in other systems' DDL.
//
// CQL (this file) maps each column family to a Cassandra table — partition
// key in the inner parentheses of PRIMARY KEY, clustering key after it, in
// ascending clustering order — and each secondary index to CREATE INDEX on
// its base table. Columns are named by their path from the family's root
// relation (items.seller.region.id becomes items_seller_region_id), so that
// names are unique within a table.
//
// HBase (hbase.go) and CBT (cbt.go) write scripts creating the tables the
// engine itself uses on an HBase or Bigtable cluster: one per CF and SI,
// with the engine's one family, pre-split as the engine pre-splits them.
package export

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// cqlTypes maps kvschema types to CQL types.
var cqlTypes = map[types.Type]string{
	types.String: "text", types.Int: "int", types.BigInt: "bigint", types.Float: "float",
	types.Double: "double", types.Bool: "boolean", types.Timestamp: "timestamp", types.Bytes: "blob",
}

// cqlType is the CQL type of t: a scalar's from cqlTypes, a collection's
// written as CQL writes it (frozen<set<text>>, map<text, int>); "" if t has
// none.
func cqlType(t types.Type) string {
	if !t.IsCollection() {
		return cqlTypes[t]
	}
	var s string
	switch t.Kind() {
	case types.SetKind:
		s = "set<" + cqlTypes[t.Elem()] + ">"
	case types.ListKind:
		s = "list<" + cqlTypes[t.Elem()] + ">"
	default:
		s = "map<" + cqlTypes[t.Key()] + ", " + cqlTypes[t.Elem()] + ">"
	}
	if t.IsFrozen() {
		s = "frozen<" + s + ">"
	}
	return s
}

// cqlMaxName is the longest keyspace or table name Cassandra accepts, in
// characters (its schema's NAME_LENGTH: both names become file names).
const cqlMaxName = 48

// cqlName is what Cassandra accepts as a keyspace, table or index name,
// quoted or not: letters, digits and '_' (the CQL reference's
// re('[a-zA-Z_0-9]{1, 48}') for keyspaces and tables, re('[a-zA-Z_0-9]+')
// for indexes). Column names may be anything once quoted.
var cqlName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// cqlPlain is an identifier CQL reads the same unquoted: its unquoted
// identifiers start with a letter and fold to lower case, so only a
// lower-case one is itself.
var cqlPlain = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// cqlKeywords are the words cqlIdent always quotes: CQL keywords, reserved
// (an error unquoted) or not (the same identifier quoted), as the keyword
// appendix of the CQL reference (Cassandra 3.x to 5.0), Cassandra's own
// reserved-keyword list (trunk: CHECK, CONSTRAINT, LENGTH), the DataStax
// CQL 3.1 table (consistency levels, reserved then) and ScyllaDB's tables
// list them, plus words of later grammars (ANN, BETWEEN, VECTOR, MASKED…).
// A word too many only costs a pair of quotes; a reserved word missing
// would make invalid DDL, so the list errs long.
var cqlKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		ACCESS ADD AGGREGATE ALL ALLOW ALTER AND ANN ANY APPLY AS ASC ASCII
		AUTHORIZE BATCH BEGIN BETWEEN BIGINT BLOB BOOLEAN BY CALLED CAST
		CHECK CIDRS CLUSTERING COLUMNFAMILY COMPACT CONSISTENCY CONSTRAINT
		CONTAINS COUNT COUNTER CREATE CUSTOM DATACENTERS DATE DECIMAL DEFAULT
		DELETE DESC DESCRIBE DISTINCT DOUBLE DROP DURATION EACH_QUORUM
		ENTRIES EXECUTE EXISTS FILTERING FINALFUNC FLOAT FOR FROM FROZEN FULL
		FUNCTION FUNCTIONS GRANT GROUP HASHED IDENTITY IF IN INDEX INET
		INFINITY INITCOND INPUT INSERT INT INTO IS JSON KEY KEYS KEYSPACE
		KEYSPACES LANGUAGE LENGTH LEVEL LIKE LIMIT LIST LOCAL_ONE
		LOCAL_QUORUM LOGIN MAP MASKED MATERIALIZED MAXWRITETIME MBEAN MBEANS
		MODIFY NAN NOLOGIN NORECURSIVE NOSUPERUSER NOT NULL OCTET_LENGTH OF
		ON ONE OPTIONS OR ORDER PARTITION PASSWORD PASSWORDS PER PERMISSION
		PERMISSIONS PRIMARY QUORUM RENAME REPLACE RETURNS REVOKE ROLE ROLES
		SCHEMA SELECT SELECT_MASKED SET SFUNC SMALLINT STATIC STORAGE STYPE
		SUPERUSER TABLE TEXT THREE TIME TIMESTAMP TIMEUUID TINYINT TO TOKEN
		TRIGGER TRUNCATE TTL TUPLE TWO TYPE UNLOGGED UNMASK UNSET UPDATE USE
		USER USERS USING UUID VALUES VARCHAR VARINT VECTOR VIEW WHERE WITH
		WRITETIME`) {
		m[strings.ToLower(w)] = true
	}
	return m
}()

// cqlIdent writes name as exactly one CQL identifier that stands for name,
// case included: as itself when CQL reads it the same unquoted (see
// cqlPlain, and no keyword), otherwise double-quoted with every '"' doubled
// (CQL's quoted identifier, which ends at the first lone '"' and holds any
// other character, newlines and ';' included).
func cqlIdent(name string) string {
	if cqlPlain.MatchString(name) && !cqlKeywords[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// cqlComment makes text safe for one "--" comment line: control characters
// (a newline or carriage return would end the comment, and the rest of the
// line would be CQL), the Unicode line and paragraph separators and bytes
// that are not UTF-8 become '?'.
func cqlComment(text string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError {
			return '?'
		}
		return r
	}, text)
}

// column is the CQL column name of an attribute (before quoting).
func column(x *catalog.Index, a catalog.Attr) string {
	return strings.ReplaceAll(x.AttrName(a), ".", "_")
}

// CQL writes CREATE TABLE and CREATE INDEX statements for s into keyspace
// (no keyspace prefix when empty).
//
// Every name goes through cqlIdent, so each is one identifier whatever it
// holds, and one differing from another only in case stays distinct; the
// comment before each statement is cqlComment'ed. It returns an error, and
// no text, for what Cassandra would refuse: a keyspace or table name that is
// not 1 to 48 letters, digits and '_', an index name that is not letters,
// digits and '_', two columns of one table with one name, a name that is not
// UTF-8, or a type with no CQL equivalent.
func CQL(s *catalog.Schema, keyspace string) (string, error) {
	if keyspace != "" {
		if err := cqlCheckName("keyspace", keyspace); err != nil {
			return "", fmt.Errorf("keyspace %q: %v", keyspace, err)
		}
	}
	qual := func(name string) string {
		if keyspace == "" {
			return cqlIdent(name)
		}
		return cqlIdent(keyspace) + "." + cqlIdent(name)
	}
	var b strings.Builder
	for _, x := range s.Indexes {
		if x.Kind != catalog.CF {
			continue
		}
		if err := cqlCheckName("table", x.Name); err != nil {
			return "", fmt.Errorf("column family %q: %v", x.Name, err)
		}
		cols, err := cqlColumns(x)
		if err != nil {
			return "", fmt.Errorf("column family %q: %v", x.Name, err)
		}
		if len(x.Hash) == 0 {
			return "", fmt.Errorf("column family %q: no partition key", x.Name)
		}
		fmt.Fprintf(&b, "-- %s\n", cqlComment(x.Describe()))
		if x.PartitionBuckets > 0 {
			// Column names are paths with a dot made '_': never "bucket".
			fmt.Fprintf(&b, "-- Each partition is spread over %d buckets: the writer sets bucket to a hash of the\n-- whole primary key modulo %d; a read of a partition reads buckets 0 to %d.\n", x.PartitionBuckets, x.PartitionBuckets, x.PartitionBuckets-1)
		}
		fmt.Fprintf(&b, "CREATE TABLE %s (\n", qual(x.Name))
		for _, a := range x.Attrs() {
			static := ""
			if x.IsStatic(a) {
				static = " STATIC"
			}
			fmt.Fprintf(&b, "  %s %s%s,\n", cols[a], cqlType(a.Field.Type), static)
		}
		var part, clus []string
		for _, a := range x.Hash {
			part = append(part, cols[a])
		}
		if x.PartitionBuckets > 0 {
			b.WriteString("  bucket int,\n")
			part = append(part, "bucket")
		}
		for _, a := range x.Order {
			clus = append(clus, cols[a])
		}
		fmt.Fprintf(&b, "  PRIMARY KEY ((%s)", strings.Join(part, ", "))
		for _, c := range clus {
			b.WriteString(", " + c)
		}
		b.WriteString(")\n)")
		if len(clus) > 0 {
			order := make([]string, len(clus))
			for i, c := range clus {
				order[i] = c + " ASC"
			}
			fmt.Fprintf(&b, " WITH CLUSTERING ORDER BY (%s)", strings.Join(order, ", "))
		}
		b.WriteString(";\n\n")
	}
	for _, x := range s.Indexes {
		if x.Kind != catalog.SI {
			continue
		}
		if err := cqlCheckName("index", x.Name); err != nil {
			return "", fmt.Errorf("secondary index %q: %v", x.Name, err)
		}
		base := s.Base[x]
		if base == nil || len(x.Hash) == 0 {
			return "", fmt.Errorf("secondary index %q: no base column family or no indexed attribute", x.Name)
		}
		cols, err := cqlColumns(base)
		if err != nil {
			return "", fmt.Errorf("column family %q: %v", base.Name, err)
		}
		col, ok := cols[x.Hash[0]]
		if !ok {
			return "", fmt.Errorf("secondary index %q: column family %q has no column %s", x.Name, base.Name, x.AttrName(x.Hash[0]))
		}
		if x.OnElements() && x.Hash[0].Field.Type.Kind() == types.MapKind {
			col = "KEYS(" + col + ")" // a map's keys; a set's index is on its values
		}
		fmt.Fprintf(&b, "-- %s\nCREATE INDEX %s ON %s (%s);\n\n", cqlComment(x.Describe()), cqlIdent(x.Name), qual(base.Name), col)
	}
	return b.String(), nil
}

// cqlCheckName says why name cannot be a Cassandra name of the kind what
// (keyspace, table or index), or returns nil. Keyspace and table names are
// limited to 48 characters; index names are not.
func cqlCheckName(what, name string) error {
	limited := what != "index"
	switch {
	case !cqlName.MatchString(name) && limited:
		return fmt.Errorf("not a Cassandra %s name (1 to %d letters, digits and '_')", what, cqlMaxName)
	case !cqlName.MatchString(name):
		return fmt.Errorf("not a Cassandra %s name (letters, digits and '_')", what)
	case limited && len(name) > cqlMaxName:
		return fmt.Errorf("%s name has %d characters, over Cassandra's limit of %d", what, len(name), cqlMaxName)
	}
	return nil
}

// cqlColumns maps every attribute of CF x to its quoted CQL column name,
// checking that the names are UTF-8, that no two attributes share one and
// that every type has a CQL one.
func cqlColumns(x *catalog.Index) (map[catalog.Attr]string, error) {
	cols := map[catalog.Attr]string{}
	owner := map[string]string{}
	for _, a := range x.Attrs() {
		name := column(x, a)
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("column %q is not UTF-8", name)
		}
		if prev, ok := owner[name]; ok {
			return nil, fmt.Errorf("attributes %q and %q would both be column %q", prev, x.AttrName(a), name)
		}
		if cqlType(a.Field.Type) == "" {
			return nil, fmt.Errorf("attribute %q: type %v has no CQL type", x.AttrName(a), a.Field.Type)
		}
		owner[name] = x.AttrName(a)
		cols[a] = cqlIdent(name)
	}
	return cols, nil
}
