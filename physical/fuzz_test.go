package physical

import (
	"os"
	"testing"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/model"
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
	m, err := model.Build(ms)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`DEFINE COLUMN FAMILY a FOR items { PARTITION KEY (items.id), CLUSTERING KEY (items.bids.id, items.bids.user.id), VALUES (items.bids.user.nickname) };
DEFINE SECONDARY INDEX s ON a (items.bids.user.nickname);`)
	f.Add(`DEFINE COLUMN FAMILY b FOR users { PARTITION KEY (users.rating), CLUSTERING KEY (users.id) };`)
	f.Fuzz(func(t *testing.T, text string) {
		stmts, err := lang.ParseScript("s.kvs", []byte(text))
		if err != nil {
			return
		}
		s, err := ParseSchema(m, stmts)
		if err != nil {
			return
		}
		again, err := ParseSchema(m, s.Statements())
		if err != nil {
			t.Fatalf("printed schema does not read back: %v\n%s", err, lang.PrintScript(s.Statements()))
		}
		if len(again.Indexes) != len(s.Indexes) {
			t.Fatalf("%d indexes, %d after a round trip", len(s.Indexes), len(again.Indexes))
		}
		for i := range s.Indexes {
			if s.Indexes[i].Key != again.Indexes[i].Key {
				t.Fatalf("index %d: %s became %s", i, s.Indexes[i].Key, again.Indexes[i].Key)
			}
		}
	})
}
