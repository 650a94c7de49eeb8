package tracestore_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/storetest"
	"github.com/kvschema/kvschema/store/tracestore"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return tracestore.New(memstore.New(), io.Discard) })
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "",
		"abc XYZ~":             "abc XYZ~",
		"x-\x00\x00\x00d":      `x-\x00\x00\x00d`,
		"\x01\x1f\x7f\x80\xff": `\x01\x1f\x7f\x80\xff`,
		`a\b"c'd`:              `a\\b\"c\'d`,
	} {
		if got := tracestore.Escape([]byte(in)); got != want {
			t.Errorf("Escape(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTrace(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	s := tracestore.New(memstore.New(), &out)
	b := func(s string) []byte { return []byte(s) }
	noop := func(store.Row) bool { return true }
	r := func(start, end string) store.Range { return store.Range{Start: b(start), End: b(end)} }

	s.CreateTable(ctx, store.TableSpec{Name: "s1", Families: []string{"f"}})
	s.CreateTable(ctx, store.TableSpec{Name: "s2", Families: []string{"f", "g"}, Splits: [][]byte{b("a"), b("\x01'")}})
	s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "s1", Row: b("a1-b"), Family: "f", Value: b("x-\x00\x00\x00d")}})
	s.Apply(ctx, []store.Mutation{{Kind: store.SetCell, Table: "s1", Row: b("t"), Family: "f", Value: b("v"), Expires: time.Date(2031, 2, 3, 4, 5, 6, 7000, time.UTC).UnixMicro()}})
	s.Apply(ctx, []store.Mutation{
		{Kind: store.SetCell, Table: "s2", Row: b("\x01ba1"), Family: "f", Qualifier: b("V1"), Value: b("x")},
		{Kind: store.DeleteCell, Table: "s2", Row: b("\x01ba1"), Family: "f", Qualifier: b("V2")},
		{Kind: store.DeleteRow, Table: "s2", Row: b("old")},
		{Kind: store.DeleteFamily, Table: "s2", Row: b("\x01ba1"), Family: "g"},
	})
	s.Apply(ctx, nil)
	if err := s.Apply(ctx, []store.Mutation{{Kind: store.DeleteRow, Table: "nope", Row: b("r")}}); !errors.Is(err, store.ErrNoTable) {
		t.Errorf("Apply to a missing table: %v", err)
	}
	s.ReadRow(ctx, "s1", b("a1-b"))
	s.ReadRows(ctx, "s1", store.RowSet{Ranges: []store.Range{store.PrefixRange(b("a1-b"))}}, store.ReadOptions{}, noop)
	s.ReadRows(ctx, "s1", store.RowSet{Keys: [][]byte{b("k\"")}}, store.ReadOptions{}, noop)
	s.ReadRows(ctx, "s1", store.All(), store.ReadOptions{}, noop)
	s.ReadRows(ctx, "s1", store.All(), store.ReadOptions{Limit: 10, Reverse: true}, noop)
	s.ReadRows(ctx, "s1", store.RowSet{}, store.ReadOptions{}, noop)
	s.ReadRows(ctx, "s1", store.RowSet{
		Keys:   [][]byte{b("z"), b("a"), b("a")},
		Ranges: []store.Range{r("m", "n"), {Start: b("x")}, {End: b("b")}, r("b", "a")},
	}, store.ReadOptions{Reverse: true}, noop)
	s.Tables(ctx)

	want := `create 's1', 'f'
create 's2', 'f', 'g', SPLITS=>['a', '\x01\'']
put "s1", "a1-b", "f:", "x-\x00\x00\x00d"
put "s1", "t", "f:", "v", {EXPIRES=>'2031-02-03T04:05:06.000007Z'}
batch begin
put "s2", "\x01ba1", "f:V1", "x"
delete "s2", "\x01ba1", "f:V2"
deleteall "s2", "old"
deleteall "s2", "\x01ba1", "g"
batch end (4 mutations)
batch begin
batch end (0 mutations)
deleteall "nope", "r"
get 's1', 'a1-b'
scan 's1', {STARTROW=>'a1-b', STOPROW=>'a1-c'}
get 's1', 'k\"'
scan 's1'
scan 's1', {LIMIT=>10, REVERSED=>true}
multi begin
multi end
multi begin
scan 's1', {STARTROW=>'x', REVERSED=>true}
scan 's1', {STARTROW=>'m', STOPROW=>'n', REVERSED=>true}
scan 's1', {STOPROW=>'b', REVERSED=>true}
multi end
list
`
	if got := out.String(); got != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}
}

func TestIndexer(t *testing.T) {
	storetest.RunIndexer(t, func(*testing.T) store.Store { return tracestore.New(memstore.New(), io.Discard) })
	type plain struct{ store.Store }
	err := tracestore.New(plain{memstore.New()}, io.Discard).ReadIndex(context.Background(), "t", "i", store.All(), store.ReadOptions{}, func(store.Row) bool { return true })
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ReadIndex over a store without it: %v", err)
	}
}

func TestIndexTrace(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	s := tracestore.New(memstore.New(), &out)
	b := func(s string) []byte { return []byte(s) }
	noop := func(store.Row) bool { return true }
	s.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f", "e"}, Indexes: []store.IndexSpec{{Name: "i", Family: "f", Qualifier: b("q\x00")}, {Name: "elems", Family: "e", Elements: true}}})
	s.ReadIndex(ctx, "t", "i", store.RowSet{Keys: [][]byte{b("v'")}}, store.ReadOptions{}, noop)
	s.ReadIndex(ctx, "t", "i", store.All(), store.ReadOptions{Limit: 3, Reverse: true}, noop)
	s.ReadIndex(ctx, "t", "i", store.RowSet{Keys: [][]byte{b("z")}, Ranges: []store.Range{{Start: b("a"), End: b("c")}}}, store.ReadOptions{Reverse: true}, noop)
	want := `create 't', 'f', 'e', INDEXES=>['i'=>'f:q\x00', 'elems'=>'e']
index 't', 'i', {VALUE=>'v\''}
index 't', 'i', {LIMIT=>3, REVERSED=>true}
multi begin
index 't', 'i', {VALUE=>'z', REVERSED=>true}
index 't', 'i', {STARTVALUE=>'a', STOPVALUE=>'c', REVERSED=>true}
multi end
`
	if got := out.String(); got != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}
}

func TestGuarded(t *testing.T) {
	storetest.RunGuarded(t, func(*testing.T) []store.Store { return []store.Store{tracestore.New(memstore.New(), io.Discard)} })
	// Over a store without guarded writes, the decorator says so.
	type plain struct{ store.Store }
	_, err := tracestore.New(plain{memstore.New()}, io.Discard).ApplyGuards(context.Background(), []store.Guard{{Table: "t"}}, nil)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ApplyGuards over a store without it: %v", err)
	}
}
