package catalog

import (
	"fmt"
	"os"
	"testing"

	"github.com/kvschema/kvschema/lang"
)

// FuzzParseSchema reads arbitrary column family and secondary index
// definitions against the RUBiS model: errors are fine, panics are not, and
// whatever is accepted prints back to definitions that read the same.
func FuzzParseSchema(f *testing.F) {
	src, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		f.Fatal(err)
	}
	ms, err := lang.ParseScript("model.kvs", src)
	if err != nil {
		f.Fatal(err)
	}
	m, err := Build(ms)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`DEFINE COLUMN FAMILY a FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.bids.id, items.bids.user.id), VALUES (items.bids.user.nickname) };
DEFINE SECONDARY INDEX s ON a (items.bids.user.nickname);`)
	f.Add(`DEFINE COLUMN FAMILY b FOR users { PARTITION KEY (users.rating), CLUSTERING KEY (users.id) };`)
	f.Add(`DEFINE COLUMN FAMILY c FOR users { PARTITION KEY (users.lastname, users.rating), CLUSTERING KEY (users.id),
  SPLIT ON (('g', 10), 'n', ('t', -5)) };`)
	f.Add(`DEFINE COLUMN FAMILY d FOR items { PARTITION KEY (items.end_date), CLUSTERING KEY (items.id),
  SPLIT ON (TIMESTAMP '2024-01-01', '2025-01-01 00:00:00+01:00') };`)
	f.Add(`DEFINE COLUMN FAMILY e FOR users { PARTITION KEY (users.id), SALT_BUCKETS = 4 };`)
	f.Add(`DEFINE COLUMN FAMILY g FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.bids.date, items.bids.id), VALUES (items.bids.bid), PARTITION_BUCKETS = 16 };`)
	f.Add(`DEFINE COLUMN FAMILY f FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.bids.id), STATIC (items.name, items.description), VALUES (items.bids.bid) };`)
	f.Fuzz(func(t *testing.T, text string) {
		stmts, err := lang.ParseScript("s.kvs", []byte(text))
		if err != nil {
			return
		}
		s, err := ParseSchema(m, stmts)
		if err != nil {
			return
		}
		printed := lang.PrintScript(s.Statements())
		reparsed, err := lang.ParseScript("printed.kvs", []byte(printed))
		if err != nil {
			t.Fatalf("printed schema does not parse: %v\n%s", err, printed)
		}
		again, err := ParseSchema(m, reparsed)
		if err != nil {
			t.Fatalf("printed schema does not read back: %v\n%s", err, printed)
		}
		if len(again.Indexes) != len(s.Indexes) {
			t.Fatalf("%d indexes, %d after a round trip", len(s.Indexes), len(again.Indexes))
		}
		for i, x := range s.Indexes {
			y := again.Indexes[i]
			if x.Key != y.Key {
				t.Fatalf("index %d: %s became %s", i, x.Key, y.Key)
			}
			if a, b := fmt.Sprintf("%q", splitsOf(t, x)), fmt.Sprintf("%q", splitsOf(t, y)); a != b {
				t.Fatalf("index %d: splits %s became %s", i, a, b)
			}
		}
	})
}
