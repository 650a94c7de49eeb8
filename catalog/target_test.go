package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/store/memstore"
)

// The directives advise writes into a schema's DDL read back as the same
// target and profile, through ParseAdvised and through the store (the
// schema is stored as written).
func TestTargetRoundTrip(t *testing.T) {
	for _, p := range []cost.Profile{cost.Pebble, cost.Bigtable, cost.Cassandra} {
		dirs, err := Directives(p)
		if err != nil {
			t.Fatal(err)
		}
		src := "-- Schema recommended by kvschema advise\n" + dirs + "\n" + advSchema + "\n"
		target, prof, err := AdvisedFor("s.kvs", []byte(src))
		if err != nil || target != p.Engine || prof == nil || *prof != p {
			t.Fatalf("%s: target %q, profile %+v, %v", p.Name, target, prof, err)
		}
		a, err := ParseAdvised("m.kvs", []byte(advModel), "s.kvs", []byte(src), cost.Pebble)
		if err != nil {
			t.Fatal(err)
		}
		if a.Target != p.Engine {
			t.Errorf("%s: ParseAdvised target %q", p.Name, a.Target)
		}
		c, err := NewCatalog().WithAdvised(a)
		if err != nil {
			t.Fatal(err)
		}
		st := memstore.New()
		if _, err := Save(context.Background(), st, 0, c.Stored()); err != nil {
			t.Fatal(err)
		}
		if _, _, got, err := Read(context.Background(), st); err != nil || got.Advised.Target != p.Engine {
			t.Fatalf("%s: after the store: %v %v", p.Name, got, err)
		}
	}
	// A schema without directives (by hand, or from an earlier kvschema)
	// has no target.
	if a := advised(t); a.Target != "" {
		t.Errorf("target %q of a schema without directives", a.Target)
	}
	// A profile without an engine gives no target line.
	dirs, _ := Directives(cost.Profile{Name: "mine", CFQueryCost: 1, SIQueryCost: 1})
	if strings.Contains(dirs, TargetDirective) {
		t.Errorf("directives of an engine-less profile: %s", dirs)
	}
	for _, tc := range []struct{ src, want string }{
		{TargetDirective + "\n", "s.kvs:1: the target directive names no target"},
		{TargetDirective + "pebble\n" + TargetDirective + "bigtable\n", "s.kvs:2: a second target directive"},
		{ProfileDirective + `{"cf_query_cost": 0}` + "\n", "s.kvs:1: profile : cf_query_cost must be > 0"},
		{ProfileDirective + `{"typo": 1}` + "\n", `s.kvs:1: profile directive: json: unknown field "typo"`},
	} {
		if _, _, err := AdvisedFor("s.kvs", []byte(tc.src)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s", tc.src, err, tc.want)
		}
	}
}

// A schema deployed on another kind of store than its target gets a note;
// on its own kind, on mem:, or without a target, none.
func TestTargetNote(t *testing.T) {
	for _, tc := range []struct {
		target, engine string
		want           string
	}{
		{"pebble", "pebble", ""},
		{"bigtable", "bigtable", ""},
		{"", "pebble", ""},
		{"pebble", "", ""},
		{"bigtable", "mem", ""},
		{"cassandra", "mem", ""},
		{"pebble", "bigtable", "the schema was advised for target pebble, but the store is bigtable: its plans were costed with another engine's constants; kvschema advise --target bigtable designs for this store"},
		{"bigtable", "pebble", "advised for target bigtable, but the store is pebble"},
		{"cassandra", "pebble", "Cassandra's constants (for a schema exported to Cassandra) price a secondary-index read as one request"},
	} {
		got := TargetNote(tc.target, tc.engine)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s on %s: %q, want %q", tc.target, tc.engine, got, tc.want)
		}
	}
}
