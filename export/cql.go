// Package export writes a physical schema in other systems' DDL.
//
// CQL (this file) maps each column family to a Cassandra table — partition
// key in the inner parentheses of PRIMARY KEY, clustering key after it, in
// ascending clustering order — and each secondary index to CREATE INDEX on
// its base table. Columns are named by their path from the family's root
// relation (items.seller.region.id becomes items_seller_region_id), so that
// names are unique within a table.
//
// HBase (hbase.go) and CBT (cbt.go) write scripts creating the tables the
// engine itself uses on an HBase or Bigtable cluster: one per CF and SI,
// with the engine's one family, pre-split as the engine pre-splits them.
package export

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/physical"
	"github.com/kvschema/kvschema/types"
)

// cqlTypes maps kvschema types to CQL types.
var cqlTypes = map[types.Type]string{
	types.String: "text", types.Int: "int", types.BigInt: "bigint", types.Float: "float",
	types.Double: "double", types.Bool: "boolean", types.Timestamp: "timestamp", types.Bytes: "blob",
}

// column is the CQL column name of an attribute.
func column(x *physical.Index, a physical.Attr) string {
	return strings.ReplaceAll(x.AttrName(a), ".", "_")
}

// CQL writes CREATE TABLE and CREATE INDEX statements for s into keyspace
// (no keyspace prefix when empty).
func CQL(s *physical.Schema, keyspace string) string {
	var b strings.Builder
	qual := func(name string) string {
		if keyspace == "" {
			return name
		}
		return keyspace + "." + name
	}
	for _, x := range s.Indexes {
		if x.Kind != physical.CF {
			continue
		}
		fmt.Fprintf(&b, "-- %s\nCREATE TABLE %s (\n", x.Describe(), qual(x.Name))
		for _, a := range x.Attrs() {
			fmt.Fprintf(&b, "  %s %s,\n", column(x, a), cqlTypes[a.Field.Type])
		}
		var part, clus []string
		for _, a := range x.Hash {
			part = append(part, column(x, a))
		}
		for _, a := range x.Order {
			clus = append(clus, column(x, a))
		}
		fmt.Fprintf(&b, "  PRIMARY KEY ((%s)", strings.Join(part, ", "))
		for _, c := range clus {
			b.WriteString(", " + c)
		}
		b.WriteString(")\n)")
		if len(clus) > 0 {
			order := make([]string, len(clus))
			for i, c := range clus {
				order[i] = c + " ASC"
			}
			fmt.Fprintf(&b, " WITH CLUSTERING ORDER BY (%s)", strings.Join(order, ", "))
		}
		b.WriteString(";\n\n")
	}
	for _, x := range s.Indexes {
		if x.Kind != physical.SI {
			continue
		}
		base := s.Base[x]
		fmt.Fprintf(&b, "-- %s\nCREATE INDEX %s ON %s (%s);\n\n", x.Describe(), x.Name, qual(base.Name), column(base, x.Hash[0]))
	}
	return b.String()
}
