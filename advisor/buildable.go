package advisor

import (
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/planner"
)

// buildable tells which candidates a migration can build from a deployed
// schema: those whose rows' query (planner.Rows, rooted at any node of
// its graph; and its partition rows' query, with static columns) has a
// plan over the deployed indexes, full scans allowed — the plan
// kvschema migrate's backfill runs (exec.Engine.CanBackfill). A deployed
// index is buildable: it is there.
type buildable struct {
	current *catalog.Schema
	keys    map[string]bool
	p       *planner.Planner
	fields  map[*catalog.Field]bool
	navs    map[*catalog.Nav]bool
}

func newBuildable(current *catalog.Schema, prof cost.Profile) *buildable {
	b := &buildable{current: current, keys: map[string]bool{}, p: planner.New(current, prof),
		fields: map[*catalog.Field]bool{}, navs: map[*catalog.Nav]bool{}}
	b.p.Scans = true
	for _, x := range current.Indexes {
		b.keys[x.Key] = true
		for _, a := range x.Stored() {
			b.fields[a.Field] = true
		}
		for _, nd := range x.Graph.Nodes[1:] {
			b.navs[nd.Via], b.navs[nd.Via.Reverse] = true, true
		}
	}
	return b
}

func (b *buildable) buildable(x *catalog.Index) bool {
	if b.keys[x.Key] {
		return true
	}
	// What no deployed index stores at all: no plan needed to tell.
	for _, a := range x.Stored() {
		if !b.fields[a.Field] {
			return false
		}
	}
	for _, nd := range x.Graph.Nodes[1:] {
		if !b.navs[nd.Via] {
			return false
		}
	}
	if len(x.Static) > 0 {
		if _, err := b.p.Query(planner.PartitionRows(x, false).Query); err != nil {
			return false
		}
	}
	for root := range x.Graph.Nodes {
		if _, err := b.p.Query(planner.Rows(x, nil, root).Query); err == nil {
			return true
		}
	}
	return false
}
