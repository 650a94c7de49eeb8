//go:build !race

package kvschema_test

// The SQLite differential suite is left out of builds with the race
// detector: it checks results, not concurrency, and building SQLite and
// gRPC with the detector would double the race pass.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
	"pgregory.net/rapid"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/types"
)

// The differential test generates random relations, several random layouts
// per relation, random writes and random queries, runs them through
// kvschema and through SQLite over the same rows, and requires the same
// results. INSERT is an upsert in kvschema, so SQLite runs INSERT OR
// REPLACE.

var diffTypes = []types.Type{types.String, types.Int, types.BigInt, types.Double, types.Bool, types.Bytes, types.Timestamp}

type diffAttr struct {
	name string
	typ  types.Type
	key  bool
}

func genValue(t *rapid.T, typ types.Type, label string, nullable bool) types.Value {
	if nullable && rapid.IntRange(0, 5).Draw(t, label+"_null") == 0 {
		return nil
	}
	switch typ {
	case types.String:
		return rapid.SampledFrom([]string{"", "a", "b", "ab", "a\x00", "a\x00b", "\xff", "b-", "-", "zz"}).Draw(t, label)
	case types.Bytes:
		return []byte(rapid.SampledFrom([]string{"", "\x00", "\x00\xff", "\x01", "\xff", "ab"}).Draw(t, label))
	case types.Int:
		return rapid.SampledFrom([]int64{-2147483648, -3, -1, 0, 1, 2, 7, 2147483647}).Draw(t, label)
	case types.BigInt:
		return rapid.SampledFrom([]int64{-9223372036854775808, -5, -1, 0, 1, 3, 9223372036854775807}).Draw(t, label)
	case types.Double:
		return rapid.SampledFrom([]float64{-1e300, -2.5, -1, 0, 0.5, 1, 3.75, 1e300}).Draw(t, label)
	case types.Bool:
		return rapid.Bool().Draw(t, label)
	case types.Timestamp:
		return time.UnixMicro(rapid.SampledFrom([]int64{-86400000000, 0, 1, 1700000000000000, 1700000000000001}).Draw(t, label)).UTC()
	}
	panic("type")
}

// genLayout builds a random valid layout definition for the relation.
// Table names computed from values (dynTables) are arbitrary bytes, which
// only the embedded stores accept: Bigtable table IDs are identifiers.
func genLayout(t *rapid.T, name string, attrs []diffAttr, primary, dynTables bool) string {
	n := len(attrs)
	perm := rapid.Permutation(indexes(n)).Draw(t, name+"_perm")
	// The row key takes a prefix of the permutation; remaining key
	// attributes go to the qualifier (wide rows) or the row.
	rowCount := rapid.IntRange(1, n).Draw(t, name+"_rowcount")
	var row, qual []string
	inRow := map[int]bool{}
	for _, a := range perm[:rowCount] {
		inRow[a] = true
	}
	for _, a := range perm[:rowCount] {
		row = append(row, elem(t, name, attrs[a], false))
	}
	wide := rapid.Bool().Draw(t, name+"_wide")
	for _, a := range perm[rowCount:] {
		if attrs[a].key {
			if wide {
				qual = append(qual, fmt.Sprintf("ordered{%s}", attrs[a].name))
			} else {
				row = append(row, fmt.Sprintf("ordered{%s}", attrs[a].name))
			}
			inRow[a] = true
		}
	}
	// A natural variable-length element may only end the row key.
	for i, e := range row[:len(row)-1] {
		if !strings.Contains(e, "{") {
			row[i] = "ordered{" + e + "}"
		}
	}
	if rapid.IntRange(0, 3).Draw(t, name+"_salted") == 0 {
		row = append([]string{fmt.Sprintf("salt(%d){ordered{%s}}", rapid.IntRange(1, 5).Draw(t, name+"_buckets"), attrs[perm[0]].name)}, row...)
	}
	var excl []string
	for a := range attrs {
		if inRow[a] {
			excl = append(excl, "'"+attrs[a].name+"'")
		}
	}
	useNames := len(excl) < n && rapid.Bool().Draw(t, name+"_attrnames")
	var value []string
	if useNames {
		qual = append(qual, "suffix('/'){attr_name["+strings.Join(excl, ",")+"]}")
		value = []string{"attr_value[" + strings.Join(excl, ",") + "]"}
	} else {
		for a := range attrs {
			if !inRow[a] {
				value = append(value, fmt.Sprintf("ordered{%s}", attrs[a].name))
			}
		}
	}
	def := "DEFINE "
	if primary {
		def += "PRIMARY "
	}
	table := fmt.Sprintf("'t_%s'", name)
	if dynTables && rapid.IntRange(0, 3).Draw(t, name+"_dyntable") == 0 {
		// Seed 003 treats the table name as a field too: one store table
		// per value of an attribute.
		table = fmt.Sprintf("'t_%s_':ordered{%s}", name, attrs[perm[0]].name)
	}
	def += fmt.Sprintf("SCHEMA %s FOR r { TABLE %s, ROW %s", name, table, strings.Join(row, ":"))
	if len(qual) > 0 {
		def += ", QUALIFIER " + strings.Join(qual, ":")
	}
	if len(value) > 0 {
		def += ", VALUE " + strings.Join(value, ":")
	}
	return def + " }"
}

func elem(t *rapid.T, layout string, a diffAttr, _ bool) string {
	encs := []string{"ordered", "desc"}
	if a.key { // natural cannot store NULL, which non-key values may be
		encs = append(encs, "natural", "size", "size2")
		if a.typ == types.String || a.typ == types.Bytes {
			encs = append(encs, "suffix") // no generated value contains '|'
		}
	}
	switch rapid.SampledFrom(encs).Draw(t, layout+"_enc_"+a.name) {
	case "ordered":
		return "ordered{" + a.name + "}"
	case "desc":
		return "desc{" + a.name + "}"
	case "size": // seed 003's length prefix
		return "size{" + a.name + "}"
	case "size2":
		return "size(2){" + a.name + "}"
	case "suffix": // seed 003's separator
		return "suffix('|'){" + a.name + "}"
	}
	return a.name
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// genPredicate builds a random WHERE over the attributes, with its
// arguments (kvschema values).
func genPredicate(t *rapid.T, attrs []diffAttr, depth int, args *[]types.Value) string {
	if depth < 2 && rapid.IntRange(0, 2).Draw(t, "compound") == 0 {
		conn := rapid.IntRange(0, 2).Draw(t, "conn")
		l := genPredicate(t, attrs, depth+1, args)
		if conn == 2 {
			return "NOT (" + l + ")"
		}
		r := genPredicate(t, attrs, depth+1, args)
		if conn == 0 {
			return "(" + l + " AND " + r + ")"
		}
		return "(" + l + " OR " + r + ")"
	}
	a := attrs[rapid.IntRange(0, len(attrs)-1).Draw(t, "attr")]
	val := func() string {
		*args = append(*args, genValue(t, a.typ, "pv", false))
		return "?"
	}
	switch rapid.IntRange(0, 4).Draw(t, "pred") {
	case 0:
		return a.name + " " + rapid.SampledFrom([]string{"=", "!=", "<", "<=", ">", ">="}).Draw(t, "op") + " " + val()
	case 1:
		n := rapid.IntRange(1, 3).Draw(t, "inlen")
		var items []string
		for range n {
			items = append(items, val())
		}
		not := ""
		if rapid.IntRange(0, 3).Draw(t, "notin") == 0 {
			not = "NOT "
		}
		return a.name + " " + not + "IN (" + strings.Join(items, ", ") + ")"
	case 2:
		lo, hi := val(), val()
		return a.name + " BETWEEN " + lo + " AND " + hi
	case 3:
		if rapid.Bool().Draw(t, "isnotnull") {
			return a.name + " IS NOT NULL"
		}
		return a.name + " IS NULL"
	}
	return a.name + " = " + val()
}

func TestDifferentialSQLite(t *testing.T) {
	for _, backend := range []string{"mem", "pebble", "bigtable"} {
		t.Run(backend, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { differential(rt, t, backend) })
		})
	}
}

func differential(rt *rapid.T, t *testing.T, backend string) {
	ctx := context.Background()
	n := rapid.IntRange(2, 5).Draw(rt, "nattrs")
	nkeys := rapid.IntRange(1, min(3, n)).Draw(rt, "nkeys")
	attrs := make([]diffAttr, n)
	var defs, cols, keys []string
	for i := range attrs {
		attrs[i] = diffAttr{name: fmt.Sprintf("a%d", i), typ: rapid.SampledFrom(diffTypes).Draw(rt, fmt.Sprintf("type%d", i)), key: i < nkeys}
		k := ""
		if attrs[i].key {
			k = " KEY"
			keys = append(keys, attrs[i].name)
		}
		defs = append(defs, fmt.Sprintf("%s %s%s", attrs[i].name, attrs[i].typ, k))
		cols = append(cols, fmt.Sprintf("%s %s", attrs[i].name, oracle.SQLType(attrs[i].typ)))
	}
	script := "DEFINE RELATION r { " + strings.Join(defs, ", ") + " };\n"
	nl := rapid.IntRange(1, 3).Draw(rt, "nlayouts")
	for i := range nl {
		script += genLayout(rt, fmt.Sprintf("l%d", i), attrs, i == 0, backend != "bigtable") + ";\n"
	}

	url := "mem:"
	switch backend {
	case "pebble":
		url = "pebble:" + filepath.Join(t.TempDir(), "db") + "?sync=false"
	case "bigtable": // the in-process emulator, a fresh instance per case
		addr, err := bttestserver.Addr()
		if err != nil {
			rt.Fatal(err)
		}
		url = fmt.Sprintf("bigtable://test/%s?emulator=%s", bttestserver.Instance(), addr)
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		rt.Fatal(err)
	}
	defer st.Close()
	db, err := kvschema.New(ctx, st, kvschema.Options{})
	if err != nil {
		rt.Fatal(err)
	}
	if err := db.Script(ctx, "gen.kvs", []byte(script), nil); err != nil {
		rt.Fatalf("definitions rejected: %v\n%s", err, script)
	}
	// readers[i] reads through layout i only; readers[nl] chooses freely.
	var readers []*kvschema.DB
	for i := range nl {
		r, err := kvschema.New(ctx, st, kvschema.Options{CostModel: onlyLayout(fmt.Sprintf("l%d", i))})
		if err != nil {
			rt.Fatal(err)
		}
		readers = append(readers, r)
	}
	readers = append(readers, db)
	lite, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		rt.Fatal(err)
	}
	defer lite.Close()
	lite.SetMaxOpenConns(1)
	if _, err := lite.Exec("CREATE TABLE r (" + strings.Join(cols, ", ") + ", PRIMARY KEY (" + strings.Join(keys, ", ") + "))"); err != nil {
		rt.Fatal(err)
	}
	names := make([]string, n)
	for i, a := range attrs {
		names[i] = a.name
	}
	nonKey := attrs[nkeys:]

	// tx, while open, runs every statement: its own writes are seen by
	// its reads only, as SQLite's open transaction's are.
	var tx *kvschema.Tx
	writer := func() *kvschema.DB {
		if tx != nil {
			return tx.DB()
		}
		return db
	}
	run := func(stmt string, args []types.Value) {
		anyArgs := make([]any, len(args))
		liteArgs := make([]any, len(args))
		for i, a := range args {
			anyArgs[i] = a
			liteArgs[i] = oracle.Arg(a)
		}
		rt.Logf("%s %v", stmt, args)
		if _, err := writer().Exec(ctx, stmt, anyArgs...); err != nil {
			if errors.Is(err, bigtablestore.ErrRowKey) {
				// Bigtable refuses empty row keys: the write must leave
				// nothing behind, which the next queries check.
				return
			}
			rt.Fatalf("kvschema: %s %v: %v\n%s", stmt, args, err, script)
		}
		liteStmt := strings.Replace(stmt, "INSERT INTO", "INSERT OR REPLACE INTO", 1)
		if _, err := lite.Exec(liteStmt, liteArgs...); err != nil {
			rt.Fatalf("sqlite: %s: %v", liteStmt, err)
		}
	}
	prepared := map[*kvschema.DB]map[string]*kvschema.Stmt{}
	// query runs a SELECT whose columns have types typs on both sides.
	query := func(reader *kvschema.DB, typs []types.Type, stmt string, args []types.Value, ordered bool) {
		if tx != nil {
			reader = tx.DB() // the others do not see its writes yet
		}
		anyArgs := make([]any, len(args))
		liteArgs := make([]any, len(args))
		for i, a := range args {
			anyArgs[i] = a
			liteArgs[i] = oracle.Arg(a)
		}
		// Statements are prepared once per reader and reused with new
		// arguments, as applications do (this exercises plan reuse).
		if prepared[reader] == nil {
			prepared[reader] = map[string]*kvschema.Stmt{}
		}
		ps := prepared[reader][stmt]
		if ps == nil {
			if ps, err = reader.Prepare(stmt); err != nil {
				rt.Fatalf("prepare %s: %v", stmt, err)
			}
			prepared[reader][stmt] = ps
		}
		rows, err := ps.Query(ctx, anyArgs...)
		if err != nil {
			rt.Fatalf("kvschema: %s %v: %v\n%s", stmt, args, err, script)
		}
		got := normalizeRows(rows.All())
		lr, err := lite.Query(stmt, liteArgs...)
		if err != nil {
			rt.Fatalf("sqlite: %s: %v", stmt, err)
		}
		var want [][]types.Value
		for lr.Next() {
			raw := make([]any, len(typs))
			ptrs := make([]any, len(typs))
			for i := range raw {
				ptrs[i] = &raw[i]
			}
			if err := lr.Scan(ptrs...); err != nil {
				rt.Fatal(err)
			}
			row := make([]types.Value, len(typs))
			for i := range raw {
				row[i] = oracle.FromSQL(raw[i], typs[i])
			}
			want = append(want, row)
		}
		lr.Close()
		wantS := normalizeRows(want)
		if !ordered {
			sort.Strings(got)
			sort.Strings(wantS)
		}
		if strings.Join(got, "\n") != strings.Join(wantS, "\n") {
			plan, _ := reader.Explain(ctx, stmt, anyArgs...)
			rt.Fatalf("%s %v\nkvschema: %q\nsqlite:   %q\nplan:\n%s\nschema:\n%s", stmt, args, got, wantS, plan, script)
		}
	}

	// end ends the open transaction on both sides.
	end := func(commit bool) {
		var err error
		if commit {
			err = tx.Commit(ctx)
			_, lerr := lite.Exec("COMMIT")
			err = errors.Join(err, lerr)
		} else {
			err = tx.Rollback()
			_, lerr := lite.Exec("ROLLBACK")
			err = errors.Join(err, lerr)
		}
		rt.Logf("end of transaction, commit=%v", commit)
		if err != nil {
			rt.Fatal(err)
		}
		tx = nil
	}
	typesOf := func(cols []int) []types.Type {
		out := make([]types.Type, len(cols))
		for i, c := range cols {
			out[i] = attrs[c].typ
		}
		return out
	}
	// aggregate runs a grouped or aggregate SELECT: 0–2 GROUP BY
	// attributes, then COUNT(*), and COUNT, MIN, MAX of random attributes
	// (SUM and AVG of INT ones, whose sums fit), in a total order of the
	// groups, maybe limited.
	aggregate := func() {
		var args []types.Value
		groups := rapid.Permutation(indexes(n)).Draw(rt, "groups")[:rapid.IntRange(0, min(2, n)).Draw(rt, "ngroups")]
		var sel, gb []string
		var typs []types.Type
		for _, g := range groups {
			sel, gb, typs = append(sel, names[g]), append(gb, names[g]), append(typs, attrs[g].typ)
		}
		sel, typs = append(sel, "COUNT(*)"), append(typs, types.BigInt)
		for range rapid.IntRange(1, 4).Draw(rt, "naggs") {
			a := attrs[rapid.IntRange(0, n-1).Draw(rt, "aggattr")]
			fns := []string{"COUNT", "MIN", "MAX", "COUNT DISTINCT"}
			if a.typ == types.Int {
				fns = append(fns, "SUM", "AVG")
			}
			fn := rapid.SampledFrom(fns).Draw(rt, "aggfn")
			if f, ok := strings.CutSuffix(fn, " DISTINCT"); ok {
				fn = f
				sel = append(sel, fn+"(DISTINCT "+a.name+")")
			} else {
				sel = append(sel, fn+"("+a.name+")")
			}
			switch fn {
			case "COUNT":
				typs = append(typs, types.BigInt)
			case "SUM":
				typs = append(typs, types.BigInt)
			case "AVG":
				typs = append(typs, types.Double)
			default:
				typs = append(typs, a.typ)
			}
		}
		stmt := "SELECT " + strings.Join(sel, ", ") + " FROM r"
		if rapid.Bool().Draw(rt, "aggwhere") {
			stmt += " WHERE " + genPredicate(rt, attrs, 0, &args)
		}
		ordered := false
		if len(gb) > 0 {
			stmt += " GROUP BY " + strings.Join(gb, ", ")
			if rapid.Bool().Draw(rt, "having") {
				stmt += " HAVING COUNT(*) >= ? OR MIN(" + gb[0] + ") IS NULL"
				args = append(args, int64(rapid.IntRange(1, 3).Draw(rt, "havingn")))
			}
			if ordered = rapid.Bool().Draw(rt, "aggorder"); ordered {
				var ob []string
				if rapid.Bool().Draw(rt, "aggorderagg") {
					// An aggregate first, then the groups: a total order.
					ob = append(ob, "COUNT(*)"+rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "aggorderdir"))
				}
				for _, g := range gb {
					ob = append(ob, g+rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "aggdir"))
				}
				stmt += " ORDER BY " + strings.Join(ob, ", ")
				if rapid.Bool().Draw(rt, "agglimit") {
					stmt += fmt.Sprintf(" LIMIT %d", rapid.IntRange(0, 3).Draw(rt, "agglimitn"))
				}
			}
		}
		query(readers[rapid.IntRange(0, len(readers)-1).Draw(rt, "reader")], typs, stmt, args, ordered)
	}
	steps := rapid.IntRange(1, 25).Draw(rt, "steps")
	for range steps {
		switch rapid.IntRange(0, 8).Draw(rt, "op") {
		case 6:
			if tx != nil {
				end(true)
				continue
			}
			if tx, err = db.Begin(ctx); err != nil {
				rt.Fatal(err)
			}
			rt.Logf("BEGIN")
			if _, err := lite.Exec("BEGIN"); err != nil {
				rt.Fatal(err)
			}
		case 7:
			if tx != nil {
				end(false)
			}
		case 0, 1:
			rowsN := rapid.IntRange(1, 4).Draw(rt, "insrows")
			var args []types.Value
			var tuples []string
			for range rowsN {
				ph := make([]string, n)
				for i, a := range attrs {
					args = append(args, genValue(rt, a.typ, "iv", !a.key))
					ph[i] = "?"
				}
				tuples = append(tuples, "("+strings.Join(ph, ", ")+")")
			}
			run("INSERT INTO r ("+strings.Join(names, ", ")+") VALUES "+strings.Join(tuples, ", "), args)
		case 2:
			if len(nonKey) == 0 {
				continue
			}
			a := nonKey[rapid.IntRange(0, len(nonKey)-1).Draw(rt, "setattr")]
			args := []types.Value{genValue(rt, a.typ, "sv", true)}
			where := genPredicate(rt, attrs, 0, &args)
			run("UPDATE r SET "+a.name+" = ? WHERE "+where, args)
		case 3:
			var args []types.Value
			where := genPredicate(rt, attrs, 0, &args)
			run("DELETE FROM r WHERE "+where, args)
		case 8:
			aggregate()
		default:
			var args []types.Value
			// A random non-empty projection, in random order.
			cols := rapid.Permutation(indexes(n)).Draw(rt, "proj")[:rapid.IntRange(1, n).Draw(rt, "nproj")]
			var proj []string
			for _, c := range cols {
				proj = append(proj, names[c])
			}
			stmt := "SELECT " + strings.Join(proj, ", ") + " FROM r"
			switch rapid.IntRange(0, 9).Draw(rt, "where") {
			case 0:
			case 2, 3:
				// Every key attribute pinned: a point lookup on layouts
				// keyed by them.
				var eqs []string
				for _, a := range attrs[:nkeys] {
					eqs = append(eqs, a.name+" = ?")
					args = append(args, genValue(rt, a.typ, "kv", false))
				}
				stmt += " WHERE " + strings.Join(eqs, " AND ")
			case 1:
				// Past the planner's DNF bound (2^9 conjuncts): the whole
				// WHERE becomes a filter.
				var terms []string
				for range 9 {
					terms = append(terms, "("+genPredicate(rt, attrs, 2, &args)+" OR "+genPredicate(rt, attrs, 2, &args)+")")
				}
				stmt += " WHERE " + strings.Join(terms, " AND ")
			default:
				stmt += " WHERE " + genPredicate(rt, attrs, 0, &args)
			}
			ordered := rapid.Bool().Draw(rt, "ordered")
			if ordered {
				// A random attribute first, then the whole key: a total order.
				var ob []string
				first := attrs[rapid.IntRange(0, n-1).Draw(rt, "obattr")]
				dir := rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "obdir")
				ob = append(ob, first.name+dir)
				for _, k := range keys {
					if k != first.name {
						ob = append(ob, k+rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "kdir"))
					}
				}
				stmt += " ORDER BY " + strings.Join(ob, ", ")
				if rapid.Bool().Draw(rt, "limit") {
					stmt += fmt.Sprintf(" LIMIT %d", rapid.IntRange(0, 4).Draw(rt, "limitn"))
				}
			}
			query(readers[rapid.IntRange(0, len(readers)-1).Draw(rt, "reader")], typesOf(cols), stmt, args, ordered)
		}
	}
	if tx != nil {
		end(rapid.Bool().Draw(rt, "commit"))
	}
	// Every layout holds the same tuples: a full read through each agrees,
	// and Verify, which compares them with each other, finds them equal.
	for _, r := range readers {
		query(r, typesOf(indexes(n)), "SELECT "+strings.Join(names, ", ")+" FROM r", nil, false)
	}
	if rep, err := db.Verify(ctx, exec.VerifyOptions{}); err != nil || !rep.Clean() {
		rt.Fatalf("verify: %v\n%v", err, rep)
	}
}
