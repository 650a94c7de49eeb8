package physical

import (
	"testing"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/model"
)

func TestSaltBucketsRoundTrip(t *testing.T) {
	src := `DEFINE RELATION users ROWS 10 { id BIGINT KEY, name STRING };
DEFINE RELATION items ROWS 100 { id BIGINT KEY, seller BIGINT REFERENCES users REVERSE items_sold };
DEFINE COLUMN FAMILY cf FOR users { PARTITION KEY (users.id), CLUSTERING KEY (users.items_sold.id), VALUES (users.name), SALT_BUCKETS = 8 };
DEFINE COLUMN FAMILY plain FOR users { PARTITION KEY (users.id), CLUSTERING KEY (), VALUES (users.name) };`
	stmts, err := lang.ParseScript("s.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
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
