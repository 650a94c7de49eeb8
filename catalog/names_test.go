package catalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// The repro of the dotted-name collision (shared/repro/dotname/model.kvs):
// the attribute "seller.rating" of items and the path items.seller.rating
// (the rating of the user seller references).
const dottedModel = `DEFINE RELATION users ROWS 10 { id BIGINT KEY, rating BIGINT CARDINALITY 10 };
DEFINE RELATION items ROWS 10 { id BIGINT KEY, "seller.rating" BIGINT CARDINALITY 10, seller BIGINT REFERENCES users REVERSE items_sold };
`

const dottedMsg = `attribute name "seller.rating" cannot contain '.'`

func checkDottedError(t *testing.T, err error) {
	t.Helper()
	var e *lang.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is %T, want *lang.Error", err, err)
	}
	if want := "model.kvs:2:48: " + dottedMsg; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got  %v\nwant %s…", err, want)
	}
}

// The repro model is refused with the position of the dotted name, whether
// it comes as text or as definitions built without the parser.
func TestDottedModelRejected(t *testing.T) {
	stmts, err := lang.ParseScript("model.kvs", []byte(dottedModel))
	if err == nil {
		_, err = Build(stmts)
	}
	if err == nil {
		t.Fatal("the repro model was accepted")
	}
	checkDottedError(t, err)

	at := func(line, col int) lang.Pos { return lang.Pos{File: "model.kvs", Line: line, Col: col} }
	stmts = []lang.Statement{
		&lang.DefineRelation{At: at(1, 1), Name: "users", Rows: 10, Attrs: []lang.AttrDef{
			{At: at(1, 33), Name: "id", Type: types.BigInt, Key: true},
			{At: at(1, 48), Name: "rating", Type: types.BigInt, Cardinality: 10},
		}},
		&lang.DefineRelation{At: at(2, 1), Name: "items", Rows: 10, Attrs: []lang.AttrDef{
			{At: at(2, 33), Name: "id", Type: types.BigInt, Key: true},
			{At: at(2, 48), Name: "seller.rating", Type: types.BigInt, Cardinality: 10},
			{At: at(2, 89), Name: "seller", Type: types.BigInt, References: "users", Reverse: "items_sold"},
		}},
	}
	_, err = Build(stmts)
	if err == nil {
		t.Fatal("the repro definitions were accepted")
	}
	checkDottedError(t, err)
}

// pathNames is a small vocabulary of names, dotted ones included, so that
// random models often spell one path two ways.
var pathNames = []string{"a", "b", "id", "a.b", "b.a", "a.id", "r.a"}

// modelGen draws DEFINE RELATION statements over pathNames: BIGINT keys,
// BIGINT attributes and foreign keys between the drawn relations.
var modelGen = rapid.Custom(func(t *rapid.T) []lang.Statement {
	rels := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"r", "a", "r.a", "a.b"}), 1, 3, func(s string) string { return s }).Draw(t, "relations")
	name := rapid.SampledFrom(pathNames)
	var stmts []lang.Statement
	for i, rel := range rels {
		d := &lang.DefineRelation{At: lang.Pos{File: "gen", Line: i + 1, Col: 1}, Name: rel, Rows: 10,
			Attrs: []lang.AttrDef{{Name: "id", Type: types.BigInt, Key: true}}}
		for n := rapid.IntRange(0, 3).Draw(t, "attrs"); n > 0; n-- {
			a := lang.AttrDef{Name: name.Draw(t, "attr"), Type: types.BigInt}
			if rapid.Bool().Draw(t, "fk") {
				a.References = rapid.SampledFrom(rels).Draw(t, "references")
				a.Reverse = name.Draw(t, "reverse")
			}
			d.Attrs = append(d.Attrs, a)
		}
		stmts = append(stmts, d)
	}
	return stmts
})

// checkPaths fails if two different attributes or navigations of m have the
// same path (root.nav….name), walking up to two navigations from every
// entity, or if a data file column name is more than one path step. What a
// path names is told by the root entity's name and the names of the steps
// (quoted, so that dotted names cannot blur it).
func checkPaths(t *rapid.T, m *Model) {
	named := map[string]string{} // path → what it names
	add := func(path, what string) {
		if prev, dup := named[path]; dup && prev != what {
			t.Fatalf("path %s names two things: %s and %s", path, prev, what)
		}
		named[path] = what
	}
	var walk func(e *Entity, path string, steps []string)
	walk = func(e *Entity, path string, steps []string) {
		for _, f := range e.Fields {
			add(path+"."+f.Name, fmt.Sprintf("field %q", append(steps, f.Name)))
		}
		for _, n := range e.Navs {
			next := append(steps[:len(steps):len(steps)], n.Name)
			add(path+"."+n.Name, fmt.Sprintf("navigation %q", next))
			if len(next) < 3 {
				walk(n.To, path+"."+n.Name, next)
			}
		}
	}
	for _, e := range m.Entities {
		add(e.Name, fmt.Sprintf("entity %q", e.Name))
	}
	for _, e := range m.Entities {
		walk(e, e.Name, []string{e.Name})
		for _, c := range e.Columns {
			if strings.Contains(c.Name, ".") {
				t.Fatalf("entity %s: data file column %q is not one path step", e.Name, c.Name)
			}
		}
	}
}

// No model Build accepts has two attributes with the same path, whether its
// definitions come from the parser or are built directly.
func TestPathsNameOneAttribute(t *testing.T) {
	accepted := 0
	rapid.Check(t, func(t *rapid.T) {
		stmts := modelGen.Draw(t, "model")
		if m, err := Build(stmts); err == nil {
			accepted++
			checkPaths(t, m)
		}
		text := lang.PrintScript(stmts)
		parsed, err := lang.ParseScript("gen", []byte(text))
		if err != nil {
			return
		}
		if m, err := Build(parsed); err == nil {
			checkPaths(t, m)
		}
	})
	if accepted == 0 {
		t.Fatal("no generated model was accepted: the generator tests nothing")
	}
}
