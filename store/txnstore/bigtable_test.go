//go:build !race

package txnstore_test

// Tests on the Bigtable emulator (bttest, gRPC) are built without the race
// detector: building gRPC and the emulator with it doubles the time of the
// race pass, and the concurrency the race pass checks is txnstore's own,
// on memstore.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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

// TestExpiryOldTable: a write with Expires of a Bigtable table created
// before cell expiry (table u, made here as earlier versions did) is
// refused, naming the table, before its intent or any lock is written;
// one of a table created now (t) goes through the intent log with its
// expiry.
func TestExpiryOldTable(t *testing.T) {
	ctx := t.Context()
	o := bttestserver.Options(t)
	conn, err := grpc.NewClient(o.Emulator, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	admin, err := bigtable.NewAdminClient(context.Background(), o.Project, o.Instance, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	err = admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "u", ColumnFamilies: map[string]bigtable.Family{"f": {GCPolicy: bigtable.MaxVersionsPolicy(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bigtablestore.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s := txnstore.New(raw)
	for _, name := range []string{"t", "u"} {
		if err := s.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f"}}); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Capabilities().Expiry {
		t.Fatal("txnstore over Bigtable reports no Expiry")
	}
	T := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	expiring := func(m store.Mutation) store.Mutation { m.Expires = T.UnixMicro(); return m }
	apply := func(muts ...store.Mutation) {
		t.Helper()
		if err := s.Apply(ctx, muts); err != nil {
			t.Fatal(err)
		}
	}
	apply(set("t", "a", "q", "1"), set("u", "x", "q", "1"))
	before := content(t, s)
	for _, muts := range [][]store.Mutation{
		{expiring(set("u", "x", "q", "2"))},
		{set("t", "a", "q", "2"), expiring(set("u", "y", "q", "2"))},
	} {
		err := s.Apply(ctx, muts)
		if !errors.Is(err, store.ErrNoExpiry) {
			t.Fatalf("Apply with Expires on an old table = %v, want ErrNoExpiry", err)
		}
		if got := content(t, s); !equal(got, before) {
			t.Errorf("content %v, want %v", got, before)
		}
		if l := leftovers(t, raw); len(l) > 0 {
			t.Errorf("left: %v", l)
		}
	}
	apply(expiring(set("t", "a", "q", "3")), expiring(set("t", "b", "q", "3")), set("u", "x", "q", "3"))
	for _, tc := range []struct {
		at   time.Time
		want map[string]string
	}{
		{T.Add(-time.Millisecond), map[string]string{"a": "f:q=3", "b": "f:q=3"}},
		{T, map[string]string{}},
	} {
		got := map[string]string{}
		err := s.ReadRows(store.WithNow(ctx, tc.at), "t", store.All(), store.ReadOptions{}, func(r store.Row) bool {
			got[string(r.Key)] = fmt.Sprintf("%s:%s=%s", r.Cells[0].Family, r.Cells[0].Qualifier, r.Cells[0].Value)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !equal(got, tc.want) {
			t.Errorf("at %v: %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := rows(t, s, "u"); got["x"] != "f:q=3" {
		t.Errorf("u = %v", got)
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
