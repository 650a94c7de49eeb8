package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// New keys lie beyond the data's greatest, whatever the key's type.
func TestFreshKey(t *testing.T) {
	ts := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		t        types.Type
		greatest types.Value
		k        int64
		want     types.Value
	}{
		{types.BigInt, int64(140), 1, int64(141)},
		{types.BigInt, nil, 3, int64(3)},
		{types.Int, int64(-5), 2, int64(-3)},
		{types.Double, 2.5, 1, 3.5},
		{types.Timestamp, ts, 2, ts.Add(2 * time.Second)},
		{types.String, nil, 7, "new000000000007"},
		{types.String, "zz", 1, "zz~new000000000001"},
		{types.Bytes, []byte{0xff}, 1, append([]byte{0xff}, "~new000000000001"...)},
	} {
		got, err := freshKey(c.t, c.greatest, c.k)
		if err != nil {
			t.Errorf("%s beyond %v, #%d: %v", c.t, c.greatest, c.k, err)
			continue
		}
		if types.Compare(got, c.want) != 0 {
			t.Errorf("%s beyond %v, #%d = %v, want %v", c.t, c.greatest, c.k, got, c.want)
		}
		if c.greatest != nil && types.Compare(got, c.greatest) <= 0 {
			t.Errorf("%s: new key %v is not beyond %v", c.t, got, c.greatest)
		}
		if b, ok := c.greatest.([]byte); ok && !bytes.Equal(b, []byte{0xff}) {
			t.Errorf("freshKey changed the greatest key to %x", b)
		}
	}
	for _, c := range []struct {
		t        types.Type
		greatest types.Value
	}{{types.Int, int64(1<<31 - 1)}, {types.BigInt, int64(1<<63 - 1)}, {types.Bool, true}} {
		if got, err := freshKey(c.t, c.greatest, 1); err == nil {
			t.Errorf("%s beyond %v = %v, want an error", c.t, c.greatest, got)
		}
	}
}

// The binder draws one tuple per entity occurrence: the two users of a
// self-reference apart, an UPDATE's new value and its key from one row.
func TestBinderTuples(t *testing.T) {
	stmts, err := lang.ParseScript("m.kvs", []byte(`
DEFINE RELATION users ROWS 10 {
  id BIGINT KEY,
  name STRING,
  country STRING CARDINALITY 3,
  friend BIGINT REFERENCES users REVERSE friend_of
};`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(m, "w.kvs", []byte(`DEFINE WORKLOAD w MIXES (m) {
  GROUP G WEIGHTS (m 1) {
    SELECT friend.name FROM users.friend WHERE users.id = ? AND friend.country = ?; -- friends
    UPDATE users SET country = ? WHERE users.id = ?; -- move
    INSERT INTO users SET id = ?, name = ?, country = ? AND CONNECT TO friend(?); -- join
  }
};`))
	if err != nil {
		t.Fatal(err)
	}
	e := m.Entity("users")
	d := &dataSet{samples: map[string][][]types.Value{}, maxKey: map[string]types.Value{"users": int64(10)}}
	for i := int64(1); i <= 10; i++ {
		d.samples["users"] = append(d.samples["users"], []types.Value{i, "n", "c", i%10 + 1})
	}
	b := &binder{data: d}
	tuples := func(tag string) []source {
		for _, s := range w.Statements {
			if s.Tag == tag {
				srcs, err := b.sources(s)
				if err != nil {
					t.Fatal(err)
				}
				return srcs
			}
		}
		t.Fatalf("no statement %s", tag)
		return nil
	}
	if s := tuples("friends"); s[0].tuple == s[1].tuple {
		t.Errorf("friends: users.id and friend.country from one tuple: %+v", s)
	}
	if s := tuples("move"); s[0].tuple != s[1].tuple || s[0].column != e.Column(e.Field("country")) {
		t.Errorf("move: %+v, want country and id from one tuple", s)
	}
	s := tuples("join")
	if !s[0].fresh || s[1].tuple != s[2].tuple || s[3].tuple == s[1].tuple {
		t.Errorf("join: %+v, want a new key, name and country from one tuple, the friend from another", s)
	}
	for _, st := range w.Statements {
		p, err := b.stream(st, 1)
		if err != nil {
			t.Fatal(err)
		}
		for run := int64(1); run <= 3; run++ {
			args, err := p.next()
			if err != nil {
				t.Fatal(err)
			}
			if st.Tag == "join" && args[0] != 10+run {
				t.Errorf("join run %d: new key %v, want %d", run, args[0], 10+run)
			}
		}
	}
}
