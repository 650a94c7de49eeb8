package exec

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"
)

// VerifyRelation checks that every readable layout of a client relation
// holds the tuples its first readable layout holds, with the same values,
// and nothing more: the invariant the client's writes keep (plan.Write
// changes every layout in one batch). Each layout is read whole, as a full
// scan plans it (every table of a layout whose TABLE depends on
// attributes); a row a layout cannot decode is an error naming it. Rows
// read are counted per layout name in the report; progress, when set, is
// told as each layout is read. Write-only layouts (catalog.Index.WriteOnly:
// being added or dropped online) are skipped, as no plan reads them; see
// VerifyLayouts.
func (e *Engine) VerifyRelation(ctx context.Context, rel *catalog.Relation, progress func(VerifyEvent)) (*Report, error) {
	return e.verifyRelation(ctx, rel, func(x *catalog.Index) bool { return !x.WriteOnly }, progress)
}

// VerifyLayouts is VerifyRelation for the layouts of rel named in only,
// write-only or not (an online DEFINE SCHEMA checks the layout it built
// before it makes it readable): each is compared with the first readable
// layout.
func (e *Engine) VerifyLayouts(ctx context.Context, rel *catalog.Relation, only []string, progress func(VerifyEvent)) (*Report, error) {
	return e.verifyRelation(ctx, rel, func(x *catalog.Index) bool {
		return slices.ContainsFunc(only, func(n string) bool { return strings.EqualFold(n, x.Name) })
	}, progress)
}

func (e *Engine) verifyRelation(ctx context.Context, rel *catalog.Relation, check func(*catalog.Index) bool, progress func(VerifyEvent)) (*Report, error) {
	ctx = store.WithNow(ctx, store.Now(ctx)) // one instant: expiring cells vanish from every layout at once
	rep := &Report{Rows: map[string]int{}}
	readable := rel.ReadIndexes()
	if len(readable) == 0 {
		return rep, nil
	}
	ref := readable[0]
	others := []*catalog.Index{ref}
	for _, x := range rel.Indexes {
		if x != ref && check(x) {
			others = append(others, x)
		}
	}
	type tupleSet map[string][]types.Datum
	read := func(i int) (tupleSet, error) {
		l := others[i].Layout()
		acc := plan.Derive(l, make(plan.Constraints, len(rel.Attrs)))
		p := &plan.Plan{Relation: rel, Accesses: []*plan.Access{acc}, Limit: -1}
		out := tupleSet{}
		var key []byte
		var kerr error
		err := e.Query(ctx, p, SinkFunc(func(t []types.Datum) bool {
			if key, kerr = appendKeyID(key[:0], rel, t); kerr != nil {
				return false
			}
			out[string(key)] = slices.Clone(t)
			if progress != nil && len(out)%10000 == 0 {
				progress(VerifyEvent{Step: "read", Index: l.Name, Rows: int64(len(out))})
			}
			return true
		}))
		if err == nil {
			err = kerr
		}
		if err != nil {
			return nil, fmt.Errorf("relation %s, schema %s: %w", rel.Name, l.Name, err)
		}
		rep.Rows[l.Name] = len(out)
		if progress != nil {
			progress(VerifyEvent{Step: "read", Index: l.Name, Rows: int64(len(out)), Done: true})
		}
		return out, nil
	}
	primary, err := read(0)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(primary))
	for k := range primary {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p := ref.Layout()
	for i, x := range others[1:] {
		l := x.Layout()
		got, err := read(i + 1)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			want := primary[k]
			t, ok := got[k]
			if !ok {
				rep.Differences = append(rep.Differences, Difference{Index: l.Name, Kind: "missing", Row: describeTuple(rel, want),
					Detail: "schema " + p.Name + " holds it"})
				continue
			}
			for a, v := range want {
				if types.CompareDatums(v, t[a]) != 0 {
					rep.Differences = append(rep.Differences, Difference{Index: l.Name, Kind: "stale", Row: describeTuple(rel, want),
						Detail: fmt.Sprintf("%s is %s here but %s in schema %s", rel.Attrs[a].Name, types.Format(t[a].Value()), types.Format(v.Value()), p.Name)})
					break
				}
			}
		}
		var extra []string
		for k := range got {
			if _, ok := primary[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			rep.Differences = append(rep.Differences, Difference{Index: l.Name, Kind: "extra", Row: describeTuple(rel, got[k]),
				Detail: "schema " + p.Name + " does not hold it"})
		}
	}
	return rep, nil
}

// describeTuple names a tuple of rel by its key: r (k1 = 1, k2 = 'a').
func describeTuple(rel *catalog.Relation, t []types.Datum) string {
	var ks []string
	for _, k := range rel.KeyIdx {
		ks = append(ks, rel.Attrs[k].Name+" = "+types.Format(t[k].Value()))
	}
	return rel.Name + " (" + strings.Join(ks, ", ") + ")"
}
