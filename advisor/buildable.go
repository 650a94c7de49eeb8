package advisor

import (
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/planner"
)

// buildable tells which candidates a migration can build from a deployed
// schema: those whose rows the deployed indexes can give — the check
// kvschema migrate makes before it backfills (exec.Engine.CanBackfill):
// every attribute and relationship stored (planner.Unstored), and a plan
// for the rows' query and, with static columns, the partition rows'
// (full scans allowed). A deployed index is buildable: it is there.
type buildable struct {
	current *catalog.Schema
	keys    map[string]bool
	p       *planner.Planner
}

func newBuildable(current *catalog.Schema, prof cost.Profile) *buildable {
	b := &buildable{current: current, keys: map[string]bool{}, p: planner.New(current, prof)}
	b.p.Scans = true
	for _, x := range current.Indexes {
		b.keys[x.Key] = true
	}
	return b
}

func (b *buildable) buildable(x *catalog.Index) bool {
	if b.keys[x.Key] {
		return true
	}
	if len(planner.Unstored(b.current.Indexes, x)) > 0 {
		return false
	}
	if len(x.Static) > 0 {
		if _, err := b.p.PartitionRows(x, false); err != nil {
			return false
		}
	}
	_, err := b.p.Rows(x, nil)
	return err == nil
}
