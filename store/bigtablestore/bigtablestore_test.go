package bigtablestore_test

import (
	"testing"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	"github.com/kvschema/kvschema/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return bttestserver.Open(t) })
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bigtablestore.Options
		err  bool
	}{
		{in: "//p/i", want: bigtablestore.Options{Project: "p", Instance: "i"}},
		{in: "//p/i?emulator=127.0.0.1:9000", want: bigtablestore.Options{Project: "p", Instance: "i", Emulator: "127.0.0.1:9000"}},
		{in: "p/i", err: true},
		{in: "//p", err: true},
		{in: "//p/", err: true},
		{in: "//p/i/j", err: true},
		{in: "//p/i?x=1", err: true},
		{in: "//p/i?emulator=", err: true},
	} {
		got, err := bigtablestore.ParseURL(c.in)
		if (err != nil) != c.err || (err == nil && (got.Project != c.want.Project || got.Instance != c.want.Instance || got.Emulator != c.want.Emulator)) {
			t.Errorf("ParseURL(%q) = %+v, %v", c.in, got, err)
		}
	}
}

func TestBadNames(t *testing.T) {
	s := bttestserver.Open(t)
	for _, spec := range []store.TableSpec{
		{Name: "has space", Families: []string{"f"}},
		{Name: "t", Families: []string{"f:g"}},
		{Name: "a-very-long-table-name-that-is-longer-than-fifty-bytes", Families: []string{"f"}},
		{Name: "_kvschema_tables", Families: []string{"f"}},
	} {
		if err := s.CreateTable(t.Context(), spec); err == nil {
			t.Errorf("CreateTable(%+v) succeeded", spec)
		}
	}
}

func TestConditional(t *testing.T) {
	storetest.RunConditional(t, func(t *testing.T) store.Store { return bttestserver.Open(t) })
}
