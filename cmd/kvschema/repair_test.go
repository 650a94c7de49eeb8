package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/store"
)

// TestRepairSweepsExpired: on a Pebble store, repair removes for good the
// cells whose TTL has run out (written an hour ago with a TTL of a
// minute), and keeps the others; verify is clean after.
func TestRepairSweepsExpired(t *testing.T) {
	url := "pebble:" + filepath.Join(t.TempDir(), "db")
	ctx := store.WithNow(t.Context(), time.Now().Add(-time.Hour))
	db, err := kvschema.Open(ctx, url, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Script(ctx, "s.kvs", []byte(`
DEFINE RELATION s { k BIGINT KEY, v STRING };
DEFINE PRIMARY SCHEMA p FOR s { TABLE 's', ROW ordered{k}, FAMILY 'f', QUALIFIER attr_name['k'], VALUE attr_value['k'] };
INSERT INTO s VALUES (1, 'gone') USING TTL 60;
INSERT INTO s VALUES (2, 'kept');`), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if out := mustRun(t, "", "repair", "--store", url); !strings.Contains(out, "1 expired cells removed") {
		t.Fatalf("repair:\n%s", out)
	}
	if out := mustRun(t, "", "repair", "--store", url); !strings.Contains(out, "0 expired cells removed") {
		t.Fatalf("second repair:\n%s", out)
	}
	if out := mustRun(t, "", "exec", "--store", url, "--format", "csv", "-e", "SELECT * FROM s"); strings.TrimSpace(out) != "k,v\n2,kept" {
		t.Fatalf("after the sweep:\n%s", out)
	}
	if out := mustRun(t, "", "verify", "--store", url); !strings.Contains(out, "verify: clean") {
		t.Fatalf("verify:\n%s", out)
	}
}
