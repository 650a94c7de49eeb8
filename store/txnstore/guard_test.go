package txnstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
)

// commitGate holds the first commit (the intent's status set to
// committed) that reaches it until release is closed, saying so on
// reached.
type commitGate struct {
	txnstore.Inner
	once             sync.Once
	reached, release chan struct{}
}

func (g *commitGate) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	if table == txnstore.IntentTable && len(then) == 1 && string(then[0].Value) == "c" {
		g.once.Do(func() {
			close(g.reached)
			<-g.release
		})
	}
	return g.Inner.ApplyIf(ctx, table, row, cond, then, otherwise)
}

// TestGuardRowLocked: a guarded write whose batch leaves its guard row
// unchanged still holds that row from its decision to its commit: a write
// of the row by another process, started meanwhile, finishes only after
// the guarded write committed (else the guarded write would commit on a
// row that changed after it was checked).
func TestGuardRowLocked(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	gate := &commitGate{Inner: inner, reached: make(chan struct{}), release: make(chan struct{})}
	guarded, other := txnstore.New(gate), txnstore.New(inner)
	if err := other.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply(ctx, []store.Mutation{set("t", "g", "v", "open")}); err != nil {
		t.Fatal(err)
	}
	applied := make(chan bool, 1)
	go func() {
		ok, err := guarded.ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("g"), Holds: func(cells []store.Cell) bool {
			return len(cells) == 1 && string(cells[0].Value) == "open"
		}}}, []store.Mutation{set("t", "x", "v", "1"), set("t", "y", "v", "1")})
		if err != nil {
			t.Error(err)
		}
		applied <- ok
	}()
	<-gate.reached // decided on g = open, about to commit
	wrote := make(chan time.Time, 1)
	go func() {
		if err := other.Apply(ctx, []store.Mutation{set("t", "g", "v", "closed")}); err != nil {
			t.Error(err)
		}
		wrote <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	close(gate.release)
	if !<-applied {
		t.Fatal("the guarded write did not apply")
	}
	if at := <-wrote; at.Before(released) {
		t.Fatal("the guard row was written while the guarded write that checked it was still to commit")
	}
}

// dieAfterCommit lets writes through until a multi-row write's commit has
// applied, then fails every later write, as if its process died there.
type dieAfterCommit struct {
	txnstore.Inner
	mu   sync.Mutex
	dead bool
}

var errDead = errors.New("process died (injected)")

func (d *dieAfterCommit) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	d.mu.Lock()
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return false, errDead
	}
	ok, err := d.Inner.ApplyIf(ctx, table, row, cond, then, otherwise)
	if err == nil && table == txnstore.IntentTable && len(then) == 1 && string(then[0].Value) == "c" {
		d.mu.Lock()
		d.dead = true
		d.mu.Unlock()
	}
	return ok, err
}

func (d *dieAfterCommit) Apply(ctx context.Context, muts []store.Mutation) error {
	d.mu.Lock()
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return errDead
	}
	return d.Inner.Apply(ctx, muts)
}

// TestGuardedWriterDiesAfterCommit: a guarded write whose batch leaves its
// guard row unchanged, and whose process dies right after its commit,
// leaves that row locked; the next writer of the row, in another process,
// finishes the committed write and clears the lock, and its own guarded
// write then decides on the row as the dead writer left it.
func TestGuardedWriterDiesAfterCommit(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	dying, other := txnstore.New(&dieAfterCommit{Inner: inner}), txnstore.New(inner)
	if err := other.CreateTable(ctx, store.TableSpec{Name: "t", Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply(ctx, []store.Mutation{set("t", "g", "v", "open")}); err != nil {
		t.Fatal(err)
	}
	isOpen := func(cells []store.Cell) bool { return len(cells) == 1 && string(cells[0].Value) == "open" }
	_, err := dying.ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("g"), Holds: isOpen}}, []store.Mutation{set("t", "x", "v", "1"), set("t", "y", "v", "1")})
	if !errors.Is(err, txnstore.ErrPending) {
		t.Fatalf("the dying writer: %v; want ErrPending (committed, not finished)", err)
	}
	applied, err := other.ApplyGuards(ctx, []store.Guard{{Table: "t", Row: []byte("g"), Holds: isOpen}}, []store.Mutation{set("t", "g", "v", "closed"), set("t", "z", "v", "1")})
	if err != nil || !applied {
		t.Fatalf("the next guarded write of the row: applied %v, %v", applied, err)
	}
	for _, k := range []string{"x", "y", "z"} {
		if r, ok, err := other.ReadRow(ctx, "t", []byte(k)); err != nil || !ok || string(r.Cells[0].Value) != "1" {
			t.Fatalf("row %s: %v %v %v", k, r, ok, err)
		}
	}
	// No lock is left on any row: the raw rows hold no bookkeeping cell.
	if err := inner.ReadRows(ctx, "t", store.All(), store.ReadOptions{}, func(r store.Row) bool {
		for _, c := range r.Cells {
			if c.Family == txnstore.Family {
				t.Errorf("row %s still holds %s:%s", r.Key, c.Family, c.Qualifier)
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
}
