package storetest

import (
	"testing"

	"github.com/kvschema/kvschema/store"
)

// RunConditional checks, as subtests of t, a store's store.Conditional:
// which rows a condition holds for (missing row, missing cell, values at
// and around the bounds) and that exactly the chosen branch is applied.
func RunConditional(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ApplyIf", func(t *testing.T) {
		s := open(t)
		c, ok := s.(store.Conditional)
		if !ok {
			t.Fatalf("%T is no store.Conditional", s)
		}
		ctx := t.Context()
		create(t, s, "t", "f", "g")
		apply(t, s, set("t", "r", "f", "v", "m"), set("t", "r", "g", "w", "z"))
		for _, k := range []struct {
			row, family, qualifier, min, max string
			noMax                            bool
			want                             bool
		}{
			{row: "r", family: "f", qualifier: "v", min: "m", max: "n", want: true},
			{row: "r", family: "f", qualifier: "v", min: "", noMax: true, want: true},
			{row: "r", family: "f", qualifier: "v", min: "a", max: "m", want: false}, // Max is exclusive
			{row: "r", family: "f", qualifier: "v", min: "m\x00", noMax: true, want: false},
			{row: "r", family: "g", qualifier: "v", min: "", noMax: true, want: false}, // other family
			{row: "r", family: "f", qualifier: "w", min: "", noMax: true, want: false}, // other qualifier
			{row: "r", family: "f", qualifier: "", min: "", noMax: true, want: false},  // prefix of a qualifier
			{row: "missing", family: "f", qualifier: "v", min: "", noMax: true, want: false},
		} {
			cond := store.Cond{Family: k.family, Qualifier: []byte(k.qualifier), Min: []byte(k.min)}
			if !k.noMax {
				cond.Max = []byte(k.max)
			}
			then := []store.Mutation{set("t", k.row, "f", "then", "1")}
			otherwise := []store.Mutation{set("t", k.row, "f", "else", "1")}
			got, err := c.ApplyIf(ctx, "t", []byte(k.row), cond, then, otherwise)
			if err != nil || got != k.want {
				t.Errorf("ApplyIf(%s, %+v) = %v, %v; want %v", k.row, cond, got, err, k.want)
			}
			r, _, err := s.ReadRow(ctx, "t", []byte(k.row))
			if err != nil {
				t.Fatal(err)
			}
			branch := map[string]bool{}
			for _, cell := range r.Cells {
				if q := string(cell.Qualifier); q == "then" || q == "else" {
					branch[q] = true
				}
			}
			if branch["then"] != k.want || branch["else"] == k.want {
				t.Errorf("ApplyIf(%s, %+v): applied %v", k.row, cond, branch)
			}
			apply(t, s, del("t", k.row, "f", "then"), del("t", k.row, "f", "else"))
		}
		// An empty branch changes nothing; a deletion is a branch like any other.
		if got, err := c.ApplyIf(ctx, "t", []byte("r"), store.Cond{Family: "f", Qualifier: []byte("v")}, nil, nil); err != nil || !got {
			t.Errorf("ApplyIf with no mutations = %v, %v", got, err)
		}
		if got, err := c.ApplyIf(ctx, "t", []byte("r"), store.Cond{Family: "f", Qualifier: []byte("v")}, []store.Mutation{delFamily("t", "r", "g")}, []store.Mutation{delFamily("t", "r", "f")}); err != nil || !got {
			t.Errorf("ApplyIf with a DeleteFamily = %v, %v", got, err)
		}
		wantRows(t, s, "t", store.All(), store.ReadOptions{}, `"r" f:"v"="m"`)
		if _, err := c.ApplyIf(ctx, "t", []byte("r"), store.Cond{Family: "f", Qualifier: []byte("v")}, []store.Mutation{delRow("t", "r")}, nil); err != nil {
			t.Fatal(err)
		}
		wantRows(t, s, "t", store.All(), store.ReadOptions{}, "")
		// Mutations of another row are refused before anything is written.
		if _, err := c.ApplyIf(ctx, "t", []byte("r"), store.Cond{Family: "f"}, nil, []store.Mutation{set("t", "x", "f", "q", "1")}); err == nil {
			t.Error("ApplyIf accepted a mutation of another row")
		}
		wantRows(t, s, "t", store.All(), store.ReadOptions{}, "")
	})
}
