//go:build !race

package exec_test

import (
	"testing"

	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/txnstore"
)

func init() {
	openBigtable = func(t testing.TB) txnstore.Inner { return bttestserver.Open(t) }
}
