// SQL DDL: CREATE TABLE and ALTER TABLE … ADD PRIMARY KEY / FOREIGN KEY, in
// the dialect subset PostgreSQL and MySQL dumps share, read as the
// conceptual model's definitions; and ParseModel, which reads a model file
// and skips the other statements of a dump.

package lang

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvschema/kvschema/types"
)

// ParseModel parses a model file: DEFINE statements (DEFINE RELATION, and
// whatever else a model file may carry), and an SQL schema dump's CREATE
// TABLE and ALTER TABLE … ADD PRIMARY KEY / ADD FOREIGN KEY. Every other
// statement — the SET, CREATE INDEX, CREATE SEQUENCE, DROP TABLE, ALTER
// TABLE … OWNER TO, COMMENT ON, GRANT, LOCK TABLES, INSERT … of a dump — is
// skipped without being parsed (its tokens must still lex), each with a
// Note saying what was skipped and why. Errors are *Error, as ParseScript's.
func ParseModel(file string, src []byte) ([]Statement, []Note, error) {
	p := newParser(file, string(src))
	p.model = true
	var ss []Statement
	var notes []Note
	for {
		if p.acceptPunct(";") {
			continue
		}
		if p.peek().kind == tokEOF {
			return ss, notes, nil
		}
		start := p.i
		var s Statement
		p.skipKind = ""
		if p.isKeyword("DEFINE") || p.isWord("CREATE") || p.isWord("ALTER") {
			// CREATE and ALTER statements the model does not read return
			// nil, with p.skipKind saying what they are.
			var err error
			if s, err = p.statement(); err != nil {
				return nil, nil, err
			}
		}
		if s == nil {
			n, err := p.skipStatement(start)
			if err != nil {
				return nil, nil, err
			}
			notes = append(notes, n)
			continue
		}
		ss = append(ss, s)
		notes, p.notes = append(notes, p.notes...), nil
		if p.peek().kind != tokEOF && !p.isPunct(";") {
			return nil, nil, p.unexpected("';' or end of input after statement")
		}
	}
}

// skipReasons says why ParseModel skips a kind of statement; other kinds are
// "not part of the conceptual model".
var skipReasons = map[string]string{
	"CREATE INDEX":        "indexes are physical design, which kvschema advises",
	"CREATE UNIQUE INDEX": "indexes are physical design, which kvschema advises",
	"INSERT":              "data is not part of the model (kvschema load reads data files)",
	"SELECT":              "queries are not part of the model (a workload goes in --workload or --workload-log)",
	"UPDATE":              "statements are not part of the model (a workload goes in --workload or --workload-log)",
	"DELETE":              "statements are not part of the model (a workload goes in --workload or --workload-log)",
}

// skipStatement consumes the statement that starts at token index start up
// to its ';' (not consumed) or the end of the input, and returns the note
// that says so.
func (p *parser) skipStatement(start int) (Note, error) {
	at := p.toks[start].pos
	kind := p.skipKind
	if kind == "" {
		kind = p.statementKind(start)
	}
	for p.peek().kind != tokEOF && !p.isPunct(";") {
		if t := p.peek(); t.kind == tokError {
			return Note{}, t.err
		}
		p.next()
	}
	why := skipReasons[kind]
	if why == "" {
		why = "not part of the conceptual model"
	}
	return Note{Pos: at, Kind: kind, Msg: "skipped " + kind + ": " + why}, nil
}

// tokenAt returns the token at index j of the statement's tokens, lexing
// up to it if need be (the final token if j is past the end).
func (p *parser) tokenAt(j int) *token {
	if j < p.i {
		return &p.toks[j]
	}
	return p.peekN(j - p.i)
}

// statementKind names the statement whose first token is at index start by
// its first words: SET, DROP TABLE, CREATE UNIQUE INDEX, ….
func (p *parser) statementKind(start int) string {
	word := func(j int) string {
		if t := p.tokenAt(j); t.kind == tokIdent || t.kind == tokKeyword {
			return strings.ToUpper(t.str)
		}
		return ""
	}
	kind := word(start)
	switch kind {
	case "":
		return "statement"
	case "CREATE", "DROP", "ALTER", "COMMENT", "GRANT", "REVOKE", "LOCK", "UNLOCK":
	default:
		return kind
	}
	for j := start + 1; j < start+5; j++ {
		w := word(j)
		if w == "" {
			break
		}
		kind += " " + w
		switch w {
		case "UNIQUE", "OR", "REPLACE", "TEMP", "TEMPORARY", "UNLOGGED", "MATERIALIZED", "GLOBAL", "LOCAL", "IF", "NOT", "EXISTS", "ON":
			continue
		}
		break
	}
	return kind
}

// create parses CREATE TABLE; other CREATE statements are errors, or, in a
// model file, skipped (nil, with p.skipKind set).
func (p *parser) create() (Statement, error) {
	at := p.next().pos
	if p.acceptWord("TABLE") {
		return p.createTable(at)
	}
	kind := p.statementKind(p.i - 1)
	if p.model {
		p.skipKind = kind
		return nil, nil
	}
	return nil, errorAt(at, fmt.Sprintf("%s is not supported (kvschema reads CREATE TABLE; in a model file an SQL dump's other statements are skipped)", kind))
}

// tableName parses a relation name in SQL DDL: a name, optionally
// qualified by a schema (public.users, `shop`.`users`), which is dropped:
// the model has one namespace.
func (p *parser) tableName(what string) (string, Pos, error) {
	name, at, err := p.ident(what)
	if err != nil {
		return "", Pos{}, err
	}
	for p.acceptPunct(".") {
		if name, at, err = p.ident(what + " after '.'"); err != nil {
			return "", Pos{}, err
		}
	}
	if err := CheckDefName(at, what, name); err != nil {
		return "", Pos{}, err
	}
	return name, at, nil
}

// sqlTypes maps SQL column types (lower case; the first word of a
// multi-word type) onto kvschema's: every integer type is BIGINT, every
// character type STRING, every approximate or exact non-integer number
// DOUBLE, dates and times of day TIMESTAMP, binary strings BYTES.
var sqlTypes = map[string]types.Type{
	"smallint": types.BigInt, "integer": types.BigInt, "int": types.BigInt, "bigint": types.BigInt,
	"int2": types.BigInt, "int4": types.BigInt, "int8": types.BigInt, "tinyint": types.BigInt, "mediumint": types.BigInt,
	"serial": types.BigInt, "bigserial": types.BigInt, "smallserial": types.BigInt,
	"serial2": types.BigInt, "serial4": types.BigInt, "serial8": types.BigInt,
	"varchar": types.String, "character": types.String, "char": types.String, "nchar": types.String,
	"nvarchar": types.String, "text": types.String, "tinytext": types.String, "mediumtext": types.String,
	"longtext": types.String, "enum": types.String, "string": types.String,
	"real": types.Double, "double": types.Double, "float": types.Double, "float4": types.Double,
	"float8": types.Double, "numeric": types.Double, "decimal": types.Double, "dec": types.Double,
	"boolean": types.Bool, "bool": types.Bool,
	"date": types.Timestamp, "timestamp": types.Timestamp, "timestamptz": types.Timestamp, "datetime": types.Timestamp,
	"bytea": types.Bytes, "blob": types.Bytes, "tinyblob": types.Bytes, "mediumblob": types.Bytes,
	"longblob": types.Bytes, "binary": types.Bytes, "varbinary": types.Bytes, "bytes": types.Bytes,
	// CQL's (Cassandra's CREATE TABLE): identifiers as their text.
	"ascii": types.String, "uuid": types.String, "timeuuid": types.String, "inet": types.String,
	"varint": types.BigInt, "counter": types.BigInt,
}

// sqlTypeHelp lists the SQL types CREATE TABLE takes, for errors.
const sqlTypeHelp = "smallint, integer, int, bigint, serial, varint, counter, … → BIGINT; char(n), varchar(n), character varying(n), text, enum(…), ascii, uuid, timeuuid, inet → STRING; real, double precision, float, numeric, decimal → DOUBLE; boolean → BOOL; date, timestamp, datetime → TIMESTAMP; bytea, blob, binary, varbinary → BYTES; any of them[] → FROZEN<LIST<…>>; CQL's set<T>, list<T>, map<K, V> and frozen<…> of them"

// sqlType parses an SQL column type: its name (character varying and double
// precision are two words), its length or precision and scale, PostgreSQL's
// WITH[OUT] TIME ZONE and MySQL's UNSIGNED, SIGNED and ZEROFILL. With cast
// (the type of a `::` cast in a DEFAULT value), a name kvschema does not
// map is no error; the type is then Invalid.
func (p *parser) sqlType(column string, cast bool) (types.Type, error) {
	t := p.peek()
	name := strings.ToLower(t.str)
	if n := p.peekN(1); !cast && (t.kind == tokIdent || t.kind == tokKeyword) && n.kind == tokPunct && n.str == "<" && (name == "set" || name == "list" || name == "map" || name == "frozen") {
		return p.cqlCollection(column) // SET is a keyword
	}
	if t.kind != tokIdent {
		return types.Invalid, p.unexpected("type of column " + snippet(quoteIdent(column)))
	}
	p.next()
	typ, known := sqlTypes[name]
	switch name {
	case "character", "char", "nchar":
		p.acceptWord("varying")
	case "double":
		p.acceptWord("precision")
	}
	if p.acceptPunct("(") {
		for {
			a := p.peek()
			if name == "enum" && a.kind != tokString || name != "enum" && a.kind != tokInt {
				what := "length or precision of " + name
				if name == "enum" {
					what = "string value of enum"
				}
				return types.Invalid, p.unexpected(what)
			}
			p.next()
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")", "after the type's arguments"); err != nil {
			return types.Invalid, err
		}
	}
	if (name == "timestamp" || name == "time") && (p.isWord("WITH") || p.isWord("WITHOUT")) {
		p.next()
		if err := p.expectWord("TIME", "in WITH[OUT] TIME ZONE"); err != nil {
			return types.Invalid, err
		}
		if err := p.expectWord("ZONE", "in WITH[OUT] TIME ZONE"); err != nil {
			return types.Invalid, err
		}
	}
	for typ == types.BigInt || typ == types.Double {
		if !p.acceptWord("UNSIGNED") && !p.acceptWord("SIGNED") && !p.acceptWord("ZEROFILL") {
			break
		}
	}
	if !known && !cast {
		return types.Invalid, errorAt(t.pos, fmt.Sprintf("column %s: type '%s' is not supported (supported: %s)", snippet(quoteIdent(column)), snippet(t.raw), sqlTypeHelp))
	}
	// PostgreSQL's one-dimensional arrays, T[] or T ARRAY (a size, [n],
	// is noted and not enforced, as PostgreSQL does): a value replaced
	// whole, ordered, duplicates kept — a frozen LIST.
	array := false
	for p.isPunct("[") || p.isWord("ARRAY") {
		at := p.peek().pos
		if array {
			return types.Invalid, errorAt(at, fmt.Sprintf("column %s: multidimensional arrays are not supported (a collection's elements are scalars)", snippet(quoteIdent(column))))
		}
		array = true
		if p.acceptWord("ARRAY") && !p.isPunct("[") {
			continue
		}
		p.next() // '['
		if p.peek().kind == tokInt {
			p.next()
		}
		if err := p.expectPunct("]", "to close the array type"); err != nil {
			return types.Invalid, err
		}
	}
	if array && typ != types.Invalid {
		return types.ListOf(typ).Frozen(), nil
	}
	return typ, nil
}

// cqlCollection parses CQL's set<T>, list<T> and map<K, V> (stored one
// cell per element, as Cassandra stores them) and frozen<…> of one (one
// value), of scalar CQL or SQL types.
func (p *parser) cqlCollection(column string) (types.Type, error) {
	t := p.next()
	kind := strings.ToLower(t.str)
	p.next() // '<'
	elem := func() (types.Type, error) {
		e := p.peek()
		if n := p.peekN(1); n.kind == tokPunct && n.str == "<" {
			return types.Invalid, errorAt(e.pos, fmt.Sprintf("column %s: a collection's elements are scalars: kvschema stores no collection in a collection", snippet(quoteIdent(column))))
		}
		typ, err := p.sqlType(column, false)
		if err == nil && typ.IsCollection() {
			err = errorAt(e.pos, fmt.Sprintf("column %s: a collection's elements are scalars: kvschema stores no collection in a collection", snippet(quoteIdent(column))))
		}
		return typ, err
	}
	var c types.Type
	switch kind {
	case "frozen":
		if n := p.peekN(1); n.kind != tokPunct || n.str != "<" {
			return types.Invalid, p.unexpected("set<T>, list<T> or map<K, V> after frozen<")
		}
		inner, err := p.cqlCollection(column)
		if err != nil {
			return types.Invalid, err
		}
		c = inner.Frozen()
	case "map":
		k, err := elem()
		if err != nil {
			return types.Invalid, err
		}
		if err := p.expectPunct(",", "after the key type of map<K, V>"); err != nil {
			return types.Invalid, err
		}
		v, err := elem()
		if err != nil {
			return types.Invalid, err
		}
		c = types.MapOf(k, v)
	default:
		e, err := elem()
		if err != nil {
			return types.Invalid, err
		}
		c = types.SetOf(e)
		if kind == "list" {
			c = types.ListOf(e)
		}
	}
	if err := p.expectPunct(">", "to close "+kind+"<"); err != nil {
		return types.Invalid, err
	}
	return c, nil
}

// sqlTable is a CREATE TABLE being read: the relation it defines and what
// its annotation comments attach to.
type sqlTable struct {
	rel    *DefineRelation
	pkAt   Pos     // where the primary key was declared; zero if not yet
	fks    []sqlFK // FOREIGN KEY table constraints, applied at the end
	lines  []annotated
	rowsAt Pos // where ROWS was annotated
}

// sqlFK is a FOREIGN KEY (a) REFERENCES … table constraint.
type sqlFK struct {
	attr                  string
	at                    Pos
	refs, refAttr, revers string
}

// annotated is a column or a foreign-key constraint of a CREATE TABLE and
// the lines it spans: an annotation comment on one of those lines is about
// it.
type annotated struct {
	first, last int
	attr        int // index in rel.Attrs; -1 for a foreign-key constraint
	fk          int // index in fks; -1 for a column
}

// createTable parses the rest of CREATE TABLE [IF NOT EXISTS] name ( column
// | constraint | index, … ) [table options] into a DefineRelation.
func (p *parser) createTable(at Pos) (Statement, error) {
	start := p.i - 2 // the CREATE token
	if p.acceptWord("IF") {
		if err := p.expectKeyword("NOT", "after IF"); err != nil {
			return nil, err
		}
		if err := p.expectWord("EXISTS", "after IF NOT"); err != nil {
			return nil, err
		}
	}
	name, _, err := p.tableName("relation name")
	if err != nil {
		return nil, err
	}
	tb := &sqlTable{rel: &DefineRelation{At: at, Name: name}}
	if p.isWord("LIKE") || p.isWord("AS") {
		return nil, errorAt(p.peek().pos, fmt.Sprintf("CREATE TABLE %s %s is not supported: give the table's columns", snippet(quoteIdent(name)), strings.ToUpper(p.peek().str)))
	}
	if err := p.expectPunct("(", "and the columns after CREATE TABLE "+snippet(quoteIdent(name))); err != nil {
		return nil, err
	}
	for {
		first := p.peek().pos.Line
		n, nfk := len(tb.rel.Attrs), len(tb.fks)
		if err := p.tableElement(tb); err != nil {
			return nil, err
		}
		last := p.toks[p.i-1].pos.Line
		switch {
		case len(tb.rel.Attrs) > n:
			tb.lines = append(tb.lines, annotated{first, last, n, -1})
		case len(tb.fks) > nfk:
			tb.lines = append(tb.lines, annotated{first, last, -1, nfk})
		}
		if p.acceptPunct(")") {
			break
		}
		if err := p.expectPunct(",", "or ')' after a column or constraint of "+snippet(quoteIdent(name))); err != nil {
			return nil, err
		}
	}
	if len(tb.rel.Attrs) == 0 {
		return nil, errorAt(at, fmt.Sprintf("CREATE TABLE %s has no columns", snippet(quoteIdent(name))))
	}
	if err := p.tableOptions(); err != nil {
		return nil, err
	}
	if err := tb.applyFKs(); err != nil {
		return nil, err
	}
	for _, c := range p.statementTrails(start) {
		if err := tb.annotate(c); err != nil {
			return nil, err
		}
	}
	for _, a := range tb.rel.Attrs {
		if a.Reverse != "" && a.References == "" {
			return nil, errorAt(a.At, fmt.Sprintf("relation %s: REVERSE annotates a foreign key, and column %s references nothing here (for a foreign key that ALTER TABLE adds, put the comment on a line of that ALTER TABLE)", snippet(quoteIdent(name)), snippet(quoteIdent(a.Name))))
		}
	}
	return tb.rel, nil
}

// statementTrails returns the annotation comments at the ends of the lines
// of the statement whose first token is at index start and whose last was
// just consumed. When the whole source is in memory, the comment after its
// ';' counts too (a Reader of a stream reads no further than the ';').
func (p *parser) statementTrails(start int) []token {
	end := p.i
	p.peek() // lexing the next token attaches the comment before it
	if p.isPunct(";") && p.lx.rd == nil {
		p.peekN(1)
		end++
	}
	var out []token
	for _, t := range p.toks[start:end] {
		if t.trail != "" {
			out = append(out, t)
		}
	}
	return out
}

// tableElement parses one column, table constraint or index of a CREATE
// TABLE into tb.
func (p *parser) tableElement(tb *sqlTable) error {
	t := p.peek()
	if t.kind == tokIdent {
		switch strings.ToUpper(t.str) {
		case "CONSTRAINT":
			p.next()
			if _, _, err := p.ident("constraint name"); err != nil {
				return err
			}
			if !p.isWord("PRIMARY") && !p.isWord("UNIQUE") && !p.isWord("FOREIGN") && !p.isWord("CHECK") {
				return p.unexpected("PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK after CONSTRAINT name")
			}
			return p.tableConstraint(tb)
		case "PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL":
			return p.tableConstraint(tb)
		case "KEY", "INDEX":
			// MySQL's KEY name (columns): an index, unless this is a
			// column named key (key text).
			n1, n2 := p.peekN(1), p.peekN(2)
			if n1.kind == tokPunct && n1.str == "(" ||
				(n1.kind == tokIdent || n1.kind == tokQuoted) && (n2.kind == tokPunct && n2.str == "(" && p.peekN(3).kind != tokInt || strings.EqualFold(n2.str, "USING")) {
				return p.tableConstraint(tb)
			}
		case "LIKE":
			return errorAt(t.pos, "CREATE TABLE … (LIKE …) is not supported: give the table's columns")
		}
	}
	a, err := p.sqlColumn(tb)
	if err != nil {
		return err
	}
	for _, b := range tb.rel.Attrs {
		if strings.EqualFold(a.Name, b.Name) {
			return errorAt(a.At, fmt.Sprintf("relation %s: column %s is declared twice (names are case-insensitive)", snippet(quoteIdent(tb.rel.Name)), snippet(quoteIdent(a.Name))))
		}
	}
	tb.rel.Attrs = append(tb.rel.Attrs, a)
	return nil
}

// sqlColumn parses a column definition: name, type and column constraints.
func (p *parser) sqlColumn(tb *sqlTable) (AttrDef, error) {
	name, at, err := p.defName("column name")
	if err != nil {
		return AttrDef{}, err
	}
	a := AttrDef{At: at, Name: name}
	if a.Type, err = p.sqlType(name, false); err != nil {
		return AttrDef{}, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tokPunct && (t.str == "," || t.str == ")") || t.kind == tokEOF:
			return a, nil
		case t.kind == tokError:
			return AttrDef{}, t.err
		}
		if p.acceptWord("CONSTRAINT") {
			if _, _, err := p.ident("constraint name"); err != nil {
				return AttrDef{}, err
			}
			t = p.peek()
		}
		word := strings.ToUpper(t.str)
		if t.kind != tokIdent && t.kind != tokKeyword {
			word = ""
		}
		p.next()
		switch word {
		case "NOT":
			err = p.expectKeyword("NULL", "after NOT")
		case "NULL", "AUTO_INCREMENT":
		case "PRIMARY":
			if err = p.expectWord("KEY", "after PRIMARY"); err == nil {
				err = tb.keyAt(t.pos)
				a.Key = true
			}
		case "UNIQUE":
			p.acceptWord("KEY")
		case "STATIC":
			// CQL's: the advisor chooses static columns (advise
			// --static-columns), the model has none.
			p.notes = append(p.notes, Note{Pos: t.pos, Kind: "STATIC", Msg: fmt.Sprintf("column %s: STATIC read as an ordinary attribute: the advisor chooses static columns (advise --static-columns)", snippet(quoteIdent(name)))})
		case "REFERENCES":
			if a.References != "" {
				return AttrDef{}, errorAt(t.pos, fmt.Sprintf("column %s: a second REFERENCES", snippet(quoteIdent(name))))
			}
			a.References, a.RefAttr, a.Reverse, err = p.references(true)
		case "DEFAULT":
			err = p.defaultValue()
		case "CHECK":
			err = p.skipParens("after CHECK")
		case "COLLATE":
			_, _, err = p.ident("collation name after COLLATE")
		case "CHARACTER", "CHARSET":
			if word == "CHARACTER" {
				err = p.expectKeyword("SET", "after CHARACTER")
			}
			if err == nil {
				_, _, err = p.ident("character set name")
			}
		case "COMMENT":
			if p.peek().kind != tokString {
				return AttrDef{}, p.unexpected("string after COMMENT")
			}
			p.next()
		case "ON":
			// MySQL's ON UPDATE CURRENT_TIMESTAMP.
			if err = p.expectKeyword("UPDATE", "after ON"); err == nil {
				err = p.defaultValue()
			}
		case "GENERATED":
			err = p.generated()
		default:
			return AttrDef{}, errorAt(t.pos, fmt.Sprintf("column %s: '%s' is not supported here (column constraints: NOT NULL, NULL, PRIMARY KEY, UNIQUE, REFERENCES, DEFAULT, CHECK, COLLATE, CHARACTER SET, AUTO_INCREMENT, COMMENT, GENERATED)",
				snippet(quoteIdent(name)), snippet(t.raw)))
		}
		if err != nil {
			return AttrDef{}, err
		}
	}
}

// generated parses the rest of GENERATED {ALWAYS | BY DEFAULT} AS
// {IDENTITY [(…)] | (expression) [STORED | VIRTUAL]}: accepted and
// ignored, as DEFAULT is.
func (p *parser) generated() error {
	if !p.acceptWord("ALWAYS") {
		if err := p.expectKeyword("BY", "or ALWAYS after GENERATED"); err != nil {
			return err
		}
		if err := p.expectWord("DEFAULT", "after GENERATED BY"); err != nil {
			return err
		}
	}
	if err := p.expectWord("AS", "after GENERATED ALWAYS or BY DEFAULT"); err != nil {
		return err
	}
	if p.acceptWord("IDENTITY") {
		if p.isPunct("(") {
			return p.skipParens("after IDENTITY")
		}
		return nil
	}
	if err := p.skipParens("after GENERATED … AS"); err != nil {
		return err
	}
	if !p.acceptWord("STORED") {
		p.acceptWord("VIRTUAL")
	}
	return nil
}

// defaultValue parses a DEFAULT value, which the model ignores: a literal, a
// name (CURRENT_TIMESTAMP), a function call (now(), nextval('s'::regclass))
// or a parenthesized expression, each optionally cast (::type, as
// PostgreSQL writes 'x'::character varying).
func (p *parser) defaultValue() error {
	t := p.peek()
	switch {
	case t.kind == tokString || t.kind == tokInt || t.kind == tokFloat || t.kind == tokBinary:
		p.next()
	case t.kind == tokKeyword && (t.str == "NULL" || t.str == "TRUE" || t.str == "FALSE"):
		p.next()
	case t.kind == tokIdent:
		p.next()
		if p.isPunct("(") {
			if err := p.skipParens("in the call of " + t.str); err != nil {
				return err
			}
		}
	case p.isPunct("("):
		if err := p.skipParens("after DEFAULT"); err != nil {
			return err
		}
	default:
		return p.unexpected("DEFAULT value (a constant, a name, a function call or a parenthesized expression)")
	}
	for p.isPunct(":") && p.peekN(1).kind == tokPunct && p.peekN(1).str == ":" {
		p.next()
		p.next()
		if _, err := p.sqlType("DEFAULT", true); err != nil {
			return err
		}
	}
	return nil
}

// skipParens consumes a parenthesized token sequence, nested parentheses
// included (a CHECK condition, a function's arguments, an index's columns).
func (p *parser) skipParens(context string) error {
	open := p.peek()
	if err := p.expectPunct("(", context); err != nil {
		return err
	}
	for depth := 1; depth > 0; {
		t := p.next()
		switch {
		case t.kind == tokError:
			return t.err
		case t.kind == tokEOF:
			return errorAt(t.pos, fmt.Sprintf("expected ')' to match '(' at %d:%d, found end of input", open.pos.Line, open.pos.Col))
		case t.kind == tokPunct && t.str == "(":
			depth++
		case t.kind == tokPunct && t.str == ")":
			depth--
		}
	}
	return nil
}

// tableConstraint parses a table constraint (the CONSTRAINT name already
// read): PRIMARY KEY (a, …), UNIQUE [KEY | INDEX] [name] (…), FOREIGN KEY
// [name] (a) REFERENCES …, CHECK (…), or MySQL's [FULLTEXT | SPATIAL] KEY |
// INDEX [name] (…). Only the primary key and foreign keys mean something
// to the model; the rest is accepted and ignored.
func (p *parser) tableConstraint(tb *sqlTable) error {
	t := p.next()
	switch strings.ToUpper(t.str) {
	case "PRIMARY":
		if err := p.expectWord("KEY", "after PRIMARY"); err != nil {
			return err
		}
		var names []string
		var ats []Pos
		var err error
		if p.isPunct("(") && p.peekN(1).kind == tokPunct && p.peekN(1).str == "(" {
			names, ats, err = p.cqlPrimaryKey()
		} else {
			names, ats, err = p.nameList("primary key")
		}
		if err != nil {
			return err
		}
		if err := p.indexUsing(); err != nil {
			return err
		}
		return tb.setKey(names, ats, t.pos)
	case "FOREIGN":
		fk, err := p.foreignKey()
		if err != nil {
			return err
		}
		tb.fks = append(tb.fks, fk)
		return nil
	case "CHECK":
		return p.skipParens("after CHECK")
	case "UNIQUE", "FULLTEXT", "SPATIAL":
		if !p.acceptWord("KEY") {
			p.acceptWord("INDEX")
		}
	}
	// An index: [name] [USING method] (parts) [USING method].
	if !p.isPunct("(") && !p.isWord("USING") {
		if _, _, err := p.ident("index name or '('"); err != nil {
			return err
		}
	}
	if err := p.indexUsing(); err != nil {
		return err
	}
	if err := p.skipParens("and the indexed columns"); err != nil {
		return err
	}
	return p.indexUsing()
}

// cqlPrimaryKey parses CQL's PRIMARY KEY ((p1, …), c1, …): a partition key
// of its own in parentheses, then the clustering columns. The model's key
// is all of them, in order; which are the partition key is the advisor's
// to choose (a note says so).
func (p *parser) cqlPrimaryKey() ([]string, []Pos, error) {
	at := p.next().pos // the outer '('
	names, ats, err := p.nameList("partition key")
	if err != nil {
		return nil, nil, err
	}
	part := len(names)
	for p.acceptPunct(",") {
		n, a, err := p.defName("column name")
		if err != nil {
			return nil, nil, err
		}
		names, ats = append(names, n), append(ats, a)
	}
	if err := p.expectPunct(")", "or ',' in the primary key's columns"); err != nil {
		return nil, nil, err
	}
	p.notes = append(p.notes, Note{Pos: at, Kind: "PRIMARY KEY", Msg: fmt.Sprintf("CQL partition key (%s) read as part of the key (%s): the advisor chooses partition keys", strings.Join(names[:part], ", "), strings.Join(names, ", "))})
	return names, ats, nil
}

// foreignKey parses the rest of FOREIGN KEY [name] (a) REFERENCES ….
func (p *parser) foreignKey() (sqlFK, error) {
	if err := p.expectWord("KEY", "after FOREIGN"); err != nil {
		return sqlFK{}, err
	}
	if !p.isPunct("(") {
		if _, _, err := p.ident("foreign key name or '('"); err != nil {
			return sqlFK{}, err
		}
	}
	names, ats, err := p.nameList("foreign key")
	if err != nil {
		return sqlFK{}, err
	}
	if len(names) > 1 {
		return sqlFK{}, errorAt(ats[1], "composite foreign keys are not supported: kvschema's relationships reference a single-attribute key")
	}
	if err := p.expectWord("REFERENCES", "after FOREIGN KEY (…)"); err != nil {
		return sqlFK{}, err
	}
	fk := sqlFK{attr: names[0], at: ats[0]}
	fk.refs, fk.refAttr, fk.revers, err = p.references(true)
	return fk, err
}

// indexUsing parses an optional USING method (MySQL's USING BTREE).
func (p *parser) indexUsing() error {
	if p.acceptWord("USING") {
		_, _, err := p.ident("index method after USING")
		return err
	}
	return nil
}

// nameList parses ( a, b, … ) of a key (each name optionally with a prefix
// length and ASC or DESC, as MySQL writes keys).
func (p *parser) nameList(what string) ([]string, []Pos, error) {
	if err := p.expectPunct("(", "after "+strings.ToUpper(what)); err != nil {
		return nil, nil, err
	}
	var names []string
	var ats []Pos
	for {
		n, at, err := p.defName("column name")
		if err != nil {
			return nil, nil, err
		}
		if p.isPunct("(") {
			if err := p.skipParens("after column name"); err != nil {
				return nil, nil, err
			}
		}
		if !p.acceptKeyword("ASC") {
			p.acceptKeyword("DESC")
		}
		names, ats = append(names, n), append(ats, at)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' in the "+what+"'s columns"); err != nil {
		return nil, nil, err
	}
	return names, ats, nil
}

// refActions parses what may follow a foreign key's REFERENCES t(a): MATCH
// FULL | PARTIAL | SIMPLE, ON DELETE action, ON UPDATE action, [NOT]
// DEFERRABLE, INITIALLY DEFERRED | IMMEDIATE, NOT VALID. They do not change
// the model.
func (p *parser) refActions() error {
	for {
		switch {
		case p.acceptWord("MATCH"):
			if !p.acceptWord("FULL") && !p.acceptWord("PARTIAL") && !p.acceptWord("SIMPLE") {
				return p.unexpected("FULL, PARTIAL or SIMPLE after MATCH")
			}
		case p.isWord("ON") && p.peekN(1).kind == tokKeyword && (p.peekN(1).str == "DELETE" || p.peekN(1).str == "UPDATE"):
			p.next()
			p.next()
			switch {
			case p.acceptWord("CASCADE"), p.acceptWord("RESTRICT"):
			case p.acceptWord("NO"):
				if err := p.expectWord("ACTION", "after NO"); err != nil {
					return err
				}
			case p.acceptKeyword("SET"):
				if !p.acceptKeyword("NULL") {
					if err := p.expectWord("DEFAULT", "or NULL after SET"); err != nil {
						return err
					}
				}
			default:
				return p.unexpected("CASCADE, RESTRICT, NO ACTION, SET NULL or SET DEFAULT")
			}
		case p.acceptWord("DEFERRABLE"):
		case p.isKeyword("NOT") && (p.peekN(1).kind == tokIdent && (strings.EqualFold(p.peekN(1).str, "DEFERRABLE") || strings.EqualFold(p.peekN(1).str, "VALID"))):
			p.next()
			p.next()
		case p.acceptWord("INITIALLY"):
			if !p.acceptWord("DEFERRED") && !p.acceptWord("IMMEDIATE") {
				return p.unexpected("DEFERRED or IMMEDIATE after INITIALLY")
			}
		default:
			return nil
		}
	}
}

// tableOptions parses the options MySQL dumps write after a table's ')':
// ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 COLLATE=… and the
// like, each optionally followed by ','. They do not change the model.
func (p *parser) tableOptions() error {
	for {
		t := p.peek()
		if t.kind != tokIdent {
			return nil
		}
		word := strings.ToUpper(t.str)
		switch word {
		case "DEFAULT":
			p.next()
			continue
		case "CHARACTER":
			p.next()
			if err := p.expectKeyword("SET", "after CHARACTER"); err != nil {
				return err
			}
		case "ENGINE", "AUTO_INCREMENT", "CHARSET", "COLLATE", "ROW_FORMAT", "COMMENT", "KEY_BLOCK_SIZE",
			"PACK_KEYS", "CHECKSUM", "AVG_ROW_LENGTH", "MAX_ROWS", "MIN_ROWS", "DELAY_KEY_WRITE", "COMPRESSION",
			"ENCRYPTION", "STATS_PERSISTENT", "STATS_AUTO_RECALC", "STATS_SAMPLE_PAGES", "INSERT_METHOD", "TYPE":
			p.next()
		case "CREATE", "ALTER", "DROP", "LOCK", "UNLOCK", "GRANT", "REVOKE", "BEGIN", "COMMIT", "ROLLBACK":
			return nil // the next statement, the ';' missing: the caller says so
		case "WITH":
			return p.cqlTableOptions()
		default:
			return errorAt(t.pos, fmt.Sprintf("table option '%s' is not supported (kvschema reads the options MySQL dumps write: ENGINE, DEFAULT CHARSET, COLLATE, AUTO_INCREMENT, ROW_FORMAT, COMMENT, …)", snippet(t.raw)))
		}
		p.acceptPunct("=")
		v := p.peek()
		if v.kind != tokIdent && v.kind != tokString && v.kind != tokInt && v.kind != tokQuoted {
			return p.unexpected("value of table option " + word)
		}
		p.next()
		p.acceptPunct(",")
	}
}

// cqlTableOptions skips CQL's table options, WITH CLUSTERING ORDER BY (…)
// AND name = value …, to the statement's end: the clustering order and the
// storage options are the advisor's and the store's to choose (a note
// says so). Brackets must balance.
func (p *parser) cqlTableOptions() error {
	at := p.next().pos // WITH
	depth := 0
	for {
		t := p.peek()
		switch {
		case t.kind == tokError:
			return t.err
		case t.kind == tokEOF || depth == 0 && t.kind == tokPunct && t.str == ";":
			if depth > 0 {
				return p.unexpected("')' or '}' to close the table options' brackets")
			}
			p.notes = append(p.notes, Note{Pos: at, Kind: "WITH", Msg: "CQL table options skipped (clustering order, compaction, …): the advisor and the store choose them"})
			return nil
		case t.kind == tokPunct && (t.str == "(" || t.str == "{" || t.str == "["):
			depth++
		case t.kind == tokPunct && (t.str == ")" || t.str == "}" || t.str == "]"):
			if depth == 0 {
				return p.unexpected("a table option")
			}
			depth--
		}
		p.next()
	}
}

// keyAt notes that the table's primary key is declared at at: a table has
// one.
func (tb *sqlTable) keyAt(at Pos) error {
	if tb.pkAt != (Pos{}) {
		return errorAt(at, fmt.Sprintf("relation %s: a second PRIMARY KEY (the first is at %d:%d)", snippet(quoteIdent(tb.rel.Name)), tb.pkAt.Line, tb.pkAt.Col))
	}
	tb.pkAt = at
	return nil
}

// setKey makes names the primary key of the table; at is where the key is
// declared.
func (tb *sqlTable) setKey(names []string, ats []Pos, at Pos) error {
	if err := tb.keyAt(at); err != nil {
		return err
	}
	for i, n := range names {
		a := tb.attr(n)
		if a == nil {
			return errorAt(ats[i], fmt.Sprintf("relation %s has no column %s for its PRIMARY KEY", snippet(quoteIdent(tb.rel.Name)), snippet(quoteIdent(n))))
		}
		a.Key = true
	}
	return nil
}

// attr returns the column named name (case-insensitively), or nil.
func (tb *sqlTable) attr(name string) *AttrDef {
	for i := range tb.rel.Attrs {
		if strings.EqualFold(tb.rel.Attrs[i].Name, name) {
			return &tb.rel.Attrs[i]
		}
	}
	return nil
}

// applyFKs makes the columns of FOREIGN KEY table constraints reference.
func (tb *sqlTable) applyFKs() error {
	for _, fk := range tb.fks {
		a := tb.attr(fk.attr)
		switch {
		case a == nil:
			return errorAt(fk.at, fmt.Sprintf("relation %s has no column %s for its FOREIGN KEY", snippet(quoteIdent(tb.rel.Name)), snippet(quoteIdent(fk.attr))))
		case a.References != "":
			return errorAt(fk.at, fmt.Sprintf("relation %s: column %s already REFERENCES %s", snippet(quoteIdent(tb.rel.Name)), snippet(quoteIdent(a.Name)), snippet(quoteIdent(a.References))))
		}
		a.References, a.RefAttr, a.Reverse = fk.refs, fk.refAttr, fk.revers
	}
	return nil
}

// annotate applies the annotation comment trailing token t, if it is one:
// ROWS to the table; SIZE, CARDINALITY and REVERSE to the column or
// foreign-key constraint of the comment's line.
func (tb *sqlTable) annotate(t token) error {
	anns, err := parseAnnotation(t.trail, t.trailAt)
	if err != nil || anns == nil {
		return err
	}
	line := t.trailAt.Line
	target, several := -1, false
	for i, l := range tb.lines {
		if l.first <= line && line <= l.last {
			several = target >= 0
			target = i
		}
	}
	for _, a := range anns {
		if several && a.word != "ROWS" {
			return errorAt(a.at, a.word+" annotates a column, and this line holds several columns or constraints: put each on a line of its own to annotate it")
		}
		if a.word == "ROWS" {
			if tb.rowsAt != (Pos{}) {
				return errorAt(a.at, fmt.Sprintf("relation %s: ROWS is annotated twice (first at %d:%d)", snippet(quoteIdent(tb.rel.Name)), tb.rowsAt.Line, tb.rowsAt.Col))
			}
			tb.rel.Rows, tb.rowsAt = a.n, a.at
			continue
		}
		if target < 0 {
			return errorAt(a.at, fmt.Sprintf("%s annotates a column: put it at the end of the column's line (this line holds no column of %s)", a.word, snippet(quoteIdent(tb.rel.Name))))
		}
		l := tb.lines[target]
		if l.attr < 0 {
			if a.word != "REVERSE" {
				return errorAt(a.at, fmt.Sprintf("%s annotates a column, not a FOREIGN KEY constraint: put it on the column's line", a.word))
			}
			fk := &tb.fks[l.fk]
			if err := setReverse(tb.attr(fk.attr), a); err != nil {
				return err
			}
			continue
		}
		attr := &tb.rel.Attrs[l.attr]
		switch a.word {
		case "SIZE":
			if attr.Size != 0 {
				return errorAt(a.at, fmt.Sprintf("column %s: SIZE is annotated twice", snippet(quoteIdent(attr.Name))))
			}
			attr.Size = a.n
		case "CARDINALITY":
			if attr.Cardinality != 0 {
				return errorAt(a.at, fmt.Sprintf("column %s: CARDINALITY is annotated twice", snippet(quoteIdent(attr.Name))))
			}
			attr.Cardinality = a.n
		case "REVERSE":
			if err := setReverse(attr, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// setReverse names the reverse relationship of foreign key attr.
func setReverse(attr *AttrDef, a annotation) error {
	if attr.Reverse != "" && attr.Reverse != a.name {
		return errorAt(a.at, fmt.Sprintf("column %s: its reverse relationship is named twice (%s and %s)", snippet(quoteIdent(attr.Name)), snippet(quoteIdent(attr.Reverse)), snippet(quoteIdent(a.name))))
	}
	attr.Reverse = a.name
	return nil
}

// annotation is one `WORD value` of an annotation comment.
type annotation struct {
	word string // ROWS, SIZE, CARDINALITY or REVERSE
	n    int64  // ROWS, SIZE, CARDINALITY
	name string // REVERSE
	at   Pos
}

// annotationWords are the words an annotation comment is made of.
var annotationWords = []string{"ROWS", "SIZE", "CARDINALITY", "REVERSE"}

// parseAnnotation reads the text of a `--` comment (trimmed; it starts at
// at) as annotations: `WORD value`, separated by spaces or commas, where
// WORD is ROWS, SIZE or CARDINALITY with a positive integer, or REVERSE with
// a name, and may be followed by ':' or '=' (`-- reverse: items_sold`,
// `-- SIZE 16 CARDINALITY 50`). A comment is an annotation when its first
// word is one of those written in upper case, or followed by ':' or '=';
// any other comment is prose, and parseAnnotation returns nil. Once a
// comment is an annotation, all of it must be: errors name the position in
// the comment.
func parseAnnotation(text string, at Pos) ([]annotation, error) {
	i := 0
	posAt := func(off int) Pos { return Pos{File: at.File, Line: at.Line, Col: at.Col + off} }
	skip := func(seps string) {
		for i < len(text) && strings.IndexByte(seps, text[i]) >= 0 {
			i++
		}
	}
	word := func() (string, int) {
		start := i
		for i < len(text) && strings.IndexByte(" \t,:=", text[i]) < 0 {
			i++
		}
		return text[start:i], start
	}
	var out []annotation
	for {
		skip(" \t,")
		if i == len(text) {
			return out, nil
		}
		w, off := word()
		upper := strings.ToUpper(w)
		known := false
		for _, a := range annotationWords {
			known = known || a == upper
		}
		skip(" \t")
		marked := i < len(text) && (text[i] == ':' || text[i] == '=')
		if len(out) == 0 && (!known || w != upper && !marked) {
			return nil, nil // prose
		}
		if !known {
			return nil, errorAt(posAt(off), fmt.Sprintf("unknown annotation '%s' (annotations: ROWS n, SIZE n, CARDINALITY n, REVERSE name)", snippet(w)))
		}
		if marked {
			i++
			skip(" \t")
		}
		v, voff := word()
		a := annotation{word: upper, at: posAt(off)}
		if upper == "REVERSE" {
			if !isBareIdent(v) {
				return nil, errorAt(posAt(voff), fmt.Sprintf("expected the name of the reverse relationship after REVERSE, found '%s'", snippet(v)))
			}
			a.name = v
		} else {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return nil, errorAt(posAt(voff), fmt.Sprintf("expected a positive integer after %s, found '%s'", upper, snippet(v)))
			}
			a.n = n
		}
		out = append(out, a)
	}
}

// alter parses ALTER TABLE [IF EXISTS] [ONLY] t ADD [CONSTRAINT c] PRIMARY
// KEY (…) | FOREIGN KEY (a) REFERENCES …. Other ALTER statements are
// errors or, in a model file, skipped (nil, with p.skipKind set).
func (p *parser) alter() (Statement, error) {
	start := p.i
	at := p.next().pos
	skip := func(kind string) (Statement, error) {
		if p.model {
			p.skipKind = kind
			return nil, nil
		}
		return nil, errorAt(at, kind+" is not supported (kvschema reads ALTER TABLE … ADD PRIMARY KEY and ADD FOREIGN KEY; in a model file an SQL dump's other statements are skipped)")
	}
	if !p.acceptWord("TABLE") {
		return skip(p.statementKind(start))
	}
	if p.acceptWord("IF") {
		if err := p.expectWord("EXISTS", "after IF"); err != nil {
			return nil, err
		}
	}
	p.acceptWord("ONLY")
	name, nameAt, err := p.tableName("relation name")
	if err != nil {
		return nil, err
	}
	word := func(n int) string {
		if t := p.peekN(n); t.kind == tokIdent || t.kind == tokKeyword {
			return strings.ToUpper(t.str)
		}
		return ""
	}
	actionAt := p.peek().pos
	changes := func(action string) (Statement, error) {
		return nil, errorAt(actionAt, fmt.Sprintf("ALTER TABLE %s %s … changes the table, which kvschema does not follow: write the table as it ends up in its CREATE TABLE", snippet(quoteIdent(name)), action))
	}
	if !p.acceptWord("ADD") {
		// Skipped: what does not change the model.
		switch w := word(0); w {
		case "OWNER", "ENABLE", "DISABLE", "CLUSTER", "REPLICA", "SET", "RESET", "VALIDATE":
			return skip("ALTER TABLE … " + w)
		case "ALTER":
			// ALTER [COLUMN] c SET DEFAULT …, DROP NOT NULL, ADD GENERATED
			// …: only a new type changes the model.
			n := 2
			if word(1) == "COLUMN" {
				n = 3
			}
			if a := word(n); a == "TYPE" || a == "SET" && word(n+1) == "DATA" {
				return changes("ALTER COLUMN " + snippet(p.peekN(n-1).raw) + " TYPE")
			}
			return skip("ALTER TABLE … ALTER COLUMN")
		}
		return changes(snippet(p.peek().raw))
	}
	if p.acceptWord("CONSTRAINT") {
		if _, _, err := p.ident("constraint name"); err != nil {
			return nil, err
		}
	}
	s := &AlterTable{At: at, Relation: name, RelationAt: nameAt}
	switch {
	case p.acceptWord("PRIMARY"):
		if err := p.expectWord("KEY", "after PRIMARY"); err != nil {
			return nil, err
		}
		names, ats, err := p.nameList("primary key")
		if err != nil {
			return nil, err
		}
		if err := p.indexUsing(); err != nil {
			return nil, err
		}
		s.PrimaryKey, s.AttrAt = names, ats[0]
	case p.acceptWord("FOREIGN"):
		fk, err := p.foreignKey()
		if err != nil {
			return nil, err
		}
		s.ForeignKey, s.AttrAt, s.References, s.RefAttr, s.Reverse = fk.attr, fk.at, fk.refs, fk.refAttr, fk.revers
	case p.isWord("UNIQUE") || p.isWord("CHECK") || p.isWord("EXCLUDE"):
		return skip("ALTER TABLE … ADD " + word(0))
	default:
		return changes("ADD " + snippet(p.peek().raw))
	}
	if p.isPunct(",") {
		return nil, errorAt(p.peek().pos, "ALTER TABLE adds one key or foreign key per statement here: split the statement")
	}
	for _, t := range p.statementTrails(start) {
		anns, err := parseAnnotation(t.trail, t.trailAt)
		if err != nil {
			return nil, err
		}
		for _, a := range anns {
			if a.word != "REVERSE" || s.ForeignKey == "" {
				return nil, errorAt(a.at, a.word+" does not annotate ALTER TABLE (REVERSE names a foreign key's reverse relationship there; statistics go on the lines of CREATE TABLE)")
			}
			attr := &AttrDef{Name: s.ForeignKey, Reverse: s.Reverse}
			if err := setReverse(attr, a); err != nil {
				return nil, err
			}
			s.Reverse = attr.Reverse
		}
	}
	return s, nil
}
