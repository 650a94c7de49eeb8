package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/store"
)

// model is the reference backend: table → row key → cell → value.
type model map[string]map[string]map[cellKey]cellValue

type cellKey struct{ family, qualifier string }

// cellValue is a cell's value and its Mutation.Expires.
type cellValue struct {
	value   string
	expires int64
}

func (m model) apply(mut store.Mutation) {
	rows := m[mut.Table]
	k := string(mut.Row)
	switch mut.Kind {
	case store.SetCell:
		if rows[k] == nil {
			rows[k] = map[cellKey]cellValue{}
		}
		rows[k][cellKey{mut.Family, string(mut.Qualifier)}] = cellValue{string(mut.Value), mut.Expires}
	case store.DeleteCell:
		delete(rows[k], cellKey{mut.Family, string(mut.Qualifier)})
		if len(rows[k]) == 0 {
			delete(rows, k)
		}
	case store.DeleteRow:
		delete(rows, k)
	case store.DeleteFamily:
		for c := range rows[k] {
			if c.family == mut.Family {
				delete(rows[k], c)
			}
		}
		if len(rows[k]) == 0 {
			delete(rows, k)
		}
	}
}

// row is the row of key as read at now: without its expired cells, and
// with none if they all expired.
func (m model) row(table, key string, now time.Time) store.Row {
	r := store.Row{Key: []byte(key)}
	for c, v := range m[table][key] {
		if !store.Expired(v.expires, now) {
			r.Cells = append(r.Cells, store.Cell{Family: c.family, Qualifier: []byte(c.qualifier), Value: []byte(v.value)})
		}
	}
	slices.SortFunc(r.Cells, compareCells)
	return r
}

func (m model) readRows(table string, rs store.RowSet, opts store.ReadOptions, now time.Time) []store.Row {
	var live []string
	for _, k := range slices.Sorted(maps.Keys(m[table])) {
		if len(m.row(table, k, now).Cells) > 0 {
			live = append(live, k)
		}
	}
	var rows []store.Row
	for _, k := range selectKeys(live, rs, opts) {
		rows = append(rows, m.row(table, k, now))
	}
	return rows
}

// testModel applies random batches to the store and to a model and compares
// every read. Keys, qualifiers and values are drawn from few bytes, edges
// included, so that rows collide, nest as prefixes and straddle 0x00/0xFF;
// families from f, ff and g, so that one family's name is a prefix of
// another's. Every mutation kind is drawn. On a store with
// Capabilities().Expiry, some SetCells expire, at instants a few
// microseconds (milliseconds on Bigtable, see expiryUnit) around the
// model's clock, and every read is at a drawn instant of that clock
// (store.WithNow).
func testModel(t *testing.T, s store.Store) {
	base := t.Context()
	atomicBatch := s.Capabilities().AtomicBatch
	expiry := s.Capabilities().Expiry
	unit := expiryUnit(s)
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		// The store is shared by all runs: each works on tables of its own.
		run++
		tables := []string{fmt.Sprintf("m%d.a", run), fmt.Sprintf("m%d.b", run)}
		missing := fmt.Sprintf("m%d.missing", run)
		ref := model{}
		ctx, now := base, time.Now()
		for _, name := range tables {
			if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f", "ff", "g"}}); err != nil {
				rt.Fatal(err)
			}
			ref[name] = map[string]map[cellKey]cellValue{}
		}
		// The model's clock: reads happen at t0 plus a drawn few units.
		at := func(rt *rapid.T) {
			if expiry {
				now = modelT0.Add(time.Duration(rapid.IntRange(0, 8).Draw(rt, "now units")) * unit)
				ctx = store.WithNow(base, now)
			}
		}

		table := rapid.SampledFrom(tables)
		key := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 0xfe, 0xff}), 1, 3)
		family := rapid.SampledFrom([]string{"f", "ff", "g"}) // ff extends f: a DeleteFamily of f must leave it
		qualifier := rapid.SampledFrom([]string{"", "q", "\x00", "q\x00", "\xff"})
		mutation := rapid.Custom(func(rt *rapid.T) store.Mutation {
			m := store.Mutation{
				Kind:  rapid.SampledFrom([]store.MutationKind{store.SetCell, store.SetCell, store.DeleteCell, store.DeleteRow, store.DeleteFamily}).Draw(rt, "kind"),
				Table: table.Draw(rt, "table"),
				Row:   key.Draw(rt, "row"),
			}
			if m.Kind != store.DeleteRow {
				m.Family = family.Draw(rt, "family")
			}
			if m.Kind == store.SetCell || m.Kind == store.DeleteCell {
				m.Qualifier = []byte(qualifier.Draw(rt, "qualifier"))
			}
			if m.Kind == store.SetCell {
				m.Value = rapid.SliceOfN(rapid.Byte(), 0, 3).Draw(rt, "value")
				if expiry && rapid.IntRange(0, 2).Draw(rt, "expiring") == 0 {
					m.Expires = modelT0.Add(time.Duration(rapid.IntRange(1, 8).Draw(rt, "expires units")) * unit).UnixMicro()
				}
			}
			return m
		})
		rng := rapid.Custom(func(rt *rapid.T) store.Range {
			var r store.Range
			if rapid.Bool().Draw(rt, "bounded start") {
				r.Start = key.Draw(rt, "start")
			}
			if rapid.Bool().Draw(rt, "bounded end") {
				r.End = key.Draw(rt, "end")
			}
			return r
		})
		check := func(what, got, want string) {
			if got != want {
				rt.Fatalf("%s =\n%s\nwant\n%s", what, got, want)
			}
		}
		readAll := func(table string, rs store.RowSet, opts store.ReadOptions) string {
			var rows []store.Row
			err := s.ReadRows(ctx, table, rs, opts, func(r store.Row) bool {
				rows = append(rows, store.CloneRow(r))
				return true
			})
			if err != nil {
				rt.Fatal(err)
			}
			return format(rows)
		}

		rt.Repeat(map[string]func(*rapid.T){
			"Apply": func(rt *rapid.T) {
				muts := rapid.SliceOfN(mutation, 0, 4).Draw(rt, "mutations")
				withMissing := rapid.Bool().Draw(rt, "with missing table")
				if withMissing {
					m := mutation.Draw(rt, "mutation of missing table")
					m.Table = missing
					if atomicBatch {
						muts = slices.Insert(muts, rapid.IntRange(0, len(muts)).Draw(rt, "at"), m)
					} else {
						muts = []store.Mutation{m} // the effect of the rest would be unspecified
					}
				}
				at(rt)
				err := s.Apply(ctx, muts)
				if withMissing {
					if !errors.Is(err, store.ErrNoTable) {
						rt.Fatalf("Apply with a missing table: err = %v, want ErrNoTable", err)
					}
					return
				}
				if err != nil {
					rt.Fatal(err)
				}
				for _, m := range muts {
					ref.apply(m)
				}
			},
			"ReadRow": func(rt *rapid.T) {
				tb, k := table.Draw(rt, "table"), key.Draw(rt, "key")
				at(rt)
				r, ok, err := s.ReadRow(ctx, tb, k)
				if err != nil {
					rt.Fatal(err)
				}
				got, want := "", ""
				if ok {
					got = format([]store.Row{r})
				}
				if r := ref.row(tb, string(k), now); len(r.Cells) > 0 {
					want = format([]store.Row{r})
				}
				check(fmt.Sprintf("ReadRow(%q) at %d", k, now.UnixMicro()), got, want)
			},
			"ReadRows": func(rt *rapid.T) {
				tb := table.Draw(rt, "table")
				rs := store.RowSet{
					Keys:   rapid.SliceOfN(key, 0, 3).Draw(rt, "keys"),
					Ranges: rapid.SliceOfN(rng, 0, 3).Draw(rt, "ranges"),
				}
				opts := store.ReadOptions{Limit: rapid.IntRange(0, 4).Draw(rt, "limit"), Reverse: rapid.Bool().Draw(rt, "reverse")}
				at(rt)
				want := format(ref.readRows(tb, rs, opts, now))
				check(fmt.Sprintf("ReadRows(%s, %+v) at %d", formatRowSet(rs), opts, now.UnixMicro()), readAll(tb, rs, opts), want)
				if cr, ok := s.(store.CellReader); ok {
					stop := rapid.IntRange(0, 8).Draw(rt, "stop after cells")
					all, some := readCells(ctx, rt, cr, tb, rs, opts, 0), readCells(ctx, rt, cr, tb, rs, opts, stop)
					prefix := firstCells(all, stop)
					check(fmt.Sprintf("ReadCells(%s, %+v)", formatRowSet(rs), opts), format(sortCells(all)), want)
					if stop > 0 {
						check(fmt.Sprintf("ReadCells(%s, %+v) stopped after %d cells", formatRowSet(rs), opts, stop), format(sortCells(some)), format(sortCells(prefix)))
					}
				}
			},
			"": func(rt *rapid.T) {
				at(rt)
				for _, tb := range tables {
					check("full scan of "+tb, readAll(tb, store.All(), store.ReadOptions{}), format(ref.readRows(tb, store.All(), store.ReadOptions{}, now)))
				}
			},
		})
	})
}

// modelT0 is the model clock's origin, when the store has cell expiry.
var modelT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// readCells assembles the rows of a ReadCells call, their cells in the
// order they came, returning false from its callback after stop
// cells (0: never).
func readCells(ctx context.Context, rt *rapid.T, cr store.CellReader, table string, rs store.RowSet, opts store.ReadOptions, stop int) []store.Row {
	var rows []store.Row
	n := 0
	err := cr.ReadCells(ctx, table, rs, opts, func(row []byte, c store.Cell, first bool) bool {
		if first == (len(rows) > 0 && bytes.Equal(rows[len(rows)-1].Key, row)) {
			rt.Fatalf("ReadCells: cell of row %q with first = %v after row %d", row, first, len(rows))
		}
		if first {
			rows = append(rows, store.Row{Key: bytes.Clone(row)})
		}
		last := &rows[len(rows)-1]
		last.Cells = append(last.Cells, store.CloneRow(store.Row{Cells: []store.Cell{c}}).Cells[0])
		n++
		return n != stop
	})
	if err != nil {
		rt.Fatal(err)
	}
	return rows
}

// firstCells is the first n cells of rows, as rows.
func firstCells(rows []store.Row, n int) []store.Row {
	var out []store.Row
	for _, r := range rows {
		if n == 0 {
			break
		}
		k := min(n, len(r.Cells))
		out = append(out, store.Row{Key: r.Key, Cells: slices.Clone(r.Cells[:k])})
		n -= k
	}
	return out
}

// sortCells puts the cells of each row in (family, qualifier) order.
func sortCells(rows []store.Row) []store.Row {
	for _, r := range rows {
		slices.SortFunc(r.Cells, func(a, b store.Cell) int {
			if c := strings.Compare(a.Family, b.Family); c != 0 {
				return c
			}
			return bytes.Compare(a.Qualifier, b.Qualifier)
		})
	}
	return rows
}
