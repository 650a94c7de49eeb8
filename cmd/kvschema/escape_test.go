package main

import (
	"context"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store"
)

// nasty holds what a stored string must never put on a terminal: ESC (a
// colour and a title-setting sequence), BEL, NUL, CR, DEL, invalid UTF-8, a
// C1 control (U+009B, CSI), a bidirectional override, and a tab and a line
// break that would break the table apart.
const nasty = "a\x1b[31mred\x1b]0;title\x07\x00\r\x7f\xff\xfe\u009b\u202e\t\nz"

// checkTerminalSafe fails if out holds a byte a terminal would act on:
// anything below 0x20 except the line breaks of the output itself (tables
// are padded with spaces, never tabs), DEL, or invalid UTF-8 (C1 controls
// and format characters included, by way of their UTF-8 lead bytes).
func checkTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if c := out[i]; c < 0x20 && c != '\n' || c == 0x7f {
			t.Fatalf("%s: byte 0x%02x at %d in output:\n%q", what, c, i, out)
		}
	}
	if !utf8.ValidString(out) {
		t.Fatalf("%s: invalid UTF-8 in output:\n%q", what, out)
	}
	for _, bad := range []string{"\u009b", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%s: %q in output:\n%q", what, bad, out)
		}
	}
}

// The table exec prints, on an advised store and on a client store alike,
// shows a stored string's control bytes and invalid UTF-8 escaped, by one
// rule, and keeps the table's shape.
func TestTablesEscapeStoredValues(t *testing.T) {
	ctx := context.Background()

	// An advised store, written through the engine's API.
	advised := "pebble:" + filepath.Join(t.TempDir(), "adv")
	st, err := store.Open(ctx, advised)
	if err != nil {
		t.Fatal(err)
	}
	const model = `DEFINE RELATION items ROWS 100 { id BIGINT KEY, name STRING CARDINALITY 100 };`
	en, err := exec.Deploy(ctx, st, "model.kvs", []byte(model), "schema.kvs",
		[]byte(model+"\nDEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.name) };"), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO items SET id = ?, name = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(ctx, int64(1), nasty); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := mustRun(t, "", "exec", "--echo", "--store", advised, "-e", "SELECT items.* FROM items WHERE items.id = 1")
	checkTerminalSafe(t, "engine table", out)
	rows := after(t, out, "SELECT items.* FROM items WHERE items.id = 1;")
	if len(rows) < 3 || !strings.HasPrefix(rows[1], `1         a\x1b[31mred\x1b]0;title\x07\x00\x0d\x7f\xff\xfe\xc2\x9b\xe2\x80\xae\x09\x0az`) {
		t.Errorf("engine table:\n%s", strings.Join(rows, "\n"))
	}

	// A client store, written through the Go API.
	client := "pebble:" + filepath.Join(t.TempDir(), "cl")
	db, err := kvschema.Open(ctx, client, kvschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "DEFINE RELATION r { k INT KEY, v STRING }"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "DEFINE PRIMARY SCHEMA p FOR r { TABLE 'p', ROW k, FAMILY 'f', QUALIFIER '', VALUE v }"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO r VALUES (1, ?)", nasty); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out = mustRun(t, "", "exec", "--echo", "--store", client, "-e", "SELECT * FROM r")
	checkTerminalSafe(t, "client table", out)
	equalLines(t, "client table", after(t, out, "SELECT * FROM r;"), []string{
		"k  v",
		`1  a\x1b[31mred\x1b]0;title\x07\x00\x0d\x7f\xff\xfe\xc2\x9b\xe2\x80\xae\x09\x0az`,
		"(1 row)",
	})
}

// Wherever else a value reaches the output — the echo of a statement, its
// plan, an error message quoting it (as the command prints it), the shell —
// it is escaped too.
func TestOutputEscapesValues(t *testing.T) {
	bin := binary(t)
	const def = "DEFINE RELATION r { k STRING KEY, v INT }; DEFINE PRIMARY SCHEMA p FOR r { TABLE 'p', ROW k, FAMILY 'f', QUALIFIER '', VALUE v };"
	bad := "x\x1b[2J\x07\x00\r\xff"
	for _, tc := range []struct {
		name, script string
		explain      bool
	}{
		{"echo and plan", def + "SELECT * FROM r WHERE k = '" + bad + "'", true},
		{"error quoting a value", def + "INSERT INTO r VALUES ('a', '" + bad + "')", false},
		{"error quoting a name", `SELECT * FROM "` + bad + `"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			// A file: arguments cannot hold a NUL.
			args := []string{"exec", "--echo", "-f", writeFile(t, "s.kvs", tc.script)}
			if tc.explain {
				args = append(args, "--explain")
			}
			cmd := osexec.Command(bin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			checkTerminalSafe(t, "stdout", stdout.String())
			checkTerminalSafe(t, "stderr", stderr.String())
			if !strings.Contains(stdout.String()+stderr.String(), `x\x1b[2J\x07\x00\x0d\xff`) {
				t.Errorf("value not shown escaped:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
	out, _ := run(t, def+"\nSELECT * FROM r WHERE k = '"+bad+"';\nSELECT * FROM \""+bad+"\";\n.schema\n", "shell")
	checkTerminalSafe(t, "shell", out)
	if !strings.Contains(out, `error: shell:1:15: unknown relation x\x1b[2J\x07\x00\x0d\xff`) {
		t.Errorf("shell error not escaped as expected:\n%s", out)
	}
}
