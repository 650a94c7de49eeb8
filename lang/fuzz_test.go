package lang

import (
	"errors"
	"testing"
)

// checkParseError fails unless err is an *Error with a real position.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is %T, want *Error", err, err)
	}
	if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
		t.Fatalf("error without position or message: %#v", e)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(fig6))
	for _, tc := range stmtTests {
		f.Add([]byte(tc.src))
	}
	for _, tc := range errorTests {
		f.Add([]byte(tc.src))
	}
	for _, tc := range ddlErrorTests {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("CREATE TABLE t (id int PRIMARY KEY, u int REFERENCES users(id)); SELECT * FROM t, users u WHERE t.u = u.id"))
	f.Add([]byte("UPDATE r SET tags = tags + {'a'}, m['k'] = ?, l = [1] + l WHERE k = 1; DELETE m[?], v FROM r WHERE k = ?; DEFINE RELATION r { k INT KEY, s SET<STRING>, m MAP<STRING, INT> }"))
	f.Add([]byte("DEFINE SCHEMA s2 FOR r { ROW v:k }; DROP SCHEMA s1; drop schema \"s 2\""))
	f.Add([]byte("INSERT INTO r (k) VALUES (1) IF NOT EXISTS; UPDATE r SET v = ? WHERE k = 1 IF v = 2 AND w IS NULL; DELETE FROM r WHERE k = 1 IF EXISTS"))
	f.Add([]byte("DEFINE RELATION m { id INT KEY, tags FROZEN<SET<STRING>>, r FROZEN<MAP<STRING, INT>>, e FROZEN<LIST<TIMESTAMP>> };" +
		" INSERT INTO m VALUES (1, {'a', 'b'}, {'x': 1, 'y': -2}, ['2024-01-02']); UPDATE m SET tags = {} WHERE id = 1;" +
		" SELECT id FROM m WHERE tags CONTAINS 'a' AND r CONTAINS KEY ? AND NOT e CONTAINS TIMESTAMP '2024-01-02'"))
	f.Fuzz(func(t *testing.T, src []byte) {
		ss, err := ParseScript("fuzz", src)
		if err != nil {
			checkParseError(t, err)
			return
		}
		text := PrintScript(ss)
		again, err := ParseScript("", []byte(text))
		if err != nil {
			t.Fatalf("reparse of printed script: %v\n%s", err, text)
		}
		if !EqualIgnoringPos(ss, again) {
			t.Fatalf("reparse differs (-parsed +reparsed):\n%s\ntext:\n%s", diffIgnoringPos(ss, again), text)
		}
		if text2 := PrintScript(again); text2 != text {
			t.Fatalf("printing is not canonical:\n%s\nthen\n%s", text, text2)
		}
	})
}

func FuzzParseExpr(f *testing.F) {
	for _, src := range []string{
		"a = 1", "NOT (a OR b) AND c", "x IN (1, ?, 'a') OR y NOT BETWEEN -1 AND 2.5e3",
		"t >= TIMESTAMP '2024-01-02 03:04:05.5' AND b = x'00ff'", `"select" IS NOT NULL`,
		"((a))", "a <> b -- comment", "NOT NOT a", "(a = b) = (c IS NULL)",
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseExpr("", src)
		if err != nil {
			checkParseError(t, err)
			return
		}
		text := PrintExpr(e)
		again, err := ParseExpr("", text)
		if err != nil {
			t.Fatalf("reparse of printed expression: %v\n%s", err, text)
		}
		if !EqualIgnoringPos(e, again) {
			t.Fatalf("reparse differs:\n%s\ntext:\n%s", diffIgnoringPos(e, again), text)
		}
	})
}

// FuzzParseModel feeds arbitrary model files (SQL dumps among them) to
// ParseModel: it never panics, every error and note is positioned, and the
// statements it returns print as a script that parses back to them.
func FuzzParseModel(f *testing.F) {
	for _, tc := range ddlErrorTests {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("CREATE TABLE items ( -- ROWS 20000\n  id integer PRIMARY KEY, -- SIZE 16\n  seller integer REFERENCES users(id), -- reverse: items_sold\n  FOREIGN KEY (seller) REFERENCES users\n); -- CARDINALITY 5"))
	f.Add([]byte("SET x = 0;\nCREATE TABLE `t` (`a` int(11) NOT NULL DEFAULT '0', KEY `k` (`a`)) ENGINE=InnoDB DEFAULT CHARSET=utf8;\nALTER TABLE ONLY public.t ADD CONSTRAINT p PRIMARY KEY (a);\nCREATE INDEX i ON t (a);"))
	f.Add([]byte("ALTER TABLE ONLY public.bids -- REVERSE bids\n  ADD CONSTRAINT f FOREIGN KEY (item) REFERENCES public.items(id) ON DELETE SET NULL;\nDEFINE RELATION items ROWS 5 { id BIGINT KEY }"))
	f.Add([]byte("CREATE TABLE m (r uuid, ts timestamp, tags set<text>, v map<text, int>, f frozen<list<blob>>, n text STATIC, PRIMARY KEY ((r), ts)) WITH CLUSTERING ORDER BY (ts DESC) AND c = {'a': 1};"))
	f.Fuzz(func(t *testing.T, src []byte) {
		ss, notes, err := ParseModel("fuzz", src)
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, n := range notes {
			if n.Pos.Line < 1 || n.Pos.Col < 1 || n.Kind == "" || n.Msg == "" {
				t.Fatalf("note without position, kind or message: %#v", n)
			}
		}
		text := PrintScript(ss)
		again, err := ParseScript("", []byte(text))
		if err != nil {
			t.Fatalf("reparse of printed statements: %v\n%s", err, text)
		}
		if !EqualIgnoringPos(ss, again) {
			t.Fatalf("reparse differs (-parsed +reparsed):\n%s\ntext:\n%s", diffIgnoringPos(ss, again), text)
		}
	})
}
