// Package examples embeds the example scripts shipped with kvschema, so the
// CLI's demo runs without a checkout.
package examples

import _ "embed"

// Seed003 is the walk-through of seed 003 extended with kvschema's own
// constructs (ordered keys, DESC, salting): see seed003.kvs.
//
//go:embed seed003.kvs
var Seed003 string
