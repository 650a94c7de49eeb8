//go:build !race

package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/workload"
)

// randomModel writes a model of 2–4 relations: a key, 1–3 fields of small
// cardinality, and foreign keys to earlier relations.
func randomModel(r *rand.Rand) string {
	var b strings.Builder
	n := 2 + r.IntN(3)
	typesOf := []string{"BIGINT", "STRING", "DOUBLE", "INT"}
	for i := 0; i < n; i++ {
		rows := 10 * (1 + r.IntN(20))
		fmt.Fprintf(&b, "DEFINE RELATION e%d ROWS %d {\n  id BIGINT KEY", i, rows)
		for f := 0; f < 1+r.IntN(3); f++ {
			fmt.Fprintf(&b, ",\n  f%d %s CARDINALITY %d", f, typesOf[r.IntN(len(typesOf))], 2+r.IntN(4))
		}
		for j := 0; j < i; j++ {
			if r.IntN(3) > 0 {
				fmt.Fprintf(&b, ",\n  r%d BIGINT REFERENCES e%d REVERSE e%d_of_e%d_r%d", j, j, i, j, j)
			}
		}
		b.WriteString("\n};\n")
	}
	return b.String()
}

// randomPath walks up to two relationships from a random root.
func randomPath(r *rand.Rand, m *catalog.Model) (root *catalog.Entity, path []*catalog.Nav) {
	root = m.Entities[r.IntN(len(m.Entities))]
	cur := root
	seen := map[*catalog.Entity]bool{root: true}
	for hops := r.IntN(3); hops > 0; hops-- {
		var opts []*catalog.Nav
		for _, nv := range cur.Navs {
			if !seen[nv.To] {
				opts = append(opts, nv)
			}
		}
		if len(opts) == 0 {
			break
		}
		nv := opts[r.IntN(len(opts))]
		path = append(path, nv)
		seen[nv.To] = true
		cur = nv.To
	}
	return root, path
}

// randomWorkload writes queries along random paths (an equality on some
// node, maybe a range or != predicate, ORDER BY, LIMIT) and writes of every
// kind on random relations.
func randomWorkload(r *rand.Rand, m *catalog.Model) string {
	var b strings.Builder
	b.WriteString("DEFINE WORKLOAD w MIXES (m) {\n  GROUP g WEIGHTS (m 1) {\n")
	tag := 0
	for i := 0; i < 3+r.IntN(4); i++ {
		root, path := randomPath(r, m)
		names := []string{root.Name}
		ents := []*catalog.Entity{root}
		for _, nv := range path {
			names = append(names, nv.Name)
			ents = append(ents, nv.To)
		}
		field := func(k int) string {
			e := ents[k]
			f := e.Fields[r.IntN(len(e.Fields))]
			return names[k] + "." + f.Name
		}
		var sel []string
		for k := range ents {
			if r.IntN(2) == 0 || k == len(ents)-1 {
				sel = append(sel, field(k))
			}
		}
		where := []string{field(r.IntN(len(ents))) + " = ?"}
		if r.IntN(3) == 0 {
			where = append(where, field(r.IntN(len(ents)))+[]string{" >= ?", " < ?", " != ?"}[r.IntN(3)])
		}
		fmt.Fprintf(&b, "    SELECT %s FROM %s WHERE %s", strings.Join(dedupe(sel), ", "), strings.Join(names, "."), strings.Join(where, " AND "))
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, " ORDER BY %s", field(r.IntN(len(ents))))
		}
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, " LIMIT %d", 1+r.IntN(5))
		}
		tag++
		fmt.Fprintf(&b, "; -- q%d\n", tag)
	}
	for _, e := range m.Entities {
		var sets []string
		var links []string
		for _, c := range e.Columns {
			if c.Nav != nil {
				links = append(links, c.Nav.Name+"(?)")
			} else {
				sets = append(sets, c.Name+" = ?")
			}
		}
		ins := "INSERT INTO " + e.Name + " SET " + strings.Join(sets, ", ")
		if len(links) > 0 {
			ins += " AND CONNECT TO " + strings.Join(links, ", ")
		}
		tag++
		fmt.Fprintf(&b, "    %s; -- w%d\n", ins, tag)
		if r.IntN(2) == 0 && len(e.Fields) > 1 {
			tag++
			fmt.Fprintf(&b, "    UPDATE %s SET %s = ? WHERE %s.id = ?; -- w%d\n", e.Name, e.Fields[1+r.IntN(len(e.Fields)-1)].Name, e.Name, tag)
		}
		if r.IntN(3) == 0 && len(e.Fields) > 1 {
			tag++
			fmt.Fprintf(&b, "    UPDATE %s SET %s = ? WHERE %s.%s = ?; -- w%d\n", e.Name, e.Fields[1].Name, e.Name, e.Fields[1+r.IntN(len(e.Fields)-1)].Name, tag)
		}
		if r.IntN(3) == 0 {
			tag++
			fmt.Fprintf(&b, "    DELETE %s WHERE %s.id = ?; -- w%d\n", e.Name, e.Name, tag)
		}
		for _, nv := range e.Navs {
			if !nv.Many && r.IntN(3) == 0 {
				tag++
				fmt.Fprintf(&b, "    CONNECT %s(?) TO %s(?); -- w%d\n", e.Name, nv.Name, tag)
				tag++
				fmt.Fprintf(&b, "    DISCONNECT %s(?) FROM %s(?); -- w%d\n", e.Name, nv.Name, tag)
			}
		}
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TestRandomWorkloadsAgainstSQLite: random models, data and workloads →
// advise → load → every query with random parameters and random writes →
// each answer equals SQLite's, and verify is clean after every batch of
// writes. KVSCHEMA_RANDOM_CASES sets the number of cases (default 12).
func TestRandomWorkloadsAgainstSQLite(t *testing.T) {
	needCBC(t)
	cases := 12
	if s := os.Getenv("KVSCHEMA_RANDOM_CASES"); s != "" {
		cases, _ = strconv.Atoi(s)
	}
	for c := 0; c < cases; c++ {
		seed := uint64(c + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { randomCase(t, seed, memstore.New()) })
	}
}

// TestRandomWorkloadsBigtable runs the same cases on Bigtable (the
// in-process emulator): multi-row writes through txnstore's intent log,
// each statement a few ReadRows calls.
func TestRandomWorkloadsBigtable(t *testing.T) {
	needCBC(t)
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { randomCase(t, seed, txnstore.New(bttestserver.Open(t))) })
	}
}

func randomCase(t *testing.T, seed uint64, st store.Store) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 99))
	msrc := randomModel(r)
	ms, err := lang.ParseScript("model.kvs", []byte(msrc))
	if err != nil {
		t.Fatalf("%v\n%s", err, msrc)
	}
	m, err := catalog.Build(ms)
	if err != nil {
		t.Fatalf("%v\n%s", err, msrc)
	}
	wsrc := randomWorkload(r, m)
	w, err := workload.Parse(m, "workload.kvs", []byte(wsrc))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, msrc, wsrc)
	}
	mode := []advisor.Mode{advisor.WithSI, advisor.NoSI, advisor.Normalized}[r.IntN(3)]
	res, err := advisor.Advise(ctx, m, w, advisor.Options{Mix: "m", Profile: cost.Cassandra, Mode: mode, Solver: &solver.CBC{}})
	if err != nil {
		t.Fatalf("advise (%s): %v\n%s\n%s", mode, err, msrc, wsrc)
	}
	if seed%2 == 0 {
		// Salted column families: the same answers, rows spread over buckets.
		for _, x := range res.Schema.Indexes {
			if x.Kind == catalog.CF {
				x.SaltBuckets = 1 + r.IntN(8)
			}
		}
	}
	// Secondary indexes are local indexes where the store keeps them (as
	// Deploy decides), tables elsewhere.
	res.Schema.KeepLocal(st.Capabilities().LocalIndexes)
	en := exec.New(st, m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		counts[e] = 3 + r.IntN(25)
	}
	d := gen.Generate(m, func(e *catalog.Entity) int { return counts[e] }, seed, 0.15)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "t"}); err != nil {
		t.Fatal(err)
	}
	or := oracleOf(t, m, d)
	defer func() {
		if t.Failed() {
			t.Logf("mode %s\nmodel:\n%s\nworkload:\n%s\nschema:\n%s", mode, msrc, wsrc, lang.PrintScript(res.Schema.Statements()))
		}
	}()
	checkVerify(t, ctx, en, or)
	next := map[*catalog.Entity]int{}
	for _, e := range m.Entities {
		next[e] = counts[e] + 1
	}
	runQueries(t, ctx, en, or, w, d, r, 4)
	for round := 0; round < 3; round++ {
		runWrites(t, ctx, en, or, w, d, r, next, 2)
		checkVerify(t, ctx, en, or)
		runQueries(t, ctx, en, or, w, d, r, 4)
	}
}

// anyEmpty reports whether a write would need an existing tuple of an
// entity that has none left.
func anyEmpty(d *gen.Data, w *catalog.Write) bool {
	if len(w.Preds) > 0 && len(d.Rows[w.Entity]) == 0 {
		return true
	}
	for _, l := range w.Links {
		if len(d.Rows[l.Nav.To]) == 0 {
			return true
		}
	}
	return w.Nav != nil && len(d.Rows[w.Nav.To]) == 0
}
