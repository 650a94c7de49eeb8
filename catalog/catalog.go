package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
	"github.com/kvschema/kvschema/store"
)

// Catalog is one version of a store's definitions: the client's relations
// with their layouts, and the advised schema deployed in the store, if
// any. A name belongs to one of them: a relation the advised model defines
// cannot be defined by DEFINE RELATION, nor a client layout use the table
// of an advised column family or index, and Open and WithAdvised refuse
// stored definitions that break this.
//
// A Catalog is immutable once built, except through Define on a Clone.
type Catalog struct {
	Relations []*Relation
	relByName map[string]*Relation
	layByName map[string]*layout.Layout
	Defs      []lang.Statement // the client's definitions applied, in order
	// Advised is the advised schema deployed in the store (nil if none).
	Advised *Advised
	// dropping are the layouts DROP SCHEMA took out of their relations
	// whose rows are still to be deleted (DroppingLayoutsDirective), in
	// the order they were dropped. Their names and tables stay taken.
	dropping []*layout.Layout
}

// Advised is an advised schema: the conceptual model, the column families
// and secondary indexes kvschema advise chose for it, and the cost profile
// its plans are chosen with.
type Advised struct {
	Model   *Model
	Schema  *Schema
	Profile cost.Profile
	// Target is the kind of engine the schema was advised for, as its DDL
	// records it (TargetDirective): pebble, bigtable or cassandra; "" when
	// it records none.
	Target string
	// ModelSrc and SchemaSrc are the scripts as deployed: a deployment is
	// the same one only if they are byte-identical.
	ModelSrc, SchemaSrc string
	profile             string // Profile as JSON, as stored
	// LocalIndexes: the secondary indexes that can be (Schema.Local) are
	// kept by the store as local indexes of their base column families
	// (store.Capabilities.LocalIndexes), decided when the schema is first
	// deployed and recorded with it; the others, and all of them when
	// false, are tables the engine keeps.
	LocalIndexes bool
	// Dropping lists the tables of indexes a migration dropped whose rows
	// are still to be deleted (DroppingDirective).
	Dropping []string
	// ShortSIs names, sorted, the secondary indexes deployed before an
	// SI's row held its base's whole key (Index.BaseOrder): a store
	// written by an earlier kvschema keeps them as they are (no
	// BaseOrder), and their base lookups read whole partitions. A
	// migration to the same schema (kvschema migrate) rebuilds them.
	ShortSIs []string
}

// KeepShortSIs makes the secondary indexes named (those that hold a
// BaseOrder and are tables, not the store's local indexes) the short
// kind an earlier kvschema wrote (ShortSIs). Call it after KeepLocal.
func (a *Advised) KeepShortSIs(names []string) error {
	a.ShortSIs = nil
	for _, n := range names {
		x := a.Schema.Index(n)
		if x == nil || x.Kind != SI || x.BaseOrder == nil || a.Schema.Local[x] != nil {
			continue
		}
		x.BaseOrder = nil
		x.Finish()
		var err error
		if x.layout, err = x.defaultLayout(); err != nil {
			return fmt.Errorf("secondary index %s: %v", x.Name, err)
		}
		a.ShortSIs = append(a.ShortSIs, x.Name)
	}
	sort.Strings(a.ShortSIs)
	return nil
}

// Inherit gives a, a schema to deploy over old (the same one again, or a
// migration's stage), old's kind of secondary index (KeepLocal) and its
// short SIs where a keeps them under their names (KeepShortSIs).
func (a *Advised) Inherit(old *Advised) error {
	a.KeepLocal(old.LocalIndexes)
	return a.KeepShortSIs(old.ShortSIs)
}

// KeepLocal records whether a's secondary indexes are the store's local
// indexes (LocalIndexes), and marks those that can be in a.Schema.Local.
func (a *Advised) KeepLocal(on bool) {
	a.LocalIndexes = on
	a.Schema.KeepLocal(on)
}

// ParseAdvised builds an advised schema from its model script (DEFINE
// RELATION with statistics, or an SQL schema: read by lang.ParseModel) and
// its schema script (DEFINE COLUMN FAMILY / SECONDARY INDEX). Errors carry
// file:line:col.
func ParseAdvised(modelFile string, modelSrc []byte, schemaFile string, schemaSrc []byte, prof cost.Profile) (*Advised, error) {
	ms, _, err := lang.ParseModel(modelFile, modelSrc)
	if err != nil {
		return nil, err
	}
	m, err := Build(ms)
	if err != nil {
		return nil, err
	}
	ss, err := lang.ParseScript(schemaFile, schemaSrc)
	if err != nil {
		return nil, err
	}
	s, err := ParseSchema(m, ss)
	if err != nil {
		return nil, err
	}
	if len(s.Indexes) == 0 {
		return nil, fmt.Errorf("%s defines no column family", schemaFile)
	}
	target, _, err := AdvisedFor(schemaFile, schemaSrc)
	if err != nil {
		return nil, err
	}
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	pj, err := json.Marshal(prof)
	if err != nil {
		return nil, err
	}
	a := &Advised{Model: m, Schema: s, Profile: prof, Target: target, ModelSrc: string(modelSrc), SchemaSrc: string(schemaSrc), profile: string(pj)}
	if err := a.readStates(schemaFile); err != nil {
		return nil, err
	}
	return a, nil
}

// Same reports whether b deploys the same scripts as a.
func (a *Advised) Same(b *Advised) bool {
	return a.ModelSrc == b.ModelSrc && a.SchemaSrc == b.SchemaSrc
}

// SameStorage reports whether a and b are the same schema (Same) stored
// the same way: the same kind of secondary index (LocalIndexes) and the
// same short SIs (ShortSIs). An engine built for one runs the other.
func (a *Advised) SameStorage(b *Advised) bool {
	return a.Same(b) && a.LocalIndexes == b.LocalIndexes && slices.Equal(a.ShortSIs, b.ShortSIs)
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{relByName: map[string]*Relation{}, layByName: map[string]*layout.Layout{}}
}

// CatalogFromScript builds a catalog of client relations from a script of
// DEFINE RELATION / DEFINE SCHEMA statements (a test fixture). Errors
// carry file:line:col.
func CatalogFromScript(file string, src []byte) (*Catalog, error) {
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return nil, err
	}
	c := NewCatalog()
	for _, st := range stmts {
		if err := c.Define(st); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Open builds the catalog a stored version describes.
func Open(s Stored) (*Catalog, error) {
	c := NewCatalog()
	if s.Model != "" {
		var prof cost.Profile
		if err := json.Unmarshal([]byte(s.Profile), &prof); err != nil {
			return nil, fmt.Errorf("stored cost profile: %w", err)
		}
		a, err := ParseAdvised("model (stored)", []byte(s.Model), "schema (stored)", []byte(s.Schema), prof)
		if err != nil {
			return nil, fmt.Errorf("stored advised schema: %w", err)
		}
		a.profile = s.Profile
		a.KeepLocal(s.Indexes == localIndexes)
		if err := a.KeepShortSIs(s.shortSIs(a)); err != nil {
			return nil, fmt.Errorf("stored advised schema: %w", err)
		}
		c.Advised = a
	}
	stmts, err := lang.ParseScript(storedFile, []byte(s.Script))
	if err != nil {
		return nil, err
	}
	if err := c.defineStored(s.Script, stmts); err != nil {
		return nil, fmt.Errorf("stored definitions are invalid: %w", err)
	}
	return c, nil
}

// Read loads the store's newest version (Load) and builds its catalog
// (Open).
func Read(ctx context.Context, st store.Store) (version uint64, stored Stored, c *Catalog, err error) {
	if version, stored, err = Load(ctx, st); err != nil {
		return 0, stored, nil, err
	}
	c, err = Open(stored)
	return version, stored, c, err
}

// Stored is the catalog as a store keeps it.
func (c *Catalog) Stored() Stored {
	s := Stored{Script: c.script()}
	if a := c.Advised; a != nil {
		s.Model, s.Schema, s.Profile = a.ModelSrc, a.SchemaSrc, a.profile
		if a.LocalIndexes {
			s.Indexes = localIndexes
		}
		s.SIRows = siBaseKey
		if len(a.ShortSIs) > 0 {
			s.SIRows += shortSIsSep + strings.Join(a.ShortSIs, ",")
		}
	}
	return s
}

// WithAdvised returns a copy of c with a deployed, or an error naming the
// first client relation or layout that takes one of its names or tables.
func (c *Catalog) WithAdvised(a *Advised) (*Catalog, error) {
	for _, e := range a.Model.Entities {
		if c.Relation(e.Name) != nil {
			return nil, errAt(e.At, "relation %s is already defined in this store by DEFINE RELATION: the advised schema's relations need names of their own", e.Name)
		}
	}
	n := c.Clone()
	n.Advised = a
	for _, r := range n.Relations {
		for _, ci := range r.Indexes {
			if x := n.advisedTable(ci.layout); x != nil {
				l := ci.layout
				return nil, fmt.Errorf("%s %s of the advised schema would use table %q, which schema %s (DEFINE SCHEMA) uses", kindName(x.Kind), x.Name, x.Name, l.Name)
			}
		}
	}
	return n, nil
}

// Indexes lists every index of the catalog: the client relations' (in
// order of relation, primary first), then the advised schema's.
func (c *Catalog) Indexes() []*Index {
	var out []*Index
	for _, r := range c.Relations {
		out = append(out, r.Indexes...)
	}
	if c.Advised != nil {
		out = append(out, c.Advised.Schema.Indexes...)
	}
	return out
}

// Relation looks a client relation up by name (case-insensitive).
func (c *Catalog) Relation(name string) *Relation { return c.relByName[strings.ToLower(name)] }

// Layout looks a client layout up by name (case-insensitive).
func (c *Catalog) Layout(name string) *layout.Layout { return c.layByName[strings.ToLower(name)] }

// advisedEntity returns the advised model's entity called name, or nil.
func (c *Catalog) advisedEntity(name string) *Entity {
	if c.Advised == nil {
		return nil
	}
	return c.Advised.Model.Entity(name)
}

// advisedTable returns the advised index whose table l would write, or nil.
func (c *Catalog) advisedTable(l *layout.Layout) *Index {
	if c.Advised == nil {
		return nil
	}
	for _, x := range c.Advised.Schema.Indexes {
		if l.TableMatches(x.Name) {
			return x
		}
	}
	return nil
}

// Owner returns which part of the catalog defines the relation called
// name: a client relation, an entity of the advised model, or neither.
func (c *Catalog) Owner(name string) (*Relation, *Entity) {
	return c.Relation(name), c.advisedEntity(name)
}

func kindName(k Kind) string {
	if k == SI {
		return "secondary index"
	}
	return "column family"
}

// Clone returns a catalog that can take more definitions without changing c.
// Relations and layouts are immutable once defined except for the layout
// list, which Clone copies.
func (c *Catalog) Clone() *Catalog {
	n := NewCatalog()
	for _, r := range c.Relations {
		cp := *r
		cp.Indexes = make([]*Index, len(r.Indexes))
		for i, x := range r.Indexes {
			xc := *x
			xc.Relation = &cp
			cp.Indexes[i] = &xc
		}
		n.Relations = append(n.Relations, &cp)
		n.relByName[strings.ToLower(cp.Name)] = &cp
	}
	for k, l := range c.layByName {
		n.layByName[k] = l
	}
	n.Defs = append([]lang.Statement(nil), c.Defs...)
	n.Advised = c.Advised
	n.dropping = append([]*layout.Layout(nil), c.dropping...)
	return n
}
