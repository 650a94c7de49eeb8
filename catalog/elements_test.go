package catalog

import (
	"strings"
	"testing"

	"github.com/kvschema/kvschema/lang"
)

const elementsModel = `DEFINE RELATION m ROWS 10 {
  id BIGINT KEY, body STRING, tags SET<STRING>, votes MAP<STRING, INT>, edits LIST<BIGINT>,
  frozen FROZEN<SET<STRING>> };`

// TestElementOps: operations on the elements of a collection stored one
// cell per element resolve with their operand types; every misuse is an
// error at its position saying why.
func TestElementOps(t *testing.T) {
	m := elementsCatalog(t)
	for _, tc := range []struct{ src, operand, key string }{
		{"UPDATE m SET tags = tags + {'a'} WHERE m.id = 1", "SET<STRING>", ""},
		{"UPDATE m SET votes = votes - {'a'} WHERE m.id = 1", "SET<STRING>", ""},
		{"UPDATE m SET votes['a'] = 3 WHERE m.id = 1", "INT", "STRING"},
		{"UPDATE m SET edits = [1] + edits WHERE m.id = 1", "LIST<BIGINT>", ""},
		{"UPDATE m SET tags = {'a'} + tags WHERE m.id = 1", "SET<STRING>", ""}, // a set's "prepend" adds
		{"DELETE votes['a'] FROM m WHERE m.id = 1", "", "STRING"},
		{"DELETE body, tags FROM m WHERE m.id = 1", "", ""},
		{"UPDATE m SET edits[0] = 1 WHERE m.id = 1", "BIGINT", "BIGINT"}, // a list's position
		{"UPDATE m SET edits = edits - [1] WHERE m.id = 1", "LIST<BIGINT>", ""},
		{"DELETE edits[2] FROM m WHERE m.id = 1", "", "BIGINT"},
	} {
		st, err := lang.ParseStatement("q", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.ResolveWrite(st)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if w.Kind != Update {
			t.Errorf("%s: a %s, want UPDATE (the rows stay)", tc.src, w.Kind)
		}
		a := w.Set[0]
		if tc.operand != "" && a.OperandType().String() != tc.operand {
			t.Errorf("%s: operand %s, want %s", tc.src, a.OperandType(), tc.operand)
		}
		if tc.key != "" && (a.Key == nil || a.KeyType().String() != tc.key) {
			t.Errorf("%s: key %v of %s, want %s", tc.src, a.Key, a.KeyType(), tc.key)
		}
		if strings.Contains(tc.src, "{'a'} + tags") && a.Op != lang.AssignAdd {
			t.Errorf("%s: op %v, want AssignAdd", tc.src, a.Op)
		}
		// A list changed by position or value is read first, from the
		// tuple the WHERE names.
		if reads := strings.Contains(tc.src, "edits[") || strings.Contains(tc.src, "edits -"); reads != w.ReadsTuple() || reads && (w.Key == nil || len(w.ReadFields()) != 1 || w.ReadFields()[0].Name != "edits") {
			t.Errorf("%s: ReadsTuple %v, key %v, fields %v; want %v", tc.src, w.ReadsTuple(), w.Key, w.ReadFields(), reads)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"UPDATE m SET frozen = frozen + {'a'} WHERE m.id = 1", "q:1:14: m.frozen has no elements to change: it is a FROZEN<SET<STRING>>, frozen: one value, replaced whole (frozen = …)"},
		{"UPDATE m SET body = body + 'x' WHERE m.id = 1", "q:1:14: m.body has no elements to change: it is a STRING, not a collection"},
		{"UPDATE m SET edits[0] = 1 WHERE m.body = 'x'", "q:1:1: changing a list's elements by position or value reads the list of the one tuple the write names: the WHERE must fix m.id by equality"},
		{"UPDATE m SET edits['a'] = 1 WHERE m.id = 1", "q:1:20: m.edits:"},
		{"DELETE tags['a'] FROM m WHERE m.id = 1", "q:1:8: m.tags is a SET<STRING>: a set's elements are added and removed"},
		{"UPDATE m SET votes['a'] = 'x' WHERE m.id = 1", "q:1:27: m.votes:"},
		{"UPDATE m SET tags = tags + {1: 2} WHERE m.id = 1", "q:1:28: m.tags:"},
		{"DELETE id FROM m WHERE m.id = 1", "q:1:8: DELETE cannot delete the key m.id"},
		{"SELECT m.id FROM m WHERE m.tags = {'a'}", "q:1:26: m.tags is a SET<STRING> stored one cell per element: test its elements (CONTAINS, CONTAINS KEY)"},
		{"SELECT m.id FROM m WHERE m.id = 1 ORDER BY m.tags", "q:1:44: cannot order by m.tags"},
	} {
		st, err := lang.ParseStatement("q", tc.src)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := st.(*lang.Select); ok {
			_, err = m.ResolveSelect(s)
		} else {
			_, err = m.ResolveWrite(st)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
	// In a column family, such a collection is a value only, and never
	// static.
	for _, tc := range []struct{ src, want string }{
		{"DEFINE COLUMN FAMILY x FOR m { PARTITION KEY (m.tags), CLUSTERING KEY (m.id) };", "s:1:47: column family x: m.tags is a SET<STRING>, which cannot be in a key"},
		{"DEFINE COLUMN FAMILY x FOR m { PARTITION KEY (m.id), CLUSTERING KEY (m.body), STATIC (m.votes) };", "s:1:87: column family x: m.votes is a MAP<STRING, INT>, stored one cell per element, which a static column is not"},
		{"DEFINE COLUMN FAMILY x FOR m { PARTITION KEY (m.id), VALUES (m.edits) }; DEFINE SECONDARY INDEX i ON x (m.edits);", "s:1:105: secondary index i: m.edits is a LIST<BIGINT>, whose cells are addressed by position"},
	} {
		ss, err := lang.ParseScript("s", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseSchema(m, ss); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}

// TestElementIndex: a secondary index on a SET or a MAP stored one cell
// per element indexes its elements (keys): looked up by CONTAINS
// (CONTAINS KEY), one entry per element, kept only by a store's local
// index — on the collection's family of the base's rows.
func TestElementIndex(t *testing.T) {
	m := elementsCatalog(t)
	ds, err := lang.ParseScript("s", []byte(`DEFINE COLUMN FAMILY x FOR m { PARTITION KEY (m.id), VALUES (m.body, m.tags, m.votes) };
DEFINE SECONDARY INDEX by_tag ON x (m.tags); DEFINE SECONDARY INDEX by_vote ON x (m.votes); DEFINE SECONDARY INDEX by_body ON x (m.body);`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(m, ds)
	if err != nil {
		t.Fatal(err)
	}
	tag, vote, body := s.Index("by_tag"), s.Index("by_vote"), s.Index("by_body")
	if !tag.OnElements() || !vote.OnElements() || body.OnElements() {
		t.Fatalf("OnElements: %v %v %v, want true true false", tag.OnElements(), vote.OnElements(), body.OnElements())
	}
	if got := tag.Layout().Attrs[0].Type.String(); got != "STRING" {
		t.Errorf("by_tag is looked up by %s, want STRING (an element)", got)
	}
	if ElementOp(tag.Hash[0].Field.Type) != Contains || ElementOp(vote.Hash[0].Field.Type) != ContainsKey {
		t.Error("a set's elements are tested by CONTAINS, a map's keys by CONTAINS KEY")
	}
	if got := tag.RowsPerPartition(); got != ContainsSelectivity*tag.Entries {
		t.Errorf("a lookup returns %g rows, want the %g CONTAINS keeps", got, ContainsSelectivity*tag.Entries)
	}
	s.KeepLocal(false)
	if err := s.Kept(); err == nil || !strings.Contains(err.Error(), "this store keeps no local indexes") {
		t.Errorf("without local indexes: %v", err)
	}
	s.KeepLocal(true)
	if err := s.Kept(); err != nil {
		t.Fatal(err)
	}
	spec := s.LocalIndex(tag)
	if !spec.Elements || spec.Family != "c2" || len(spec.Qualifier) != 0 {
		t.Errorf("by_tag's store index: %+v, want every cell of family c2 (m.tags, the row's third attribute)", spec)
	}
}

// elementsCatalog builds the model of elementsModel.
func elementsCatalog(t *testing.T) *Model {
	t.Helper()
	return buildModel(t, "m.kvs", elementsModel)
}
