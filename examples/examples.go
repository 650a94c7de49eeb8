// Package examples embeds the example scripts shipped with kvschema, so the
// CLI's demo runs without a checkout.
package examples

import _ "embed"

// Fig6 is seed 003's Fig. 6 exactly as printed there: relation r and its
// layouts s1 and s2. Tests use it as their golden fixture.
//
//go:embed fig6.kvs
var Fig6 string

// Seed003 is the walk-through of seed 003 extended with kvschema's own
// constructs (ordered keys, DESC, salting): see seed003.kvs.
//
//go:embed seed003.kvs
var Seed003 string

// RUBiSModel is the RUBiS conceptual model (rubis/model.kvs).
//
//go:embed rubis/model.kvs
var RUBiSModel string

// RUBiSWorkloadSecondary is the paper's 61-statement RUBiS workload
// (rubis/workload_secondary.kvs).
//
//go:embed rubis/workload_secondary.kvs
var RUBiSWorkloadSecondary string

// RUBiSWorkload is the original 36-statement RUBiS workload
// (rubis/workload.kvs).
//
//go:embed rubis/workload.kvs
var RUBiSWorkload string
