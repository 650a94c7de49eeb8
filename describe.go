package kvschema

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
)

// Object is one named definition of a store's catalog, as SHOW TABLES
// lists it.
type Object struct {
	Name string
	// Kind is RELATION, SCHEMA (a DEFINE SCHEMA layout of a relation),
	// COLUMN FAMILY or SECONDARY INDEX.
	Kind string
	// Of is the relation a layout stores, or the first relation of a column
	// family's or index's path; "" for a relation.
	Of string
	// Table is the store table a layout, column family or index is kept
	// in: for a layout whose TABLE depends on attributes, its TABLE
	// expression. "" for a relation.
	Table string
	// Advised is true for the definitions of the advised schema (kvschema
	// load, DB.Deploy), false for DEFINE RELATION / DEFINE SCHEMA ones.
	Advised bool
}

// Objects lists the catalog's definitions: relations, then layouts, column
// families and indexes, each group by name.
func (db *DB) Objects(ctx context.Context) ([]Object, error) {
	if _, err := db.advised(ctx, true); err != nil {
		return nil, err
	}
	cat := db.Catalog()
	var rels, stores []Object
	for _, r := range cat.Relations {
		rels = append(rels, Object{Name: r.Name, Kind: "RELATION"})
		for _, x := range r.Indexes {
			stores = append(stores, Object{Name: x.Name, Kind: "SCHEMA", Of: r.Name, Table: layoutTable(x.Layout())})
		}
	}
	if a := cat.Advised; a != nil {
		for _, e := range a.Model.Entities {
			rels = append(rels, Object{Name: e.Name, Kind: "RELATION", Advised: true})
		}
		for _, x := range a.Schema.Indexes {
			stores = append(stores, Object{Name: x.Name, Kind: indexKind(x), Of: x.Graph.Nodes[0].Entity.Name, Table: x.Name, Advised: true})
		}
	}
	byName := func(os []Object) {
		sort.SliceStable(os, func(i, j int) bool { return strings.ToLower(os[i].Name) < strings.ToLower(os[j].Name) })
	}
	byName(rels)
	byName(stores)
	return append(rels, stores...), nil
}

// Describe returns the definition of the relation, layout, column family
// or secondary index called name (case-insensitive) as a script a store
// can be given again, with comments saying where its data lives: for a
// relation, its DEFINE RELATION and the definition of every layout, column
// family and index that stores it. Name "" or SCHEMA describes every
// definition (Definitions).
func (db *DB) Describe(ctx context.Context, name string) (string, error) {
	if name == "" || strings.EqualFold(name, "SCHEMA") {
		return db.Definitions(ctx)
	}
	if _, err := db.advised(ctx, true); err != nil {
		return "", err
	}
	cat := db.Catalog()
	var b strings.Builder
	if r := cat.Relation(name); r != nil {
		b.WriteString(lang.Print(r.Def) + ";\n")
		for _, x := range r.Indexes {
			describeLayout(&b, x.Layout(), x.WriteOnly)
		}
		return b.String(), nil
	}
	if x, _ := cat.LayoutIndex(name); x != nil {
		describeLayout(&b, x.Layout(), x.WriteOnly)
		return b.String(), nil
	}
	if a := cat.Advised; a != nil {
		stmts := a.Schema.Statements()
		ddl := map[string]lang.Statement{}
		for _, st := range stmts {
			switch d := st.(type) {
			case *lang.DefineColumnFamily:
				ddl[strings.ToLower(d.Name)] = d
			case *lang.DefineIndex:
				ddl[strings.ToLower(d.Name)] = d
			}
		}
		if e := a.Model.Entity(name); e != nil {
			for _, d := range a.Model.Defs {
				if dr, ok := d.(*lang.DefineRelation); ok && strings.EqualFold(dr.Name, e.Name) {
					b.WriteString(lang.Print(dr) + ";\n")
				}
			}
			for _, x := range a.Schema.Indexes {
				for _, nd := range x.Graph.Nodes {
					if nd.Entity == e {
						describeIndex(&b, a.Schema, x, ddl)
						break
					}
				}
			}
			return b.String(), nil
		}
		if x := a.Schema.Index(name); x != nil {
			describeIndex(&b, a.Schema, x, ddl)
			return b.String(), nil
		}
	}
	return "", fmt.Errorf("no relation, schema, column family or index is named %s (SHOW TABLES lists them)", name)
}

func describeLayout(b *strings.Builder, l *layout.Layout, writeOnly bool) {
	fmt.Fprintf(b, "\n-- layout of %s in table %s", l.Def.Relation, layoutTable(l))
	if l.SaltBuckets > 0 {
		fmt.Fprintf(b, ", %d salt buckets", l.SaltBuckets)
	}
	if len(l.Splits) > 0 {
		fmt.Fprintf(b, ", pre-split at %d points", len(l.Splits))
	}
	if writeOnly {
		fmt.Fprintf(b, "\n-- write-only: being added or dropped online (writes keep it, no read uses it); its DEFINE SCHEMA or DROP SCHEMA %s run again finishes that", l.Name)
	}
	b.WriteString("\n" + lang.Print(l.Def) + ";\n")
}

func describeIndex(b *strings.Builder, s *catalog.Schema, x *catalog.Index, ddl map[string]lang.Statement) {
	where := "in table " + x.Name
	if base := s.Local[x]; base != nil {
		where = "kept by the store in table " + base.Name + " (a local index: its entries are written with the rows, read with them in one call)"
	}
	fmt.Fprintf(b, "\n-- %s %s: %s, about %.0f rows of %.0f bytes in %.0f partitions", strings.ToLower(indexKind(x)), where, x.Describe(), x.Entries, x.EntrySize, x.Partitions)
	if x.SaltBuckets > 0 {
		fmt.Fprintf(b, ", %d salt buckets", x.SaltBuckets)
	}
	if x.PartitionBuckets > 0 {
		fmt.Fprintf(b, ", each partition spread over %d buckets (a read of one reads %d)", x.PartitionBuckets, x.PartitionBuckets)
	}
	b.WriteString("\n")
	if w := x.PartitionWarning(); w != "" {
		fmt.Fprintf(b, "-- warning: %s\n", w)
	}
	if d := ddl[strings.ToLower(x.Name)]; d != nil {
		b.WriteString(lang.Print(d) + ";\n")
	}
}

func indexKind(x *catalog.Index) string {
	if x.Kind == catalog.SI {
		return "SECONDARY INDEX"
	}
	return "COLUMN FAMILY"
}

// layoutTable is a layout's table name, or its TABLE expression when that
// depends on attributes.
func layoutTable(l *layout.Layout) string {
	if t := l.StaticTable(); t != "" {
		return t
	}
	return lang.PrintConcat(l.Def.Table)
}
