package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/lang"
)

func TestSaltBucketsRoundTrip(t *testing.T) {
	src := `DEFINE RELATION users ROWS 10 { id BIGINT KEY, name STRING };
DEFINE RELATION items ROWS 100 { id BIGINT KEY, seller BIGINT REFERENCES users REVERSE items_sold };
DEFINE COLUMN FAMILY cf FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.items_sold.id), VALUES (users.name), SALT_BUCKETS = 8 };
DEFINE COLUMN FAMILY plain FOR users { PARTITION KEY (users.id), CLUSTERING KEY (), VALUES (users.name) };`
	m, s := scriptSchema(t, src)
	if s.Index("cf").SaltBuckets != 8 || s.Index("plain").SaltBuckets != 0 {
		t.Fatalf("salt buckets %d, %d", s.Index("cf").SaltBuckets, s.Index("plain").SaltBuckets)
	}
	printed := lang.PrintScript(s.Statements())
	again, err := lang.ParseScript("printed.kvs", []byte(printed))
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	s2, err := ParseSchema(m, again)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Index("cf").SaltBuckets != 8 || lang.PrintScript(s2.Statements()) != printed {
		t.Fatalf("round trip:\n%s\n%s", printed, lang.PrintScript(s2.Statements()))
	}
	if _, err := lang.ParseScript("bad.kvs", []byte(`DEFINE COLUMN FAMILY cf FOR users { PARTITION KEY (users.id), SALT_BUCKETS = 300 };`)); err == nil {
		t.Fatal("SALT_BUCKETS = 300 accepted")
	}
}

// TestPartitionBucketsRoundTrip: PARTITION_BUCKETS survives printing, makes
// a different stored structure (SameIndex), divides the stored partition's
// size, and leaves the table pre-split at every bucket.
func TestPartitionBucketsRoundTrip(t *testing.T) {
	src := `DEFINE RELATION users ROWS 10 { id BIGINT KEY, name STRING };
DEFINE RELATION items ROWS 1000 { id BIGINT KEY, seller BIGINT REFERENCES users REVERSE items_sold };
DEFINE COLUMN FAMILY cf FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.items_sold.id), VALUES (users.name), PARTITION_BUCKETS = 4 };
DEFINE COLUMN FAMILY plain FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.items_sold.id), VALUES (users.name) };`
	m, s := scriptSchema(t, src)
	cf, plain := s.Index("cf"), s.Index("plain")
	if cf.PartitionBuckets != 4 || plain.PartitionBuckets != 0 || SameIndex(cf, plain) {
		t.Fatalf("partition buckets %d, %d; same index %v", cf.PartitionBuckets, plain.PartitionBuckets, SameIndex(cf, plain))
	}
	// 100 items per user: each of 4 buckets holds a quarter.
	if got, want := cf.PartitionBytes(), plain.PartitionBytes()/4; got != want || cf.RowsPerPartition() != plain.RowsPerPartition() {
		t.Fatalf("stored partition %g bytes, want %g; rows per partition %g and %g", got, want, cf.RowsPerPartition(), plain.RowsPerPartition())
	}
	if spec := cf.Layout().TableSpec(); len(spec.Splits) != 3 {
		t.Fatalf("splits %q, want one per bucket", spec.Splits)
	}
	printed := lang.PrintScript(s.Statements())
	again, err := lang.ParseScript("printed.kvs", []byte(printed))
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	s2, err := ParseSchema(m, again)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(printed, "PARTITION_BUCKETS = 4") || !SameIndex(s2.Index("cf"), cf) || lang.PrintScript(s2.Statements()) != printed {
		t.Fatalf("round trip:\n%s\n%s", printed, lang.PrintScript(s2.Statements()))
	}
	si, err := lang.ParseScript("si.kvs", []byte(src+"\nDEFINE SECONDARY INDEX by_name ON cf (users.name);"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSchema(m, si); err == nil || !strings.Contains(err.Error(), "si.kvs:5:1: secondary index by_name: cf has PARTITION_BUCKETS") {
		t.Fatalf("an SI on a column family with partition buckets: %v", err)
	}
}

// scriptSchema reads a script of relations and column families.
func scriptSchema(t *testing.T, src string) (*Model, *Schema) {
	t.Helper()
	stmts, err := lang.ParseScript("s.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// splitModel is a model with one attribute of most types, for SPLIT ON.
const splitModel = `DEFINE RELATION t ROWS 10 { a INT KEY, b BIGINT, s STRING, f FLOAT, ts TIMESTAMP, y BYTES };`

func parseSplitSchema(t *testing.T, src string) (*Schema, error) {
	t.Helper()
	stmts, err := lang.ParseScript("s.kvs", []byte(splitModel+"\n"+src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return ParseSchema(m, stmts)
}

// TestSplitOnEncoding: each split key is the ordered, nullable encoding of
// its values (a 0x01 presence byte, then INT as 4 sign-flipped big-endian
// bytes, BIGINT as 8, STRING with a 0x00 0x01 terminator), sorted by key.
func TestSplitOnEncoding(t *testing.T) {
	s, err := parseSplitSchema(t, `
DEFINE COLUMN FAMILY by_a FOR t { PARTITION KEY (t.a, t.s), VALUES (t.b), SPLIT ON ((1000), (-1, 'm'), (7, 'a,b')) };
DEFINE COLUMN FAMILY by_b FOR t { PARTITION KEY (t.b), CLUSTERING KEY (t.a), SPLIT ON (1000, -1) };
DEFINE COLUMN FAMILY salted FOR t { PARTITION KEY (t.a), SALT_BUCKETS = 3 };`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cf   string
		want string
	}{
		{"by_a", `["\x01\x7f\xff\xff\xff\x01m\x00\x01" "\x01\x80\x00\x00\a\x01a,b\x00\x01" "\x01\x80\x00\x03\xe8"]`},
		{"by_b", `["\x01\x7f\xff\xff\xff\xff\xff\xff\xff" "\x01\x80\x00\x00\x00\x00\x00\x03\xe8"]`},
		{"salted", `["\x01" "\x02"]`},
	} {
		if got := fmt.Sprintf("%q", splitsOf(t, s.Index(tc.cf))); got != tc.want {
			t.Errorf("%s splits %s, want %s", tc.cf, got, tc.want)
		}
	}
	// The points print back, in key order, and read back the same.
	printed := lang.PrintScript(s.Statements())
	if want := "  SPLIT ON ((-1, 'm'), (7, 'a,b'), (1000))\n"; !strings.Contains(printed, want) {
		t.Errorf("printed schema lacks %q:\n%s", want, printed)
	}
	again, err := parseSplitSchema(t, printed)
	if err != nil {
		t.Fatalf("%v\n%s", err, printed)
	}
	for _, x := range s.Indexes {
		if got, want := fmt.Sprintf("%q", splitsOf(t, again.Index(x.Name))), fmt.Sprintf("%q", splitsOf(t, x)); got != want {
			t.Errorf("%s: splits %s after a round trip, want %s", x.Name, got, want)
		}
	}
}

// TestSplitOnCollections: a frozen collection in a partition key splits
// at its ordered encoding (each element behind 0x01, then 0x00), so the
// points sort as the collections do: the empty set first, a prefix
// before its extensions.
func TestSplitOnCollections(t *testing.T) {
	_, s := scriptSchema(t, `DEFINE RELATION m ROWS 10 { id INT KEY, tags FROZEN<SET<STRING>> };
DEFINE COLUMN FAMILY by_tags FOR m { PARTITION KEY (m.tags), CLUSTERING KEY (m.id), SPLIT ON ({'q', 'p'}, {'g'}, {}, {'p'}) };`)
	want := `["\x01\x00" "\x01\x01g\x00\x01\x00" "\x01\x01p\x00\x01\x00" "\x01\x01p\x00\x01\x01q\x00\x01\x00"]`
	if got := fmt.Sprintf("%q", splitsOf(t, s.Index("by_tags"))); got != want {
		t.Errorf("splits %s, want %s", got, want)
	}
	if printed, want := lang.PrintScript(s.Statements()), "SPLIT ON ({}, {'g'}, {'p'}, {'p', 'q'})"; !strings.Contains(printed, want) {
		t.Errorf("printed schema lacks %q:\n%s", want, printed)
	}
}

// TestSplitOnCoercion: values take their attribute's type, as literals in
// statements do, and print back in it.
func TestSplitOnCoercion(t *testing.T) {
	s, err := parseSplitSchema(t, `DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a, t.f, t.ts, t.y),
  SPLIT ON ((2.0, 1, '2024-01-02 03:04:05', 'k'), (3, 0.1)) };`)
	if err != nil {
		t.Fatal(err)
	}
	printed := lang.PrintScript(s.Statements())
	if want := "SPLIT ON ((2, 1.0, TIMESTAMP '2024-01-02 03:04:05', x'6b'), (3, 0.10000000149011612))"; !strings.Contains(printed, want) {
		t.Errorf("printed schema lacks %q:\n%s", want, printed)
	}
}

func TestSplitOnErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON ('x') };`,
			"s.kvs:2:64: column family cf: split point ('x'): t.a: cannot use 'x' (string) as INT"},
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a), SPLIT ON (1, 3000000000) };`,
			"s.kvs:2:67: column family cf: split point (3000000000): t.a: value 3000000000 out of range for INT"},
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a, t.ts), SPLIT ON ((1, '9999-12-31T23:59:59-01:00')) };`,
			"s.kvs:2:70: column family cf: split point (1, '9999-12-31T23:59:59-01:00'): t.ts: timestamp '9999-12-31T23:59:59-01:00' out of range"},
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a, t.a), SPLIT ON ((1, 2)) };`,
			"s.kvs:2:69: column family cf: split point (1, 2) has 2 values but the partition key only 1 attribute(s)"},
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.s, t.a), SPLIT ON ((1, 'x')) };`,
			"s.kvs:2:69: column family cf: SPLIT ON values follow the partition key in row-key order (t.a, t.s): write PARTITION KEY in that order"},
		{`DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.b), CLUSTERING KEY (t.a),
  SPLIT ON (5, 1, 5.0) };`,
			"s.kvs:3:19: column family cf: split point (5.0) is the same row key as the one at 3:13"},
	} {
		_, err := parseSplitSchema(t, tc.src)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}

// splitsOf is the split points of x's table.
func splitsOf(t testing.TB, x *Index) [][]byte {
	t.Helper()
	return x.Layout().TableSpec().Splits
}

// TestNamesCaseInsensitive: paths and index names resolve in any case, and
// two indexes whose names differ only in case clash (each is a store table,
// found by name).
func TestDDLNamesCaseInsensitive(t *testing.T) {
	s, err := parseSplitSchema(t, `DEFINE COLUMN FAMILY Cf FOR T { PARTITION KEY (T.A), VALUES (t.B) };
DEFINE SECONDARY INDEX si ON CF (t.B);`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Index("cf") == nil || s.Index("SI") == nil || s.Index("cf").Name != "Cf" {
		t.Fatalf("indexes by other spellings: %v %v", s.Index("cf"), s.Index("SI"))
	}
	_, err = parseSplitSchema(t, `DEFINE COLUMN FAMILY cf FOR t { PARTITION KEY (t.a) };
DEFINE COLUMN FAMILY CF FOR t { PARTITION KEY (t.b) };`)
	if want := "CF is defined twice (names are case-insensitive)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestStaticColumns reads STATIC in a column family: the static columns
// are kept apart from the values, print back, change the identity and the
// size (once per root tuple), make the layout's partition rows; and every
// misuse is an error naming its position.
func TestStaticColumns(t *testing.T) {
	const model = `DEFINE RELATION r ROWS 10 { id BIGINT KEY SIZE 8, name STRING SIZE 20, n BIGINT SIZE 8 };
DEFINE RELATION m ROWS 1000 { id BIGINT KEY SIZE 8, at BIGINT SIZE 8, body STRING SIZE 100, room BIGINT REFERENCES r REVERSE msgs };
`
	parse := func(src string) (*Schema, error) {
		stmts, err := lang.ParseScript("s.kvs", []byte(model+src))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Build(stmts)
		if err != nil {
			t.Fatal(err)
		}
		return ParseSchema(m, stmts)
	}
	s, err := parse(`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), CLUSTERING KEY (r.msgs.at, r.msgs.id), STATIC (r.name, r.n), VALUES (r.msgs.body) };`)
	if err != nil {
		t.Fatal(err)
	}
	x := s.Indexes[0]
	if got := x.Describe(); got != "CF([r.id] [r.msgs.at, r.msgs.id] static [r.n, r.name] → [r.msgs.body])" {
		t.Errorf("Describe: %s", got)
	}
	// 1000 rows of (8 + 8 + 8 + 100) bytes, 10 partition rows of (8 + 20 + 8).
	if want := 1000.0*124 + 10*36; x.Size != want || x.EntrySize != 124 {
		t.Errorf("size %v (rows of %v B), want %v", x.Size, x.EntrySize, want)
	}
	l := x.Layout()
	if !l.HasStatic() || len(l.Static) != 2 || l.PartitionKeys() != 1 {
		t.Errorf("layout: static %v, partition keys %d", l.Static, l.PartitionKeys())
	}
	printed := lang.PrintScript(s.Statements())
	if !strings.Contains(printed, "STATIC (r.n, r.name)") {
		t.Errorf("printed without STATIC:\n%s", printed)
	}
	again, err := parse(printed)
	if err != nil || again.Indexes[0].Key != x.Key {
		t.Fatalf("round trip: %v\n%s", err, printed)
	}
	plain, err := parse(`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), CLUSTERING KEY (r.msgs.at, r.msgs.id), VALUES (r.name, r.n, r.msgs.body) };`)
	if err != nil || plain.Indexes[0].Key == x.Key {
		t.Fatalf("the static columns do not change the identity: %v", err)
	}
	for _, tc := range []struct{ src, want string }{
		{`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), CLUSTERING KEY (r.msgs.id), STATIC (r.msgs.body) };`,
			"s.kvs:3:91: column family cf: static column r.msgs.body must be an attribute of r, the relation after FOR"},
		{`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), CLUSTERING KEY (r.msgs.id), STATIC (r.id) };`,
			"s.kvs:3:91: column family cf: static column r.id is a key attribute"},
		{`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.n), CLUSTERING KEY (r.id), STATIC (r.name) };`,
			"s.kvs:3:85: column family cf: static columns need the partition key to be r.id alone"},
		{`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), STATIC (r.name) };`,
			"s.kvs:3:63: column family cf: static columns need a clustering key"},
		{`DEFINE COLUMN FAMILY cf FOR r { PARTITION KEY (r.id), CLUSTERING KEY (r.msgs.id), STATIC (r.name), VALUES (r.name) };`,
			"s.kvs:3:91: column family cf: r.name is both static and in the rows"},
	} {
		if _, err := parse(tc.src); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s\ngot  %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}
