package export

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// kvsSchema reads a schema script holding its own model (DEFINE RELATION
// statements), as kvschema export does without --model.
func kvsSchema(t testing.TB, file, src string) *catalog.Schema {
	t.Helper()
	stmts, err := lang.ParseScript(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kvsFile is kvsSchema of a file of testdata.
func kvsFile(name string) func(testing.TB) *catalog.Schema {
	return func(t testing.TB) *catalog.Schema {
		file := filepath.Join("testdata", name)
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return kvsSchema(t, file, string(src))
	}
}

// TestCQLGolden compares the CQL export with testdata, and reads each back
// with cqlParse: the hostile names of cql_min.kvs and cql_hostile.kvs are
// the review's reproduction. rubis.cql pins that ordinary (lower-case,
// non-keyword) names stay unquoted.
func TestCQLGolden(t *testing.T) {
	for _, tc := range []struct {
		file     string
		keyspace string
		schema   func(testing.TB) *catalog.Schema
	}{
		{"rubis.cql", "", rubisSchema},
		{"cql_min.cql", "", kvsFile("cql_min.kvs")},
		{"cql_hostile.cql", "Prod_KS", kvsFile("cql_hostile.kvs")},
		{"cql_case.cql", "table", kvsFile("cql_case.kvs")},
		{"cql_buckets.cql", "chat", kvsFile("cql_buckets.kvs")},
		{"cql_collections.cql", "chat", kvsFile("cql_collections.kvs")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := tc.schema(t)
			got, err := CQL(s, tc.keyspace)
			if err != nil {
				t.Fatal(err)
			}
			checkCQL(t, s, tc.keyspace, got)
			file := filepath.Join("testdata", tc.file)
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs (go test ./export -update rewrites it); got:\n%s", file, got)
			}
		})
	}
}

// TestCQLReservedAndCase: reserved words as table names and names with
// capitals come out as valid identifiers, quoted where CQL would fold them.
// Names differing only in case are one name (the model refuses both).
func TestCQLReservedAndCase(t *testing.T) {
	s := kvsFile("cql_case.kvs")(t)
	got, err := CQL(s, "")
	if err != nil {
		t.Fatal(err)
	}
	checkCQL(t, s, "", got)
	for _, want := range []string{
		"\nCREATE TABLE \"token\" (\n  items_id bigint,\n  \"items_Name\" text,\n  items_title text,\n",
		"\nCREATE TABLE \"batch\" (\n  items_title text,\n  items_id bigint,\n  \"items_Name\" text,\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
	stmts, err := cqlParse(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		seen := map[string]bool{}
		for _, c := range st.columns {
			if seen[c] {
				t.Errorf("%s: column %q twice", st.name, c)
			}
			seen[c] = true
		}
	}

	// Every reserved word, in any case, as a table, index and keyspace name.
	for _, w := range cqlReserved {
		for _, name := range []string{strings.ToLower(w), w, w[:1] + strings.ToLower(w[1:])} {
			s := oneRelation("items", []string{"id", "v"}, []types.Type{types.BigInt, types.String}, 0, name, name)
			got, err := CQL(s, name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkCQL(t, s, name, got)
			if q := `"` + name + `"`; !strings.Contains(got, "CREATE TABLE "+q+"."+q+" (") {
				t.Errorf("%s not quoted:\n%s", name, got)
			}
		}
	}
}

// TestCQLNameLimit: Cassandra takes keyspace and table names of up to 48
// characters; the export refuses longer ones rather than cut them.
func TestCQLNameLimit(t *testing.T) {
	name48, name49 := strings.Repeat("t", 47)+"8", strings.Repeat("t", 48)+"9"
	s := oneRelation("items", []string{"id"}, []types.Type{types.BigInt}, 0, name48, "")
	got, err := CQL(s, strings.ToUpper(name48))
	if err != nil {
		t.Fatal(err)
	}
	checkCQL(t, s, strings.ToUpper(name48), got)
	if !strings.Contains(got, "CREATE TABLE \""+strings.ToUpper(name48)+"\"."+name48+" (") {
		t.Errorf("48-character names changed:\n%s", got)
	}

	for _, tc := range []struct {
		cf, keyspace, want string
	}{
		{name49, "", `column family "` + name49 + `": table name has 49 characters, over Cassandra's limit of 48`},
		{name48, name49, `keyspace "` + name49 + `": keyspace name has 49 characters, over Cassandra's limit of 48`},
	} {
		s := oneRelation("items", []string{"id"}, []types.Type{types.BigInt}, 0, tc.cf, "")
		got, err := CQL(s, tc.keyspace)
		if err == nil || err.Error() != tc.want || got != "" {
			t.Errorf("CQL(%s, %q) = %v, want error %q and no text; text:\n%s", tc.cf, tc.keyspace, err, tc.want, got)
		}
	}

	// The review's reproduction (shared/repro/export/schema4.kvs).
	s = kvsSchema(t, "schema4.kvs", `DEFINE RELATION items ROWS 100 { id BIGINT KEY, Name STRING CARDINALITY 100, title STRING CARDINALITY 10 };
DEFINE COLUMN FAMILY token FOR items { PARTITION KEY (items.id), VALUES (items.Name, items.title) };
DEFINE COLUMN FAMILY a_very_long_column_family_name_that_exceeds_cassandras_limit_of_48 FOR items { PARTITION KEY (items.Name), CLUSTERING KEY (items.id) };`)
	got, err = CQL(s, "")
	want := `column family "a_very_long_column_family_name_that_exceeds_cassandras_limit_of_48": table name has 66 characters, over Cassandra's limit of 48`
	if err == nil || err.Error() != want || got != "" {
		t.Errorf("schema4: %v, want error %q and no text; text:\n%s", err, want, got)
	}
}

// TestCQLRejects: names Cassandra refuses, whatever the quoting, are
// errors, with no text.
func TestCQLRejects(t *testing.T) {
	const rel = "DEFINE RELATION r ROWS 10 { id BIGINT KEY, a_b STRING };\n"
	for _, tc := range []struct {
		name, src, keyspace, want string
	}{
		{"table with a statement", rel + `DEFINE COLUMN FAMILY "cf1; DROP TABLE users" FOR r { PARTITION KEY (r.id) };`, "",
			`column family "cf1; DROP TABLE users": not a Cassandra table name (1 to 48 letters, digits and '_')`},
		{"table not ASCII", rel + `DEFINE COLUMN FAMILY "café" FOR r { PARTITION KEY (r.id) };`, "",
			`column family "café": not a Cassandra table name`},
		{"index with a newline", rel + "DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), VALUES (r.a_b) };\nDEFINE SECONDARY INDEX \"si\nDROP KEYSPACE prod\" ON cf (r.a_b);", "",
			`secondary index "si\nDROP KEYSPACE prod": not a Cassandra index name (letters, digits and '_')`},
		{"keyspace with a statement", rel + `DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id) };`, "x; DROP KEYSPACE prod; --",
			`keyspace "x; DROP KEYSPACE prod; --": not a Cassandra keyspace name (1 to 48 letters, digits and '_')`},
		{"keyspace with a dot", rel + `DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id) };`, "ks.t", `keyspace "ks.t": not a Cassandra keyspace name`},
		{"keyspace quoted", rel + `DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id) };`, `"ks"`, `keyspace "\"ks\"": not a Cassandra keyspace name`},
		{"keyspace with a newline", rel + `DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id) };`, "ks\n", `keyspace "ks\n": not a Cassandra keyspace name`},
	} {
		s := kvsSchema(t, tc.name, tc.src)
		got, err := CQL(s, tc.keyspace)
		if err == nil || !strings.Contains(err.Error(), tc.want) || got != "" {
			t.Errorf("%s: %v, want error %q and no text; text:\n%s", tc.name, err, tc.want, got)
		}
	}
	// Attribute names of a path, a.b here, are apart from a_b (the
	// language refuses '.' in a name, but not in a path to another
	// relation); and a name need not be UTF-8.
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{"id", "a_b", "a.b"}, `column family "cf": attributes "r.a_b" and "r.a.b" would both be column "r_a_b"`},
		{[]string{"id", "v\xff"}, `column family "cf": column "r_v\xff" is not UTF-8`},
	} {
		s := oneRelation("r", tc.fields, []types.Type{types.BigInt, types.String, types.Int}, 0, "cf", "")
		got, err := CQL(s, "")
		if err == nil || err.Error() != tc.want || got != "" {
			t.Errorf("%q: %v, want error %q and no text; text:\n%s", tc.fields, err, tc.want, got)
		}
	}
}

// cqlPieces build random names: quotes, statement and comment syntax,
// control characters, keywords, bytes that are not UTF-8.
var cqlPieces = []string{
	"a", "b", "Z", "_", "0", "9", " ", "\n", "\r", "\t", ";", ",", ".", "(", ")", `"`, `""`, "'", "--", "//",
	"/*", "*/", "$$", "`", "$(id)", `\`, "\x00", "\x7f", "\u0085", "\u2028", "é", "\xff", "token", "TOKEN",
	"batch", "Select", "primary", "key", "DROP KEYSPACE prod",
}

// cqlWordPieces build random names Cassandra takes for keyspaces, tables
// and indexes, keywords among them.
var cqlWordPieces = []string{"a", "Z", "_", "0", "t", "token", "Batch", "SELECT", "key", "with"}

// TestCQLRandomNames: for random names of everything, the export is an
// error (exactly when Cassandra refuses a name), or it reads back with
// cqlParse as exactly the schema's statements and names.
func TestCQLRandomNames(t *testing.T) {
	rapid.Check(t, cqlRandomNames)
}

// FuzzCQLNames checks as TestCQLRandomNames does the export of a relation
// named rel with an attribute named field, a CF cf and an SI si over them,
// into keyspace. The seeds are the review's reproduction.
func FuzzCQLNames(f *testing.F) {
	for _, seed := range [][5]string{
		{"items", "x\nDROP KEYSPACE prod;\n--", "by_id", "", ""},
		{"it'ems", "na$(touch PWNED_cql)me", "token", "batch", "Prod"},
		{"it'ems", "x, y text); DROP KEYSPACE ks; --", "Name", "name", "ks"},
		{"it'ems", "nl\r\nDROP TABLE t;\u2028\x85", "cf", "si", ""},
		{"q\"", `say "hi" /* or */ // 'not' $$`, "cf", "si", "table"},
		{"items", "Name", "cf1; DROP TABLE users", "si", ""},
		{"items", "Name", "cf", "si\nDROP KEYSPACE prod", ""},
		{"items", "Name", "cf", "si", "x; DROP KEYSPACE prod; --"},
		{"items", "v\xff", "cf", "si", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	f.Fuzz(func(t *testing.T, rel, field, cf, si, keyspace string) {
		checkCQLNames(t, rel, []string{"id", field}, []types.Type{types.BigInt, types.String}, 0, cf, si, keyspace)
	})
}

func cqlRandomNames(t *rapid.T) {
	join := func(pieces []string) *rapid.Generator[string] {
		return rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 1, 6).Draw(t, "pieces"), "")
		})
	}
	anyName, word := join(cqlPieces), join(cqlWordPieces)
	name := rapid.OneOf(word, word, anyName)
	rel := anyName.Draw(t, "relation")
	fields := rapid.SliceOfNDistinct(anyName, 1, 5, func(s string) string { return s }).Draw(t, "fields")
	typs := make([]types.Type, len(fields))
	for i := range typs {
		typs[i] = rapid.SampledFrom(types.AllTypes).Draw(t, "type")
	}
	clus := rapid.IntRange(0, len(fields)-1).Draw(t, "clustering")
	cf, si := name.Draw(t, "cf"), name.Draw(t, "si")
	keyspace := rapid.OneOf(rapid.Just(""), name).Draw(t, "keyspace")
	checkCQLNames(t, rel, fields, typs, clus, cf, si, keyspace)
}

// checkCQLNames exports oneRelation(rel, fields, typs, clus, cf, si) into
// keyspace and checks that the export is an error, with no text, exactly
// when Cassandra would refuse a name, and otherwise reads back (checkCQL).
func checkCQLNames(t rapid.TB, rel string, fields []string, typs []types.Type, clus int, cf, si, keyspace string) {
	t.Helper()
	s := oneRelation(rel, fields, typs, clus, cf, si)
	valid := (keyspace == "" || cassandraName(keyspace, 48)) && cassandraName(cf, 48) && (si == "" || cassandraName(si, 0))
	seen := map[string]bool{}
	for _, f := range fields {
		c := strings.ReplaceAll(rel+"."+f, ".", "_")
		valid = valid && utf8.ValidString(c) && !seen[c]
		seen[c] = true
	}
	got, err := CQL(s, keyspace)
	if !valid {
		if err == nil || got != "" {
			t.Fatalf("names Cassandra refuses: err %v, text:\n%s", err, got)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	checkCQL(t, s, keyspace, got)
}

// cassandraName: Cassandra's rule for keyspace and table names (max 48) and
// index names (max 0: no limit).
func cassandraName(name string, max int) bool {
	return regexp.MustCompile(`^[A-Za-z0-9_]+$`).MatchString(name) && (max == 0 || len(name) <= max)
}

// oneRelation is a schema over one relation with the given fields: a CF
// named cf, partitioned by the first field, clustered by the next clus,
// holding the others, and, unless si is "", an SI named si on its last
// field.
func oneRelation(rel string, fields []string, typs []types.Type, clus int, cf, si string) *catalog.Schema {
	e := &catalog.Entity{Name: rel}
	var attrs []catalog.Attr
	for i, name := range fields {
		f := &catalog.Field{Entity: e, Name: name, Type: typs[i], Key: i == 0}
		e.Fields = append(e.Fields, f)
		attrs = append(attrs, catalog.Attr{Node: 0, Field: f})
	}
	e.Key = e.Fields[:1]
	g := &catalog.Graph{Nodes: []catalog.Node{{Entity: e, Parent: -1}}}
	x := &catalog.Index{Kind: catalog.CF, Graph: g, Name: cf, Hash: attrs[:1], Order: attrs[1 : 1+clus], Extra: attrs[1+clus:]}
	s := &catalog.Schema{Indexes: []*catalog.Index{x}, Base: map[*catalog.Index]*catalog.Index{}}
	if si != "" {
		y := &catalog.Index{Kind: catalog.SI, Graph: g, Name: si, Hash: attrs[len(attrs)-1:], Extra: attrs[:1]}
		s.Indexes = append(s.Indexes, y)
		s.Base[y] = x
	}
	return s
}

// checkCQL reads text back with cqlParse and checks that it is exactly the
// statements of s: one CREATE TABLE per CF, then one CREATE INDEX per SI,
// each naming keyspace, table, columns and index as s does.
func checkCQL(t rapid.TB, s *catalog.Schema, keyspace, text string) {
	t.Helper()
	got, err := cqlParse(text)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, text)
	}
	var want []cqlStmt
	col := func(x *catalog.Index, a catalog.Attr) string { return strings.ReplaceAll(x.AttrName(a), ".", "_") }
	for _, x := range s.Indexes {
		if x.Kind != catalog.CF {
			continue
		}
		st := cqlStmt{keyspace: keyspace, name: x.Name}
		for _, a := range x.Attrs() {
			st.columns = append(st.columns, col(x, a))
			st.types = append(st.types, cqlTestType(a.Field.Type))
		}
		for _, a := range x.Hash {
			st.part = append(st.part, col(x, a))
		}
		if x.PartitionBuckets > 0 {
			st.columns = append(st.columns, "bucket")
			st.types = append(st.types, "int")
			st.part = append(st.part, "bucket")
		}
		for _, a := range x.Order {
			st.clus = append(st.clus, col(x, a))
		}
		want = append(want, st)
	}
	for _, x := range s.Indexes {
		if x.Kind == catalog.SI {
			base := s.Base[x]
			want = append(want, cqlStmt{index: true, keyspace: keyspace, name: x.Name, table: base.Name, columns: []string{col(base, x.Hash[0])}})
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d statements, want %d, in:\n%s", len(got), len(want), text)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("statement %d reads back as\n%#v\nwant\n%#v\nin:\n%s", i+1, got[i], want[i], text)
		}
	}
}

// cqlTestTypes are the CQL types of kvschema's.
var cqlTestTypes = map[types.Type]string{
	types.String: "text", types.Int: "int", types.BigInt: "bigint", types.Float: "float",
	types.Double: "double", types.Bool: "boolean", types.Timestamp: "timestamp", types.Bytes: "blob",
}

// cqlTestType is the CQL type of t, written without spaces: a scalar's
// from cqlTestTypes; FROZEN<MAP<STRING, INT>> is frozen<map<text,int>>.
func cqlTestType(t types.Type) string {
	if !t.IsCollection() {
		return cqlTestTypes[t]
	}
	s := map[types.Kind]string{types.SetKind: "set", types.ListKind: "list", types.MapKind: "map"}[t.Kind()] + "<"
	if t.Kind() == types.MapKind {
		s += cqlTestTypes[t.Key()] + ","
	}
	s += cqlTestTypes[t.Elem()] + ">"
	if t.IsFrozen() {
		s = "frozen<" + s + ">"
	}
	return s
}

// cqlReserved are the words CQL does not take as unquoted identifiers: the
// reserved keywords of the CQL reference (Appendix A) and of Cassandra's
// reserved-keyword list, and the consistency levels older versions reserved.
var cqlReserved = strings.Fields(`ADD ALLOW ALTER AND ANY APPLY ASC AUTHORIZE BATCH BEGIN BY CHECK
	COLUMNFAMILY CONSTRAINT CREATE DELETE DESC DESCRIBE DROP EACH_QUORUM ENTRIES EXECUTE FROM FULL
	GRANT IF IN INDEX INFINITY INSERT INTO IS KEYSPACE LENGTH LIMIT LOCAL_ONE LOCAL_QUORUM
	MATERIALIZED MODIFY NAN NORECURSIVE NOT NULL OF ON ONE OR ORDER PRIMARY QUORUM RENAME REPLACE
	REVOKE SCHEMA SELECT SET TABLE THREE TO TOKEN TRUNCATE TWO UNLOGGED UPDATE USE USING VIEW WHERE
	WITH`)

// cqlTok is one token of CQL text: a word (keyword, unquoted identifier,
// type name), a quoted identifier or a string constant (text unescaped), or
// a punctuation character.
type cqlTok struct {
	kind byte // 'w' word, 'q' quoted identifier, 's' string, 'p' punctuation
	text string
}

// cqlLex splits CQL text into tokens as Cassandra's lexer does for what the
// export may write: it skips whitespace and comments ("--" and "//" to the
// end of the line, "/* */"), reads '…' and $$…$$ strings and "…"
// identifiers (a doubled quote stands for one), words of letters, digits and
// '_', and ( ) , ; . — anything else is an error.
func cqlLex(src string) ([]cqlTok, error) {
	var toks []cqlTok
	for i := 0; i < len(src); {
		rest := src[i:]
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(rest, "--") || strings.HasPrefix(rest, "//"):
			if j := strings.IndexAny(rest, "\r\n"); j >= 0 {
				i += j
			} else {
				i = len(src)
			}
		case strings.HasPrefix(rest, "/*"):
			j := strings.Index(rest[2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated comment at byte %d", i)
			}
			i += 2 + j + 2
		case strings.HasPrefix(rest, "$$"):
			j := strings.Index(rest[2:], "$$")
			if j < 0 {
				return nil, fmt.Errorf("unterminated $$ string at byte %d", i)
			}
			toks = append(toks, cqlTok{'s', rest[2 : 2+j]})
			i += 2 + j + 2
		case c == '\'' || c == '"':
			var body strings.Builder
			j := 1
			for {
				k := strings.IndexByte(rest[j:], c)
				if k < 0 {
					return nil, fmt.Errorf("unterminated %c at byte %d", c, i)
				}
				body.WriteString(rest[j : j+k])
				j += k + 1
				if j < len(rest) && rest[j] == c {
					body.WriteByte(c)
					j++
					continue
				}
				break
			}
			kind := byte('s')
			if c == '"' {
				kind = 'q'
				if body.Len() == 0 {
					return nil, fmt.Errorf(`empty "" identifier at byte %d`, i)
				}
			}
			toks = append(toks, cqlTok{kind, body.String()})
			i += j
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= '0' && src[j] <= '9' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
				j++
			}
			toks = append(toks, cqlTok{'w', src[i:j]})
			i = j
		case strings.IndexByte("(),;.<>", c) >= 0:
			toks = append(toks, cqlTok{'p', string(c)})
			i++
		default:
			return nil, fmt.Errorf("unexpected %q at byte %d", c, i)
		}
	}
	return toks, nil
}

// cqlStmt is one statement of the export, read back: identifiers as
// Cassandra takes them (quoted ones as written, unquoted ones in lower
// case).
type cqlStmt struct {
	index    bool   // CREATE INDEX, else CREATE TABLE
	keyspace string // "" when the table is not qualified
	name     string // the table or index
	table    string // CREATE INDEX: the table
	columns  []string
	types    []string
	part     []string // partition key
	clus     []string // clustering key, each ASC
}

// cqlParse reads the export's CQL back: statements separated by ';', each
//
//	CREATE TABLE [ks.]t ( c type, … PRIMARY KEY ((c, …), c, …) ) [WITH CLUSTERING ORDER BY (c ASC, …)]
//	CREATE INDEX i ON [ks.]t (c)
//
// An unquoted identifier must start with a letter and be no reserved word.
func cqlParse(text string) ([]cqlStmt, error) {
	toks, err := cqlLex(text)
	if err != nil {
		return nil, err
	}
	p := &cqlParser{toks: toks}
	var out []cqlStmt
	for p.more() && p.err == nil {
		out = append(out, p.statement())
	}
	return out, p.err
}

type cqlParser struct {
	toks []cqlTok
	i    int
	err  error
}

func (p *cqlParser) more() bool { return p.i < len(p.toks) }

func (p *cqlParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("token %d: %s", p.i, fmt.Sprintf(format, args...))
	}
	p.i = len(p.toks)
}

// is reports whether the next token is the word or punctuation s
// (keywords in any case), and takes it if so.
func (p *cqlParser) is(s string) bool {
	if p.err != nil || !p.more() {
		return false
	}
	t := p.toks[p.i]
	if t.kind == 'w' && strings.EqualFold(t.text, s) || t.kind == 'p' && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *cqlParser) expect(words ...string) {
	for _, w := range words {
		if !p.is(w) {
			if p.more() {
				p.fail("want %q, got %q", w, p.toks[p.i].text)
			} else {
				p.fail("want %q, got the end", w)
			}
		}
	}
}

// ident reads an identifier as Cassandra names it.
func (p *cqlParser) ident() string {
	if p.err != nil || !p.more() {
		p.fail("want an identifier")
		return ""
	}
	t := p.toks[p.i]
	p.i++
	switch {
	case t.kind == 'q':
		return t.text
	case t.kind != 'w' || !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`).MatchString(t.text):
		p.fail("%q is not an identifier", t.text)
	default:
		for _, r := range cqlReserved {
			if strings.EqualFold(t.text, r) {
				p.fail("reserved word %q as an identifier", t.text)
			}
		}
	}
	return strings.ToLower(t.text)
}

// table reads [ks.]t.
func (p *cqlParser) table() (keyspace, name string) {
	name = p.ident()
	if p.is(".") {
		keyspace, name = name, p.ident()
	}
	return keyspace, name
}

// typ reads a CQL type: a scalar of cqlTestTypes, or set<t>, list<t>,
// map<k, t> of scalars, possibly frozen<…>; it returns it in lower case,
// without spaces.
func (p *cqlParser) typ() string {
	word := ""
	if p.more() {
		word = strings.ToLower(p.toks[p.i].text)
	}
	switch word {
	case "frozen", "set", "list", "map":
		p.i++
		p.expect("<")
		var inner string
		if word == "frozen" {
			inner = p.typ()
		} else {
			inner = p.typ()
			if word == "map" {
				p.expect(",")
				inner += "," + p.typ()
			}
		}
		p.expect(">")
		return word + "<" + inner + ">"
	}
	for _, v := range cqlTestTypes {
		if p.is(v) {
			return word
		}
	}
	p.fail("want a type, got %q", word)
	return ""
}

func (p *cqlParser) statement() cqlStmt {
	var st cqlStmt
	p.expect("CREATE")
	switch {
	case p.is("TABLE"):
		st.keyspace, st.name = p.table()
		p.expect("(")
		for p.err == nil && !p.is("PRIMARY") {
			st.columns = append(st.columns, p.ident())
			st.types = append(st.types, p.typ())
			p.expect(",")
		}
		p.expect("KEY", "(", "(")
		st.part = append(st.part, p.ident())
		for p.is(",") {
			st.part = append(st.part, p.ident())
		}
		p.expect(")")
		for p.is(",") {
			st.clus = append(st.clus, p.ident())
		}
		p.expect(")", ")")
		if p.is("WITH") {
			p.expect("CLUSTERING", "ORDER", "BY", "(")
			var order []string
			for p.err == nil {
				order = append(order, p.ident())
				p.expect("ASC")
				if !p.is(",") {
					break
				}
			}
			p.expect(")")
			if p.err == nil && !reflect.DeepEqual(order, st.clus) {
				p.fail("clustering order %q, clustering key %q", order, st.clus)
			}
		} else if len(st.clus) > 0 {
			p.fail("no clustering order")
		}
	case p.is("INDEX"):
		st.index = true
		st.name = p.ident()
		p.expect("ON")
		st.keyspace, st.table = p.table()
		p.expect("(")
		st.columns = []string{p.ident()}
		p.expect(")")
	default:
		p.fail("want TABLE or INDEX")
	}
	p.expect(";")
	return st
}
