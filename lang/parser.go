package lang

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/types"
)

// maxDepth bounds the nesting of expressions and modifiers. Parentheses, NOT,
// modifier bodies and each link of an AND/OR chain count, so the depth of any
// tree the parser returns is bounded too, and neither the parser nor the
// later passes that walk the tree recursively can exhaust the stack.
const maxDepth = 1000

// ParseScript parses a script: statements separated by ';', where the last
// ';' is optional and empty statements are skipped. file is used only in
// positions. The error, if any, is an *Error.
func ParseScript(file string, src []byte) ([]Statement, error) {
	p := newParser(file, string(src))
	var ss []Statement
	for {
		if p.acceptPunct(";") {
			continue
		}
		if p.peek().kind == tokEOF {
			return ss, nil
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
		if p.peek().kind != tokEOF && !p.isPunct(";") {
			return nil, p.unexpected("';' or end of input after statement")
		}
	}
}

// ParseStatement parses exactly one statement, optionally followed by ';'.
// The error, if any, is an *Error.
func ParseStatement(file string, src string) (Statement, error) {
	return ParseStatementAt(Pos{File: file, Line: 1, Col: 1}, src)
}

// ParseStatementAt is ParseStatement for a statement whose text starts at
// position at of its file (a line of a query log, after its count):
// positions in the statement and its errors count from there.
func ParseStatementAt(at Pos, src string) (Statement, error) {
	p := newParser(at.File, src)
	p.lx.line, p.lx.lineStart = at.Line, 1-at.Col
	s, err := p.statement()
	if err != nil {
		return nil, err
	}
	p.acceptPunct(";")
	if p.peek().kind != tokEOF {
		return nil, p.unexpected("end of input after statement")
	}
	return s, nil
}

// ParseExpr parses one expression as it would appear after WHERE. Its
// parameters are numbered from 0. The error, if any, is an *Error.
func ParseExpr(file, src string) (Expr, error) {
	p := newParser(file, src)
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.unexpected("end of input after expression")
	}
	return x, nil
}

// parser is a recursive-descent parser over the tokens of a lexer, which
// it asks for one at a time as it looks at them (never more than two ahead
// of the current one). Every parse method returns at the first error;
// nothing is recovered.
type parser struct {
	lx     lexer
	toks   []token        // tokens lexed so far (a Reader drops consumed ones); a tokEOF or tokError token ends them
	i      int            // index of the current token
	nparam int            // number of '?' (or distinct :names) seen in the current statement
	style  byte           // the statement's parameter style, set by its first: '?', '$' or ':'
	names  map[string]int // the current statement's :names, by index
	depth  int            // current nesting, see maxDepth
	// maxRows, when > 0, makes insert stop after that many rows of a VALUES
	// list, with moreRows set if a ',' announced more (see Reader).
	maxRows  int
	moreRows bool
	// model is set by ParseModel: CREATE and ALTER statements the model
	// does not read are skipped (the parse returns nil, with skipKind
	// naming them) rather than errors.
	model    bool
	skipKind string
	// notes are what a model statement's parse read and left to the
	// advisor (CQL's partition keys, STATIC, table options): ParseModel
	// returns them with its own.
	notes []Note
	// aggs: aggregate calls are operands (a HAVING clause).
	aggs bool
}

func newParser(file, src string) *parser {
	// A typical token takes about 3 bytes: one allocation for the tokens
	// of a statement, a few for a script.
	return &parser{lx: newLexer(file, src), toks: make([]token, 0, min(len(src)/3+2, 1024))}
}

// lexTo lexes tokens until index i exists or the final token is in.
func (p *parser) lexTo(i int) {
	for len(p.toks) <= i {
		if n := len(p.toks); n > 0 && (p.toks[n-1].kind == tokEOF || p.toks[n-1].kind == tokError) {
			return
		}
		t := p.lx.scan()
		if p.lx.trail != "" && len(p.toks) > 0 {
			p.toks[len(p.toks)-1].trail = p.lx.trail
			p.toks[len(p.toks)-1].trailAt = p.lx.trailAt
		}
		p.toks = append(p.toks, t)
	}
}

// peek returns the current token.
func (p *parser) peek() *token {
	if p.i == len(p.toks) {
		p.lexTo(p.i)
	}
	return &p.toks[p.i]
}

// peekN returns the token n places after the current one (the final token if
// that is past the end).
func (p *parser) peekN(n int) *token {
	p.lexTo(p.i + n)
	return &p.toks[min(p.i+n, len(p.toks)-1)]
}

// next consumes and returns the current token. It never moves past the final
// tokEOF or tokError token, and does not lex the token after it: that waits
// until it is looked at (so a Reader returns a statement as soon as its ';'
// is read).
func (p *parser) next() *token {
	t := p.peek()
	if t.kind != tokEOF && t.kind != tokError {
		p.i++
	}
	return t
}

// drop forgets the tokens before the current one.
func (p *parser) drop() {
	n := copy(p.toks, p.toks[p.i:])
	clear(p.toks[n:])
	p.toks, p.i = p.toks[:n], 0
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.str == s
}

func (p *parser) acceptPunct(s string) bool {
	if p.isPunct(s) {
		p.next()
		return true
	}
	return false
}

// expectPunct consumes punctuation s; context completes "expected 's' …".
func (p *parser) expectPunct(s, context string) error {
	if p.acceptPunct(s) {
		return nil
	}
	return p.unexpected("'" + s + "' " + context)
}

func (p *parser) isKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tokKeyword && t.str == kw
}

func (p *parser) acceptKeyword(kw string) bool {
	if p.isKeyword(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectKeyword(kw, context string) error {
	if p.acceptKeyword(kw) {
		return nil
	}
	return p.unexpected(kw + " " + context)
}

// isWord reports whether the current token is the contextual keyword w: a
// bare identifier spelled w in any case.
func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tokIdent && strings.EqualFold(t.str, w)
}

func (p *parser) acceptWord(w string) bool {
	if p.isWord(w) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectWord(w, context string) error {
	if p.acceptWord(w) {
		return nil
	}
	return p.unexpected(w + " " + context)
}

// unexpected reports that the current token is not what was wanted. If the
// current token is a lexical error, that error is reported instead: it is
// the real problem.
func (p *parser) unexpected(want string) error {
	t := p.peek()
	if t.kind == tokError {
		return t.err
	}
	return errorAt(t.pos, "expected "+want+", found "+t.describe())
}

// expectedName is unexpected for places where a name is wanted, with a hint
// when the user wrote a reserved word as a name.
func (p *parser) expectedName(want string) error {
	t := p.peek()
	if t.kind != tokKeyword {
		return p.unexpected(want)
	}
	return errorAt(t.pos, fmt.Sprintf("expected %s, found reserved word '%s' (write \"%s\" to use it as a name)", want, t.raw, t.raw))
}

// ident consumes a bare or quoted identifier; what names it for errors.
func (p *parser) ident(what string) (string, Pos, error) {
	t := p.peek()
	if t.kind != tokIdent && t.kind != tokQuoted {
		return "", Pos{}, p.expectedName(what)
	}
	p.next()
	return t.str, t.pos, nil
}

// CheckDefName is the rule for the names definitions give: a relation,
// attribute, relationship (foreign key or reverse), column family or index
// name cannot contain '.'. A '.' separates the steps of a path —
// items.seller.rating is the rating of the relation items.seller references
// — and paths are how these names are combined everywhere: in statements and
// column families, in the qualifiers of stored key-values, in the column
// headers of data files. A dotted name would give one path two meanings.
// what says which kind of name it is ("attribute name"); the error, at pos,
// names the identifier and says why. The parser applies the rule to every
// definition it reads; callers building definitions by hand can apply it too.
func CheckDefName(pos Pos, what, name string) *Error {
	if !strings.Contains(name, ".") {
		return nil
	}
	return errorAt(pos, fmt.Sprintf("%s %s cannot contain '.': a '.' separates the steps of a path (relation.reference.attribute), so the name would be ambiguous; rename it (e.g. %s)",
		what, snippet(quoteIdent(name)), snippet(quoteIdent(strings.ReplaceAll(name, ".", "_")))))
}

// defName consumes an identifier that a definition gives to, or requires of,
// a relation, attribute, relationship, column family or index, and checks it
// with CheckDefName.
func (p *parser) defName(what string) (string, Pos, error) {
	name, at, err := p.ident(what)
	if err != nil {
		return "", Pos{}, err
	}
	if err := CheckDefName(at, what, name); err != nil {
		return "", Pos{}, err
	}
	return name, at, nil
}

// enter descends one nesting level, failing past maxDepth at the current
// token. The caller decrements p.depth when it is done (on success; an error
// ends the parse).
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errorAt(p.peek().pos, fmt.Sprintf("expression nested too deeply (more than %d levels)", maxDepth))
	}
	return nil
}

// statement parses one statement; its parameters are numbered from 0.
func (p *parser) statement() (Statement, error) {
	p.nparam, p.style, p.names = 0, 0, nil
	t := p.peek()
	switch {
	case p.isKeyword("DEFINE"):
		return p.define()
	case p.isKeyword("EXPLAIN"):
		p.next()
		var s Statement
		var err error
		switch {
		case p.isDML():
			s, err = p.dml()
		case p.isWord("CONNECT") || p.isWord("DISCONNECT"):
			s, err = p.connect()
		default:
			return nil, p.unexpected("SELECT, INSERT, UPDATE, DELETE, CONNECT or DISCONNECT after EXPLAIN")
		}
		if err != nil {
			return nil, err
		}
		return &Explain{At: t.pos, Stmt: s}, nil
	case p.isDML():
		return p.dml()
	case p.isWord("CONNECT") || p.isWord("DISCONNECT"):
		return p.connect()
	case p.isWord("CREATE"):
		return p.create()
	case p.isWord("ALTER"):
		return p.alter()
	case p.isWord("DROP"):
		return p.dropSchema()
	case p.isWord("BEGIN") || p.isWord("COMMIT") || p.isWord("ROLLBACK"):
		p.next()
		op := map[string]TxOp{"BEGIN": Begin, "COMMIT": Commit, "ROLLBACK": Rollback}[strings.ToUpper(t.str)]
		if !p.acceptWord("TRANSACTION") {
			p.acceptWord("WORK")
		}
		return &Transaction{At: t.pos, Op: op}, nil
	}
	return nil, p.unexpected("statement (SELECT, INSERT, UPDATE, DELETE, CONNECT, DISCONNECT, EXPLAIN, DEFINE, DROP SCHEMA, CREATE TABLE, ALTER TABLE, BEGIN, COMMIT or ROLLBACK)")
}

// dropSchema parses DROP SCHEMA name; the caller checked the word DROP.
func (p *parser) dropSchema() (Statement, error) {
	at := p.next().pos
	if err := p.expectWord("SCHEMA", "after DROP (DROP SCHEMA name removes a layout)"); err != nil {
		return nil, err
	}
	name, _, err := p.ident("schema name")
	if err != nil {
		return nil, err
	}
	return &DropSchema{At: at, Name: name}, nil
}

func (p *parser) isDML() bool {
	return p.isKeyword("SELECT") || p.isKeyword("INSERT") || p.isKeyword("UPDATE") || p.isKeyword("DELETE")
}

// dml parses a SELECT, INSERT, UPDATE or DELETE; the caller checked isDML.
func (p *parser) dml() (Statement, error) {
	switch p.peek().str {
	case "SELECT":
		return p.selectStmt()
	case "INSERT":
		return p.insert()
	case "UPDATE":
		return p.update()
	}
	return p.delete()
}

// define parses DEFINE RELATION and DEFINE [PRIMARY] SCHEMA.
func (p *parser) define() (Statement, error) {
	at := p.next().pos
	switch {
	case p.acceptWord("RELATION"):
		return p.defineRelation(at)
	case p.acceptWord("PRIMARY"):
		if err := p.expectWord("SCHEMA", "after DEFINE PRIMARY"); err != nil {
			return nil, err
		}
		return p.defineSchema(at, true)
	case p.acceptWord("SCHEMA"):
		return p.defineSchema(at, false)
	case p.acceptWord("WORKLOAD"):
		return p.defineWorkload(at)
	case p.acceptWord("COLUMN"):
		if err := p.expectWord("FAMILY", "after DEFINE COLUMN"); err != nil {
			return nil, err
		}
		return p.defineColumnFamily(at)
	case p.acceptWord("SECONDARY"):
		if err := p.expectWord("INDEX", "after DEFINE SECONDARY"); err != nil {
			return nil, err
		}
		return p.defineIndex(at)
	}
	return nil, p.unexpected("RELATION, SCHEMA, PRIMARY SCHEMA, WORKLOAD, COLUMN FAMILY or SECONDARY INDEX after DEFINE")
}

// validTypes lists the type names for "unknown type" errors.
var validTypes = func() string {
	names := make([]string, len(types.AllTypes))
	for i, t := range types.AllTypes {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}()

func (p *parser) defineRelation(at Pos) (Statement, error) {
	name, _, err := p.defName("relation name")
	if err != nil {
		return nil, err
	}
	r := &DefineRelation{At: at, Name: name}
	if p.acceptWord("ROWS") {
		if r.Rows, err = p.count("after ROWS"); err != nil {
			return nil, err
		}
	}
	if err := p.expectPunct("{", "after relation name"); err != nil {
		return nil, err
	}
	for {
		a, err := p.attrDef()
		if err != nil {
			return nil, err
		}
		r.Attrs = append(r.Attrs, a)
		comma := p.acceptPunct(",")
		if p.acceptPunct("}") {
			return r, nil
		}
		if !comma {
			return nil, p.unexpected("',' or '}' after attribute definition")
		}
	}
}

func (p *parser) attrDef() (AttrDef, error) {
	name, at, err := p.defName("attribute name")
	if err != nil {
		return AttrDef{}, err
	}
	typ, err := p.attrType("type of attribute " + snippet(quoteIdent(name)))
	if err != nil {
		return AttrDef{}, err
	}
	a := AttrDef{At: at, Name: name, Type: typ}
	for {
		var err error
		switch {
		case !a.Key && p.acceptWord("KEY"):
			a.Key = true
		case !a.Key && p.isWord("PARTITION"):
			p.next()
			if err = p.expectWord("KEY", "after PARTITION"); err == nil {
				a.Key, a.Partition = true, true
			}
		case !a.Static && p.acceptWord("STATIC"):
			a.Static = true
		case a.Size == 0 && p.acceptWord("SIZE"):
			a.Size, err = p.count("after SIZE")
		case a.Cardinality == 0 && p.acceptWord("CARDINALITY"):
			a.Cardinality, err = p.count("after CARDINALITY")
		case a.References == "" && p.acceptWord("REFERENCES"):
			a.References, a.RefAttr, a.Reverse, err = p.references(false)
		default:
			return a, nil
		}
		if err != nil {
			return AttrDef{}, err
		}
	}
}

// attrType parses an attribute's type: a scalar type name, or a frozen
// collection of scalars, FROZEN<SET<T>>, FROZEN<LIST<T>> or
// FROZEN<MAP<K, V>>. want says what is expected, for errors.
func (p *parser) attrType(want string) (types.Type, error) {
	t := p.peek()
	if t.kind == tokIdent && strings.EqualFold(t.str, "FROZEN") && p.peekN(1).kind == tokPunct && p.peekN(1).str == "<" {
		p.next()
		p.next()
		c, err := p.collectionType()
		if err != nil {
			return types.Invalid, err
		}
		if err := p.expectPunct(">", "to close FROZEN<"); err != nil {
			return types.Invalid, err
		}
		return c.Frozen(), nil
	}
	if p.isCollectionType() {
		return p.collectionType() // stored one cell per element
	}
	if t.kind != tokIdent {
		return types.Invalid, p.unexpected(want)
	}
	typ, ok := types.ParseType(t.str)
	if !ok {
		return types.Invalid, errorAt(t.pos, fmt.Sprintf("unknown type '%s' (valid types: %s, and SET<T>, LIST<T>, MAP<K, V> of them, FROZEN or not)", snippet(t.str), validTypes))
	}
	p.next()
	return typ, nil
}

// isCollectionType reports whether SET<, LIST< or MAP< starts here.
func (p *parser) isCollectionType() bool {
	t, n := p.peek(), p.peekN(1)
	if n.kind != tokPunct || n.str != "<" {
		return false
	}
	switch strings.ToUpper(t.str) {
	case "SET":
		return t.kind == tokKeyword || t.kind == tokIdent
	case "LIST", "MAP":
		return t.kind == tokIdent
	}
	return false
}

// collectionType parses SET<T>, LIST<T> or MAP<K, V> of scalar types.
func (p *parser) collectionType() (types.Type, error) {
	if !p.isCollectionType() {
		return types.Invalid, p.unexpected("SET<T>, LIST<T> or MAP<K, V> after FROZEN<")
	}
	kind := strings.ToUpper(p.next().str)
	p.next() // '<'
	scalar := func() (types.Type, error) {
		t := p.peek()
		if p.isCollectionType() || t.kind == tokIdent && strings.EqualFold(t.str, "FROZEN") {
			return types.Invalid, errorAt(t.pos, "a collection's elements are scalars: kvschema stores no collection in a collection")
		}
		if t.kind != tokIdent {
			return types.Invalid, p.unexpected("element type in " + kind + "<…>")
		}
		typ, ok := types.ParseType(t.str)
		if !ok {
			return types.Invalid, errorAt(t.pos, fmt.Sprintf("unknown type '%s' (valid element types: %s)", snippet(t.str), validTypes))
		}
		p.next()
		return typ, nil
	}
	elem, err := scalar()
	if err != nil {
		return types.Invalid, err
	}
	var c types.Type
	switch kind {
	case "SET":
		c = types.SetOf(elem)
	case "LIST":
		c = types.ListOf(elem)
	default:
		if err := p.expectPunct(",", "after the key type of MAP<K, V>"); err != nil {
			return types.Invalid, err
		}
		val, err := scalar()
		if err != nil {
			return types.Invalid, err
		}
		c = types.MapOf(elem, val)
	}
	if err := p.expectPunct(">", "to close "+kind+"<"); err != nil {
		return types.Invalid, err
	}
	return c, nil
}

// references parses what follows REFERENCES: `rel [(attr)] [REVERSE name]`.
// With sql (CREATE TABLE, ALTER TABLE), rel may be schema-qualified
// (public.users: the schema is dropped), and SQL's MATCH, ON DELETE, ON
// UPDATE and DEFERRABLE clauses are accepted and ignored.
func (p *parser) references(sql bool) (rel, attr, reverse string, err error) {
	if sql {
		rel, _, err = p.tableName("referenced relation")
	} else {
		rel, _, err = p.defName("referenced relation")
	}
	if err != nil {
		return "", "", "", err
	}
	if p.acceptPunct("(") {
		if attr, _, err = p.defName("referenced attribute"); err != nil {
			return "", "", "", err
		}
		if p.isPunct(",") {
			return "", "", "", errorAt(p.peek().pos, "a foreign key references one attribute (composite foreign keys are not supported: kvschema's relationships reference a single-attribute key)")
		}
		if err := p.expectPunct(")", "after the referenced attribute"); err != nil {
			return "", "", "", err
		}
	}
	if sql {
		if err := p.refActions(); err != nil {
			return "", "", "", err
		}
	}
	if p.acceptWord("REVERSE") {
		if reverse, _, err = p.defName("name of the reverse relationship"); err != nil {
			return "", "", "", err
		}
	}
	return rel, attr, reverse, nil
}

// count parses a positive integer (ROWS, SIZE, CARDINALITY).
func (p *parser) count(context string) (int64, error) {
	t := p.peek()
	if t.kind != tokInt || t.val.(int64) <= 0 {
		return 0, p.unexpected("positive integer " + context)
	}
	p.next()
	return t.val.(int64), nil
}

// defineColumnFamily parses the rest of DEFINE COLUMN FAMILY.
func (p *parser) defineColumnFamily(at Pos) (Statement, error) {
	// Omitted lists are empty ones, as the printer writes them.
	d := &DefineColumnFamily{At: at, Clustering: []ColumnRef{}, Values: []ColumnRef{}}
	var err error
	if d.Name, _, err = p.defName("column family name"); err != nil {
		return nil, err
	}
	if err := p.expectWord("FOR", "after column family name"); err != nil {
		return nil, err
	}
	if d.Relation, _, err = p.defName("relation name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("{", "after FOR relation"); err != nil {
		return nil, err
	}
	if err := p.expectWord("PARTITION", "KEY (…) to start the column family"); err != nil {
		return nil, err
	}
	if d.Partition, err = p.keyList("PARTITION", false); err != nil {
		return nil, err
	}
	if len(d.Partition) == 0 {
		return nil, errorAt(at, "column family "+d.Name+" needs at least one partition key attribute")
	}
	if p.acceptPunct(",") && p.acceptWord("CLUSTERING") {
		if d.Clustering, err = p.keyList("CLUSTERING", false); err != nil {
			return nil, err
		}
		p.acceptPunct(",")
	}
	if p.acceptWord("STATIC") {
		if d.Static, err = p.keyList("STATIC", true); err != nil {
			return nil, err
		}
		p.acceptPunct(",")
	}
	if p.acceptKeyword("VALUES") {
		if d.Values, err = p.keyList("VALUES", true); err != nil {
			return nil, err
		}
		p.acceptPunct(",")
	}
	for p.isWord("SALT_BUCKETS") || p.isWord("SPLIT") || p.isWord("PARTITION_BUCKETS") {
		t := p.next()
		word := strings.ToUpper(t.str)
		if d.SaltBuckets > 0 && word == "SALT_BUCKETS" || d.SplitOn != nil && word == "SPLIT" || d.PartitionBuckets > 0 && word == "PARTITION_BUCKETS" {
			return nil, errorAt(t.pos, fmt.Sprintf("column family %s: duplicate %s", snippet(quoteIdent(d.Name)), word))
		}
		if word == "SPLIT" {
			if d.SplitOn, err = p.splitPoints(d.Name, len(d.Partition)); err != nil {
				return nil, err
			}
		} else {
			if err := p.expectPunct("=", "after "+word); err != nil {
				return nil, err
			}
			n, err := p.count("after " + word + " =")
			if err != nil {
				return nil, err
			}
			if n > 256 {
				return nil, errorAt(t.pos, "column family "+d.Name+": "+word+" must be at most 256 (one bucket byte)")
			}
			if word == "SALT_BUCKETS" {
				d.SaltBuckets = int(n)
			} else {
				d.PartitionBuckets = int(n)
			}
		}
		if d.SaltBuckets > 0 && d.SplitOn != nil {
			// PHOENIX-6587: the bucket byte already splits the table.
			return nil, errorAt(t.pos, fmt.Sprintf("column family %s: SPLIT ON and SALT_BUCKETS exclude each other (a salted table is already split at every bucket)", snippet(quoteIdent(d.Name))))
		}
		if d.PartitionBuckets > 0 {
			if msg := bucketsConflict(d); msg != "" {
				return nil, errorAt(t.pos, fmt.Sprintf("column family %s: %s", snippet(quoteIdent(d.Name)), msg))
			}
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct("}", "to end the column family"); err != nil {
		return nil, err
	}
	return d, nil
}

// bucketsConflict says why d cannot have PARTITION_BUCKETS, or "".
func bucketsConflict(d *DefineColumnFamily) string {
	switch {
	case d.PartitionBuckets < 2:
		return "PARTITION_BUCKETS must be at least 2"
	case len(d.Clustering) == 0:
		return "PARTITION_BUCKETS needs a clustering key (the bucket is hashed from it; a partition of one row has nothing to spread)"
	case len(d.Static) > 0:
		return "PARTITION_BUCKETS and STATIC exclude each other (static columns are one value per partition)"
	case d.SaltBuckets > 0:
		return "PARTITION_BUCKETS and SALT_BUCKETS exclude each other (both lead the row key with a bucket byte)"
	case d.SplitOn != nil:
		return "PARTITION_BUCKETS and SPLIT ON exclude each other (the bucket byte already splits the table)"
	}
	return ""
}

// splitPoints parses `ON (point, …)` after SPLIT in column family cf, where a
// point is a constant or a parenthesized list of at most nkeys constants.
func (p *parser) splitPoints(cf string, nkeys int) ([]SplitPoint, error) {
	if err := p.expectWord("ON", "after SPLIT"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "after SPLIT ON"); err != nil {
		return nil, err
	}
	var out []SplitPoint
	for {
		sp := SplitPoint{At: p.peek().pos}
		if p.acceptPunct("(") {
			for {
				v, err := p.splitValue()
				if err != nil {
					return nil, err
				}
				sp.Values = append(sp.Values, v)
				if !p.acceptPunct(",") {
					break
				}
			}
			if err := p.expectPunct(")", "or ',' in split point"); err != nil {
				return nil, err
			}
		} else {
			v, err := p.splitValue()
			if err != nil {
				return nil, err
			}
			sp.Values = []types.Value{v}
		}
		if len(sp.Values) > nkeys {
			return nil, errorAt(sp.At, fmt.Sprintf("column family %s: split point has %d values but the partition key only %d attribute(s)",
				snippet(quoteIdent(cf)), len(sp.Values), nkeys))
		}
		out = append(out, sp)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' after split point"); err != nil {
		return nil, err
	}
	return out, nil
}

// splitValue parses one constant of a SPLIT ON point.
func (p *parser) splitValue() (types.Value, error) {
	t := p.peek()
	lit, err := p.literal()
	if err != nil {
		return nil, err
	}
	if lit == nil {
		return nil, p.unexpected("constant (string, number, boolean, binary or timestamp literal) in SPLIT ON")
	}
	if lit.Value == nil {
		return nil, errorAt(t.pos, "SPLIT ON values cannot be NULL")
	}
	return lit.Value, nil
}

// keyList parses [KEY] ( a, b, … ) after PARTITION, CLUSTERING or VALUES.
func (p *parser) keyList(what string, values bool) ([]ColumnRef, error) {
	if !values {
		if err := p.expectWord("KEY", "after "+what); err != nil {
			return nil, err
		}
	}
	if err := p.expectPunct("(", "after "+what); err != nil {
		return nil, err
	}
	out := []ColumnRef{}
	if p.acceptPunct(")") {
		return out, nil
	}
	for {
		c, err := p.pathRef("attribute")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' in "+what+" list"); err != nil {
		return nil, err
	}
	return out, nil
}

// defineIndex parses the rest of DEFINE SECONDARY INDEX name ON family (attr).
func (p *parser) defineIndex(at Pos) (Statement, error) {
	d := &DefineIndex{At: at}
	var err error
	if d.Name, _, err = p.defName("index name"); err != nil {
		return nil, err
	}
	if err := p.expectWord("ON", "after index name"); err != nil {
		return nil, err
	}
	if d.Family, _, err = p.defName("column family name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "after column family name"); err != nil {
		return nil, err
	}
	if d.Column, err = p.pathRef("indexed attribute"); err != nil {
		return nil, err
	}
	if err := p.expectPunct(")", "after indexed attribute"); err != nil {
		return nil, err
	}
	return d, nil
}

// defineWorkload parses the rest of DEFINE WORKLOAD name MIXES (…) { GROUP … }.
func (p *parser) defineWorkload(at Pos) (Statement, error) {
	name, _, err := p.ident("workload name")
	if err != nil {
		return nil, err
	}
	w := &DefineWorkload{At: at, Name: name}
	if err := p.expectWord("MIXES", "after workload name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "after MIXES"); err != nil {
		return nil, err
	}
	for {
		m, _, err := p.ident("mix name")
		if err != nil {
			return nil, err
		}
		w.Mixes = append(w.Mixes, m)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' after mix name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("{", "after MIXES (…)"); err != nil {
		return nil, err
	}
	for !p.acceptPunct("}") {
		g, err := p.group()
		if err != nil {
			return nil, err
		}
		w.Groups = append(w.Groups, g)
	}
	return w, nil
}

// group parses GROUP name WEIGHTS (mix w, …) { stmt; [-- tag] … }.
func (p *parser) group() (Group, error) {
	t := p.peek()
	if err := p.expectWord("GROUP", "or '}' in workload"); err != nil {
		return Group{}, err
	}
	name, _, err := p.ident("group name")
	if err != nil {
		return Group{}, err
	}
	g := Group{At: t.pos, Name: name}
	if err := p.expectWord("WEIGHTS", "after group name"); err != nil {
		return Group{}, err
	}
	if err := p.expectPunct("(", "after WEIGHTS"); err != nil {
		return Group{}, err
	}
	for {
		mix, at, err := p.ident("mix name")
		if err != nil {
			return Group{}, err
		}
		wt := p.peek()
		var w float64
		switch wt.kind {
		case tokInt:
			w = float64(wt.val.(int64))
		case tokFloat:
			w = wt.val.(float64)
		default:
			return Group{}, p.unexpected("weight (a number) after mix " + snippet(quoteIdent(mix)))
		}
		if w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return Group{}, errorAt(wt.pos, "weight "+wt.raw+" must be a finite number ≥ 0")
		}
		p.next()
		g.Weights = append(g.Weights, MixWeight{At: at, Mix: mix, Weight: w})
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' after weight"); err != nil {
		return Group{}, err
	}
	if err := p.expectPunct("{", "after WEIGHTS (…)"); err != nil {
		return Group{}, err
	}
	for {
		if p.acceptPunct("}") {
			return g, nil
		}
		if !p.isDML() && !p.isWord("CONNECT") && !p.isWord("DISCONNECT") {
			return Group{}, p.unexpected("statement (SELECT, INSERT, UPDATE, DELETE, CONNECT or DISCONNECT) or '}' in group " + snippet(quoteIdent(name)))
		}
		st, err := p.statement()
		if err != nil {
			return Group{}, err
		}
		// Tokens are lexed as they are looked at, and lexing a token
		// attaches the comment before it to the token before: peek first.
		p.peek()
		last := &p.toks[max(p.i-1, 0)]
		tag := last.trail
		if p.acceptPunct(";") {
			p.peek()
			if t := p.toks[p.i-1].trail; tag == "" {
				tag = t
			}
		} else if !p.isPunct("}") {
			return Group{}, p.unexpected("';' or '}' after statement")
		}
		g.Statements = append(g.Statements, Tagged{Tag: tag, Stmt: st})
	}
}

// connect parses CONNECT r(key) TO fk(value) and DISCONNECT r(key) FROM fk(value).
func (p *parser) connect() (Statement, error) {
	t := p.next()
	s := &Connect{At: t.pos, Disconnect: strings.EqualFold(t.str, "DISCONNECT")}
	var err error
	if s.Relation, s.RelationAt, err = p.ident("relation name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "and the tuple's key after relation name"); err != nil {
		return nil, err
	}
	if s.Key, err = p.value(); err != nil {
		return nil, err
	}
	if err := p.expectPunct(")", "after key"); err != nil {
		return nil, err
	}
	if s.Disconnect {
		err = p.expectKeyword("FROM", "after DISCONNECT r(key)")
	} else {
		err = p.expectWord("TO", "after CONNECT r(key)")
	}
	if err != nil {
		return nil, err
	}
	if s.To, err = p.connection(); err != nil {
		return nil, err
	}
	return s, nil
}

// connection parses fk(value).
func (p *parser) connection() (Connection, error) {
	fk, at, err := p.ident("foreign key name")
	if err != nil {
		return Connection{}, err
	}
	if err := p.expectPunct("(", "after foreign key name"); err != nil {
		return Connection{}, err
	}
	v, err := p.value()
	if err != nil {
		return Connection{}, err
	}
	if err := p.expectPunct(")", "after value"); err != nil {
		return Connection{}, err
	}
	return Connection{At: at, FK: fk, Value: v}, nil
}

// columnRef parses name or q1.q2.name; with star, `q.*` is accepted too.
func (p *parser) columnRef(what string, star bool) (ColumnRef, error) {
	return p.columnRefSteps(what, star, nil)
}

// columnRefSteps is columnRef, also appending the position of each step to
// *steps if steps is not nil.
func (p *parser) columnRefSteps(what string, star bool, steps *[]Pos) (ColumnRef, error) {
	name, at, err := p.ident(what)
	if err != nil {
		return ColumnRef{}, err
	}
	c := ColumnRef{At: at, Name: name}
	if steps != nil {
		*steps = append(*steps, at)
	}
	for p.acceptPunct(".") {
		c.Qual = append(c.Qual, c.Name)
		if star && p.acceptPunct("*") {
			c.Name, c.Star = "", true
			return c, nil
		}
		if c.Name, at, err = p.ident("attribute name after '.'"); err != nil {
			return ColumnRef{}, err
		}
		if steps != nil {
			*steps = append(*steps, at)
		}
	}
	return c, nil
}

// pathRef parses the path of an attribute in a column family or index
// definition (items.seller.rating) and checks each step with CheckDefName:
// the first is a relation name, the last an attribute name and those
// between reference names.
func (p *parser) pathRef(what string) (ColumnRef, error) {
	var steps []Pos
	c, err := p.columnRefSteps(what, false, &steps)
	if err != nil {
		return ColumnRef{}, err
	}
	for i, name := range append(c.Qual[:len(c.Qual):len(c.Qual)], c.Name) {
		kind := "reference name"
		switch {
		case i == len(c.Qual):
			kind = "attribute name"
		case i == 0:
			kind = "relation name"
		}
		if err := CheckDefName(steps[i], kind, name); err != nil {
			return ColumnRef{}, err
		}
	}
	return c, nil
}

func (p *parser) defineSchema(at Pos, primary bool) (Statement, error) {
	name, _, err := p.ident("schema name")
	if err != nil {
		return nil, err
	}
	if err := p.expectWord("FOR", "after schema name"); err != nil {
		return nil, err
	}
	rel, _, err := p.defName("relation name")
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct("{", "after relation name"); err != nil {
		return nil, err
	}
	s := &DefineSchema{At: at, Primary: primary, Name: name, Relation: rel}
	for {
		t := p.peek()
		word := strings.ToUpper(t.str)
		var after string // what the error after the field says it follows
		switch field := schemaField(s, word); {
		case t.kind == tokIdent && word == "SPLIT":
			if s.SplitOn != nil {
				return nil, errorAt(t.pos, fmt.Sprintf("duplicate SPLIT ON in schema %s", snippet(quoteIdent(name))))
			}
			p.next()
			if s.SplitOn, err = p.splitKeys(); err != nil {
				return nil, err
			}
			after = "',' or '}' after SPLIT ON (…)"
		case t.kind == tokIdent && field != nil:
			if *field != nil {
				return nil, errorAt(t.pos, fmt.Sprintf("duplicate %s field in schema %s", word, snippet(quoteIdent(name))))
			}
			p.next()
			if *field, err = p.concat(); err != nil {
				return nil, err
			}
			after = "':', ',' or '}' after " + word + " element"
		default:
			return nil, p.unexpected("TABLE, ROW, FAMILY, QUALIFIER, VALUE or SPLIT ON")
		}
		comma := p.acceptPunct(",")
		if end := p.peek(); p.acceptPunct("}") {
			if s.Row == nil {
				return nil, errorAt(end.pos, fmt.Sprintf("schema %s has no ROW field (ROW is required)", snippet(quoteIdent(name))))
			}
			return s, nil
		}
		if !comma {
			return nil, p.unexpected(after)
		}
	}
}

// splitKeys parses `ON ('k', x'00ff', …)` after SPLIT in a schema: raw row
// keys, as string or binary constants.
func (p *parser) splitKeys() ([]*Const, error) {
	if err := p.expectWord("ON", "after SPLIT"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("(", "after SPLIT ON"); err != nil {
		return nil, err
	}
	var out []*Const
	for {
		t := p.peek()
		switch t.kind {
		case tokString:
			out = append(out, &Const{At: t.pos, Value: []byte(t.str)})
		case tokBinary:
			out = append(out, &Const{At: t.pos, Value: t.val.([]byte)})
		default:
			return nil, p.unexpected("row key (string or binary constant) in SPLIT ON")
		}
		p.next()
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' after row key in SPLIT ON"); err != nil {
		return nil, err
	}
	return out, nil
}

// schemaField returns the field of s that the upper-case contextual keyword
// word names, or nil if word names none.
func schemaField(s *DefineSchema, word string) *Concat {
	switch word {
	case "TABLE":
		return &s.Table
	case "ROW":
		return &s.Row
	case "FAMILY":
		return &s.Family
	case "QUALIFIER":
		return &s.Qualifier
	case "VALUE":
		return &s.Value
	}
	return nil
}

// concat parses elem { ':' elem }.
func (p *parser) concat() (Concat, error) {
	var c Concat
	for {
		e, err := p.elem()
		if err != nil {
			return nil, err
		}
		c = append(c, e)
		if !p.acceptPunct(":") {
			return c, nil
		}
	}
}

func (p *parser) elem() (Elem, error) {
	t := p.peek()
	switch t.kind {
	case tokString:
		p.next()
		return &Const{At: t.pos, Value: []byte(t.str)}, nil
	case tokBinary:
		p.next()
		return &Const{At: t.pos, Value: t.val.([]byte)}, nil
	case tokQuoted:
		p.next()
		return &AttrRef{At: t.pos, Name: t.str}, nil
	case tokKeyword:
		// DESC is reserved for ORDER BY but is also the desc{…} modifier.
		if t.str == "DESC" && p.startsModifier() {
			return p.modifier()
		}
	case tokIdent:
		if p.peekN(1).kind == tokPunct && p.peekN(1).str == "[" {
			if strings.EqualFold(t.str, "attr_name") || strings.EqualFold(t.str, "attr_value") {
				return p.attrList()
			}
		}
		if p.startsModifier() {
			return p.modifier()
		}
		p.next()
		return &AttrRef{At: t.pos, Name: t.str}, nil
	}
	return nil, p.expectedName("schema element (string, attribute, modifier, attr_name[…] or attr_value[…])")
}

// startsModifier reports whether the current token is followed by '(' or
// '{', which makes it a modifier name rather than an attribute.
func (p *parser) startsModifier() bool {
	t := p.peekN(1)
	return t.kind == tokPunct && (t.str == "(" || t.str == "{")
}

// modifierSignature describes the arguments each modifier takes; its keys
// are the modifier names.
var modifierSignature = map[string]string{
	"suffix":  "exactly one string or binary argument",
	"prefix":  "exactly one string or binary argument",
	"size":    "no argument or one of 1, 2 and 4",
	"ordered": "no arguments",
	"desc":    "no arguments",
	"salt":    "one integer argument in 1..256",
}

func (p *parser) modifier() (Elem, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	t := p.next()
	name := strings.ToLower(t.str)
	want, ok := modifierSignature[name]
	if !ok {
		return nil, errorAt(t.pos, fmt.Sprintf("unknown modifier '%s' (want suffix, prefix, size, ordered, desc or salt)", snippet(t.raw)))
	}
	var args []types.Value
	if p.acceptPunct("(") {
		for {
			lit, err := p.literal()
			if err != nil {
				return nil, err
			}
			if lit == nil {
				return nil, p.unexpected("literal argument of " + name)
			}
			args = append(args, lit.Value)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")", "after arguments of "+name); err != nil {
			return nil, err
		}
	}
	args, ok = checkModifierArgs(name, args)
	if !ok {
		return nil, errorAt(t.pos, fmt.Sprintf("%s takes %s", name, want))
	}
	if err := p.expectPunct("{", "after "+name); err != nil {
		return nil, err
	}
	body, err := p.concat()
	if err != nil {
		return nil, err
	}
	if err := p.expectPunct("}", "or ':' in the body of "+name); err != nil {
		return nil, err
	}
	p.depth--
	return &Modifier{At: t.pos, Name: name, Args: args, Body: body}, nil
}

// checkModifierArgs validates the arguments of modifier name and converts
// them to their stored form (string arguments become []byte).
func checkModifierArgs(name string, args []types.Value) ([]types.Value, bool) {
	switch name {
	case "suffix", "prefix":
		if len(args) == 1 {
			switch v := args[0].(type) {
			case string:
				return []types.Value{[]byte(v)}, true
			case []byte:
				return args, true
			}
		}
		return nil, false
	case "size":
		if len(args) == 0 {
			return nil, true
		}
		n, ok := oneInt(args)
		return args, ok && (n == 1 || n == 2 || n == 4)
	case "salt":
		n, ok := oneInt(args)
		return args, ok && 1 <= n && n <= 256
	}
	return nil, len(args) == 0 // ordered, desc
}

// oneInt returns the only argument if there is exactly one and it is an
// integer.
func oneInt(args []types.Value) (int64, bool) {
	if len(args) != 1 {
		return 0, false
	}
	n, ok := args[0].(int64)
	return n, ok
}

// attrList parses attr_name[…] or attr_value[…].
func (p *parser) attrList() (Elem, error) {
	t := p.next()
	word := strings.ToLower(t.str)
	p.next() // '['
	var names []string
	if !p.acceptPunct("]") {
		for {
			n := p.peek()
			if n.kind != tokString && n.kind != tokIdent && n.kind != tokQuoted {
				return nil, p.expectedName("attribute name (string or identifier) in " + word + "[…]")
			}
			p.next()
			names = append(names, n.str)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct("]", "after attribute names of "+word); err != nil {
			return nil, err
		}
	}
	if word == "attr_name" {
		return &AttrNames{At: t.pos, Exclude: names}, nil
	}
	return &AttrValues{At: t.pos, Exclude: names}, nil
}

func (p *parser) selectStmt() (Statement, error) {
	s := &Select{At: p.next().pos}
	if p.acceptPunct("*") {
		s.Star = true
	} else {
		for {
			c, err := p.selectItem()
			if err != nil {
				return nil, err
			}
			s.Columns = append(s.Columns, c)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if err := p.expectKeyword("FROM", "after select list"); err != nil {
		return nil, err
	}
	var err error
	if s.Relation, s.RelationAt, err = p.ident("relation name"); err != nil {
		return nil, err
	}
	for p.acceptPunct(".") {
		fk, _, err := p.ident("foreign key name after '.'")
		if err != nil {
			return nil, err
		}
		s.Path = append(s.Path, fk)
	}
	commas := 0 // relations listed after ',' (SQL's comma joins), the first Joins
	if s.Path == nil {
		if s.Alias, err = p.alias(); err != nil {
			return nil, err
		}
		for p.acceptPunct(",") {
			j := Join{At: p.peek().pos}
			if j.Relation, _, err = p.ident("relation name after ','"); err != nil {
				return nil, err
			}
			if j.Alias, err = p.alias(); err != nil {
				return nil, err
			}
			s.Joins = append(s.Joins, j)
			commas++
		}
		for p.isWord("JOIN") || p.isWord("INNER") {
			j, err := p.join()
			if err != nil {
				return nil, err
			}
			s.Joins = append(s.Joins, j)
		}
		if t := p.peek(); p.isOuterJoin() {
			return nil, errorAt(t.pos, fmt.Sprintf("%s JOIN is not supported: kvschema's joins are inner joins along foreign keys ([INNER] JOIN r ON a.fk = b.key)", strings.ToUpper(t.str)))
		}
	}
	if s.Where, err = p.where(); err != nil {
		return nil, err
	}
	if err := commaJoins(s, commas); err != nil {
		return nil, err
	}
	if p.isWord("GROUP") && p.peekN(1).kind == tokKeyword && p.peekN(1).str == "BY" {
		p.next()
		p.next()
		for {
			c, err := p.columnRef("column name", false)
			if err != nil {
				return nil, err
			}
			s.GroupBy = append(s.GroupBy, c)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptWord("HAVING") {
		p.aggs = true // aggregates are operands here
		s.Having, err = p.expr()
		p.aggs = false
		if err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("ORDER") {
		if err := p.expectKeyword("BY", "after ORDER"); err != nil {
			return nil, err
		}
		for {
			var c ColumnRef
			var err error
			if p.atAggregate() {
				c, err = p.aggregateCall()
			} else {
				c, err = p.columnRef("column name", false)
			}
			if err != nil {
				return nil, err
			}
			item := OrderItem{At: c.At, Qual: c.Qual, Column: c.Name, Agg: c.Agg, Star: c.Star, Distinct: c.Distinct, Desc: p.acceptKeyword("DESC")}
			if !item.Desc {
				p.acceptKeyword("ASC")
			}
			s.OrderBy = append(s.OrderBy, item)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if p.acceptKeyword("LIMIT") {
		t := p.peek()
		switch {
		case p.atParam():
			var err error
			if s.Limit, err = p.param(); err != nil {
				return nil, err
			}
		case t.kind == tokInt && t.val.(int64) >= 0:
			p.next()
			s.Limit = &Literal{At: t.pos, Value: t.val}
		default:
			return nil, p.unexpected("non-negative integer or '?' after LIMIT")
		}
	}
	return s, nil
}

// alias parses an optional `[AS] alias` after a relation in FROM.
func (p *parser) alias() (string, error) {
	if p.acceptWord("AS") {
		a, _, err := p.ident("alias after AS")
		return a, err
	}
	t := p.peek()
	groupBy := p.isWord("GROUP") && p.peekN(1).kind == tokKeyword && p.peekN(1).str == "BY"
	if (t.kind == tokIdent || t.kind == tokQuoted) && !p.isWord("JOIN") && !p.isWord("INNER") && !p.isWord("ON") && !p.isWord("HAVING") && !groupBy && !p.isOuterJoin() {
		p.next()
		return t.str, nil
	}
	return "", nil
}

// isOuterJoin reports whether the current token starts a kind of join
// kvschema does not take (LEFT, RIGHT, FULL, CROSS, NATURAL, OUTER): not
// an alias.
func (p *parser) isOuterJoin() bool {
	return p.isWord("LEFT") || p.isWord("RIGHT") || p.isWord("FULL") || p.isWord("CROSS") || p.isWord("NATURAL") || p.isWord("OUTER")
}

// commaJoins gives each of the first n joins of s, listed after ',' in
// FROM (SQL's comma joins), its ON condition: the first conjunct of the
// WHERE clause that equates an attribute of the joined relation with one of
// a relation before it (x.fk = y.id), which it takes out of the WHERE
// clause. So `FROM a x, b y WHERE y.fk = x.id AND …` reads as `FROM a x JOIN
// b y ON y.fk = x.id WHERE …`, and prints that way.
func commaJoins(s *Select, n int) error {
	if n == 0 {
		return nil
	}
	conj := splitAnd(s.Where)
	names := []string{s.Relation}
	if s.Alias != "" {
		names[0] = s.Alias
	}
	for i := range s.Joins[:n] {
		j := &s.Joins[i]
		name := j.Relation
		if j.Alias != "" {
			name = j.Alias
		}
		for k, c := range conj {
			if joins(c, name, names) {
				j.On = c
				conj = append(conj[:k:k], conj[k+1:]...)
				break
			}
		}
		if j.On == nil {
			return errorAt(j.At, fmt.Sprintf("FROM … , %s: the WHERE clause has no condition %s.fk = x.key (or x.fk = %s.key) joining it to a relation listed before it", snippet(quoteIdent(name)), snippet(quoteIdent(name)), snippet(quoteIdent(name))))
		}
		names = append(names, name)
	}
	s.Where = nil
	for _, c := range conj {
		if s.Where == nil {
			s.Where = c
		} else {
			s.Where = &Binary{At: s.Where.Pos(), Op: OpAnd, L: s.Where, R: c}
		}
	}
	return nil
}

// splitAnd lists the conjuncts of e in order (nil: none).
func splitAnd(e Expr) []Expr {
	if b, ok := e.(*Binary); ok && b.Op == OpAnd {
		return append(splitAnd(b.L), splitAnd(b.R)...)
	}
	if e == nil {
		return nil
	}
	return []Expr{e}
}

// joins reports whether e is `name.a = x.b` or `x.b = name.a` where x is
// one of before.
func joins(e Expr, name string, before []string) bool {
	b, ok := e.(*Binary)
	if !ok || b.Op != OpEq {
		return false
	}
	l, lok := b.L.(*ColumnRef)
	r, rok := b.R.(*ColumnRef)
	if !lok || !rok || len(l.Qual) != 1 || len(r.Qual) != 1 {
		return false
	}
	in := func(q string) bool {
		for _, n := range before {
			if strings.EqualFold(n, q) {
				return true
			}
		}
		return false
	}
	return strings.EqualFold(l.Qual[0], name) && in(r.Qual[0]) || strings.EqualFold(r.Qual[0], name) && in(l.Qual[0])
}

// selectItem parses one item of a select list: an attribute, `q.*`, or
// an aggregate function of an attribute (COUNT(*) too).
func (p *parser) selectItem() (ColumnRef, error) {
	if p.atAggregate() {
		return p.aggregateCall()
	}
	return p.columnRef("column name or '*'", true)
}

// atAggregate reports whether a function call starts here.
func (p *parser) atAggregate() bool {
	return p.peek().kind == tokIdent && p.peekN(1).kind == tokPunct && p.peekN(1).str == "("
}

// aggregateCall parses FN(attr), COUNT(*) or FN(DISTINCT attr).
func (p *parser) aggregateCall() (ColumnRef, error) {
	t := p.peek()
	fn := strings.ToUpper(t.str)
	if !slices.Contains(Aggregates, fn) {
		return ColumnRef{}, errorAt(t.pos, fmt.Sprintf("unknown function %s (aggregates: %s)", t.str, strings.Join(Aggregates, ", ")))
	}
	p.next()
	p.next()
	var c ColumnRef
	if fn == "COUNT" && p.acceptPunct("*") {
		c = ColumnRef{Star: true}
	} else {
		distinct := p.acceptWord("DISTINCT")
		var err error
		if c, err = p.columnRef("column name", false); err != nil {
			return ColumnRef{}, err
		}
		c.Distinct = distinct
	}
	c.At, c.Agg = t.pos, fn
	if err := p.expectPunct(")", "after the aggregate's argument"); err != nil {
		return ColumnRef{}, err
	}
	return c, nil
}

// join parses [INNER] JOIN relation [alias] ON e.
func (p *parser) join() (Join, error) {
	at := p.peek().pos
	if p.acceptWord("INNER") {
		if err := p.expectWord("JOIN", "after INNER"); err != nil {
			return Join{}, err
		}
	} else {
		p.next() // JOIN
	}
	rel, _, err := p.ident("relation name after JOIN")
	if err != nil {
		return Join{}, err
	}
	j := Join{At: at, Relation: rel}
	if j.Alias, err = p.alias(); err != nil {
		return Join{}, err
	}
	if err := p.expectWord("ON", "after JOIN "+snippet(quoteIdent(rel))); err != nil {
		return Join{}, err
	}
	if j.On, err = p.expr(); err != nil {
		return Join{}, err
	}
	return j, nil
}

// where parses an optional WHERE clause; the result is nil without one.
func (p *parser) where() (Expr, error) {
	if !p.acceptKeyword("WHERE") {
		return nil, nil
	}
	return p.expr()
}

func (p *parser) insert() (Statement, error) {
	s := &Insert{At: p.next().pos}
	if err := p.expectKeyword("INTO", "after INSERT"); err != nil {
		return nil, err
	}
	var err error
	if s.Relation, s.RelationAt, err = p.ident("relation name"); err != nil {
		return nil, err
	}
	if p.acceptKeyword("SET") {
		return p.insertSet(s)
	}
	if p.acceptPunct("(") {
		for {
			c, _, err := p.ident("column name")
			if err != nil {
				return nil, err
			}
			s.Columns = append(s.Columns, c)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")", "or ',' after column name"); err != nil {
			return nil, err
		}
		err = p.expectKeyword("VALUES", "after column list")
	} else {
		err = p.expectKeyword("VALUES", "or '(' after relation name")
	}
	if err != nil {
		return nil, err
	}
	if err := p.insertRows(s); err != nil {
		return nil, err
	}
	return s, p.insertTail(s, false)
}

// insertTail parses what may end an INSERT after its rows, in either
// order: IF NOT EXISTS, and USING TTL n. A conditional insert has one row:
// with more (or a VALUES list that goes on, split by a Reader: continued)
// it is an error here, before any part runs; so is a TTL after a VALUES
// list a Reader split, whose earlier parts ran without it.
func (p *parser) insertTail(s *Insert, continued bool) error {
	if p.moreRows {
		return nil
	}
	for {
		switch {
		case !s.IfNotExists && p.isWord("IF"):
			at := p.next().pos
			if err := p.expectKeyword("NOT", "after IF"); err != nil {
				return err
			}
			if err := p.expectWord("EXISTS", "after IF NOT"); err != nil {
				return err
			}
			if len(s.Rows) != 1 || continued {
				return &Error{Pos: at, Msg: "IF NOT EXISTS makes an insert of one tuple conditional: write one row of VALUES"}
			}
			s.IfNotExists = true
		case s.TTL == nil && p.isWord("USING"):
			at := p.peek().pos
			ttl, err := p.usingTTL()
			if err != nil {
				return err
			}
			if continued {
				return &Error{Pos: at, Msg: "USING TTL ends a VALUES list read in parts, whose first parts are written: split the rows into INSERTs of their own, each USING TTL"}
			}
			s.TTL = ttl
		default:
			return nil
		}
	}
}

// usingTTL parses USING TTL n (a count of seconds, or a parameter).
func (p *parser) usingTTL() (Expr, error) {
	p.next() // USING
	if err := p.expectWord("TTL", "after USING"); err != nil {
		return nil, err
	}
	return p.value()
}

// condition parses an optional IF EXISTS or IF expr ending an UPDATE or
// DELETE.
func (p *parser) condition() (*Condition, error) {
	if !p.isWord("IF") {
		return nil, nil
	}
	c := &Condition{At: p.next().pos}
	// IF EXISTS ends its statement; an attribute named exists may start a
	// condition.
	if t := p.peekN(1); p.isWord("EXISTS") && (t.kind == tokEOF || t.kind == tokPunct && t.str == ";") {
		p.next()
		c.Exists = true
		return c, nil
	}
	var err error
	c.Expr, err = p.expr()
	return c, err
}

// insertRows parses the rows of INSERT … VALUES into s.Rows: all of them,
// or, when p.maxRows > 0, up to that many, setting p.moreRows when a ','
// (consumed) announces more.
func (p *parser) insertRows(s *Insert) error {
	p.moreRows = false
	for {
		if err := p.expectPunct("(", "to start a row of values"); err != nil {
			return err
		}
		var row []Expr
		for {
			v, err := p.value()
			if err != nil {
				return err
			}
			row = append(row, v)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")", "or ',' after value"); err != nil {
			return err
		}
		s.Rows = append(s.Rows, row)
		if !p.acceptPunct(",") {
			return nil
		}
		if p.maxRows > 0 && len(s.Rows) >= p.maxRows {
			p.moreRows = true
			return nil
		}
	}
}

// insertSet parses the rest of INSERT INTO r SET c = v, … [AND CONNECT TO
// fk(v), …].
func (p *parser) insertSet(s *Insert) (Statement, error) {
	s.SetForm = true
	var row []Expr
	for {
		c, _, err := p.ident("column name")
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct("=", "after column name"); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		s.Columns = append(s.Columns, c)
		row = append(row, v)
		if !p.acceptPunct(",") {
			break
		}
	}
	s.Rows = [][]Expr{row}
	if !p.acceptKeyword("AND") {
		return s, p.insertTail(s, false)
	}
	if err := p.expectWord("CONNECT", "after AND"); err != nil {
		return nil, err
	}
	if err := p.expectWord("TO", "after AND CONNECT"); err != nil {
		return nil, err
	}
	for {
		c, err := p.connection()
		if err != nil {
			return nil, err
		}
		s.Connect = append(s.Connect, c)
		if !p.acceptPunct(",") {
			return s, p.insertTail(s, false)
		}
	}
}

func (p *parser) update() (Statement, error) {
	s := &Update{At: p.next().pos}
	var err error
	if s.Relation, s.RelationAt, err = p.ident("relation name"); err != nil {
		return nil, err
	}
	if p.isWord("USING") {
		if s.TTL, err = p.usingTTL(); err != nil {
			return nil, err
		}
	}
	if err := p.expectKeyword("SET", "after relation name"); err != nil {
		return nil, err
	}
	for {
		a, err := p.assignment()
		if err != nil {
			return nil, err
		}
		s.Set = append(s.Set, a)
		if !p.acceptPunct(",") {
			break
		}
	}
	if s.Where, err = p.where(); err != nil {
		return nil, err
	}
	if s.If, err = p.condition(); err != nil {
		return nil, err
	}
	return s, nil
}

// assignment parses one `c = v` of an UPDATE's SET, or an operation on a
// collection's elements: `c = c + v`, `c = c - v`, `c = v + c`, `c[k] = v`.
func (p *parser) assignment() (Assignment, error) {
	c, at, err := p.ident("column name")
	if err != nil {
		return Assignment{}, err
	}
	a := Assignment{At: at, Column: c}
	if p.acceptPunct("[") {
		if a.Key, err = p.value(); err != nil {
			return Assignment{}, err
		}
		if err := p.expectPunct("]", "after a collection element's key"); err != nil {
			return Assignment{}, err
		}
		a.Op = AssignElement
	}
	if err := p.expectPunct("=", "after column name"); err != nil {
		return Assignment{}, err
	}
	if t := p.peekN(1); a.Op == AssignValue && p.isWord(c) && t.kind == tokPunct && (t.str == "+" || t.str == "-") {
		p.next()
		a.Op = AssignAdd
		if p.next().str == "-" {
			a.Op = AssignRemove
		}
	}
	if a.Value, err = p.value(); err != nil {
		return Assignment{}, err
	}
	if a.Op == AssignValue && p.isPunct("+") {
		p.next()
		if !p.isWord(c) {
			return Assignment{}, p.unexpected(fmt.Sprintf("%s after '+' (a list's prepend, %s = v + %s)", snippet(quoteIdent(c)), snippet(quoteIdent(c)), snippet(quoteIdent(c))))
		}
		p.next()
		a.Op = AssignPrepend
	}
	return a, nil
}

func (p *parser) delete() (Statement, error) {
	s := &Delete{At: p.next().pos}
	if !p.isKeyword("FROM") && p.deletesColumns() {
		for {
			c, at, err := p.ident("column name")
			if err != nil {
				return nil, err
			}
			a := Assignment{At: at, Column: c, Op: AssignDelete}
			if p.acceptPunct("[") {
				if a.Key, err = p.value(); err != nil {
					return nil, err
				}
				if err := p.expectPunct("]", "after a collection element's key"); err != nil {
					return nil, err
				}
			}
			s.Columns = append(s.Columns, a)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectKeyword("FROM", "after the columns to delete"); err != nil {
			return nil, err
		}
	} else {
		p.acceptKeyword("FROM")
	}
	var err error
	if s.Relation, s.RelationAt, err = p.ident("relation name"); err != nil {
		return nil, err
	}
	if s.Where, err = p.where(); err != nil {
		return nil, err
	}
	if s.If, err = p.condition(); err != nil {
		return nil, err
	}
	return s, nil
}

// deletesColumns reports whether a DELETE names columns before FROM
// (`DELETE c, m[k] FROM r`) rather than its relation (NoSE's `DELETE r`):
// a name followed by '[', ',' or FROM.
func (p *parser) deletesColumns() bool {
	n := p.peekN(1)
	return n.kind == tokPunct && (n.str == "[" || n.str == ",") || n.kind == tokKeyword && n.str == "FROM"
}

func (p *parser) value() (Expr, error) {
	if p.atParam() {
		return p.param()
	}
	lit, err := p.literal()
	if err != nil {
		return nil, err
	}
	if lit == nil {
		return nil, p.unexpected("value (a literal or '?')")
	}
	return lit, nil
}

// atParam reports whether a parameter starts here: '?', '$n', or ':name'
// (a ':' followed at once by a name; elsewhere, as in a layout's ROW, ':'
// concatenates).
func (p *parser) atParam() bool {
	t := p.peek()
	if t.kind == tokParam {
		return true
	}
	if !p.isPunct(":") {
		return false
	}
	n := p.peekN(1)
	return n.kind == tokIdent && n.pos.File == t.pos.File && n.pos.Line == t.pos.Line && n.pos.Col == t.pos.Col+1
}

// param takes a '?' (the next argument), a '$n' (argument n) or a ':name'
// (the argument of that name; names take indexes in order of first use).
// One statement uses one style.
func (p *parser) param() (*Param, error) {
	t := p.next()
	style, name := byte('?'), ""
	n, dollar := t.val.(int)
	switch {
	case t.kind != tokParam: // ':' name
		style, name = ':', p.next().str
	case dollar:
		style = '$'
	}
	if p.style != 0 && style != p.style {
		return nil, errorAt(t.pos, fmt.Sprintf("a statement cannot mix %s and %s parameters", styleName(p.style), styleName(style)))
	}
	p.style = style
	switch style {
	case '$':
		p.nparam++
		return &Param{At: t.pos, Index: n - 1, Dollar: true}, nil
	case ':':
		i, seen := p.names[strings.ToLower(name)]
		if !seen {
			if p.names == nil {
				p.names = map[string]int{}
			}
			i = p.nparam
			p.names[strings.ToLower(name)] = i
			p.nparam++
		}
		return &Param{At: t.pos, Index: i, Name: name}, nil
	}
	p.nparam++
	return &Param{At: t.pos, Index: p.nparam - 1}, nil
}

func styleName(style byte) string {
	switch style {
	case '$':
		return "$n"
	case ':':
		return ":name"
	}
	return "?"
}

// literal parses a literal if the current token starts one, and returns nil
// (and no error) if it does not.
func (p *parser) literal() (*Literal, error) {
	t := p.peek()
	var v types.Value
	switch t.kind {
	case tokString:
		v = t.str
	case tokBinary, tokInt, tokFloat:
		v = t.val
	case tokKeyword:
		switch t.str {
		case "TRUE":
			v = true
		case "FALSE":
			v = false
		case "NULL":
			v = nil
		default:
			return nil, nil
		}
	case tokPunct:
		if t.str == "{" || t.str == "[" {
			return p.collectionLiteral()
		}
		return nil, nil
	case tokIdent:
		if !strings.EqualFold(t.str, "TIMESTAMP") || p.peekN(1).kind != tokString {
			return nil, nil
		}
		p.next()
		s := p.next()
		ts, err := types.ParseTimestamp(s.str)
		if err != nil {
			return nil, errorAt(s.pos, err.Error())
		}
		// The printer writes timestamps as four-digit years; keep only
		// those, so that every literal survives a print and reparse.
		if y := ts.Year(); y < 0 || y > 9999 {
			return nil, errorAt(s.pos, fmt.Sprintf("timestamp %s out of range (years 0000 to 9999 in UTC)", snippet(s.raw)))
		}
		return &Literal{At: t.pos, Value: ts}, nil
	default:
		return nil, nil
	}
	p.next()
	return &Literal{At: t.pos, Value: v}, nil
}

// collectionLiteral parses `{e, …}` (a SET), `[e, …]` (a LIST) or `{k: v,
// …}` (a MAP) of scalar literals; `{}` is an empty SET, which Coerce also
// takes for an empty MAP.
func (p *parser) collectionLiteral() (*Literal, error) {
	open := p.next()
	closer := "]"
	if open.str == "{" {
		closer = "}"
	}
	elem := func() (types.Value, error) {
		t := p.peek()
		lit, err := p.literal()
		if err != nil {
			return nil, err
		}
		switch {
		case lit == nil:
			return nil, p.unexpected("a literal in a collection (a collection literal holds constants; bind a whole collection with '?')")
		case lit.Value == nil:
			return nil, errorAt(t.pos, "a collection cannot hold NULL")
		}
		switch lit.Value.(type) {
		case types.Set, types.List, types.Map:
			return nil, errorAt(t.pos, "a collection's elements are scalars: kvschema stores no collection in a collection")
		}
		return lit.Value, nil
	}
	xs, m := []types.Value{}, types.Map{}
	isMap := false
	for i := 0; !p.acceptPunct(closer); i++ {
		if i > 0 {
			if err := p.expectPunct(",", "or '"+closer+"' in the collection literal at "+fmt.Sprintf("%d:%d", open.pos.Line, open.pos.Col)); err != nil {
				return nil, err
			}
		}
		k, err := elem()
		if err != nil {
			return nil, err
		}
		if i == 0 && closer == "}" && p.isPunct(":") {
			isMap = true
		}
		if !isMap {
			xs = append(xs, k)
			continue
		}
		if err := p.expectPunct(":", "after a key in the MAP literal"); err != nil {
			return nil, err
		}
		v, err := elem()
		if err != nil {
			return nil, err
		}
		m = append(m, types.Entry{Key: k, Val: v})
	}
	switch {
	case isMap:
		return &Literal{At: open.pos, Value: m}, nil
	case closer == "]":
		return &Literal{At: open.pos, Value: types.List(xs)}, nil
	}
	return &Literal{At: open.pos, Value: types.Set(xs)}, nil
}

// expr parses a boolean or scalar expression.
func (p *parser) expr() (Expr, error) {
	return p.chain(OpOr, "OR", p.andExpr)
}

func (p *parser) andExpr() (Expr, error) {
	return p.chain(OpAnd, "AND", p.notExpr)
}

// chain parses operand { kw operand } into a left-associative tree of op.
func (p *parser) chain(op Op, kw string, operand func() (Expr, error)) (Expr, error) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	depth := p.depth
	for p.isKeyword(kw) {
		// Each link deepens the tree by one level.
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.next()
		y, err := operand()
		if err != nil {
			return nil, err
		}
		x = &Binary{At: x.Pos(), Op: op, L: x, R: y}
	}
	p.depth = depth
	return x, nil
}

func (p *parser) notExpr() (Expr, error) {
	if !p.isKeyword("NOT") {
		return p.predicate()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	t := p.next()
	x, err := p.notExpr()
	if err != nil {
		return nil, err
	}
	p.depth--
	return &Not{At: t.pos, X: x}, nil
}

// compareOps maps comparison tokens to operators.
var compareOps = map[string]Op{
	"=": OpEq, "!=": OpNe, "<>": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe,
}

func (p *parser) predicate() (Expr, error) {
	x, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tokPunct:
		op, ok := compareOps[t.str]
		if !ok {
			break
		}
		p.next()
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		return &Binary{At: x.Pos(), Op: op, L: x, R: y}, nil
	case p.acceptKeyword("NOT"):
		switch {
		case p.isKeyword("IN"):
			return p.in(x, true)
		case p.isKeyword("BETWEEN"):
			return p.between(x, true)
		case p.acceptWord("CONTAINS"):
			// x NOT CONTAINS v is NOT (x CONTAINS v), as x NOT IN (…)
			// is NOT (x IN (…)).
			key := p.acceptWord("KEY") || p.acceptKeyword("KEY")
			y, err := p.operand()
			if err != nil {
				return nil, err
			}
			return &Not{At: x.Pos(), X: &Contains{At: x.Pos(), X: x, Elem: y, Key: key}}, nil
		}
		return nil, p.unexpected("IN, BETWEEN or CONTAINS after NOT")
	case p.isKeyword("IN"):
		return p.in(x, false)
	case p.isKeyword("BETWEEN"):
		return p.between(x, false)
	case p.acceptWord("CONTAINS"):
		key := p.acceptWord("KEY") || p.acceptKeyword("KEY")
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		return &Contains{At: x.Pos(), X: x, Elem: y, Key: key}, nil
	case p.acceptKeyword("IS"):
		not := p.acceptKeyword("NOT")
		if err := p.expectKeyword("NULL", "after IS"); err != nil {
			return nil, err
		}
		return &IsNull{At: x.Pos(), X: x, Not: not}, nil
	}
	return x, nil
}

// in parses IN (…) after x; the current token is IN.
func (p *parser) in(x Expr, not bool) (Expr, error) {
	p.next()
	if err := p.expectPunct("(", "after IN"); err != nil {
		return nil, err
	}
	e := &In{At: x.Pos(), X: x, Not: not}
	for {
		y, err := p.operand()
		if err != nil {
			return nil, err
		}
		e.List = append(e.List, y)
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(")", "or ',' in IN list"); err != nil {
		return nil, err
	}
	return e, nil
}

// between parses BETWEEN lo AND hi after x; the current token is BETWEEN.
func (p *parser) between(x Expr, not bool) (Expr, error) {
	p.next()
	lo, err := p.operand()
	if err != nil {
		return nil, err
	}
	if err := p.expectKeyword("AND", "in BETWEEN"); err != nil {
		return nil, err
	}
	hi, err := p.operand()
	if err != nil {
		return nil, err
	}
	return &Between{At: x.Pos(), X: x, Lo: lo, Hi: hi, Not: not}, nil
}

// operand parses a literal, '?', a column or a parenthesized expression.
func (p *parser) operand() (Expr, error) {
	lit, err := p.literal()
	if err != nil {
		return nil, err
	}
	if lit != nil {
		return lit, nil
	}
	if p.atParam() {
		return p.param()
	}
	t := p.peek()
	if p.aggs && p.atAggregate() {
		c, err := p.aggregateCall()
		if err != nil {
			return nil, err
		}
		return &c, nil
	}
	switch t.kind {
	case tokIdent, tokQuoted:
		c, err := p.columnRef("attribute name", false)
		if err != nil {
			return nil, err
		}
		return &c, nil
	case tokPunct:
		if t.str != "(" {
			break
		}
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.next()
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(")", fmt.Sprintf("to match '(' at %d:%d", t.pos.Line, t.pos.Col)); err != nil {
			return nil, err
		}
		p.depth--
		return x, nil
	}
	return nil, p.expectedName("expression")
}
