// Package all exists only to import every storage backend for its side
// effect: each registers its URL scheme with store.Register, so that
// store.Open accepts "mem:", "pebble:DIR" and "bigtable://PROJECT/INSTANCE" once a program imports
//
//	_ "github.com/kvschema/kvschema/store/all"
package all

import (
	_ "github.com/kvschema/kvschema/store/bigtablestore" // registers "bigtable"
	_ "github.com/kvschema/kvschema/store/memstore"      // registers "mem"
	_ "github.com/kvschema/kvschema/store/pebblestore"   // registers "pebble"
)
