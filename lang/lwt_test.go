package lang

import (
	"strings"
	"testing"
)

// TestConditionalWrites: the IF clauses of lightweight transactions parse,
// print and parse back the same, and a conditional insert of several rows
// is refused where its IF is.
func TestConditionalWrites(t *testing.T) {
	for _, src := range []string{
		"INSERT INTO r (k, v) VALUES (1, 'a') IF NOT EXISTS",
		"INSERT INTO r SET k = 1, v = ? IF NOT EXISTS",
		"INSERT INTO r SET k = 1 AND CONNECT TO p(2) IF NOT EXISTS",
		"UPDATE r SET v = 'b' WHERE k = 1 IF EXISTS",
		"UPDATE r SET v = 'b' WHERE k = 1 IF v = 'a' AND n > ?",
		"UPDATE r SET v = 'b' WHERE k = 1 IF \"exists\" = 1",
		"DELETE FROM r WHERE k = 1 IF EXISTS",
		"DELETE FROM r WHERE k = ? IF v IS NULL OR v IN ('a', 'b')",
	} {
		st, err := ParseStatement("t", src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		back, err := ParseStatement("t", Print(st))
		if err != nil || !EqualIgnoringPos(st, back) {
			t.Errorf("%s: printed %q, parsed back %v", src, Print(st), err)
		}
		switch s := st.(type) {
		case *Insert:
			if !s.IfNotExists {
				t.Errorf("%s: no IF NOT EXISTS", src)
			}
		case *Update:
			if s.If == nil || s.If.Exists != strings.HasSuffix(src, "IF EXISTS") {
				t.Errorf("%s: condition %+v", src, s.If)
			}
		case *Delete:
			if s.If == nil || s.If.Exists != strings.HasSuffix(src, "IF EXISTS") {
				t.Errorf("%s: condition %+v", src, s.If)
			}
		}
	}
	// A column named exists starts a condition; IF EXISTS ends a statement.
	st, err := ParseStatement("t", "UPDATE r SET v = 1 WHERE k = 1 IF exists = 2")
	if err != nil || st.(*Update).If.Exists || st.(*Update).If.Expr == nil {
		t.Errorf("IF exists = 2: %+v, %v", st, err)
	}
	for _, tc := range []struct{ src, want string }{
		{"INSERT INTO r (k) VALUES (1), (2) IF NOT EXISTS", "t:1:35: IF NOT EXISTS makes an insert of one tuple conditional"},
		{"INSERT INTO r (k) VALUES (1) IF EXISTS", "t:1:33: expected NOT after IF"},
		{"UPDATE r SET v = 1 WHERE k = 1 IF", "t:1:34: expected"},
	} {
		_, err := ParseStatement("t", tc.src)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s…", tc.src, err, tc.want)
		}
	}
	// Split by a Reader, a long VALUES list with IF NOT EXISTS is refused by
	// the part that reaches the IF.
	r := NewReader("t", strings.NewReader("INSERT INTO r (k) VALUES (1), (2), (3) IF NOT EXISTS;"))
	r.SplitInserts(2)
	var err2 error
	for err2 == nil {
		_, err2 = r.Next()
	}
	if !strings.Contains(err2.Error(), "IF NOT EXISTS makes an insert of one tuple conditional") {
		t.Errorf("split insert: %v", err2)
	}
}
