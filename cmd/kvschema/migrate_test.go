package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMigrateCommand: a chat store loaded with the schema advised without
// static columns migrates to the one advised with them — dry run first,
// then for real — and is verified clean, answers queries, and a second run
// finds nothing to do.
func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	model, workload := "../../examples/chat/model.kvs", "../../examples/chat/workload.kvs"
	from, to := filepath.Join(dir, "from.kvs"), filepath.Join(dir, "to.kvs")
	mustRun(t, "", "advise", "-q", "--model", model, "--workload", workload, "--mix", "chat", "--format", "ddl", "-o", from)
	mustRun(t, "", "advise", "-q", "--model", model, "--workload", workload, "--mix", "chat", "--static-columns", "--format", "ddl", "-o", to)
	url := "pebble:" + filepath.Join(dir, "db")
	mustRun(t, "", "load", "--store", url, "--schema", from, "--generate", "model", "--scale", "0.0001", "-q")
	dry := mustRun(t, "", "migrate", "--store", url, "--schema", to, "--dry-run", "--rate", "1000")
	for _, want := range []string{"add (write-only, backfill, verify, then readable):", "static", "drop (unread, then removed and its rows deleted):", "the store holds: messages 500, rooms 1 tuples", "(the model's, scaled to the tuples the store holds); build about "} {
		if !strings.Contains(dry, want) {
			t.Errorf("the dry run lacks %q:\n%s", want, dry)
		}
	}
	// At 1000 rows a second, the 1500 rows take 1.5 s and more.
	if m := regexp.MustCompile(`backfill: 1500 rows, .*build about ([0-9.]+m?s) `).FindStringSubmatch(dry); m == nil {
		t.Errorf("the dry run's backfill line:\n%s", dry)
	} else if d, err := time.ParseDuration(m[1]); err != nil || d < 1500*time.Millisecond {
		t.Errorf("at --rate 1000, 1500 rows take %s", m[1])
	}
	out := mustRun(t, "", "migrate", "--store", url, "--schema", to)
	if !strings.Contains(out, "migrate: done in") || !strings.Contains(out, "rows copied") {
		t.Errorf("migrate:\n%s", out)
	}
	// Each index to add holds a row per message: the dry run's estimate
	// (the model's, scaled to the store's counts) is what was copied.
	copied := regexp.MustCompile(`migrate: (\S+): (\d+) rows copied`).FindAllStringSubmatch(out, -1)
	if len(copied) != 3 {
		t.Errorf("%d indexes copied, want 3:\n%s", len(copied), out)
	}
	for _, m := range copied {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(m[1]) + ` .*\(` + m[2] + ` rows, `).MatchString(dry) {
			t.Errorf("%s: %s rows copied, not as the dry run said:\n%s", m[1], m[2], dry)
		}
	}
	// Pebble drops a table at once: its rows are not counted, and the
	// output does not say "0 rows".
	if !strings.Contains(out, ": its table dropped") || strings.Contains(out, ": 0 rows in") {
		t.Errorf("migrate's drops:\n%s", out)
	}
	if v := mustRun(t, "", "verify", "--store", url); !strings.Contains(v, "verify: clean") {
		t.Errorf("verify after the migration:\n%s", v)
	}
	q := mustRun(t, "", "exec", "--store", url, "--explain", "-e", "SELECT rooms.name, rooms.messages.body FROM rooms.messages WHERE rooms.id = 1 LIMIT 3")
	if !strings.Contains(q, "STATIC COLUMNS") {
		t.Errorf("the migrated schema's plan reads no static columns:\n%s", q)
	}
	if again := mustRun(t, "", "migrate", "--store", url, "--schema", to); !strings.Contains(again, "nothing to do") {
		t.Errorf("a second migration:\n%s", again)
	}
	if _, err := run(t, "", "migrate", "--store", url); err == nil || !strings.Contains(err.Error(), "--schema") {
		t.Errorf("migrate without --schema: %v", err)
	}
}
