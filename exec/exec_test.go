package exec_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/types"
)

const defs = `
DEFINE RELATION r { k1 STRING key, k2 STRING key, v1 STRING, v2 INT };
DEFINE PRIMARY SCHEMA s1 FOR r { TABLE 's1', ROW suffix('-'){k1}:k2, FAMILY 'f', QUALIFIER '', VALUE suffix('-'){v1}:v2 };
DEFINE SCHEMA s2 FOR r { TABLE 's2', ROW size{k2}:k1, FAMILY 'f', QUALIFIER attr_name['k1','k2'], VALUE attr_value['k1','k2'] };
DEFINE SCHEMA s3 FOR r { TABLE 's3', ROW salt(3){ordered{v2}}:ordered{v2}:desc{k1}:ordered{k2}, FAMILY 'f', VALUE ordered{v1} };
`

func setup(t *testing.T) (*exec.Engine, *catalog.Relation, store.Store) {
	t.Helper()
	cat, err := catalog.CatalogFromScript("defs", []byte(defs))
	if err != nil {
		t.Fatal(err)
	}
	s := memstore.New()
	for _, name := range []string{"s1", "s2", "s3"} {
		if err := s.CreateTable(context.Background(), store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	return exec.FromCatalog(s, nil, nil), cat.Relation("r"), s
}

func query(t *testing.T, x *exec.Engine, rel *catalog.Relation, src string, args ...types.Value) ([][]types.Value, *plan.Plan) {
	t.Helper()
	st, err := lang.ParseStatement("q", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Select(st.(*lang.Select), rel, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]types.Value
	// Query lends each tuple for the call only.
	if err := x.Query(context.Background(), p, exec.SinkFunc(func(tu []types.Datum) bool {
		row := make([]types.Value, len(tu))
		for i, d := range tu {
			row[i] = d.Value()
		}
		out = append(out, row)
		return true
	})); err != nil {
		t.Fatal(err)
	}
	return out, p
}

func TestQueriesAcrossLayouts(t *testing.T) {
	x, rel, _ := setup(t)
	ctx := context.Background()
	tuples := [][]types.Value{
		{"a1", "b", "x", int64(100)},
		{"a2", "b", "y", int64(-5)},
		{"a1", "c", nil, int64(7)},
		{"a3", "bb", "z", int64(100)},
	}
	upsert := func(ts [][]types.Value) error {
		_, err := x.Apply(ctx, &plan.Write{Relation: rel, Kind: plan.WriteUpsert, Tuples: ts, ReadOld: plan.NeedsOld(rel)})
		return err
	}
	if err := upsert(tuples[:2]); err != nil {
		t.Fatal(err)
	}
	// s1 cannot store NULL v1 in its natural encoding: the whole batch fails.
	if err := upsert(tuples[2:]); err == nil {
		t.Fatal("NULL in a natural element accepted")
	}
	got, p := query(t, x, rel, "SELECT * FROM r WHERE v2 = 100 ORDER BY k1 DESC")
	if diff := cmp.Diff(tuples[:1], got); diff != "" {
		t.Errorf("(-want +got)\n%s\n%s", diff, p.Explain())
	}
	if p.Accesses[0].Layout.Name != "s3" || p.Sort {
		t.Errorf("want s3 without sort:\n%s", p.Explain())
	}
	got, p = query(t, x, rel, "SELECT * FROM r WHERE k2 = 'b' OR k1 = 'a2'")
	if len(got) != 2 {
		t.Errorf("got %v\n%s", got, p.Explain())
	}
	t.Log(p.Explain())
}
