package lang

import (
	"errors"
	"github.com/kvschema/kvschema/examples"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/types"
)

// fig6 is seed 003 Fig. 6, exactly as written there, and the statements of
// its §4.
var fig6 = examples.Fig6 + `INSERT INTO r VALUES ('a1', 'b', 'x', 100);
SELECT * FROM r WHERE k1='a1' AND k2='b';
`

func TestGoldenFig6(t *testing.T) {
	got, err := ParseScript("fig6.kvs", []byte(fig6))
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		&DefineRelation{Name: "r", Attrs: []AttrDef{
			{Name: "k1", Type: types.String, Key: true},
			{Name: "k2", Type: types.String, Key: true},
			{Name: "v1", Type: types.String},
			{Name: "v2", Type: types.Int},
		}},
		&DefineSchema{
			Primary: true, Name: "s1", Relation: "r",
			Table:     Concat{cnst("s1")},
			Row:       Concat{&Modifier{Name: "suffix", Args: []types.Value{[]byte("-")}, Body: Concat{ref("k1")}}, ref("k2")},
			Family:    Concat{cnst("f")},
			Qualifier: Concat{cnst("")},
			Value:     Concat{&Modifier{Name: "suffix", Args: []types.Value{[]byte("-")}, Body: Concat{ref("v1")}}, ref("v2")},
		},
		&DefineSchema{
			Name: "s2", Relation: "r",
			Table:     Concat{cnst("s2")},
			Row:       Concat{&Modifier{Name: "size", Body: Concat{ref("k2")}}, ref("k1")},
			Family:    Concat{cnst("f")},
			Qualifier: Concat{&AttrNames{Exclude: []string{"k1", "k2"}}},
			Value:     Concat{&AttrValues{Exclude: []string{"k1", "k2"}}},
		},
		&Insert{Relation: "r", Rows: [][]Expr{{lit("a1"), lit("b"), lit("x"), lit(int64(100))}}},
		&Select{Star: true, Relation: "r", Where: and(eq(col("k1"), lit("a1")), eq(col("k2"), lit("b")))},
	}
	if !EqualIgnoringPos(got, want) {
		t.Fatalf("AST differs (-got +want):\n%s", diffIgnoringPos(got, want))
	}
	// Spot-check that the size modifier really has no arguments and that
	// positions point at the first token of each node.
	if m := got[2].(*DefineSchema).Row[0].(*Modifier); m.Args != nil {
		t.Errorf("size{…} Args = %#v, want nil", m.Args)
	}
	if p := got[1].Pos(); p != (Pos{File: "fig6.kvs", Line: 8, Col: 1}) {
		t.Errorf("schema s1 at %v, want fig6.kvs:8:1", p)
	}
	if p := got[1].(*DefineSchema).Row[0].Pos(); p != (Pos{File: "fig6.kvs", Line: 10, Col: 7}) {
		t.Errorf("suffix modifier at %v, want fig6.kvs:10:7", p)
	}

	printed := PrintScript(got)
	again, err := ParseScript("printed", []byte(printed))
	if err != nil {
		t.Fatalf("reparse: %v\n%s", err, printed)
	}
	if !EqualIgnoringPos(got, again) {
		t.Fatalf("reparse differs:\n%s", diffIgnoringPos(got, again))
	}
	if wantPrinted := `DEFINE PRIMARY SCHEMA s1 FOR r {
  TABLE 's1',
  ROW suffix('-'){k1}:k2,
  FAMILY 'f',
  QUALIFIER '',
  VALUE suffix('-'){v1}:v2
}`; Print(got[1]) != wantPrinted {
		t.Errorf("Print(s1) =\n%s\nwant\n%s", Print(got[1]), wantPrinted)
	}
}

// stmtTests are valid statements: the source, the AST it parses to and its
// canonical printed form (empty when it equals the source).
var stmtTests = []struct {
	name, src string
	want      Statement
	printed   string
}{
	{name: "begin", src: "begin transaction", want: &Transaction{Op: Begin}, printed: "BEGIN"},
	{name: "commit", src: "COMMIT work", want: &Transaction{Op: Commit}, printed: "COMMIT"},
	{name: "rollback", src: "ROLLBACK", want: &Transaction{Op: Rollback}},
	{name: "drop schema", src: "drop Schema s_by_v", want: &DropSchema{Name: "s_by_v"}, printed: "DROP SCHEMA s_by_v"},
	{name: "drop schema quoted", src: `DROP SCHEMA "select"`, want: &DropSchema{Name: "select"}},
	{
		name: "aggregates",
		src:  "select k, count(*), Min(r.v), SUM(v) from r group by r.k order by k limit 3",
		want: &Select{Columns: []ColumnRef{{Name: "k"}, {Star: true, Agg: "COUNT"}, {Qual: []string{"r"}, Name: "v", Agg: "MIN"}, {Name: "v", Agg: "SUM"}},
			Relation: "r", GroupBy: []ColumnRef{{Qual: []string{"r"}, Name: "k"}}, OrderBy: []OrderItem{{Column: "k"}}, Limit: &Literal{Value: int64(3)}},
		printed: "SELECT k, COUNT(*), MIN(r.v), SUM(v) FROM r GROUP BY r.k ORDER BY k LIMIT 3",
	},
	{
		name:    "group by after an alias-less relation",
		src:     "SELECT COUNT(x) FROM r GROUP BY x",
		want:    &Select{Columns: []ColumnRef{{Name: "x", Agg: "COUNT"}}, Relation: "r", GroupBy: []ColumnRef{{Name: "x"}}},
		printed: "SELECT COUNT(x) FROM r GROUP BY x",
	},
	{
		name: "relation with every type, aliases and odd attribute names",
		src: `define relation "my rel" { value string KEY, key int Key, size bigint, row float,
			timestamp timestamp, d double, b bool, y bytes, t text, i integer, bl blob, }`,
		want: &DefineRelation{Name: "my rel", Attrs: []AttrDef{
			{Name: "value", Type: types.String, Key: true},
			{Name: "key", Type: types.Int, Key: true},
			{Name: "size", Type: types.BigInt},
			{Name: "row", Type: types.Float},
			{Name: "timestamp", Type: types.Timestamp},
			{Name: "d", Type: types.Double},
			{Name: "b", Type: types.Bool},
			{Name: "y", Type: types.Bytes},
			{Name: "t", Type: types.String},
			{Name: "i", Type: types.Int},
			{Name: "bl", Type: types.Bytes},
		}},
		printed: "DEFINE RELATION \"my rel\" {\n  value STRING KEY,\n  key INT KEY,\n  size BIGINT,\n  row FLOAT,\n" +
			"  timestamp TIMESTAMP,\n  d DOUBLE,\n  b BOOL,\n  y BYTES,\n  t STRING,\n  i INT,\n  bl BYTES\n}",
	},
	{
		name: "schema with every modifier, fields out of order",
		src: `DEFINE SCHEMA s FOR r { VALUE "select":v, ROW salt(16){ordered{a:b}}:DESC{c}:Prefix(x'00ff'){d}:size(2){e}:size(4){'x'}:size(1){f},
			QUALIFIER attr_name[], FAMILY attr_value[a, "b c", 'd'], TABLE x'', }`,
		want: &DefineSchema{
			Name: "s", Relation: "r",
			Table: Concat{&Const{Value: []byte{}}},
			Row: Concat{
				&Modifier{Name: "salt", Args: []types.Value{int64(16)}, Body: Concat{&Modifier{Name: "ordered", Body: Concat{ref("a"), ref("b")}}}},
				&Modifier{Name: "desc", Body: Concat{ref("c")}},
				&Modifier{Name: "prefix", Args: []types.Value{[]byte{0, 0xff}}, Body: Concat{ref("d")}},
				&Modifier{Name: "size", Args: []types.Value{int64(2)}, Body: Concat{ref("e")}},
				&Modifier{Name: "size", Args: []types.Value{int64(4)}, Body: Concat{cnst("x")}},
				&Modifier{Name: "size", Args: []types.Value{int64(1)}, Body: Concat{ref("f")}},
			},
			Family:    Concat{&AttrValues{Exclude: []string{"a", "b c", "d"}}},
			Qualifier: Concat{&AttrNames{}},
			Value:     Concat{ref("select"), ref("v")},
		},
		printed: "DEFINE SCHEMA s FOR r {\n  TABLE '',\n" +
			"  ROW salt(16){ordered{a:b}}:desc{c}:prefix(x'00ff'){d}:size(2){e}:size(4){'x'}:size(1){f},\n" +
			"  FAMILY attr_value['a', 'b c', 'd'],\n  QUALIFIER attr_name[],\n  VALUE \"select\":v\n}",
	},
	{
		name:    "schema with only ROW; modifier names usable as attributes",
		src:     `DEFINE SCHEMA s FOR r { ROW size:suffix:attr_name:desc{x} }`,
		want:    &DefineSchema{Name: "s", Relation: "r", Row: Concat{ref("size"), ref("suffix"), ref("attr_name"), &Modifier{Name: "desc", Body: Concat{ref("x")}}}},
		printed: "DEFINE SCHEMA s FOR r {\n  ROW size:suffix:attr_name:desc{x}\n}",
	},
	{
		name: "column family with SPLIT ON tuples of every literal kind",
		src: `DEFINE COLUMN FAMILY cf FOR items { PARTITION KEY (items.a, items.b), VALUES (items.c),
			split on (('g', -5), (x'00ff', 1.5), TRUE, (TIMESTAMP '2024-01-02', 7), ('m')) }`,
		want: &DefineColumnFamily{Name: "cf", Relation: "items",
			Partition:  []ColumnRef{{Qual: []string{"items"}, Name: "a"}, {Qual: []string{"items"}, Name: "b"}},
			Clustering: []ColumnRef{}, Values: []ColumnRef{{Qual: []string{"items"}, Name: "c"}},
			SplitOn: []SplitPoint{{Values: []types.Value{"g", int64(-5)}}, {Values: []types.Value{[]byte{0, 0xff}, 1.5}},
				{Values: []types.Value{true}}, {Values: []types.Value{ts("2024-01-02 00:00:00"), int64(7)}}, {Values: []types.Value{"m"}}}},
		printed: "DEFINE COLUMN FAMILY cf FOR items {\n  PARTITION KEY (items.a, items.b),\n  CLUSTERING KEY (),\n  VALUES (items.c),\n" +
			"  SPLIT ON (('g', -5), (x'00ff', 1.5), (TRUE), (TIMESTAMP '2024-01-02 00:00:00', 7), ('m'))\n}",
	},
	{
		name: "column family with single-value SPLIT ON",
		src:  `DEFINE COLUMN FAMILY cf FOR items { PARTITION KEY (items.id), SPLIT ON ((1000), 2000, -1), }`,
		want: &DefineColumnFamily{Name: "cf", Relation: "items", Partition: []ColumnRef{{Qual: []string{"items"}, Name: "id"}},
			Clustering: []ColumnRef{}, Values: []ColumnRef{},
			SplitOn: []SplitPoint{{Values: []types.Value{int64(1000)}}, {Values: []types.Value{int64(2000)}}, {Values: []types.Value{int64(-1)}}}},
		printed: "DEFINE COLUMN FAMILY cf FOR items {\n  PARTITION KEY (items.id),\n  CLUSTERING KEY (),\n  VALUES (),\n  SPLIT ON (1000, 2000, -1)\n}",
	},
	{
		name: "schema with SPLIT ON between fields",
		src:  `DEFINE SCHEMA s FOR r { ROW k, Split On ('g', x'00ff', '', 'it''s'), VALUE v }`,
		want: &DefineSchema{Name: "s", Relation: "r", Row: Concat{ref("k")}, Value: Concat{ref("v")},
			SplitOn: []*Const{cnst("g"), {Value: []byte{0, 0xff}}, cnst(""), cnst("it's")}},
		printed: "DEFINE SCHEMA s FOR r {\n  ROW k,\n  VALUE v,\n  SPLIT ON ('g', x'00ff', '', 'it''s')\n}",
	},
	{
		name: "insert with columns, several rows and every literal kind",
		src: `INSERT INTO r (k1, "K 2", value) VALUES (?, -5, -9223372036854775808), (9223372036854775807, 1.5, -.5),
			('it''s', x'00FF', TIMESTAMP '2024-01-02 03:04:05.123456'), (TRUE, false, NULL), (?, 1e10, -1.0E-3)`,
		want: &Insert{Relation: "r", Columns: []string{"k1", "K 2", "value"}, Rows: [][]Expr{
			{prm(0), lit(int64(-5)), lit(int64(math.MinInt64))},
			{lit(int64(math.MaxInt64)), lit(1.5), lit(-0.5)},
			{lit("it's"), lit([]byte{0, 0xff}), lit(ts("2024-01-02 03:04:05.123456"))},
			{lit(true), lit(false), lit(nil)},
			{prm(1), lit(1e10), lit(-1e-3)},
		}},
		printed: `INSERT INTO r (k1, "K 2", value) VALUES (?, -5, -9223372036854775808), (9223372036854775807, 1.5, -0.5), ` +
			`('it''s', x'00ff', TIMESTAMP '2024-01-02 03:04:05.123456'), (TRUE, FALSE, NULL), (?, 1e+10, -0.001)`,
	},
	{
		name: "select with columns, IN, NOT IN, BETWEEN, NOT BETWEEN, IS [NOT] NULL",
		src: `select a, b from r where a in (1, ?, 'x') and b not in (?) or c between 1 and ? and d not between ? and 5
			or e is null or f is not null`,
		want: &Select{Columns: cols("a", "b"), Relation: "r", Where: or(or(or(
			and(&In{X: col("a"), List: []Expr{lit(int64(1)), prm(0), lit("x")}}, &In{X: col("b"), List: []Expr{prm(1)}, Not: true}),
			and(&Between{X: col("c"), Lo: lit(int64(1)), Hi: prm(2)}, &Between{X: col("d"), Lo: prm(3), Hi: lit(int64(5)), Not: true})),
			&IsNull{X: col("e")}),
			&IsNull{X: col("f"), Not: true})},
		printed: `SELECT a, b FROM r WHERE a IN (1, ?, 'x') AND b NOT IN (?) OR c BETWEEN 1 AND ? AND d NOT BETWEEN ? AND 5 ` +
			`OR e IS NULL OR f IS NOT NULL`,
	},
	{
		name: "comparison operators, parentheses and NOT",
		src:  `SELECT * FROM r WHERE NOT (a = 1 OR b <> 2) AND (c != 3 OR (d < 4 AND e <= 5)) AND NOT NOT f > 6 AND g >= -7`,
		want: &Select{Star: true, Relation: "r", Where: and(and(and(
			not(or(eq(col("a"), lit(int64(1))), bin(OpNe, col("b"), lit(int64(2))))),
			or(bin(OpNe, col("c"), lit(int64(3))), and(bin(OpLt, col("d"), lit(int64(4))), bin(OpLe, col("e"), lit(int64(5)))))),
			not(not(bin(OpGt, col("f"), lit(int64(6)))))),
			bin(OpGe, col("g"), lit(int64(-7))))},
		printed: `SELECT * FROM r WHERE NOT (a = 1 OR b != 2) AND (c != 3 OR d < 4 AND e <= 5) AND NOT (NOT f > 6) AND g >= -7`,
	},
	{
		name: "right-nested AND and OR keep their parentheses",
		src:  `SELECT * FROM r WHERE a AND (b AND c) OR (d OR e) AND (f OR g)`,
		want: &Select{Star: true, Relation: "r", Where: or(
			and(col("a"), and(col("b"), col("c"))),
			and(or(col("d"), col("e")), or(col("f"), col("g"))))},
		printed: `SELECT * FROM r WHERE a AND (b AND c) OR (d OR e) AND (f OR g)`,
	},
	{
		name: "predicates as operands are parenthesized",
		src:  `SELECT * FROM r WHERE (a = b) = (c IS NULL) AND (x IN (1)) IN ((y = 2), z) AND (p BETWEEN 1 AND 2) BETWEEN (NOT q) AND (r OR s)`,
		want: &Select{Star: true, Relation: "r", Where: and(and(
			eq(eq(col("a"), col("b")), &IsNull{X: col("c")}),
			&In{X: &In{X: col("x"), List: []Expr{lit(int64(1))}}, List: []Expr{eq(col("y"), lit(int64(2))), col("z")}}),
			&Between{X: &Between{X: col("p"), Lo: lit(int64(1)), Hi: lit(int64(2))}, Lo: not(col("q")), Hi: or(col("r"), col("s"))})},
	},
	{
		name:    "order by several columns, limit ?",
		src:     `SELECT k FROM r WHERE k > ? ORDER BY a, b ASC, c DESC LIMIT ?`,
		want:    &Select{Columns: cols("k"), Relation: "r", Where: bin(OpGt, col("k"), prm(0)), OrderBy: []OrderItem{{Column: "a"}, {Column: "b"}, {Column: "c", Desc: true}}, Limit: prm(1)},
		printed: `SELECT k FROM r WHERE k > ? ORDER BY a, b, c DESC LIMIT ?`,
	},
	{
		name: "limit 0, literal and boolean predicates",
		src:  `SELECT * FROM r WHERE TRUE AND x LIMIT 0`,
		want: &Select{Star: true, Relation: "r", Where: and(lit(true), col("x")), Limit: lit(int64(0))},
	},
	{
		name: "timestamp as a column name and as a literal",
		src:  `SELECT timestamp FROM r WHERE timestamp >= TIMESTAMP '2024-01-02' AND Timestamp < timestamp '2024-01-02T10:00:00+02:00'`,
		want: &Select{Columns: cols("timestamp"), Relation: "r", Where: and(
			bin(OpGe, col("timestamp"), lit(ts("2024-01-02 00:00:00"))),
			bin(OpLt, col("Timestamp"), lit(ts("2024-01-02 08:00:00"))))},
		printed: `SELECT timestamp FROM r WHERE timestamp >= TIMESTAMP '2024-01-02 00:00:00' AND Timestamp < TIMESTAMP '2024-01-02 08:00:00'`,
	},
	{
		name:    "update numbers SET parameters before WHERE parameters",
		src:     `UPDATE r SET a = ?, "b""c" = -1.5e3, d = NULL WHERE k = ? AND j = ?`,
		want:    &Update{Relation: "r", Set: []Assignment{{Column: "a", Value: prm(0)}, {Column: `b"c`, Value: lit(-1500.0)}, {Column: "d", Value: lit(nil)}}, Where: and(eq(col("k"), prm(1)), eq(col("j"), prm(2)))},
		printed: `UPDATE r SET a = ?, "b""c" = -1500.0, d = NULL WHERE k = ? AND j = ?`,
	},
	{
		name: "delete without WHERE",
		src:  `DELETE FROM r`,
		want: &Delete{Relation: "r"},
	},
	{
		name: "delete with WHERE and comments of every kind",
		src: "DELETE -- the whole line\n FROM /* a\n block */ r # hash comment\n WHERE\n" +
			"k = 'x' -- trailing",
		want:    &Delete{Relation: "r", Where: eq(col("k"), lit("x"))},
		printed: `DELETE FROM r WHERE k = 'x'`,
	},
	{
		name:    "explain select numbers its parameters",
		src:     `EXPLAIN SELECT * FROM r WHERE a = ? AND b = ? LIMIT ?`,
		want:    &Explain{Stmt: &Select{Star: true, Relation: "r", Where: and(eq(col("a"), prm(0)), eq(col("b"), prm(1))), Limit: prm(2)}},
		printed: `EXPLAIN SELECT * FROM r WHERE a = ? AND b = ? LIMIT ?`,
	},
	{
		name: "explain insert",
		src:  `EXPLAIN INSERT INTO r VALUES (?, ?)`,
		want: &Explain{Stmt: &Insert{Relation: "r", Rows: [][]Expr{{prm(0), prm(1)}}}},
	},
	{
		name: "explain update",
		src:  `EXPLAIN UPDATE r SET a = 1 WHERE b = ?`,
		want: &Explain{Stmt: &Update{Relation: "r", Set: []Assignment{{Column: "a", Value: lit(int64(1))}}, Where: eq(col("b"), prm(0))}},
	},
	{
		name: "explain delete",
		src:  `EXPLAIN DELETE FROM r WHERE a IS NULL`,
		want: &Explain{Stmt: &Delete{Relation: "r", Where: &IsNull{X: col("a")}}},
	},
	{
		name:    "quoted identifiers: reserved words, spaces, quotes, odd bytes",
		src:     "SELECT \"from\", \"a b\", \"x\"\"y\", \"\x00\n\xff\" FROM \"SELECT\" WHERE \"where\" = 1",
		want:    &Select{Columns: cols("from", "a b", `x"y`, "\x00\n\xff"), Relation: "SELECT", Where: eq(col("where"), lit(int64(1)))},
		printed: "SELECT \"from\", \"a b\", \"x\"\"y\", \"\x00\n\xff\" FROM \"SELECT\" WHERE \"where\" = 1",
	},
	{
		name:    "strings with newlines, NUL and invalid UTF-8; trailing semicolon",
		src:     "INSERT INTO r VALUES ('a\nb', '\x00', '\xff''');",
		want:    &Insert{Relation: "r", Rows: [][]Expr{{lit("a\nb"), lit("\x00"), lit("\xff'")}}},
		printed: "INSERT INTO r VALUES ('a\nb', '\x00', '\xff''')",
	},
	{
		name:    "no spaces around operators",
		src:     `SELECT*FROM r WHERE a<>-1 AND b<=2 OR(c>=.5)`,
		want:    &Select{Star: true, Relation: "r", Where: or(and(bin(OpNe, col("a"), lit(int64(-1))), bin(OpLe, col("b"), lit(int64(2)))), bin(OpGe, col("c"), lit(0.5)))},
		printed: `SELECT * FROM r WHERE a != -1 AND b <= 2 OR c >= 0.5`,
	},
}

func TestParseStatement(t *testing.T) {
	for _, tc := range stmtTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStatement("", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if !EqualIgnoringPos(got, tc.want) {
				t.Fatalf("AST differs (-got +want):\n%s", diffIgnoringPos(got, tc.want))
			}
			printed := roundTrip(t, got)
			want := tc.printed
			if want == "" {
				want = tc.src
			}
			if printed != want {
				t.Errorf("printed\n%s\nwant\n%s", printed, want)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	sel := &Select{Star: true, Relation: "r"}
	tests := []struct {
		src  string
		want []Statement
	}{
		{"", nil},
		{" -- only a comment\n", nil},
		{";;;", nil},
		{"SELECT * FROM r", []Statement{sel}},
		{";SELECT * FROM r;;SELECT * FROM r;", []Statement{sel, sel}},
		{"SELECT * FROM r WHERE a = ?; SELECT * FROM r WHERE a = ?", []Statement{
			&Select{Star: true, Relation: "r", Where: eq(col("a"), prm(0))},
			&Select{Star: true, Relation: "r", Where: eq(col("a"), prm(0))},
		}},
	}
	for _, tc := range tests {
		got, err := ParseScript("", []byte(tc.src))
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if !EqualIgnoringPos(got, tc.want) {
			t.Errorf("%q: (-got +want):\n%s", tc.src, diffIgnoringPos(got, tc.want))
		}
	}
}

func TestParseExpr(t *testing.T) {
	got, err := ParseExpr("", "a = ? OR b IN (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	want := or(eq(col("a"), prm(0)), &In{X: col("b"), List: []Expr{prm(1), prm(2)}})
	if !EqualIgnoringPos(got, want) {
		t.Fatalf("(-got +want):\n%s", diffIgnoringPos(got, want))
	}
	if _, err := ParseExpr("", "a = 1 b"); err == nil || !strings.Contains(err.Error(), "1:7: expected end of input after expression, found 'b'") {
		t.Errorf("trailing token: got %v", err)
	}
}

func TestPositions(t *testing.T) {
	src := "SELECT a\nFROM r\nWHERE  NOT x = -1 AND y IN (?) AND z IS NULL AND w BETWEEN 1 AND 2\nORDER BY a"
	s, err := ParseStatement("q.kvs", src)
	if err != nil {
		t.Fatal(err)
	}
	sel := s.(*Select)
	at := func(line, col int) Pos { return Pos{File: "q.kvs", Line: line, Col: col} }
	top := sel.Where.(*Binary)            // ((NOT x = -1 AND y IN (?)) AND z IS NULL) AND w BETWEEN …
	left := top.L.(*Binary).L.(*Binary)   // NOT x = -1 AND y IN (?)
	notX := left.L.(*Not)                 // NOT x = -1
	cmpX := notX.X.(*Binary)              // x = -1
	in := left.R.(*In)                    // y IN (?)
	isNull := top.L.(*Binary).R.(*IsNull) // z IS NULL
	between := top.R.(*Between)           // w BETWEEN 1 AND 2
	checks := []struct {
		name string
		got  Pos
		want Pos
	}{
		{"select", sel.At, at(1, 1)},
		{"top AND", top.At, at(3, 8)},
		{"NOT", notX.At, at(3, 8)},
		{"x = -1", cmpX.At, at(3, 12)},
		{"-1", cmpX.R.Pos(), at(3, 16)},
		{"IN", in.At, at(3, 23)},
		{"?", in.List[0].Pos(), at(3, 29)},
		{"IS NULL", isNull.At, at(3, 36)},
		{"BETWEEN", between.At, at(3, 50)},
		{"ORDER BY a", sel.OrderBy[0].At, at(4, 10)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s at %v, want %v", c.name, c.got, c.want)
		}
	}
}

// errorTests are bad inputs to ParseScript with the position and a fragment
// of the message each must be reported with.
var errorTests = []struct {
	name, src, pos, msg string
}{
	{"unknown type", "DEFINE RELATION r {\n  k1 STRING KEY,\n  k2 STRNG\n}", "3:6", "unknown type 'STRNG' (valid types: STRING, INT, BIGINT, FLOAT, DOUBLE, BOOL, TIMESTAMP, BYTES, and SET<T>, LIST<T>, MAP<K, V> of them, FROZEN or not)"},
	{"collection in a non-frozen collection", "DEFINE RELATION r { k INT KEY, tags SET<FROZEN<SET<INT>>> }", "1:41", "a collection's elements are scalars"},
	{"collection of collections", "DEFINE RELATION r { k INT KEY, m FROZEN<MAP<STRING, LIST<INT>>> }", "1:53", "a collection's elements are scalars"},
	{"unknown element type", "DEFINE RELATION r { k INT KEY, m FROZEN<LIST<TEXTS>> }", "1:46", "unknown type 'TEXTS' (valid element types:"},
	{"unclosed collection type", "DEFINE RELATION r { k INT KEY, m FROZEN<MAP<STRING INT>> }", "1:52", "expected ',' after the key type of MAP<K, V>"},
	{"NULL in a collection", "INSERT INTO r VALUES (1, {'a', NULL})", "1:32", "a collection cannot hold NULL"},
	{"nested collection literal", "INSERT INTO r VALUES (1, [[1]])", "1:27", "a collection's elements are scalars"},
	{"parameter in a collection literal", "INSERT INTO r VALUES (1, {?})", "1:27", "a literal in a collection"},
	{"map literal without a value", "INSERT INTO r VALUES (1, {'a': 1, 'b'})", "1:38", "expected ':' after a key in the MAP literal"},
	{"unclosed list literal", "INSERT INTO r VALUES (1, [1, 2)", "1:31", "in the collection literal at 1:26"},
	{"prepend to another column", "UPDATE r SET l = ['a'] + m WHERE k = 1", "1:26", "expected l after '+' (a list's prepend, l = v + l), found 'm'"},
	{"element key unclosed", "UPDATE r SET m['k' = 1 WHERE k = 1", "1:20", "expected ']' after a collection element's key"},
	{"element added to an element", "UPDATE r SET m['k'] = m + {} WHERE k = 1", "1:23", "expected value (a literal or '?'), found 'm'"},
	{"deleted columns without FROM", "DELETE m['k'], v r WHERE k = 1", "1:18", "expected FROM after the columns to delete"},
	{"deleted element key unclosed", "DELETE m['k' FROM r WHERE k = 1", "1:14", "expected ']' after a collection element's key"},
	{"bad token after attribute", "DEFINE RELATION r {\n  k1 STRING,\n  k2 INT FOO\n}", "3:10", "expected ',' or '}' after attribute definition, found 'FOO'"},
	{"relation missing type", "DEFINE RELATION r { k1 }", "1:24", "expected type of attribute k1, found '}'"},
	{"relation unclosed", "DEFINE RELATION r { k1 INT,", "1:28", "expected attribute name, found end of input"},
	{"missing ROW", "DEFINE SCHEMA s FOR r {\n  TABLE 't',\n  FAMILY 'f'\n}", "4:1", "schema s has no ROW field"},
	{"duplicate field", "DEFINE SCHEMA s FOR r { ROW a, FAMILY 'f', row b }", "1:44", "duplicate ROW field in schema s"},
	{"unknown field", "DEFINE SCHEMA s FOR r { ROW a, COLUMN b }", "1:32", "expected TABLE, ROW, FAMILY, QUALIFIER, VALUE or SPLIT ON, found 'COLUMN'"},
	{"schema SPLIT ON a number", "DEFINE SCHEMA s FOR r { ROW a, SPLIT ON ('a', 5) }", "1:47", "expected row key (string or binary constant) in SPLIT ON, found number 5"},
	{"schema SPLIT ON empty", "DEFINE SCHEMA s FOR r { ROW a, SPLIT ON () }", "1:42", "expected row key (string or binary constant) in SPLIT ON"},
	{"schema SPLIT without ON", "DEFINE SCHEMA s FOR r { ROW a, SPLIT ('a') }", "1:38", "expected ON after SPLIT"},
	{"schema duplicate SPLIT ON", "DEFINE SCHEMA s FOR r { SPLIT ON ('a'), ROW a, SPLIT ON ('b') }", "1:48", "duplicate SPLIT ON in schema s"},
	{"schema SPLIT ON then element", "DEFINE SCHEMA s FOR r { ROW a, SPLIT ON ('a') ROW b }", "1:47", "expected ',' or '}' after SPLIT ON (…), found 'ROW'"},
	{"split point too long", "DEFINE COLUMN FAMILY cf FOR t {\n  PARTITION KEY (t.a),\n  SPLIT ON ((1), (2, 'x'))\n}", "3:18", "column family cf: split point has 2 values but the partition key only 1 attribute(s)"},
	{"split on NULL", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (1, NULL) }", "1:67", "SPLIT ON values cannot be NULL"},
	{"split on a parameter", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (?) }", "1:64", "expected constant (string, number, boolean, binary or timestamp literal) in SPLIT ON, found '?'"},
	{"split on empty point", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (()) }", "1:65", "expected constant"},
	{"split on unclosed", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (1 }", "1:66", "expected ')' or ',' after split point, found '}'"},
	{"split on with salt", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SALT_BUCKETS = 4,\n  SPLIT ON (1) }", "2:3", "column family cf: SPLIT ON and SALT_BUCKETS exclude each other"},
	{"salt after split on", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (1), SALT_BUCKETS = 4 }", "1:68", "SPLIT ON and SALT_BUCKETS exclude each other"},
	{"duplicate split on", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (1), SPLIT ON (2) }", "1:68", "column family cf: duplicate SPLIT"},
	{"duplicate salt buckets", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SALT_BUCKETS = 2, SALT_BUCKETS = 3 }", "1:72", "column family cf: duplicate SALT_BUCKETS"},
	{"buckets without clustering", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), PARTITION_BUCKETS = 4 }", "1:54", "column family cf: PARTITION_BUCKETS needs a clustering key"},
	{"one bucket", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), PARTITION_BUCKETS = 1 }", "1:76", "column family cf: PARTITION_BUCKETS must be at least 2"},
	{"buckets too many", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), PARTITION_BUCKETS = 257 }", "1:76", "column family cf: PARTITION_BUCKETS must be at most 256"},
	{"buckets with static", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), STATIC (t.c), PARTITION_BUCKETS = 2 }", "1:90", "PARTITION_BUCKETS and STATIC exclude each other"},
	{"buckets with salt", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), PARTITION_BUCKETS = 2,\n  SALT_BUCKETS = 4 }", "2:3", "PARTITION_BUCKETS and SALT_BUCKETS exclude each other"},
	{"buckets after split on", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), SPLIT ON (1), PARTITION_BUCKETS = 2 }", "1:90", "PARTITION_BUCKETS and SPLIT ON exclude each other"},
	{"duplicate partition buckets", "DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), CLUSTERING KEY (t.b), PARTITION_BUCKETS = 2, PARTITION_BUCKETS = 3 }", "1:99", "column family cf: duplicate PARTITION_BUCKETS"},
	{"missing FOR", "DEFINE SCHEMA s r { ROW a }", "1:17", "expected FOR after schema name, found 'r'"},
	{"PRIMARY without SCHEMA", "DEFINE PRIMARY RELATION r {a INT}", "1:16", "expected SCHEMA after DEFINE PRIMARY, found 'RELATION'"},
	{"drop what", "DROP TABLE t", "1:6", "expected SCHEMA after DROP (DROP SCHEMA name removes a layout), found 'TABLE'"},
	{"drop schema without name", "DROP SCHEMA", "1:12", "expected schema name, found end of input"},
	{"drop schema reserved name", "SELECT * FROM r;\nDROP SCHEMA select", "2:13", "expected schema name, found reserved word 'select'"},
	{"drop schema then more", "DROP SCHEMA s t", "1:15", "found 't'"},
	{"define what", "DEFINE TABLE t", "1:8", "expected RELATION, SCHEMA, PRIMARY SCHEMA, WORKLOAD, COLUMN FAMILY or SECONDARY INDEX after DEFINE"},
	{"suffix without argument", "DEFINE SCHEMA s FOR r { ROW suffix{a} }", "1:29", "suffix takes exactly one string or binary argument"},
	{"suffix with integer", "DEFINE SCHEMA s FOR r { ROW suffix(1){a} }", "1:29", "suffix takes exactly one string or binary argument"},
	{"prefix with two arguments", "DEFINE SCHEMA s FOR r { ROW prefix('a', 'b'){a} }", "1:29", "prefix takes exactly one string or binary argument"},
	{"size(3)", "DEFINE SCHEMA s FOR r { ROW size(3){a} }", "1:29", "size takes no argument or one of 1, 2 and 4"},
	{"ordered with argument", "DEFINE SCHEMA s FOR r {\n ROW ordered('x'){a} }", "2:6", "ordered takes no arguments"},
	{"desc with argument", "DEFINE SCHEMA s FOR r { ROW desc(1){a} }", "1:29", "desc takes no arguments"},
	{"salt(0)", "DEFINE SCHEMA s FOR r { ROW salt(0){a} }", "1:29", "salt takes one integer argument in 1..256"},
	{"salt(300)", "DEFINE SCHEMA s FOR r { ROW salt(300){a} }", "1:29", "salt takes one integer argument in 1..256"},
	{"salt without argument", "DEFINE SCHEMA s FOR r { ROW salt{a} }", "1:29", "salt takes one integer argument in 1..256"},
	{"unknown modifier", "DEFINE SCHEMA s FOR r { ROW reverse{a} }", "1:29", "unknown modifier 'reverse'"},
	{"empty modifier body", "DEFINE SCHEMA s FOR r { ROW size{} }", "1:34", "expected schema element"},
	{"modifier argument not a literal", "DEFINE SCHEMA s FOR r { ROW suffix(?){a} }", "1:36", "expected literal argument of suffix, found '?'"},
	{"attr_name with number", "DEFINE SCHEMA s FOR r { ROW a, QUALIFIER attr_name[1] }", "1:52", "expected attribute name (string or identifier) in attr_name[…], found number 1"},
	{"unterminated string", "SELECT * FROM r\nWHERE a = 'abc\n", "2:11", "unterminated string literal"},
	{"unterminated comment", "SELECT * /* comment\n FROM r", "1:10", "unterminated comment"},
	{"unterminated quoted identifier", "SELECT \"abc FROM r", "1:8", "unterminated quoted identifier"},
	{"empty quoted identifier", `SELECT "" FROM r`, "1:8", "empty quoted identifier"},
	{"integer overflow", "INSERT INTO r VALUES (9223372036854775808)", "1:23", "integer out of range"},
	{"negative integer overflow", "INSERT INTO r VALUES (-9223372036854775809)", "1:23", "integer out of range"},
	{"float overflow", "INSERT INTO r VALUES (1e999)", "1:23", "float out of range"},
	{"malformed number", "SELECT * FROM r WHERE a = 12abc", "1:27", "malformed number '12abc'"},
	{"odd binary literal", "INSERT INTO r VALUES (x'abc')", "1:23", "even number of hex digits"},
	{"bad hex digit", "INSERT INTO r VALUES (X'zz')", "1:23", "invalid hex digit 'z'"},
	{"bad timestamp", "INSERT INTO r VALUES (TIMESTAMP 'yesterday')", "1:33", `invalid timestamp "yesterday"`},
	{"timestamp year out of range", "INSERT INTO r VALUES (TIMESTAMP '9999-12-31T23:59:59-01:00')", "1:33", "out of range"},
	{"missing FROM", "SELECT a, b WHERE a = 1", "1:13", "expected FROM after select list, found 'WHERE'"},
	{"trailing garbage", "SELECT * FROM r alias garbage", "1:23", "expected ';' or end of input after statement, found 'garbage'"},
	{"reserved word as identifier", "SELECT * FROM select", "1:15", "expected relation name, found reserved word 'select'"},
	{"reserved word as column", "SELECT * FROM r WHERE order = 1", "1:23", "found reserved word 'order'"},
	{"reserved word in schema", "DEFINE SCHEMA s FOR r { ROW a:limit }", "1:31", "found reserved word 'limit'"},
	{"unexpected character", "SELECT * FROM r WHERE a = @", "1:27", "unexpected character '@'"},
	{"lone bang", "SELECT * FROM r WHERE a ! 1", "1:25", "unexpected character '!'"},
	{"lone minus", "SELECT * FROM r WHERE a = - 1", "1:27", "expected expression, found '-'"},
	{"arithmetic", "SELECT * FROM r WHERE a = b + 1", "1:29", "expected ';' or end of input after statement, found '+'"},
	{"negative limit", "SELECT * FROM r LIMIT -1", "1:23", "expected non-negative integer or '?' after LIMIT, found number -1"},
	{"float limit", "SELECT * FROM r LIMIT 1.5", "1:23", "expected non-negative integer or '?' after LIMIT"},
	{"unclosed paren", "SELECT * FROM r WHERE (a = 1", "1:29", "expected ')' to match '(' at 1:23, found end of input"},
	{"chained comparison", "SELECT * FROM r WHERE a = b = c", "1:29", "found '='"},
	{"NOT without IN", "SELECT * FROM r WHERE a NOT LIKE 'x'", "1:29", "expected IN, BETWEEN or CONTAINS after NOT, found 'LIKE'"},
	{"IS without NULL", "SELECT * FROM r WHERE a IS 1", "1:28", "expected NULL after IS, found number 1"},
	{"BETWEEN without AND", "SELECT * FROM r WHERE a BETWEEN 1 OR 2", "1:35", "expected AND in BETWEEN, found 'OR'"},
	{"empty IN list", "SELECT * FROM r WHERE a IN ()", "1:29", "expected expression, found ')'"},
	{"column as insert value", "INSERT INTO r VALUES (a)", "1:23", "expected value (a literal or '?'), found 'a'"},
	{"insert without VALUES", "INSERT INTO r SELECT", "1:15", "expected VALUES or '(' after relation name"},
	{"update without SET", "UPDATE r a = 1", "1:10", "expected SET after relation name, found 'a'"},
	{"delete without relation", "DELETE WHERE a = 1", "1:8", "expected relation name, found reserved word 'WHERE'"},
	{"explain define", "EXPLAIN DEFINE RELATION r {a INT}", "1:9", "expected SELECT, INSERT, UPDATE, DELETE, CONNECT or DISCONNECT after EXPLAIN"},
	{"unknown function", "SELECT median(x) FROM r", "1:8", "unknown function median (aggregates: COUNT, MIN, MAX, SUM, AVG)"},
	{"star outside COUNT", "SELECT SUM(*) FROM r", "1:12", "expected column name"},
	{"unclosed aggregate", "SELECT COUNT(x FROM r", "1:16", "expected ')' after the aggregate's argument"},
	{"group by nothing", "SELECT x FROM r GROUP BY", "1:25", "expected column name"},
	{"not a statement", "\n\n  FROB", "3:3", "expected statement"},
	{"missing semicolon", "SELECT * FROM r\nSELECT * FROM r", "2:1", "expected ';' or end of input after statement, found 'SELECT'"},
	{"parse error before later lex error", "SELECT * FRM r; 'unterminated", "1:10", "expected FROM after select list, found 'FRM'"},
	{"error in second statement", "SELECT * FROM r;\nDELETE FROM r WHERE", "2:20", "expected expression, found end of input"},
	{"deep parentheses", "SELECT * FROM r WHERE " + strings.Repeat("(", 2000) + "a" + strings.Repeat(")", 2000), "1:1023", "nested too deeply"},
	{"deep NOT", "SELECT * FROM r WHERE " + strings.Repeat("NOT ", 2000) + "a", "1:4023", "nested too deeply"},
	{"long OR chain", "SELECT * FROM r WHERE a" + strings.Repeat(" OR a", 2000), "1:5025", "nested too deeply"},
	{"deep modifiers", "DEFINE SCHEMA s FOR r { ROW " + strings.Repeat("size{", 2000) + "a" + strings.Repeat("}", 2000) + " }", "1:5029", "nested too deeply"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorTests {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := ParseScript("bad.kvs", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; parsed %s", PrintScript(ss))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			wantPrefix := "bad.kvs:" + tc.pos + ": "
			if !strings.HasPrefix(err.Error(), wantPrefix) || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got  %v\nwant %s…%s…", err, wantPrefix, tc.msg)
			}
		})
	}
}

func TestParseStatementErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", "1:1: expected statement (SELECT, INSERT, UPDATE, DELETE, CONNECT, DISCONNECT, EXPLAIN, DEFINE, DROP SCHEMA, CREATE TABLE, ALTER TABLE, BEGIN, COMMIT or ROLLBACK), found end of input"},
		{";", "1:1: expected statement"},
		{"SELECT * FROM r;;", "1:17: expected end of input after statement, found ';'"},
		{"SELECT * FROM r; SELECT * FROM r", "1:18: expected end of input after statement, found 'SELECT'"},
	}
	for _, tc := range tests {
		_, err := ParseStatement("", tc.src)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{Pos: Pos{Line: 3, Col: 14}, Msg: "boom"}
	if got := e.Error(); got != "3:14: boom" {
		t.Errorf("without file: %q", got)
	}
	e.Pos.File = "r.kvs"
	if got := e.Error(); got != "r.kvs:3:14: boom" {
		t.Errorf("with file: %q", got)
	}
}

// TestLongChainBelowLimit checks that ordinary long predicates parse.
func TestLongChainBelowLimit(t *testing.T) {
	src := "SELECT * FROM r WHERE a = 0" + strings.Repeat(" OR a = 1", 900)
	s, err := ParseStatement("", src)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
}

func BenchmarkParseSelect(b *testing.B) {
	const src = `SELECT k1, v1, v2 FROM r WHERE k1 = 'a1' AND k2 >= ? AND v2 IN (1, 2, 3) ORDER BY k2 DESC LIMIT 10`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseStatement("", src); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDollarParams: $n parameters (PostgreSQL's) take argument n, in any
// order and more than once, print back as written, and cannot be mixed
// with ? in one statement.
func TestDollarParams(t *testing.T) {
	got, err := ParseStatement("", "SELECT * FROM r WHERE a = $2 AND b = $1 OR c = $2 LIMIT $3")
	if err != nil {
		t.Fatal(err)
	}
	dp := func(i int) *Param { return &Param{Index: i, Dollar: true} }
	want := &Select{Star: true, Relation: "r",
		Where: bin(OpOr, bin(OpAnd, bin(OpEq, col("a"), dp(1)), bin(OpEq, col("b"), dp(0))), bin(OpEq, col("c"), dp(1))),
		Limit: dp(2)}
	if !EqualIgnoringPos(got, want) {
		t.Fatalf("AST differs (-got +want):\n%s", diffIgnoringPos(got, want))
	}
	if text := roundTrip(t, got); text != "SELECT * FROM r WHERE a = $2 AND b = $1 OR c = $2 LIMIT $3" {
		t.Errorf("printed %s", text)
	}
	if n := CountParams(got); n != 3 {
		t.Errorf("CountParams = %d, want 3", n)
	}
	ins, err := ParseStatement("", "INSERT INTO r VALUES ($1, 'x', $1)")
	if err != nil || CountParams(ins) != 1 {
		t.Errorf("INSERT with $1 twice: %v, %d params", err, CountParams(ins))
	}
	for _, tc := range []struct{ src, want string }{
		{"SELECT * FROM r WHERE a = ? AND b = $1", "1:37: a statement cannot mix ? and $n parameters"},
		{"SELECT * FROM r WHERE a = $1 AND b = ?", "1:38: a statement cannot mix $n and ? parameters"},
		{"SELECT * FROM r WHERE a = $0", "1:27: parameters are numbered from $1"},
		{"SELECT * FROM r WHERE a = $99999999999", "1:27: parameter number too large"},
	} {
		if _, err := ParseStatement("", tc.src); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.src, err, tc.want)
		}
	}
}

// TestNamedParams: :name parameters take one argument per distinct name
// (case-insensitive), in order of first use, print back as written, and
// mix with no other style; a ':' not followed at once by a name (a
// layout's ROW) stays punctuation.
func TestNamedParams(t *testing.T) {
	got, err := ParseStatement("", "SELECT * FROM r WHERE a = :id AND b = :Name OR c = :ID LIMIT :n")
	if err != nil {
		t.Fatal(err)
	}
	np := func(i int, name string) *Param { return &Param{Index: i, Name: name} }
	want := &Select{Star: true, Relation: "r",
		Where: bin(OpOr, bin(OpAnd, bin(OpEq, col("a"), np(0, "id")), bin(OpEq, col("b"), np(1, "Name"))), bin(OpEq, col("c"), np(0, "ID"))),
		Limit: np(2, "n")}
	if !EqualIgnoringPos(got, want) {
		t.Fatalf("AST differs (-got +want):\n%s", diffIgnoringPos(got, want))
	}
	if text := roundTrip(t, got); text != "SELECT * FROM r WHERE a = :id AND b = :Name OR c = :ID LIMIT :n" {
		t.Errorf("printed %s", text)
	}
	if n, names := CountParams(got), ParamNames(got); n != 3 || strings.Join(names, ",") != "ID,Name,n" {
		t.Errorf("CountParams = %d, ParamNames = %q", n, names)
	}
	ins, err := ParseStatement("", "INSERT INTO r VALUES (:k, 'x', :v), (:k, 'y', :w)")
	if err != nil || CountParams(ins) != 3 {
		t.Errorf("INSERT with :k twice: %v, %d params", err, CountParams(ins))
	}
	for _, tc := range []struct{ src, want string }{
		{"SELECT * FROM r WHERE a = :x AND b = ?", "1:38: a statement cannot mix :name and ? parameters"},
		{"SELECT * FROM r WHERE a = $1 AND b = :x", "1:38: a statement cannot mix $n and :name parameters"},
		{"SELECT * FROM r WHERE a = : x", "1:27: expected"},
	} {
		if _, err := ParseStatement("", tc.src); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.src, err, tc.want)
		}
	}
	// In a layout, ':' concatenates, even right before a name.
	d, err := ParseStatement("", "DEFINE SCHEMA s FOR r { ROW k1:k2, VALUE v }")
	if err != nil {
		t.Fatal(err)
	}
	if row := d.(*DefineSchema).Row; len(row) != 2 {
		t.Errorf("ROW k1:k2 parsed as %d elements", len(row))
	}
}

// TestCollectionOps: CQL's operations on a collection's elements parse to
// their AssignOps and print back as written.
func TestCollectionOps(t *testing.T) {
	tests := []struct {
		src string
		ops []AssignOp
	}{
		{"UPDATE r SET tags = tags + {'x', 'y'} WHERE k = 1", []AssignOp{AssignAdd}},
		{"UPDATE r SET v = 1, tags = tags - ? WHERE k = 1", []AssignOp{AssignValue, AssignRemove}},
		{"UPDATE r SET l = ['a'] + l, l2 = l2 + [1] WHERE k = 1", []AssignOp{AssignPrepend, AssignAdd}},
		{"UPDATE r SET l = ? + l WHERE k = ?", []AssignOp{AssignPrepend}},
		{"UPDATE r SET m['k'] = 1, m[?] = ? WHERE k = 1", []AssignOp{AssignElement, AssignElement}},
		{"UPDATE r SET m = m + {'a': 1}, m = m - {'b'} WHERE k = 1", []AssignOp{AssignAdd, AssignRemove}},
		{"UPDATE r SET tags = {'a'} WHERE k = 1 IF EXISTS", []AssignOp{AssignValue}},
		{"DELETE m['k'], v FROM r WHERE k = 1", []AssignOp{AssignDelete, AssignDelete}},
		{"DELETE m[?] FROM r WHERE k = ? IF EXISTS", []AssignOp{AssignDelete}},
		{"DELETE FROM r WHERE k = 1", nil},
	}
	for _, tc := range tests {
		st, err := ParseStatement("", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		var as []Assignment
		switch s := st.(type) {
		case *Update:
			as = s.Set
		case *Delete:
			as = s.Columns
		}
		var ops []AssignOp
		for _, a := range as {
			ops = append(ops, a.Op)
		}
		if !slices.Equal(ops, tc.ops) {
			t.Errorf("%s: ops %v, want %v", tc.src, ops, tc.ops)
		}
		if got := strings.TrimSuffix(Print(st), ";"); got != tc.src {
			t.Errorf("printed %q, want %q", got, tc.src)
		}
	}
	// Parameters are numbered in source order: a key before its value, a
	// DELETE's columns before its WHERE.
	st, err := ParseStatement("", "DELETE m[?] FROM r WHERE k = ?")
	if err != nil {
		t.Fatal(err)
	}
	d := st.(*Delete)
	if k := d.Columns[0].Key.(*Param); k.Index != 0 {
		t.Errorf("the element key is parameter %d, want 0", k.Index)
	}
}

// TestPartitionKeyAndStatic: PARTITION KEY and STATIC modifiers parse and
// print back.
func TestPartitionKeyAndStatic(t *testing.T) {
	src := "DEFINE RELATION m {\n  room BIGINT PARTITION KEY,\n  id BIGINT KEY,\n  name STRING STATIC SIZE 10\n};"
	st, err := ParseStatement("", src)
	if err != nil {
		t.Fatal(err)
	}
	d := st.(*DefineRelation)
	if a := d.Attrs[0]; !a.Key || !a.Partition || a.Static {
		t.Errorf("room: %+v", a)
	}
	if a := d.Attrs[2]; a.Key || !a.Static || a.Size != 10 {
		t.Errorf("name: %+v", a)
	}
	if got := Print(st) + ";"; got != src {
		t.Errorf("printed\n%s\nwant\n%s", got, src)
	}
	if _, err := ParseStatement("", "DEFINE RELATION m { room BIGINT PARTITION id }"); err == nil || !strings.Contains(err.Error(), "expected KEY after PARTITION") {
		t.Errorf("PARTITION without KEY: %v", err)
	}
}

// TestUsingTTL: USING TTL after an INSERT's rows (before or after IF NOT
// EXISTS) and after an UPDATE's relation; parameters numbered in source
// order; refused where it cannot apply.
func TestUsingTTL(t *testing.T) {
	for src, printed := range map[string]string{
		"INSERT INTO r VALUES (1, 'a') USING TTL 60":                      "",
		"INSERT INTO r VALUES (1, 'a') IF NOT EXISTS USING TTL ?":         "",
		"INSERT INTO r VALUES (1, 'a') USING TTL 5 IF NOT EXISTS":         "INSERT INTO r VALUES (1, 'a') IF NOT EXISTS USING TTL 5",
		"INSERT INTO m SET id = ?, v = ? AND CONNECT TO p(?) USING TTL ?": "",
		"UPDATE r USING TTL 86400 SET v = 'b' WHERE k = 1":                "",
		"UPDATE r USING TTL ? SET v = ? WHERE k = ?":                      "",
	} {
		st, err := ParseStatement("", src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		want := printed
		if want == "" {
			want = src
		}
		if got := Print(st); got != want {
			t.Errorf("printed %q, want %q", got, want)
		}
	}
	st, err := ParseStatement("", "UPDATE r USING TTL ? SET v = ? WHERE k = ?")
	if err != nil {
		t.Fatal(err)
	}
	if p := st.(*Update).TTL.(*Param); p.Index != 0 {
		t.Errorf("the TTL is parameter %d, want 0", p.Index)
	}
	st, err = ParseStatement("", "INSERT INTO r VALUES (?, ?) USING TTL ?")
	if err != nil {
		t.Fatal(err)
	}
	if p := st.(*Insert).TTL.(*Param); p.Index != 2 {
		t.Errorf("the TTL is parameter %d, want 2", p.Index)
	}
	for src, want := range map[string]string{
		"INSERT INTO r VALUES (1) USING 60":                "1:32: expected TTL after USING, found number 60",
		"UPDATE r USING TTL SET v = 1 WHERE k = 1":         "1:20: expected value",
		"INSERT INTO r VALUES (1) USING TTL 1 USING TTL 2": "1:38: expected end of input",
	} {
		if _, err := ParseStatement("", src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want …%s…", src, err, want)
		}
	}
}
