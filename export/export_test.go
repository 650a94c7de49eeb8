package export

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// rubisSchema reads testdata/rubis_schema.kvs over the RUBiS model.
func rubisSchema(t testing.TB) *catalog.Schema {
	t.Helper()
	read := func(file string) []lang.Statement {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := lang.ParseScript(file, src)
		if err != nil {
			t.Fatal(err)
		}
		return stmts
	}
	m, err := catalog.Build(read("../examples/rubis/model.kvs"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, read("testdata/rubis_schema.kvs"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// everyByte is a schema whose one index splits at every single byte and at
// keys that trip naive quoting.
func everyByte(t testing.TB) *catalog.Schema {
	t.Helper()
	stmts, err := lang.ParseScript("every_byte.kvs", []byte(`DEFINE RELATION t ROWS 10 { k BYTES KEY };
DEFINE COLUMN FAMILY every_byte FOR t { PARTITION KEY (t.k) };`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.ParseSchema(m, stmts)
	if err != nil {
		t.Fatal(err)
	}
	x := s.Indexes[0]
	for c := 0; c < 256; c++ {
		x.SplitOn = append(x.SplitOn, catalog.SplitPoint{Key: []byte{byte(c)}})
	}
	for _, k := range []string{`\x41`, `\\x41`, `\x4`, "a'b", "'", "%d%%", "a,b", "\xff\x00\n", "#{x}", "x\n\n", "\n", `"\"`} {
		x.SplitOn = append(x.SplitOn, catalog.SplitPoint{Key: []byte(k)})
	}
	return s
}

func TestGolden(t *testing.T) {
	s := rubisSchema(t)
	for _, tc := range []struct {
		file string
		gen  func() (string, error)
	}{
		{"rubis.hbase", func() (string, error) { return HBase(SchemaTables(s), "") }},
		{"rubis_ns.hbase", func() (string, error) { return HBase(SchemaTables(s), "kv") }},
		{"rubis.cbt.sh", func() (string, error) { return CBT(SchemaTables(s)) }},
	} {
		got, err := tc.gen()
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./export -update rewrites it); got:\n%s", file, got)
		}
	}
}

var (
	hbaseCreate = regexp.MustCompile(`^create '([^']+)', \{NAME => 'v', VERSIONS => 1\}(?:, SPLITS => \[(.*)\])?$`)
	cbtCreate   = regexp.MustCompile(`^(?:splits=\$\(printf '([^']*)\.'\) && )?cbt createtable (\S+) "families=v:maxversions=1"(?: "\$\{splits%\.\}")?$`)
	cbtLeftOut  = regexp.MustCompile(`^# split '([^']*)' left out: `)
)

// TestHBaseSplitsRoundTrip reads every split key of the HBase scripts back
// as the HBase shell would.
func TestHBaseSplitsRoundTrip(t *testing.T) {
	for _, s := range []*catalog.Schema{rubisSchema(t), everyByte(t)} {
		text, err := HBase(SchemaTables(s), "ns")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][][]byte{}
		for _, line := range strings.Split(text, "\n") {
			m := hbaseCreate.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			var keys [][]byte
			for rest := m[2]; rest != ""; {
				var k []byte
				k, rest = unRuby(t, rest)
				keys = append(keys, k)
				rest = strings.TrimPrefix(rest, ", ")
			}
			got[strings.TrimPrefix(m[1], "ns:")] = keys
		}
		for _, x := range s.Indexes {
			keys, ok := got[x.Name]
			if !ok {
				t.Fatalf("no create for %s in\n%s", x.Name, text)
			}
			if a, b := fmt.Sprintf("%q", keys), fmt.Sprintf("%q", splitsOf(t, x)); a != b {
				t.Errorf("%s: splits read back as %s, want %s", x.Name, a, b)
			}
		}
	}
}

// TestCBTSplitsRoundTrip reads every split key of the cbt scripts back as
// printf and cbt would, and checks that every key left out is named.
func TestCBTSplitsRoundTrip(t *testing.T) {
	for _, s := range []*catalog.Schema{rubisSchema(t), everyByte(t)} {
		text, err := CBT(SchemaTables(s))
		if err != nil {
			t.Fatal(err)
		}
		got, left := cbtTables(t, text)
		for _, x := range s.Indexes {
			keys, ok := got[x.Name]
			if !ok {
				t.Fatalf("no createtable for %s in\n%s", x.Name, text)
			}
			wantKeys, wantLeft := cbtExpected(t, x)
			if a, b := fmt.Sprintf("%q", keys), fmt.Sprintf("%q", wantKeys); a != b {
				t.Errorf("%s: splits read back as %s, want %s", x.Name, a, b)
			}
			if a, b := fmt.Sprintf("%q", left[x.Name]), fmt.Sprintf("%q", wantLeft); a != b {
				t.Errorf("%s: comments leave out %s, want %s", x.Name, a, b)
			}
		}
	}
}

// cbtExpected is what cbt gets of x's splits, and what is left out.
func cbtExpected(t testing.TB, x *catalog.Index) (keys, left [][]byte) {
	for _, k := range splitsOf(t, x) {
		if cbtUnsplittable(k) == "" {
			keys = append(keys, k)
		} else {
			left = append(left, k)
		}
	}
	return keys, left
}

// cbtTables parses a cbt script: each table's split keys, and the keys its
// comments say were left out.
func cbtTables(t *testing.T, text string) (keys, left map[string][][]byte) {
	keys, left = map[string][][]byte{}, map[string][][]byte{}
	var pending [][]byte
	for _, line := range strings.Split(text, "\n") {
		if m := cbtLeftOut.FindStringSubmatch(line); m != nil {
			k, rest := unRuby(t, "'"+m[1]+"'")
			if rest != "" {
				t.Fatalf("bad comment %q", line)
			}
			pending = append(pending, k)
			continue
		}
		m := cbtCreate.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "" {
			arg := unPrintf(t, m[1])
			if !bytes.HasPrefix(arg, []byte("splits=")) {
				t.Fatalf("printf writes %q", arg)
			}
			keys[m[2]] = bytes.Split(arg[len("splits="):], []byte(",")) // as cbt does
		} else {
			keys[m[2]] = nil
		}
		left[m[2]], pending = pending, nil
	}
	return keys, left
}

// TestCBTScriptInSh runs the cbt scripts with sh, against a stand-in cbt
// that records its arguments' bytes, so the shell's own quoting is what is
// checked.
func TestCBTScriptInSh(t *testing.T) {
	for _, tool := range []string{"sh", "od", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	fake := `#!/bin/sh
line=cbt
for a in "$@"; do line="$line $(printf '%s' "$a" | od -An -v -tx1 | tr -d ' \n')"; done
echo "$line" >>"$CBT_LOG"
`
	if err := os.WriteFile(filepath.Join(dir, "cbt"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range []*catalog.Schema{rubisSchema(t), everyByte(t)} {
		text, err := CBT(SchemaTables(s))
		if err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, fmt.Sprintf("tables%d.sh", i))
		log := filepath.Join(dir, fmt.Sprintf("cbt%d.log", i))
		if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", script)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "CBT_LOG="+log)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sh %s: %v\n%s", script, err, out)
		}
		calls, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(calls), "\n"), "\n")
		if len(lines) != len(s.Indexes) {
			t.Fatalf("%d cbt calls for %d indexes:\n%s", len(lines), len(s.Indexes), calls)
		}
		for j, x := range s.Indexes {
			var args []string
			for _, h := range strings.Fields(lines[j])[1:] {
				b, err := hex.DecodeString(h)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, string(b))
			}
			want := []string{"createtable", x.Name, "families=v:maxversions=1"}
			if keys, _ := cbtExpected(t, x); keys != nil {
				want = append(want, "splits="+string(bytes.Join(keys, []byte(","))))
			}
			if a, b := fmt.Sprintf("%q", args), fmt.Sprintf("%q", want); a != b {
				t.Errorf("cbt called with %s, want %s", a, b)
			}
		}
	}
}

func TestBadNames(t *testing.T) {
	bad := []Table{{Spec: store.TableSpec{Name: "a b", Families: []string{"v"}}, About: "x"}}
	if _, err := HBase(bad, ""); err == nil || !strings.Contains(err.Error(), `table "a b": not an HBase table name`) {
		t.Errorf("HBase: %v", err)
	}
	if _, err := CBT(bad); err == nil || !strings.Contains(err.Error(), `table "a b": not a Bigtable table ID`) {
		t.Errorf("CBT: %v", err)
	}
	bad[0].Spec.Name = "ok"
	if _, err := HBase(bad, "n:s"); err == nil || !strings.Contains(err.Error(), `namespace "n:s"`) {
		t.Errorf("HBase namespace: %v", err)
	}
	bad[0].Spec.Families = []string{"a,b"}
	if _, err := CBT(bad); err == nil || !strings.Contains(err.Error(), `family "a,b" is not a Bigtable family name`) {
		t.Errorf("CBT family: %v", err)
	}
}

// FuzzSplitQuoting: every key reads back from its HBase quoting, and every
// key cbt can take from its printf quoting.
func FuzzSplitQuoting(f *testing.F) {
	for _, k := range []string{"", "\x01", `\x41`, "'", "%", "a,b", "\x00", "\xff\n"} {
		f.Add([]byte(k))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		got, rest := unRuby(t, rubyBinary(key))
		if rest != "" || !bytes.Equal(got, key) {
			t.Fatalf("%q quoted as %s reads back as %q (rest %q)", key, rubyBinary(key), got, rest)
		}
		if cbtUnsplittable(key) != "" {
			return
		}
		format := printfSplits([][]byte{key, key})
		if strings.Contains(format, "'") {
			t.Fatalf("format %s holds a quote", format)
		}
		want := "splits=" + string(key) + "," + string(key)
		if got := unPrintf(t, format); string(got) != want {
			t.Fatalf("%q: printf %s writes %q", key, format, got)
		}
	})
}

// unRuby reads the single-quoted Ruby string at the start of s as the HBase
// shell's create does: Ruby unescapes only \\ and \', the string reaches
// Java as text (so it must be ASCII to keep its bytes), and
// Bytes.toBytesBinary reads \xHH as a byte and every other character as its
// low byte. It returns the bytes and what follows the string.
func unRuby(t testing.TB, s string) ([]byte, string) {
	t.Helper()
	if !strings.HasPrefix(s, "'") {
		t.Fatalf("no Ruby string at %q", s)
	}
	var str []byte
	i := 1
	for ; i < len(s) && s[i] != '\''; i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
			i++
		}
		if s[i] >= 0x80 {
			t.Fatalf("non-ASCII byte in %q: the shell would decode it as text", s)
		}
		str = append(str, s[i])
	}
	if i == len(s) {
		t.Fatalf("unterminated Ruby string %q", s)
	}
	var out []byte
	for j := 0; j < len(str); j++ {
		if str[j] == '\\' && j+3 < len(str) && str[j+1] == 'x' {
			if v, err := strconv.ParseUint(string(str[j+2:j+4]), 16, 8); err == nil {
				out = append(out, byte(v))
				j += 3
				continue
			}
		}
		out = append(out, str[j])
	}
	return out, s[i+1:]
}

// unPrintf is what POSIX printf writes for a format without conversions:
// %% is '%', \\ is '\', \ddd (one to three octal digits) is a byte.
func unPrintf(t testing.TB, format string) []byte {
	t.Helper()
	var out []byte
	for i := 0; i < len(format); i++ {
		switch c := format[i]; c {
		case '%':
			if i+1 == len(format) || format[i+1] != '%' {
				t.Fatalf("conversion in printf format %q", format)
			}
			out = append(out, '%')
			i++
		case '\\':
			if i+1 < len(format) && format[i+1] == '\\' {
				out = append(out, '\\')
				i++
				continue
			}
			n := 0
			for n < 3 && i+1+n < len(format) && format[i+1+n] >= '0' && format[i+1+n] <= '7' {
				n++
			}
			if n == 0 {
				t.Fatalf("escape other than octal in printf format %q", format)
			}
			v, _ := strconv.ParseUint(format[i+1:i+1+n], 8, 16)
			out = append(out, byte(v))
			i += n
		default:
			out = append(out, c)
		}
	}
	return out
}

// splitsOf is the split points of x's table.
func splitsOf(t testing.TB, x *catalog.Index) [][]byte {
	t.Helper()
	return x.Layout().TableSpec().Splits
}

// TestLayoutTables: the tables of DEFINE SCHEMA layouts — one per constant
// TABLE with every layout's family, salt-bucket splits, and a comment for
// layouts whose TABLE or FAMILY depends on attributes — as HBase and cbt
// scripts.
func TestLayoutTables(t *testing.T) {
	c, err := catalog.CatalogFromScript("layouts.kvs", []byte(`
DEFINE RELATION r { k STRING KEY, v STRING };
DEFINE PRIMARY SCHEMA by_k FOR r { TABLE 't', ROW salt(3){k}:k, FAMILY 'a', VALUE v };
DEFINE SCHEMA by_k_w FOR r { TABLE 't', ROW k, FAMILY 'b', QUALIFIER '', VALUE v };
DEFINE SCHEMA per_w FOR r { TABLE prefix('t_'){v}, ROW k, FAMILY 'c', VALUE '' };
DEFINE SCHEMA fam_w FOR r { TABLE 'u', ROW k, FAMILY v, VALUE '' };
`))
	if err != nil {
		t.Fatal(err)
	}
	tables := LayoutTables(c)
	if len(tables) != 3 {
		t.Fatalf("%d tables: %+v", len(tables), tables)
	}
	if got := tables[0]; got.Spec.Name != "t" || fmt.Sprint(got.Spec.Families) != "[a b]" || len(got.Spec.Splits) != 2 ||
		got.About != "table t: layout by_k of r (family a), layout by_k_w of r (family b)" {
		t.Errorf("shared table: %+v", got)
	}
	if tables[1].Spec.Name != "" || !strings.Contains(tables[1].About, "layout per_w of r: its TABLE depends on attributes") {
		t.Errorf("dynamic TABLE: %+v", tables[1])
	}
	if tables[2].Spec.Name != "" || !strings.Contains(tables[2].About, "layout fam_w of r (table u): its FAMILY depends on attributes") {
		t.Errorf("dynamic FAMILY: %+v", tables[2])
	}
	hb, err := HBase(tables, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hb, "create 't', {NAME => 'a', VERSIONS => 1}, {NAME => 'b', VERSIONS => 1}, SPLITS => ['\\x01', '\\x02']\n") ||
		strings.Count(hb, "create '") != 1 {
		t.Errorf("HBase script:\n%s", hb)
	}
	cbt, err := CBT(tables)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cbt, `cbt createtable t "families=a:maxversions=1,b:maxversions=1"`) || strings.Count(cbt, "cbt createtable") != 1 {
		t.Errorf("cbt script:\n%s", cbt)
	}
}

// TestLayoutTablesStatic: a layout with static columns gets the partition
// rows' family in its table, and the comment says where they live.
func TestLayoutTablesStatic(t *testing.T) {
	c, err := catalog.CatalogFromScript("static.kvs", []byte(`
DEFINE RELATION m { room BIGINT PARTITION KEY, id BIGINT KEY, body STRING, name STRING STATIC };
DEFINE PRIMARY SCHEMA by_room FOR m { TABLE 'm', ROW ordered{room}:ordered{id}, FAMILY 'f', QUALIFIER attr_name['room','id'], VALUE attr_value['room','id'] };
`))
	if err != nil {
		t.Fatal(err)
	}
	tables := LayoutTables(c)
	if len(tables) != 1 || fmt.Sprint(tables[0].Spec.Families) != "[f s]" || !strings.Contains(tables[0].About, "its static columns in family s of each partition's first row") {
		t.Fatalf("%+v", tables)
	}
}
