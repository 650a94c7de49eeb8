//go:build !race

package txnstore_test

// Tests on the Bigtable emulator (bttest, gRPC) are built without the race
// detector: building gRPC and the emulator with it doubles the time of the
// race pass, and the concurrency the race pass checks is txnstore's own,
// on memstore.

import (
	"errors"
	"fmt"
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

// BenchmarkApply times writes of one and of five rows through the intent
// log on the in-process emulator (each store call one gRPC round trip on
// loopback).
func BenchmarkApply(b *testing.B) {
	for _, rows := range []int{1, 5} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			raw := bttestserver.Open(b)
			s := txnstore.New(raw)
			if err := s.CreateTable(b.Context(), store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
				b.Fatal(err)
			}
			muts := make([]store.Mutation, rows)
			for i := 0; b.Loop(); i++ {
				for r := range muts {
					muts[r] = set("t", fmt.Sprintf("r%d-%d", r, i%100), "q", "v")
				}
				if err := s.Apply(b.Context(), muts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
