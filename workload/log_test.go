package workload

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
)

// shopModel is a small model for the log tests, written in SQL.
const shopModel = `CREATE TABLE users ( -- ROWS 1000
  id integer PRIMARY KEY,
  nickname text,
  region integer
);
CREATE TABLE items ( -- ROWS 10000
  id integer PRIMARY KEY,
  name text,
  price numeric,
  seller integer REFERENCES users -- REVERSE items_sold
);`

func shop(t testing.TB) *catalog.Model {
	t.Helper()
	ss, _, err := lang.ParseModel("shop.sql", []byte(shopModel))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseLog: entries and their continuation lines, constants turned
// into parameters, identical statements added up, LIMIT parameters
// dropped, and what cannot be used reported with its reason and share.
func TestParseLog(t *testing.T) {
	log := "# exported from pg_stat_statements\r\n" +
		"100\tSELECT name FROM items WHERE id = $1\r\n" +
		"\n" +
		"50\tSELECT name FROM items WHERE id = 7\n" + // the same, with its constant
		"  20 \tselect i.name, u.nickname\n" +
		"\tfrom items i join users u on i.seller = u.id\n" +
		"\twhere u.id = $1 order by i.price desc limit $2\n" +
		"30\tSELECT i.name FROM items i, users u WHERE i.seller = u.id AND u.nickname = 'ann' LIMIT 10\n" +
		"5\tINSERT INTO items (id, name, price, seller) VALUES (1, 'lamp', 9.5, 3)\n" +
		"7\tUPDATE items SET price = 3 WHERE id = 1\n" +
		"2\tDELETE FROM items WHERE id = 1\n" +
		"1000\tBEGIN\n" +
		"1000\tCOMMIT\n" +
		"3\tSET search_path = public\n" +
		"8\tSELECT * FROM items i LEFT JOIN users u ON i.seller = u.id WHERE i.id = 1\n" +
		"4\tSELECT name FROM items WHERE price > 10\n" +
		"6\tSELECT name FROM items WHERE id IN ($1, $2)\n" +
		"1\tSELECT name FROM orders WHERE id = 1\n" +
		"2\tINSERT INTO items (id, name) VALUES (1, 'a'), (2, 'b')\n" +
		"3\tUPDATE items SET seller = 4 WHERE id = 1\n" +
		"1.5\tSELECT lower(name) FROM items WHERE id = 1\n" +
		"0\tSELECT nickname FROM users WHERE id = 1\n" +
		"9\tEXPLAIN SELECT name FROM items WHERE id = 1\n"
	w, rep, err := ParseLog(shop(t), "q.log", []byte(log))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range w.Statements {
		got = append(got, s.Tag+" "+strings.Join(fmtWeights(s), ",")+" "+s.Text())
	}
	want := []string{
		"L2 150 SELECT name FROM items WHERE id = ?",
		"L5 20 SELECT i.name, u.nickname FROM items AS i JOIN users AS u ON i.seller = u.id WHERE u.id = ? ORDER BY i.price DESC",
		"L8 30 SELECT i.name FROM items AS i JOIN users AS u ON i.seller = u.id WHERE u.nickname = ? LIMIT 10",
		"L9 5 INSERT INTO items (id, name, price, seller) VALUES (?, ?, ?, ?)",
		"L10 7 UPDATE items SET price = ? WHERE id = ?",
		"L11 2 DELETE FROM items WHERE id = ?",
		"L22 0 SELECT nickname FROM users WHERE id = ?",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	if w.Mixes[0] != LogMix || w.Statements[1].Group != "L5" {
		t.Errorf("mixes %v, group %s", w.Mixes, w.Statements[1].Group)
	}
	entries := func(es []LogEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprintf("%s:%d:%d %s %s", e.At.File, e.At.Line, e.At.Col, fmtWeight(e.Weight), e.Reason))
		}
		return out
	}
	wantUnusable := []string{
		"q.log:15:3 8 q.log:15:25: LEFT JOIN is not supported: kvschema's joins are inner joins along foreign keys ([INNER] JOIN r ON a.fk = b.key)",
		"q.log:16:3 4 q.log:16:3: the query needs an equality predicate (or a CONTAINS of a SET, a CONTAINS KEY of a MAP, stored one cell per element): every plan the advisor considers starts with a key lookup (add e.g. a constant attribute, as RUBiS does with dummy = 1)",
		"q.log:17:3 6 q.log:17:32: a workload query's WHERE must be a conjunction of comparisons between an attribute and a value or '?' (found id IN (?, ?))",
		"q.log:18:3 1 q.log:18:20: unknown relation orders",
		"q.log:19:3 2 q.log:19:3: a workload INSERT inserts one tuple (found 2 rows)",
		"q.log:20:3 3 q.log:20:20: seller is a relationship: change it with CONNECT/DISCONNECT",
		"q.log:21:5 1.5 q.log:21:12: unknown function lower (aggregates: COUNT, MIN, MAX, SUM, AVG)",
		"q.log:23:3 9 q.log:23:3: not a query or a write (SELECT, INSERT, UPDATE, DELETE)",
	}
	if diff := cmp.Diff(wantUnusable, entries(rep.Unusable)); diff != "" {
		t.Errorf("unusable (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"q.log:4:4 50 the statement L2 once its constants are parameters: its count is added there",
		"q.log:5:7 20 LIMIT with a parameter: costed without its limit (the advisor costs a constant LIMIT only)",
	}
	if diff := cmp.Diff(wantNotes, entries(rep.Notes)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if got := entries(rep.Ignored); len(got) != 3 || got[0] != "q.log:12:6 1000 session or transaction control: no part of a workload" {
		t.Errorf("ignored: %v", got)
	}
	// 16 statements, BEGIN, COMMIT and SET aside; 34.5 of their 248.5 not
	// expressible.
	if rep.Statements != 16 || rep.Total != 248.5 || rep.UnusableWeight() != 34.5 || math.Abs(rep.UnusableShare()-34.5/248.5) > 1e-12 {
		t.Errorf("%d statements, total %g, unusable %g (%g)", rep.Statements, rep.Total, rep.UnusableWeight(), rep.UnusableShare())
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"q.log: 16 statements, weight 248.5; 8 not expressible, weight 34.5 (13.88% of the log's weight); 3 ignored (session and transaction control)\n",
		"not expressible:\n  q.log:15 (weight 8): SELECT * FROM items i LEFT JOIN users u ON i.seller = u.id WHERE i.id = 1\n      q.log:15:25: LEFT JOIN is not supported",
		"notes:\n  q.log:4 (weight 50): SELECT name FROM items WHERE id = 7\n      the statement L2",
		"  q.log:5 (weight 20): select i.name, u.nickname from items i join users u on i.seller = u.id where u.id = $1 order by i.pr…\n      LIMIT with a parameter",
		"ignored:\n  q.log:12 (weight 1000): BEGIN\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
}

func fmtWeights(s *Statement) []string { return []string{fmtWeight(s.Weight(LogMix))} }

// TestParseLogErrors: what is wrong with the file itself, at its position.
func TestParseLogErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT name FROM items WHERE id = 1\n", "q.log:1:1: expected COUNT<TAB>STATEMENT (a query log line: how often the statement ran, a tab, the statement)"},
		{"# header\n\n  continued\n", "q.log:3:1: expected COUNT<TAB>STATEMENT"},
		{"1\tSELECT name FROM items WHERE id = 1\n-5\tSELECT name FROM items WHERE id = 2\n", `q.log:2:1: count "-5" is not a number ≥ 0`},
		{"1,000\tSELECT name FROM items WHERE id = 1\n", `q.log:1:1: count "1,000" is not a number ≥ 0`},
		{"1.\tSELECT name FROM items WHERE id = 1\n", `q.log:1:1: count "1." is not a number ≥ 0`},
		{"1e999\tSELECT name FROM items WHERE id = 1\n", `q.log:1:1: count "1e999" is not a number ≥ 0`},
		{"", "q.log: no statement of the log can be used (0 read, 0 not expressible, 0 ignored)"},
		{"3\tBEGIN\n4\tSELECT * FROM nowhere WHERE id = 1\n", "q.log: no statement of the log can be used (1 read, 1 not expressible, 1 ignored)"},
	} {
		_, rep, err := ParseLog(shop(t), "q.log", []byte(tc.src))
		if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
		if strings.Contains(tc.want, "no statement") && rep == nil {
			t.Errorf("%q: no report with the error", tc.src)
		}
	}
}

// TestSeed000Queries: seed 000's input example (Source code 2), its CREATE
// TABLE with a row count and its two queries as a log, makes a workload.
func TestSeed000Queries(t *testing.T) {
	src, err := os.ReadFile("../lang/testdata/seed000_source2.sql")
	if err != nil {
		t.Fatal(err)
	}
	ss, _, err := lang.ParseModel("seed000_source2.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	ss[0].(*lang.DefineRelation).Rows = 1000 // the seed gives no statistics
	m, err := catalog.Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	log := "1\tSELECT id,firstname,lastname,password FROM user\n   WHERE user.id = ?\n" +
		"1\tSELECT id,firstname,lastname,password FROM user\n   WHERE user.firstname = ?\n"
	w, rep, err := ParseLog(m, "seed000.log", []byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Statements) != 2 || len(rep.Unusable) != 0 {
		t.Fatalf("%d statements, unusable %v", len(w.Statements), rep.Unusable)
	}
	if got := w.Statements[1].Query.Preds[0].Ref.Field.String(); got != "user.firstname" {
		t.Errorf("second query's predicate on %s", got)
	}
}

// FuzzParseLog feeds arbitrary logs to ParseLog: it never panics, its
// errors are positioned (or name the file), and the weights add up: the
// log's total is the workload's plus the unusable statements'.
func FuzzParseLog(f *testing.F) {
	m := shop(f)
	f.Add([]byte("100\tSELECT name FROM items WHERE id = $1\n50\tSELECT name FROM items WHERE id = 7\n"))
	f.Add([]byte("20\tselect i.name from items i, users u\n\twhere i.seller = u.id and u.id = ? limit $2\n3\tBEGIN\n"))
	f.Add([]byte("5\tINSERT INTO items (id, name, price, seller) VALUES (1, 'lamp', 9.5, 3)\n7\tUPDATE items SET price = 3 WHERE id = 1\n"))
	f.Add([]byte("8\tSELECT * FROM items i LEFT JOIN users u ON i.seller = u.id WHERE i.id = 1\n1.5\tDELETE FROM items WHERE id = 'x'\n"))
	f.Add([]byte("x\ty\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		w, rep, err := ParseLog(m, "fuzz.log", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.log") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		sum := rep.UnusableWeight()
		for _, s := range w.Statements {
			if s.Weight(LogMix) < 0 || (s.Query == nil) == (s.Write == nil) {
				t.Fatalf("statement %s: weight %g, query %v, write %v", s.Tag, s.Weight(LogMix), s.Query, s.Write)
			}
			sum += s.Weight(LogMix)
		}
		if math.Abs(sum-rep.Total) > 1e-9*math.Max(1, rep.Total) {
			t.Fatalf("weights add up to %g, the log's total is %g", sum, rep.Total)
		}
		// The workload's statements print as statements that parse.
		for _, s := range w.Statements {
			if _, err := lang.ParseStatement("", s.Text()); err != nil {
				t.Fatalf("%s: %v", s.Text(), err)
			}
		}
	})
}

// TestConditionalWriteRead: a conditional write brings its read of the
// tuple it names into the workload, with its weights and tag + "-if":
// the key for IF EXISTS, the compared fields for IF …, each once.
func TestConditionalWriteRead(t *testing.T) {
	src := "DEFINE WORKLOAD w MIXES (m) {\n  GROUP g WEIGHTS (m 2) {\n    SELECT items.name FROM items WHERE items.id = ?;\n" +
		"    DELETE FROM items WHERE items.id = ? IF EXISTS;\n" +
		"    UPDATE items SET name = ? WHERE items.id = ? IF items.price = ? AND items.name = ? AND items.price > 0; -- u\n  }\n}\n"
	w, err := Parse(shop(t), "w.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range w.Statements {
		line := fmt.Sprintf("%s %g %s", s.Tag, s.Weight("m"), s.Text())
		if s.CondOf != nil {
			if s.Query.CondOf != s.CondOf.Write {
				t.Errorf("%s: its query is not marked as %s's read", s.Tag, s.CondOf.Tag)
			}
			line += " (read of " + s.CondOf.Tag + ")"
		}
		got = append(got, line)
	}
	want := []string{
		"g#1 2 SELECT items.name FROM items WHERE items.id = ?",
		"g#2 2 DELETE FROM items WHERE items.id = ? IF EXISTS",
		"g#2-if 2 SELECT items.id FROM items WHERE items.id = ? (read of g#2)",
		"u 2 UPDATE items SET name = ? WHERE items.id = ? IF items.price = ? AND items.name = ? AND items.price > 0",
		"u-if 2 SELECT items.price, items.name FROM items WHERE items.id = ? (read of u)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("statements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
