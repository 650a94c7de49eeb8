package rubis

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

func loadModel(t testing.TB, src string) *catalog.Model {
	t.Helper()
	if src == "" {
		b, err := os.ReadFile("../examples/rubis/model.kvs")
		if err != nil {
			t.Fatal(err)
		}
		src = string(b)
	}
	stmts, err := lang.ParseScript("model.kvs", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// collect generates a data set and keeps every row (copied), by entity.
func collect(t testing.TB, m *catalog.Model, cfg Config) (map[string][][]types.Value, []string) {
	t.Helper()
	rows := map[string][][]types.Value{}
	var seq []string
	err := Generate(context.Background(), m, cfg, func(e *catalog.Entity, row []types.Value) error {
		if len(seq) == 0 || seq[len(seq)-1] != e.Name {
			seq = append(seq, e.Name)
		}
		rows[e.Name] = append(rows[e.Name], append([]types.Value(nil), row...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, seq
}

func TestCounts(t *testing.T) {
	full := Counts(1)
	want := map[string]int{"categories": 500, "regions": 50, "users": 200000, "items": 2000000,
		"bids": 20000000, "comments": 10000000, "buynow": 2000000}
	for k, v := range want {
		if full[k] != v {
			t.Errorf("Counts(1)[%s] = %d, want %d", k, full[k], v)
		}
	}
	if len(full) != len(want) {
		t.Errorf("Counts(1) = %v", full)
	}
	small := Counts(0.001)
	for k, v := range map[string]int{"categories": 1, "regions": 1, "users": 200, "items": 2000, "bids": 20000, "comments": 10000, "buynow": 2000} {
		if small[k] != v {
			t.Errorf("Counts(0.001)[%s] = %d, want %d", k, small[k], v)
		}
	}
	if c := Counts(0.003); c["categories"] != 2 || c["regions"] != 1 { // 1.5 rounds up, 0.15 to 1
		t.Errorf("Counts(0.003) = %v", c)
	}
	for _, s := range []float64{0, -1} {
		if c := Counts(s); c["bids"] != 1 {
			t.Errorf("Counts(%v) = %v", s, c)
		}
	}
}

func TestGenerateCountsAndOrder(t *testing.T) {
	m := loadModel(t, "")
	rows, seq := collect(t, m, Config{Scale: 0.001, Seed: 1})
	if s := strings.Join(seq, " "); s != "regions categories users items bids comments buynow" {
		t.Fatalf("entity order %s", s)
	}
	counts := Counts(0.001)
	for name, rs := range rows {
		if len(rs) != counts[name] {
			t.Errorf("%s: %d rows, want %d", name, len(rs), counts[name])
		}
		e := m.Entity(name)
		for i, row := range rs {
			if len(row) != len(e.Columns) {
				t.Fatalf("%s row of %d values", name, len(row))
			}
			if row[0] != int64(i+1) { // id is the first column
				t.Fatalf("%s row %d has key %v", name, i, row[0])
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	m := loadModel(t, "")
	a, _ := collect(t, m, Config{Scale: 0.0005, Seed: 7})
	b, _ := collect(t, m, Config{Scale: 0.0005, Seed: 7})
	c, _ := collect(t, m, Config{Scale: 0.0005, Seed: 8})
	for _, name := range order {
		if !slices.EqualFunc(a[name], b[name], types.EqualTuples) {
			t.Errorf("%s differs between two runs with the same config", name)
		}
		if slices.EqualFunc(a[name], c[name], types.EqualTuples) {
			t.Errorf("%s is the same with another seed", name)
		}
	}
	// Every row takes the same number of draws whatever the scale, so at
	// another scale the first rows differ only in their foreign keys.
	d, _ := collect(t, m, Config{Scale: 0.001, Seed: 7})
	for _, e := range m.Entities {
		for i, row := range a[e.Name] {
			for j, col := range e.Columns {
				if col.Nav == nil && types.Compare(row[j], d[e.Name][i][j]) != 0 {
					t.Fatalf("%s row %d column %s depends on the scale", e.Name, i, col.Name)
				}
			}
		}
	}
}

func TestValueRanges(t *testing.T) {
	m := loadModel(t, "")
	cfg := Config{Scale: 0.001, Seed: 3}
	rows, _ := collect(t, m, cfg)
	counts := Counts(cfg.Scale)
	from := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC)
	intRanges := map[string][2]int64{}
	for k, v := range intFacts {
		intRanges[k] = v
	}
	intRanges["categories.dummy"] = [2]int64{1, 1}
	intRanges["regions.dummy"] = [2]int64{1, 1}
	seen := map[string]map[int64]bool{}
	for _, e := range m.Entities {
		for _, row := range rows[e.Name] {
			var start, end time.Time
			for i, c := range e.Columns {
				v := row[i]
				qual := e.Name + "." + c.Name
				if v == nil {
					t.Fatalf("%s is NULL", qual)
				}
				if c.Nav != nil {
					k := v.(int64)
					if k < 1 || k > int64(counts[c.Nav.To.Name]) {
						t.Fatalf("%s = %d outside 1..%d", qual, k, counts[c.Nav.To.Name])
					}
					continue
				}
				switch x := v.(type) {
				case int64:
					if r, ok := intRanges[qual]; ok {
						if x < r[0] || x > r[1] {
							t.Fatalf("%s = %d outside %v", qual, x, r)
						}
						if seen[qual] == nil {
							seen[qual] = map[int64]bool{}
						}
						seen[qual][x] = true
					}
				case float64:
					if x < 1 || x >= 1000 || math.Round(x*100)/100 != x {
						t.Fatalf("%s = %v is not a price in [1, 1000)", qual, x)
					}
				case string:
					if len(x) != int(c.Field.Size) || strings.Trim(x, "abcdefghijklmnopqrstuvwxyz") != "" {
						t.Fatalf("%s = %q, want %v lowercase letters", qual, x, c.Field.Size)
					}
				case time.Time:
					if x.Before(from) || x.After(to) || x.Nanosecond() != 0 || x.Location() != time.UTC {
						t.Fatalf("%s = %v", qual, x)
					}
					switch qual {
					case "items.start_date":
						start = x
					case "items.end_date":
						end = x
					}
				default:
					t.Fatalf("%s = %T %v", qual, v, v)
				}
			}
			if e.Name == "items" && !end.After(start) {
				t.Fatalf("item %v ends %v before it starts %v", row[0], end, start)
			}
		}
	}
	// Uniform draws over small ranges reach both ends (200 users are too few
	// for 251 ratings).
	for qual, r := range intRanges {
		if qual != "users.rating" && (!seen[qual][r[0]] || !seen[qual][r[1]]) {
			t.Errorf("%s never reaches an end of %v", qual, r)
		}
	}
}

// Fields the facts do not name get values by their type.
func TestGenericFallback(t *testing.T) {
	src, err := os.ReadFile("../examples/rubis/model.kvs")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "dummy BIGINT SIZE 8 CARDINALITY 1\n};\n\nDEFINE RELATION regions",
		"dummy BIGINT SIZE 8 CARDINALITY 1, flag BOOL, blob BYTES SIZE 4, small INT CARDINALITY 3, w FLOAT, rating STRING SIZE 2\n};\n\nDEFINE RELATION regions", 1)
	m := loadModel(t, s)
	rows, _ := collect(t, m, Config{Scale: 0.01, Seed: 1})
	cats := m.Entity("categories")
	for _, row := range rows["categories"] {
		get := func(name string) types.Value {
			for i, c := range cats.Columns {
				if c.Name == name {
					return row[i]
				}
			}
			t.Fatalf("no column %s", name)
			return nil
		}
		if _, ok := get("flag").(bool); !ok {
			t.Fatalf("flag = %v", get("flag"))
		}
		if b, ok := get("blob").([]byte); !ok || len(b) != 4 {
			t.Fatalf("blob = %v", get("blob"))
		}
		if i, ok := get("small").(int64); !ok || i < 0 || i > 2 {
			t.Fatalf("small = %v", get("small"))
		}
		if f, ok := get("w").(float64); !ok || float64(float32(f)) != f {
			t.Fatalf("w = %v", get("w"))
		}
		if s, ok := get("rating").(string); !ok || len(s) != 2 {
			t.Fatalf("rating = %v", get("rating"))
		}
	}
}

func TestNotRUBiS(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`DEFINE RELATION regions ROWS 5 { id BIGINT KEY };`, `rubis: the model is not RUBiS-shaped: it has no entity "categories"`},
	} {
		err := Generate(context.Background(), loadModel(t, tc.src), Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil })
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	src, _ := os.ReadFile("../examples/rubis/model.kvs")
	m := loadModel(t, string(src)+"\nDEFINE RELATION extra ROWS 1 { id BIGINT KEY };")
	err := Generate(context.Background(), m, Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `entity "extra" is not one of RUBiS's`) {
		t.Errorf("got %v", err)
	}
	s := strings.Replace(string(src), "id BIGINT KEY SIZE 16,\n  name STRING SIZE 25", "id STRING KEY SIZE 16,\n  name STRING SIZE 25", 1)
	m = loadModel(t, strings.Replace(s, "region BIGINT SIZE 16 REFERENCES", "region STRING SIZE 16 REFERENCES", 1))
	err = Generate(context.Background(), m, Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil })
	if err == nil || err.Error() != "rubis: key regions.id is STRING, want INT or BIGINT" {
		t.Errorf("got %v", err)
	}
	err = Generate(context.Background(), loadModel(t, ""), Config{Scale: 0}, nil)
	if err == nil || err.Error() != "rubis: scale 0 is not a positive number" {
		t.Errorf("got %v", err)
	}
}

func TestCancelAndEmitError(t *testing.T) {
	m := loadModel(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := Generate(ctx, m, Config{Scale: 0.01, Seed: 1}, func(e *catalog.Entity, row []types.Value) error {
		if n++; n == 1000 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > 1000+ctxEvery {
		t.Fatalf("%v after %d rows", err, n)
	}
	stop := errors.New("stop")
	err = Generate(context.Background(), m, Config{Scale: 0.01, Seed: 1}, func(e *catalog.Entity, row []types.Value) error {
		if e.Name == "users" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("got %v", err)
	}
}

// What WriteDir writes reads back through dataio as what Generate emits.
func TestWriteDirReadsBack(t *testing.T) {
	m := loadModel(t, "")
	cfg := Config{Scale: 0.0002, Seed: 42}
	want, _ := collect(t, m, cfg)
	for _, f := range []dataio.Format{dataio.CSV, dataio.JSONL} {
		dir := t.TempDir()
		if err := WriteDir(context.Background(), dir, m, cfg, f); err != nil {
			t.Fatal(err)
		}
		files, err := dataio.Files(dir, m)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, file := range files {
			names = append(names, file.Entity.Name)
			if file.Format != f {
				t.Fatalf("%s is %v", file.Path, file.Format)
			}
			fh, err := os.Open(file.Path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := dataio.NewReader(fh, file.Path, file.Format, file.Entity)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]types.Value
			for {
				row, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, append([]types.Value(nil), row...))
			}
			fh.Close()
			if !slices.EqualFunc(got, want[file.Entity.Name], types.EqualTuples) {
				t.Errorf("%s: read back differs from generated", file.Path)
			}
		}
		if s := strings.Join(names, " "); s != "categories regions users items bids buynow comments" {
			t.Errorf("files in order %s", s)
		}
		// Writing the other format into the same directory is refused.
		other := dataio.JSONL
		if f == dataio.JSONL {
			other = dataio.CSV
		}
		err = WriteDir(context.Background(), dir, m, cfg, other)
		if err == nil || !strings.Contains(err.Error(), "exists: remove it or write to another directory") {
			t.Errorf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "regions"+other.Ext())); err == nil {
			t.Error("a refused WriteDir wrote a file")
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	m := loadModel(b, "")
	cfg := Config{Scale: 0.01, Seed: 1}
	var rows int64
	emit := func(*catalog.Entity, []types.Value) error { rows++; return nil }
	start := time.Now()
	for b.Loop() {
		if err := Generate(context.Background(), m, cfg, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
}

func BenchmarkWriteDir(b *testing.B) {
	m := loadModel(b, "")
	cfg := Config{Scale: 0.01, Seed: 1}
	var rows int
	for _, n := range Counts(cfg.Scale) {
		rows += n
	}
	for _, f := range []dataio.Format{dataio.CSV, dataio.JSONL} {
		b.Run(f.String(), func(b *testing.B) {
			dir := b.TempDir()
			start := time.Now()
			n := 0
			for b.Loop() {
				if err := WriteDir(context.Background(), dir, m, cfg, f); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(rows*n)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
