//go:build !race

package txnstore_test

// Tests on the Bigtable emulator (bttest, gRPC) are built without the race
// detector: building gRPC and the emulator with it doubles the time of the
// race pass, and the concurrency the race pass checks is txnstore's own,
// on memstore.

import (
	"errors"
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/store/txnstore"
)

func init() {
	backends["bigtable"] = func(t testing.TB) txnstore.Inner { return bttestserver.Open(t) }
}

func TestConformanceBigtable(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return txnstore.New(bttestserver.Open(t)) })
}

// TestRejectedBeforeCommit: a batch with a row key Bigtable refuses fails
// before anything is written, so no write is left that could never finish.
func TestRejectedBeforeCommit(t *testing.T) {
	raw := bttestserver.Open(t)
	setup(t, raw)
	s := txnstore.New(raw)
	before := content(t, s)
	err := s.Apply(t.Context(), []store.Mutation{set("t", "a", "q", "9"), set("u", "", "q", "9")})
	if !errors.Is(err, bigtablestore.ErrRowKey) {
		t.Fatalf("Apply = %v, want ErrRowKey", err)
	}
	if got := content(t, s); !equal(got, before) {
		t.Errorf("content %v, want %v", got, before)
	}
	if l := leftovers(t, raw); len(l) > 0 {
		t.Errorf("left: %v", l)
	}
}
