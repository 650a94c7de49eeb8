//go:build !race

package kvschema_test

import (
	"testing"

	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/txnstore"
)

func init() {
	sharedStores["bigtable"] = func(t testing.TB) txnstore.Inner { return bttestserver.Open(t) }
}
