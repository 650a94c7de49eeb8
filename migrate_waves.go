package kvschema

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/planner"
)

// A migration builds its new indexes in waves, each made readable before
// the next is registered. While an index is write-only, every write keeps
// it, planning the support queries of its upkeep over the readable
// indexes only; where none of those is keyed for such a query (the
// buy-now rows of an item, when only the new schema keeps them by item),
// the query is a full scan, on every write, until the migration ends. A
// wave holds every index still to build whose upkeeps (and catch-up
// reads) need no full scan over the indexes readable by then, the
// deployed ones and earlier waves'; the next wave may then read it. When
// no index qualifies, the rest form the last wave. An SI goes with its
// base.

// planWaves splits the indexes mt adds into mt.waves (and names them in
// mt.plan.Waves). An index's upkeep may scan whatever the order (no index
// of the target is keyed for a support query of a probe write): only the
// scans an earlier wave removes count, those it makes with every other
// new index readable do not.
func (db *DB) planWaves(mt *migrationTarget, modelFile string, modelSrc []byte, prof cost.Profile) error {
	var rest []*catalog.Index
	for _, x := range mt.next.Schema.Indexes {
		if c, ok := mt.keep[x]; !ok || mt.cur.Schema.WriteOnly[c] {
			rest = append(rest, x)
		}
	}
	best := map[*catalog.Index]map[int]bool{}
	for _, x := range rest {
		s, err := db.stageScans(mt, map[*catalog.Index]bool{x: true}, modelFile, modelSrc, prof)
		if err != nil {
			return err
		}
		best[x] = s[x]
	}
	mt.waves = nil
	for len(rest) > 0 {
		unbuilt := map[*catalog.Index]bool{}
		for _, x := range rest {
			unbuilt[x] = true
		}
		now, err := db.stageScans(mt, unbuilt, modelFile, modelSrc, prof)
		if err != nil {
			return err
		}
		wait := map[*catalog.Index]bool{}
		for _, x := range rest {
			for w := range now[x] {
				if !best[x][w] {
					wait[x] = true
				}
			}
		}
		// An SI waits for a base that waits.
		for _, x := range rest {
			if b := mt.next.Schema.Base[x]; b != nil && wait[b] {
				wait[x] = true
			}
		}
		var wave, later []*catalog.Index
		for _, x := range rest {
			if wait[x] {
				later = append(later, x)
			} else {
				wave = append(wave, x)
			}
		}
		if len(wave) == 0 {
			// A cycle (each needs another readable to stop scanning):
			// first the one whose readability removes the most scans
			// of the others, with its SIs.
			x, err := db.mostHelpful(mt, rest, now, modelFile, modelSrc, prof)
			if err != nil {
				return err
			}
			if x == nil {
				wave, later = rest, nil
			} else {
				wave, later = nil, nil
				for _, y := range rest {
					if y == x || mt.next.Schema.Base[y] == x {
						wave = append(wave, y)
					} else {
						later = append(later, y)
					}
				}
			}
		}
		mt.waves = append(mt.waves, wave)
		rest = later
	}
	mt.plan.Waves = nil
	for _, wave := range mt.waves {
		var names []string
		for _, x := range wave {
			names = append(names, mt.names[x])
		}
		mt.plan.Waves = append(mt.plan.Waves, names)
	}
	return nil
}

// mostHelpful returns the index of rest (none: nil) whose being readable
// removes the most scans (now) of the others' upkeeps, a delete's counting
// a tenth of an insert's or update's (deletes of whole entities are the
// rarer writes).
func (db *DB) mostHelpful(mt *migrationTarget, rest []*catalog.Index, now map[*catalog.Index]map[int]bool, modelFile string, modelSrc []byte, prof cost.Profile) (*catalog.Index, error) {
	var best *catalog.Index
	bestGain := 0.0
	for _, x := range rest {
		if mt.next.Schema.Base[x] != nil {
			continue // an SI follows its base
		}
		others := map[*catalog.Index]bool{}
		for _, y := range rest {
			if y != x {
				others[y] = true
			}
		}
		with, err := db.stageScans(mt, others, modelFile, modelSrc, prof)
		if err != nil {
			return nil, err
		}
		gain := 0.0
		for y := range others {
			for w := range now[y] {
				if !with[y][w] {
					gain += probeWeight(mt, w)
				}
			}
		}
		if gain > bestGain {
			best, bestGain = x, gain
		}
	}
	return best, nil
}

// probeWeight is how much a scan on probe write w counts (mostHelpful).
func probeWeight(mt *migrationTarget, w int) float64 {
	if w >= 0 && w < len(mt.probes) && mt.probes[w].Kind == catalog.Delete {
		return 0.1
	}
	return 1
}

// stageScans returns, for each index of writeOnly (target indexes), the
// probe writes (by position in probeWrites) that keep it through a full
// scan (-1: its catch-up's read of a row by key scans) in the stage where
// those indexes are write-only and every other index of the target and
// the deployed schema readable.
func (db *DB) stageScans(mt *migrationTarget, writeOnly map[*catalog.Index]bool, modelFile string, modelSrc []byte, prof cost.Profile) (map[*catalog.Index]map[int]bool, error) {
	mt.later = nil
	script := mt.stage(true, func(x *catalog.Index, deployed bool) bool {
		return !deployed && writeOnly[x] || deployed && mt.cur.Schema.WriteOnly[x]
	}, mt.cur.Dropping)
	a, err := db.parseStage(modelFile, modelSrc, script, prof)
	if err != nil {
		return nil, err
	}
	writes, err := probeWrites(a.Model) // the stage's: its entities are the ones its indexes span
	if err != nil {
		return nil, err
	}
	mt.probes = writes
	p := planner.New(a.Schema, prof)
	p.Scans = true
	target := map[*catalog.Index]*catalog.Index{} // stage index → target index
	for x := range writeOnly {
		if y := a.Schema.Index(mt.names[x]); y != nil {
			target[y] = x
		}
	}
	out := map[*catalog.Index]map[int]bool{}
	mark := func(x *catalog.Index, w int) {
		if out[x] == nil {
			out[x] = map[int]bool{}
		}
		out[x][w] = true
	}
	for i, w := range writes {
		ups, err := p.Write(w)
		if err != nil {
			continue // a write the target schema cannot keep: not this check's business
		}
		for _, u := range ups {
			x := target[u.Index]
			if x == nil {
				continue
			}
			for _, sp := range u.AllSupports() {
				if sp.Plan != nil && sp.Plan.Scans() {
					mark(x, i)
				}
			}
		}
	}
	for y, x := range target {
		if y.Kind != catalog.CF {
			continue
		}
		if sp, err := p.Rows(y, y.KeyAttrs()); err == nil && sp.Plan.Scans() {
			mark(x, -1)
		}
	}
	return out, nil
}

// probeWrites are the writes a migration checks upkeeps with, whatever
// the application runs: for each entity, an insert connected to every
// entity it references, a delete by key, and an update of each field by
// key.
func probeWrites(m *catalog.Model) ([]*catalog.Write, error) {
	var out []*catalog.Write
	add := func(text string) error {
		stmts, err := lang.ParseScript("migration probe", []byte(text))
		if err != nil {
			return fmt.Errorf("migrate: probe %s: %w (a bug)", text, err)
		}
		w, err := m.ResolveWrite(stmts[0])
		if err != nil {
			return fmt.Errorf("migrate: probe %s: %w (a bug)", text, err)
		}
		out = append(out, w)
		return nil
	}
	for _, e := range m.Entities {
		id := e.ID()
		var sets, connects []string
		for _, f := range e.Fields {
			sets = append(sets, f.Name+" = ?")
		}
		for _, n := range e.Navs {
			if !n.Many {
				connects = append(connects, n.Name+"(?)")
			}
		}
		ins := fmt.Sprintf("INSERT INTO %s SET %s", e.Name, strings.Join(sets, ", "))
		if len(connects) > 0 {
			ins += " AND CONNECT TO " + strings.Join(connects, ", ")
		}
		if err := add(ins + ";"); err != nil {
			return nil, err
		}
		if err := add(fmt.Sprintf("DELETE FROM %s WHERE %s.%s = ?;", e.Name, e.Name, id.Name)); err != nil {
			return nil, err
		}
		for _, f := range e.Fields {
			if f == id {
				continue
			}
			if err := add(fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s.%s = ?;", e.Name, f.Name, e.Name, id.Name)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
