package bigtablestore_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
)

// rawClients connects the Bigtable clients themselves to the instance of
// o, to see cells as stored and to create tables as earlier versions did.
func rawClients(t *testing.T, o bigtablestore.Options) (*bigtable.Client, *bigtable.AdminClient) {
	t.Helper()
	conn, err := grpc.NewClient(o.Emulator, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx := context.Background()
	c, err := bigtable.NewClientWithConfig(ctx, o.Project, o.Instance, bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}}, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	a, err := bigtable.NewAdminClient(ctx, o.Project, o.Instance, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	return c, a
}

func open(t *testing.T, o bigtablestore.Options) *bigtablestore.Store {
	t.Helper()
	s, err := bigtablestore.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stamps is the timestamps of every version of every cell of a row, as
// "family:qualifier@ts=value".
func stamps(t *testing.T, c *bigtable.Client, table, row string) []string {
	t.Helper()
	r, err := c.Open(table).ReadRow(t.Context(), row)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, items := range r {
		for _, it := range items {
			out = append(out, it.Column+"@"+time.UnixMicro(int64(it.Timestamp)).UTC().Format(time.RFC3339Nano)+"="+string(it.Value))
		}
	}
	slices.Sort(out)
	return out
}

func policies(t *testing.T, a *bigtable.AdminClient, table string) []string {
	t.Helper()
	info, err := a.TableInfo(t.Context(), table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range info.FamilyInfos {
		out = append(out, f.Name+" "+f.GCPolicy)
	}
	slices.Sort(out)
	return out
}

func setCell(table, row, q, v string, expires int64) store.Mutation {
	return store.Mutation{Kind: store.SetCell, Table: table, Row: []byte(row), Family: "f", Qualifier: []byte(q), Value: []byte(v), Expires: expires}
}

func cells(t *testing.T, s store.Store, at time.Time, table, row string) string {
	t.Helper()
	r, ok, err := s.ReadRow(store.WithNow(t.Context(), at), table, []byte(row))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return ""
	}
	var out []string
	for _, c := range r.Cells {
		out = append(out, c.Family+":"+string(c.Qualifier)+"="+string(c.Value))
	}
	return strings.Join(out, " ")
}

// TestExpiryFormat pins how a table created by this version keeps cell
// expiry: the GC policy (which says so), a permanent cell at the
// greatest whole millisecond, an expiring one at its instant rounded up
// to the millisecond, one version per cell whatever the order of writes.
func TestExpiryFormat(t *testing.T) {
	ctx := t.Context()
	o := bttestserver.Options(t)
	s := open(t, o)
	c, a := rawClients(t, o)
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"f", "g"}, Splits: [][]byte{[]byte("m")}}); err != nil {
		t.Fatal(err)
	}
	union := bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(1), bigtable.MaxAgePolicy(time.Second)).String()
	if got, want := policies(t, a, "new"), []string{"f " + union, "g " + union}; !slices.Equal(got, want) {
		t.Errorf("GC policies %q, want %q", got, want)
	}
	r, err := c.Open("_kvschema_tables").ReadRow(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if items := r["t"]; len(items) != 1 || items[0].Column != "t:splits" {
		t.Errorf("registry row %v, want the splits alone (the GC policy says the table keeps expiry)", r)
	}

	permanent := time.UnixMicro(math.MaxInt64 - math.MaxInt64%1000).UTC().Format(time.RFC3339Nano)
	e := time.Date(2031, 5, 6, 7, 8, 9, 1500_000, time.UTC) // 1.5 ms past the second
	if err := s.Apply(ctx, []store.Mutation{setCell("new", "a", "p", "1", 0), setCell("new", "a", "q", "2", e.UnixMicro())}); err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(t, c, "new", "a"), []string{"f:p@" + permanent + "=1", "f:q@2031-05-06T07:08:09.002Z=2"}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	// The rounding up: alive until the next whole millisecond.
	if got := cells(t, s, e.Add(400*time.Microsecond), "new", "a"); got != "f:p=1 f:q=2" {
		t.Errorf("0.4 ms after Expires: %q", got)
	}
	if got := cells(t, s, e.Add(500*time.Microsecond), "new", "a"); got != "f:p=1" {
		t.Errorf("at the millisecond after Expires: %q", got)
	}
	// The newest write wins, whatever the timestamps: one version left.
	if err := s.Apply(ctx, []store.Mutation{setCell("new", "a", "p", "1'", e.UnixMicro()), setCell("new", "a", "q", "2'", 0)}); err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(t, c, "new", "a"), []string{"f:p@2031-05-06T07:08:09.002Z=1'", "f:q@" + permanent + "=2'"}; !slices.Equal(got, want) {
		t.Errorf("stored after rewrites %q, want %q", got, want)
	}
	if got := cells(t, s, e.Add(time.Hour), "new", "a"); got != "f:q=2'" {
		t.Errorf("an hour after Expires: %q", got)
	}
	specs, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || len(specs[0].Splits) != 1 || string(specs[0].Splits[0]) != "m" {
		t.Errorf("Tables = %+v, want new split at m", specs)
	}

	// A family added later gets the same policy (and bttest's GC starts
	// with the first family added to a table).
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"h"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := policies(t, a, "new"), []string{"f " + union, "g " + union, "h " + union}; !slices.Equal(got, want) {
		t.Errorf("GC policies %q, want %q", got, want)
	}
	// The GC policy removes cells expired (by the server's clock) for
	// good: a read at an earlier instant no longer sees them.
	past := time.Now().Add(-time.Minute)
	if err := s.Apply(ctx, []store.Mutation{setCell("new", "b", "q", "gone", past.UnixMicro()), setCell("new", "b", "p", "kept", 0)}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		got := cells(t, s, past.Add(-time.Minute), "new", "b")
		if got == "f:p=kept" {
			break
		}
		if got != "f:p=kept f:q=gone" || time.Now().After(deadline) {
			t.Fatalf("before its expiry, row b is %q, want the GC policy to remove f:q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExpiryOldTables: a table created by an earlier version (families
// keeping one version) keeps today's format — cells at timestamp 0, no
// expiry filter — and refuses Expires, naming the table, before anything
// is written; so does one that an expiry flag in the registry claims (as
// an earlier version recorded before a creation that failed, and an older
// binary then created the table).
func TestExpiryOldTables(t *testing.T) {
	ctx := t.Context()
	o := bttestserver.Options(t)
	c, a := rawClients(t, o)
	s := open(t, o)
	if err := s.CreateTable(ctx, store.TableSpec{Name: "new", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	err := a.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "old", ColumnFamilies: map[string]bigtable.Family{"f": {GCPolicy: bigtable.MaxVersionsPolicy(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	flag := bigtable.NewMutation()
	flag.Set("t", "expiry", 0, []byte("1"))
	if err := c.Open("_kvschema_tables").Apply(ctx, "old", flag); err != nil {
		t.Fatal(err)
	}
	// A store that has not seen either table reads their GC policies.
	s = open(t, o)
	if err := s.CreateTable(ctx, store.TableSpec{Name: "old", Families: []string{"f", "g"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := policies(t, a, "old"), []string{"f versions() > 1", "g versions() > 1"}; !slices.Equal(got, want) {
		t.Errorf("GC policies of old %q, want %q", got, want)
	}
	if err := s.Apply(ctx, []store.Mutation{setCell("old", "a", "q", "1", 0)}); err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(t, c, "old", "a"), []string{"f:q@1970-01-01T00:00:00Z=1"}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if got := cells(t, s, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), "old", "a"); got != "f:q=1" {
		t.Errorf("read of old = %q", got)
	}
	exp := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for _, muts := range [][]store.Mutation{
		{setCell("old", "a", "q", "2", exp)},
		{setCell("new", "a", "q", "2", 0), setCell("old", "b", "q", "2", 0), setCell("old", "a", "q", "2", exp)},
	} {
		err := s.Apply(ctx, muts)
		if !errors.Is(err, store.ErrNoExpiry) || !strings.Contains(err.Error(), "old") {
			t.Errorf("Apply(%d mutations) with Expires on old = %v, want ErrNoExpiry naming the table", len(muts), err)
		}
		if err := s.CheckMutations(muts); !errors.Is(err, store.ErrNoExpiry) {
			t.Errorf("CheckMutations = %v, want ErrNoExpiry", err)
		}
	}
	if _, err := s.ApplyIf(ctx, "old", []byte("a"), store.Cond{Family: "f"}, nil, []store.Mutation{setCell("old", "a", "q", "2", exp)}); !errors.Is(err, store.ErrNoExpiry) {
		t.Errorf("ApplyIf with Expires on old = %v, want ErrNoExpiry", err)
	}
	if got := cells(t, s, time.Now(), "old", "a") + "|" + cells(t, s, time.Now(), "old", "b") + "|" + cells(t, s, time.Now(), "new", "a"); got != "f:q=1||" {
		t.Errorf("after refused writes: %q, want them unwritten", got)
	}
	// The new table, seen by this store value from its GC policy, keeps
	// expiry.
	if err := s.Apply(ctx, []store.Mutation{setCell("new", "a", "q", "2", exp)}); err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(t, c, "new", "a"), []string{"f:q@2031-01-01T00:00:00Z=2"}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
}

// TestExpiryTableRecreated: a table this store found keeping no expiry,
// dropped and created anew by another process (keeping expiry), is read
// again once oldTableRecheck has passed: the store's writes then follow
// the new table's format (a cell at timestamp 0 there would be collected
// as older than a second).
func TestExpiryTableRecreated(t *testing.T) {
	ctx := t.Context()
	o := bttestserver.Options(t)
	c, a := rawClients(t, o)
	err := a.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "t", ColumnFamilies: map[string]bigtable.Family{"f": {GCPolicy: bigtable.MaxVersionsPolicy(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, o)
	defer bigtablestore.SetOldTableRecheck(time.Hour)()
	if err := s.Apply(ctx, []store.Mutation{setCell("t", "a", "q", "1", 0)}); err != nil {
		t.Fatal(err)
	}
	if got, want := stamps(t, c, "t", "a"), []string{"f:q@1970-01-01T00:00:00Z=1"}; !slices.Equal(got, want) {
		t.Fatalf("old table: stored %q, want %q", got, want)
	}
	// Another process drops it and creates it anew.
	if err := a.DeleteTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	other := open(t, o)
	if err := other.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	bigtablestore.SetOldTableRecheck(0)
	if err := s.Apply(ctx, []store.Mutation{setCell("t", "a", "q", "2", 0)}); err != nil {
		t.Fatal(err)
	}
	permanent := time.UnixMicro(math.MaxInt64 - math.MaxInt64%1000).UTC().Format(time.RFC3339Nano)
	if got, want := stamps(t, c, "t", "a"), []string{"f:q@" + permanent + "=2"}; !slices.Equal(got, want) {
		t.Errorf("recreated table: stored %q, want %q", got, want)
	}
}
