package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/lang"
)

// describeModel writes everything a model holds: entities with their
// counts, fields with types, statistics and keys, columns, and navigations
// with their targets, directions and reverses.
func describeModel(m *Model) string {
	var b strings.Builder
	for _, e := range m.Entities {
		fmt.Fprintf(&b, "%s count=%g id=%s\n", e.Name, e.Count, e.ID())
		for _, f := range e.Fields {
			fmt.Fprintf(&b, "  field %s %s size=%g card=%g key=%v\n", f.Name, f.Type, f.Size, f.Cardinality, f.Key)
		}
		for _, c := range e.Columns {
			fmt.Fprintf(&b, "  column %s %s field=%v nav=%v\n", c.Name, c.Type, c.Field != nil, c.Nav)
		}
		for _, n := range e.Navs {
			fmt.Fprintf(&b, "  nav %s → %s many=%v reverse=%s attr=%s fanout=%g\n", n.Name, n.To.Name, n.Many, n.Reverse, n.Attr, n.Fanout())
		}
	}
	return b.String()
}

func buildModel(t *testing.T, file, src string) *Model {
	t.Helper()
	ss, _, err := lang.ParseModel(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(ss)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shopSQL is a pg_dump-style schema with annotations; shopKVS the same
// model in kvschema's language.
const shopSQL = `SET client_encoding = 'UTF8';
CREATE TABLE public.regions ( -- ROWS 5
    id integer NOT NULL,
    name character varying(25) -- SIZE 25 CARDINALITY 5
);
CREATE TABLE public.users ( -- ROWS 2000
    id integer NOT NULL, -- SIZE 16
    nickname text NOT NULL, -- SIZE 12
    region integer REFERENCES regions (id)
);
CREATE TABLE public.comments ( -- ROWS 100000
    id bigint PRIMARY KEY,
    body text, -- SIZE 130
    from_user integer,
    to_user integer
);
ALTER TABLE ONLY public.regions ADD CONSTRAINT regions_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.users ADD CONSTRAINT users_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.comments
    ADD CONSTRAINT c_from FOREIGN KEY (from_user) REFERENCES public.users(id);
ALTER TABLE ONLY public.comments -- REVERSE received
    ADD CONSTRAINT c_to FOREIGN KEY (to_user) REFERENCES public.users(id);
CREATE INDEX comments_to ON public.comments (to_user);
`

const shopKVS = `DEFINE RELATION regions ROWS 5 { id BIGINT KEY, name STRING SIZE 25 CARDINALITY 5 };
DEFINE RELATION users ROWS 2000 { id BIGINT KEY SIZE 16, nickname STRING SIZE 12, region BIGINT REFERENCES regions REVERSE users };
DEFINE RELATION comments ROWS 100000 {
  id BIGINT KEY, body STRING SIZE 130,
  from_user BIGINT REFERENCES users REVERSE comments_from_user,
  to_user BIGINT REFERENCES users REVERSE received
};
`

// TestDDLModel: a SQL schema gives the model its DEFINE RELATION equivalent
// gives, field by field and navigation by navigation; printed, the model
// reads back as itself.
func TestDDLModel(t *testing.T) {
	ddl := buildModel(t, "shop.sql", shopSQL)
	native := buildModel(t, "shop.kvs", shopKVS)
	if diff := cmp.Diff(describeModel(native), describeModel(ddl)); diff != "" {
		t.Errorf("models differ (-DEFINE RELATION +CREATE TABLE):\n%s", diff)
	}
	if got, want := lang.PrintScript(ddl.Defs), lang.PrintScript(native.Defs); got != want {
		t.Errorf("definitions differ:\n%s\nwant\n%s", got, want)
	}
	// The round trip: the model printed in kvschema's language, read back.
	again := buildModel(t, "printed.kvs", lang.PrintScript(ddl.Defs))
	if diff := cmp.Diff(describeModel(ddl), describeModel(again)); diff != "" {
		t.Errorf("printed model reads back differently:\n%s", diff)
	}
	if e := ddl.Entity("comments"); e.At != (lang.Pos{File: "shop.sql", Line: 11, Col: 1}) {
		t.Errorf("comments defined at %v", e.At)
	}
}

// TestMixedModel: CREATE TABLE and DEFINE RELATION in one file (and in
// several, concatenated as advise reads them), referencing each other.
func TestMixedModel(t *testing.T) {
	mixed := `DEFINE RELATION regions ROWS 5 { id BIGINT KEY, name STRING SIZE 25 CARDINALITY 5 };
CREATE TABLE users ( -- ROWS 2000
  id integer PRIMARY KEY, -- SIZE 16
  nickname text, -- SIZE 12
  region integer REFERENCES regions
);
DEFINE RELATION comments ROWS 100000 {
  id BIGINT KEY, body STRING SIZE 130,
  from_user BIGINT REFERENCES users(id),
  to_user BIGINT REFERENCES users REVERSE received
};`
	m := buildModel(t, "mixed.kvs", mixed)
	native := buildModel(t, "shop.kvs", shopKVS)
	if diff := cmp.Diff(describeModel(native), describeModel(m)); diff != "" {
		t.Errorf("models differ (-DEFINE RELATION +mixed):\n%s", diff)
	}
}

// TestDefinitionsDeriveReverses: a foreign key without REVERSE is navigable
// back by the referencing relation's name, or by name_attribute when the
// relation references the same one several times; a clash asks for a name.
func TestDefinitionsDeriveReverses(t *testing.T) {
	ss, err := lang.ParseScript("r.kvs", []byte(`
DEFINE RELATION users { id BIGINT KEY, referrer BIGINT REFERENCES users };
DEFINE RELATION msgs { id BIGINT KEY, sender BIGINT REFERENCES users, recipient BIGINT REFERENCES users, topic BIGINT REFERENCES topics };
DEFINE RELATION topics { id BIGINT KEY, owner BIGINT REFERENCES users REVERSE msgs_sender_x };`))
	if err != nil {
		t.Fatal(err)
	}
	defs, err := Definitions(ss)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range defs {
		for _, a := range d.Attrs {
			if a.References != "" {
				got = append(got, d.Name+"."+a.Name+" → "+a.References+"."+a.Reverse)
			}
		}
	}
	want := []string{
		"users.referrer → users.users",
		"msgs.sender → users.msgs_sender",
		"msgs.recipient → users.msgs_recipient",
		"msgs.topic → topics.msgs",
		"topics.owner → users.msgs_sender_x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The statements given are not changed.
	if a := ss[1].(*lang.DefineRelation).Attrs[1]; a.Reverse != "" {
		t.Errorf("Definitions changed its input: %+v", a)
	}
}

// TestModelErrors: what a model cannot take, each error at the definition
// at fault and naming the relation.
func TestModelErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"derived reverse clashes with an attribute",
			"CREATE TABLE users (id int PRIMARY KEY, items int); -- ROWS 1\nCREATE TABLE items (id int PRIMARY KEY, seller int REFERENCES users); -- ROWS 1",
			"m.sql:2:41: relation items: the reverse relationship of foreign key seller would be named items, which users already has; name it with REVERSE name after REFERENCES (in CREATE TABLE, a comment -- REVERSE name at the end of the column's line)"},
		{"derived reverse clashes with a given one",
			"DEFINE RELATION u ROWS 1 { id BIGINT KEY };\nDEFINE RELATION v ROWS 1 { id BIGINT KEY, a BIGINT REFERENCES u REVERSE w };\nDEFINE RELATION w ROWS 1 { id BIGINT KEY, b BIGINT REFERENCES u }",
			"m.sql:3:43: relation w: the reverse relationship of foreign key b would be named w, which u already has"},
		{"reference to a non-key attribute",
			"CREATE TABLE users (id int PRIMARY KEY, nick text); -- ROWS 1\nCREATE TABLE items (id int PRIMARY KEY, seller text REFERENCES users (nick)); -- ROWS 1",
			"m.sql:2:41: relation items: seller REFERENCES users(nick), but a relationship of the model references its relation's key (users.id)"},
		{"reference to an unknown relation",
			"CREATE TABLE items (id int PRIMARY KEY, seller int REFERENCES users); -- ROWS 1",
			"m.sql:1:41: relation items: seller REFERENCES unknown relation users"},
		{"ALTER TABLE of an unknown relation",
			"CREATE TABLE items (id int PRIMARY KEY); -- ROWS 1\nALTER TABLE ONLY public.item ADD PRIMARY KEY (id)",
			"m.sql:2:25: ALTER TABLE names relation item, which the model does not define"},
		{"ALTER TABLE of an unknown attribute",
			"CREATE TABLE items (id int); -- ROWS 1\nALTER TABLE items ADD PRIMARY KEY (ident)",
			"m.sql:2:36: ALTER TABLE items ADD PRIMARY KEY: relation items has no attribute ident"},
		{"ALTER TABLE of a second key",
			"CREATE TABLE items (id int PRIMARY KEY, n int); -- ROWS 1\nALTER TABLE items ADD PRIMARY KEY (n)",
			"m.sql:2:36: ALTER TABLE items ADD PRIMARY KEY: relation items already has a key (id)"},
		{"ALTER TABLE of a foreign key on an unknown attribute",
			"CREATE TABLE items (id int PRIMARY KEY); -- ROWS 1\nALTER TABLE items ADD FOREIGN KEY (seller) REFERENCES users",
			"m.sql:2:36: ALTER TABLE items ADD FOREIGN KEY: relation items has no attribute seller"},
		{"ALTER TABLE of a second foreign key",
			"CREATE TABLE users (id int PRIMARY KEY); -- ROWS 1\nCREATE TABLE items (id int PRIMARY KEY, seller int REFERENCES users); -- ROWS 1\nALTER TABLE items ADD FOREIGN KEY (seller) REFERENCES users",
			"m.sql:3:36: ALTER TABLE items ADD FOREIGN KEY: items.seller already REFERENCES users"},
		{"no statistics",
			"CREATE TABLE users (id int PRIMARY KEY)",
			"m.sql:1:1: relation users needs its row count for the advisor: DEFINE RELATION users ROWS n {…}, or in SQL a comment -- ROWS n at the end of the line CREATE TABLE users ( (statistic ROWS missing)"},
		{"composite key",
			"CREATE TABLE ev ( -- ROWS 9\n  grp int,\n  seq int,\n  PRIMARY KEY (grp, seq)\n)",
			"m.sql:3:3: relation ev: the advisor needs exactly one key attribute (found grp and seq: a composite key"},
		{"no key",
			"CREATE TABLE ev (grp int) -- ROWS 9\n;",
			"m.sql:1:1: relation ev has no key attribute (mark at least one attribute with KEY, or in SQL with PRIMARY KEY)"},
		{"foreign key in the key",
			"CREATE TABLE u (id int PRIMARY KEY); -- ROWS 1\nCREATE TABLE p (\n  uid int PRIMARY KEY REFERENCES u\n); -- ROWS 1",
			"m.sql:3:3: relation p: foreign key uid cannot be part of the key in the conceptual model"},
		{"type mismatch",
			"CREATE TABLE u (id text PRIMARY KEY); -- ROWS 1\nCREATE TABLE p (id int PRIMARY KEY, uid int REFERENCES u); -- ROWS 1",
			"m.sql:2:37: relation p: foreign key uid is BIGINT but u.id is STRING"},
		{"defined twice",
			"CREATE TABLE u (id int PRIMARY KEY); -- ROWS 1\nDEFINE RELATION U ROWS 1 { id BIGINT KEY }",
			"m.sql:2:1: relation U is defined twice (names are case-insensitive: u)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, _, err := lang.ParseModel("m.sql", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Build(ss)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s…", err, tc.want)
			}
		})
	}
}
