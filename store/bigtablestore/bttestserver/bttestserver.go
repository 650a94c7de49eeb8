// Package bttestserver gives tests a Bigtable store on the in-process
// emulator (cloud.google.com/go/bigtable/bttest): one emulator per test
// binary, a fresh instance per store, so tests never see each other's
// tables.
package bttestserver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/kvschema/kvschema/store/bigtablestore"
)

var (
	once     sync.Once
	addr     string
	startErr error
	next     atomic.Int64
)

// Addr starts the process's emulator on first use and returns its address.
func Addr() (string, error) {
	once.Do(func() {
		srv, err := bttest.NewServer("127.0.0.1:0")
		if err != nil {
			startErr = fmt.Errorf("bttest: %w", err)
			return
		}
		addr = srv.Addr
	})
	return addr, startErr
}

// Instance returns a fresh instance name.
func Instance() string { return fmt.Sprintf("i%d", next.Add(1)) }

// Options are the options of a fresh instance on the emulator.
func Options(t testing.TB) bigtablestore.Options {
	a, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	return bigtablestore.Options{Project: "test", Instance: Instance(), Emulator: a}
}

// Open opens a raw store on a fresh instance, closed when the test ends.
func Open(t testing.TB) *bigtablestore.Store {
	s, err := bigtablestore.Open(context.Background(), Options(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
