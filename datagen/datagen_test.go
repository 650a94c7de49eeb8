package datagen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

func build(t interface {
	Helper()
	Fatalf(string, ...any)
}, src string) *catalog.Model {
	t.Helper()
	stmts, err := lang.ParseScript("model.kvs", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return m
}

// randomModel is a model of 1 to 4 relations with random key types,
// attributes of every type with random SIZE and CARDINALITY, and foreign
// keys to relations declared before (so that parents come first).
func randomModel(t *rapid.T) string {
	var b strings.Builder
	keyTypes := []string{}
	for r := range rapid.IntRange(1, 4).Draw(t, "relations") {
		rows := rapid.IntRange(1, 400).Draw(t, "rows")
		kt := rapid.SampledFrom([]string{"BIGINT", "INT", "STRING"}).Draw(t, "keytype")
		fmt.Fprintf(&b, "DEFINE RELATION r%d ROWS %d {\n  id %s KEY SIZE %d", r, rows, kt, rapid.IntRange(3, 12).Draw(t, "keysize"))
		for a := range rapid.IntRange(0, 5).Draw(t, "attrs") {
			typ := rapid.SampledFrom([]string{"BIGINT", "INT", "STRING", "BYTES", "DOUBLE", "FLOAT", "BOOL", "TIMESTAMP"}).Draw(t, "type")
			fmt.Fprintf(&b, ",\n  a%d %s", a, typ)
			if typ == "STRING" || typ == "BYTES" {
				fmt.Fprintf(&b, " SIZE %d", rapid.IntRange(3, 40).Draw(t, "size"))
			}
			if rapid.Bool().Draw(t, "hascard") {
				fmt.Fprintf(&b, " CARDINALITY %d", rapid.IntRange(1, 600).Draw(t, "card"))
			}
		}
		if r > 0 {
			for f := range rapid.IntRange(0, 2).Draw(t, "fks") {
				to := rapid.IntRange(0, r-1).Draw(t, "to")
				fmt.Fprintf(&b, ",\n  f%d %s REFERENCES r%d REVERSE r%d_f%d", f, keyTypes[to], to, r, f)
			}
		}
		b.WriteString("\n};\n")
		keyTypes = append(keyTypes, kt)
	}
	return b.String()
}

// wantDistinct is the documented rule: unique (CARDINALITY = ROWS after
// Build's cap) stays unique, else min(CARDINALITY, rows), capped by the
// type's domain.
func wantDistinct(f *catalog.Field, rows int64) int64 {
	c := rows
	if f.Cardinality < f.Entity.Count {
		c = min(int64(f.Cardinality), rows)
	}
	if f.Type == types.Bool {
		c = min(c, 2)
	}
	return c
}

// TestStatisticsProperty: over random models and scales, the data has
// exactly the scaled row counts, unique keys (1..N in order for integer
// keys), foreign keys naming keys emitted before, exactly the documented
// distinct count per attribute, and STRING/BYTES values of lowercase
// letters whose average length is within ±10% of SIZE.
func TestStatisticsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := randomModel(t)
		m := build(t, src)
		cfg := Config{
			Scale: rapid.SampledFrom([]float64{0.3, 1, 2.5}).Draw(t, "scale"),
			Seed:  rapid.Uint64().Draw(t, "seed"),
			Skew:  rapid.SampledFrom([]float64{0, 0.8, 1, 2}).Draw(t, "skew"),
		}
		keys := map[*catalog.Entity]map[string]bool{}
		distinct := map[*catalog.Field]map[string]bool{}
		length := map[*catalog.Field]int{}
		rows := map[*catalog.Entity]int64{}
		err := Generate(context.Background(), m, cfg, func(e *catalog.Entity, row []types.Value) error {
			if keys[e] == nil {
				keys[e] = map[string]bool{}
			}
			rows[e]++
			for i, c := range e.Columns {
				v := row[i]
				if v == nil {
					return fmt.Errorf("%s.%s: NULL", e.Name, c.Name)
				}
				if _, err := types.Coerce(v, c.Type); err != nil {
					return fmt.Errorf("%s.%s: %v", e.Name, c.Name, err)
				}
				s := types.Format(v)
				switch {
				case c.Nav != nil:
					if !keys[c.Nav.To][s] {
						return fmt.Errorf("%s.%s = %s names no %s emitted before", e.Name, c.Name, s, c.Nav.To.Name)
					}
				case c.Field.Key:
					if keys[e][s] {
						return fmt.Errorf("%s: key %s twice", e.Name, s)
					}
					if k, ok := v.(int64); ok && k != rows[e] {
						return fmt.Errorf("%s: key %d in row %d", e.Name, k, rows[e])
					}
					keys[e][s] = true
				default:
					if distinct[c.Field] == nil {
						distinct[c.Field] = map[string]bool{}
					}
					distinct[c.Field][s] = true
					switch x := v.(type) {
					case string:
						length[c.Field] += len(x)
						if strings.Trim(x, "abcdefghijklmnopqrstuvwxyz") != "" {
							return fmt.Errorf("%s.%s = %q: not lowercase letters", e.Name, c.Name, x)
						}
					case []byte:
						length[c.Field] += len(x)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v\nmodel:\n%s", err, src)
		}
		for _, e := range m.Entities {
			n := Rows(e.Count, cfg.Scale)
			if rows[e] != n || int64(len(keys[e])) != n {
				t.Fatalf("%s: %d rows, %d keys, want %d\n%s", e.Name, rows[e], len(keys[e]), n, src)
			}
			if want := max(1, int64(math.Round(e.Count*cfg.Scale))); n != want {
				t.Fatalf("%s: Rows = %d, want %d", e.Name, n, want)
			}
			for _, f := range e.Fields {
				if f.Key {
					continue
				}
				if got, want := int64(len(distinct[f])), wantDistinct(f, n); got != want {
					t.Fatalf("%s: %d distinct values, want %d (CARDINALITY %g, %d rows)\n%s", f, got, want, f.Cardinality, n, src)
				}
				if f.Type == types.String || f.Type == types.Bytes {
					if avg := float64(length[f]) / float64(n); math.Abs(avg-f.Size) > 0.1*f.Size {
						t.Fatalf("%s: average size %.2f, SIZE %g\n%s", f, avg, f.Size, src)
					}
				}
			}
		}
	})
}

// csvOf generates m under cfg as the CSV files would hold it.
func csvOf(t *testing.T, m *catalog.Model, cfg Config) string {
	t.Helper()
	var out bytes.Buffer
	var w *dataio.Writer
	var cur *catalog.Entity
	err := Generate(context.Background(), m, cfg, func(e *catalog.Entity, row []types.Value) error {
		if e != cur {
			if w != nil {
				w.Flush()
			}
			cur = e
			var err error
			if w, err = dataio.NewWriter(&out, dataio.CSV, e); err != nil {
				return err
			}
		}
		return w.Write(row)
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return out.String()
}

const shop = `
DEFINE RELATION customers ROWS 300 { id STRING KEY SIZE 8, name STRING SIZE 12 CARDINALITY 300, tier INT CARDINALITY 4 };
DEFINE RELATION orders ROWS 3000 { id BIGINT KEY, placed TIMESTAMP CARDINALITY 2000, total DOUBLE CARDINALITY 900, paid BOOL,
  note BYTES SIZE 6 CARDINALITY 50, customer STRING REFERENCES customers REVERSE orders };
`

// TestDeterminism: the same model and config give the same bytes; another
// seed or skew gives others.
func TestDeterminism(t *testing.T) {
	m := build(t, shop)
	cfg := Config{Scale: 1, Seed: 7}
	a := csvOf(t, m, cfg)
	if b := csvOf(t, build(t, shop), cfg); a != b {
		t.Fatal("two runs with the same config differ")
	}
	if b := csvOf(t, m, Config{Scale: 1, Seed: 8}); a == b {
		t.Fatal("another seed gives the same data")
	}
	if b := csvOf(t, m, Config{Scale: 1, Seed: 7, Skew: 1}); a == b {
		t.Fatal("a skew gives the same data")
	}
	if !strings.HasPrefix(a, "id,name,tier\n") || !strings.Contains(a, "\nid,placed,total,paid,note,customer\n") {
		t.Fatalf("not parents first:\n%.200s", a)
	}
}

// fanout generates children referring to n parents and returns each
// parent's number of children, largest first.
func fanout(t *testing.T, parents, children int, skew float64) []int {
	t.Helper()
	m := build(t, fmt.Sprintf(`DEFINE RELATION p ROWS %d { id BIGINT KEY };
DEFINE RELATION c ROWS %d { id BIGINT KEY, p BIGINT REFERENCES p REVERSE cs };`, parents, children))
	count := map[int64]int{}
	err := Generate(context.Background(), m, Config{Scale: 1, Seed: 3, Skew: skew}, func(e *catalog.Entity, row []types.Value) error {
		if e.Name == "c" {
			count[row[1].(int64)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, n := range count {
		out = append(out, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// TestFanout: uniform foreign keys give each parent ≈ 1/N of the children;
// Zipfian ones give the parent of rank k a share within 10% of
// k^-s / H(N, s) for the top ranks.
func TestFanout(t *testing.T) {
	const parents, children = 100, 200_000
	u := fanout(t, parents, children, 0)
	if len(u) != parents || float64(u[0]) > 1.15*children/parents || float64(u[parents-1]) < 0.85*children/parents {
		t.Fatalf("uniform: %d parents referred to, most %d, least %d children (mean %d)", len(u), u[0], u[len(u)-1], children/parents)
	}
	for _, s := range []float64{0.5, 1, 2} {
		z := fanout(t, parents, children, s)
		h := 0.0
		for k := 1; k <= parents; k++ {
			h += math.Pow(float64(k), -s)
		}
		for k := 1; k <= 5; k++ {
			want := math.Pow(float64(k), -s) / h
			if got := float64(z[k-1]) / children; math.Abs(got-want) > 0.1*want {
				t.Errorf("skew %g: rank %d has share %.4f, want %.4f", s, k, got, want)
			}
		}
	}
}

// TestZipfDistribution compares the sampler with the exact probabilities
// over a small range, for exponents below, at and above 1.
func TestZipfDistribution(t *testing.T) {
	const n, draws = 8, 400_000
	for _, s := range []float64{0.3, 1, 1.7, 4} {
		z := newZipf(s, n)
		r := NewRand(1, "zipf")
		var got [n + 1]int
		for range draws {
			k := z.rank(r)
			if k < 1 || k > n {
				t.Fatalf("skew %g: rank %d outside [1, %d]", s, k, n)
			}
			got[k]++
		}
		h := 0.0
		for k := 1; k <= n; k++ {
			h += math.Pow(float64(k), -s)
		}
		for k := 1; k <= n; k++ {
			p := math.Pow(float64(k), -s) / h
			sd := math.Sqrt(p * (1 - p) / draws)
			if d := math.Abs(float64(got[k])/draws - p); d > 5*sd+1e-4 {
				t.Errorf("skew %g: P(%d) = %.5f, want %.5f", s, k, float64(got[k])/draws, p)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	m := build(t, shop)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Scale: 0}, "datagen: scale 0 is not a positive number"},
		{Config{Scale: math.Inf(1)}, "datagen: scale +Inf is not a positive number"},
		{Config{Scale: 1, Skew: -1}, "datagen: skew -1 is not a number ≥ 0"},
	} {
		if err := Generate(context.Background(), m, tc.cfg, func(*catalog.Entity, []types.Value) error { return nil }); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: got %v, want %s", tc.cfg, err, tc.want)
		}
	}
	m = build(t, `DEFINE RELATION events ROWS 5 { at TIMESTAMP KEY };`)
	err := Generate(context.Background(), m, Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil })
	if err == nil || err.Error() != "datagen: relation events: key at is TIMESTAMP; generated keys are INT, BIGINT or STRING" {
		t.Errorf("timestamp key: %v", err)
	}
	m = build(t, `DEFINE RELATION big ROWS 3000000000 { id INT KEY };`)
	err = Generate(context.Background(), m, Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil })
	if err == nil || err.Error() != "datagen: relation big: 3000000000 rows do not fit its INT key id" {
		t.Errorf("INT key overflow: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Generate(ctx, build(t, shop), Config{Scale: 1}, func(*catalog.Entity, []types.Value) error { return nil }); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// TestReferenceCycle: in a cycle (a self-reference too) every foreign key
// still names a key of its entity's rows, emitted or to come.
func TestReferenceCycle(t *testing.T) {
	m := build(t, `DEFINE RELATION emp ROWS 50 { id BIGINT KEY, boss BIGINT REFERENCES emp REVERSE reports, dept BIGINT REFERENCES dept REVERSE staff };
DEFINE RELATION dept ROWS 5 { id BIGINT KEY, head BIGINT REFERENCES emp REVERSE heads };`)
	n := Counts(m, 1)
	err := Generate(context.Background(), m, Config{Scale: 1, Seed: 2}, func(e *catalog.Entity, row []types.Value) error {
		for i, c := range e.Columns {
			if k := row[i].(int64); c.Nav != nil && (k < 1 || k > n[c.Nav.To.Name]) {
				return fmt.Errorf("%s.%s = %d, %s has keys 1..%d", e.Name, c.Name, k, c.Nav.To.Name, n[c.Nav.To.Name])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
