//go:build !race

package exec_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
)

// TestFaultInjection cuts one write of each kind of the crash workload
// (inserts and updates that change several column families and indexes)
// short at every row mutation k it makes on a store atomic per row only
// (txnstore over faultstore over memstore): failing that call (the client
// goes on), failing it after it was applied (its reply lost), or stopping
// the client there. A new client then opens the store: the copies agree
// (Verify), the data is the oracle's before the write or after it, and
// the write is there exactly if the fault came after its commit (the
// intent log's commit is its (n+2)-th row mutation of 2n+3 for n rows;
// a one-row write's one mutation) — and then Exec succeeded unless the
// client died.
func TestFaultInjection(t *testing.T) {
	needCBC(t)
	ctx := context.Background()
	raw := memstore.New()
	m, d := deployCrashStoreOn(t, ctx, txnstore.New(raw))
	snap, err := raw.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()

	open := func(s txnstore.Inner) (*exec.Engine, []*exec.Stmt) {
		en, err := exec.Open(ctx, txnstore.New(s))
		if err != nil {
			t.Fatal(err)
		}
		return en, prepareCrashWrites(t, en)
	}
	// One write of each statement, from the crash workload's sequence.
	_, stmts := open(raw)
	next := crashSequence(stmts, 7, 500_000)
	ops := make([]*crashOp, len(crashWrites))
	for missing := len(ops); missing > 0; {
		op := next()
		if ops[op.stmt] == nil {
			ops[op.stmt] = &op
			missing--
		}
	}
	trials, landed := 0, 0
	for _, op := range ops {
		// How many row mutations the write makes.
		f := faultstore.New(raw)
		_, st := open(f)
		if _, err := st[op.stmt].Exec(ctx, op.args...); err != nil {
			t.Fatal(err)
		}
		total := f.Count()
		commit := (total + 1) / 2
		for _, mode := range []faultstore.Mode{faultstore.Fail, faultstore.FailAfter, faultstore.Stop} {
			for k := 1; k <= total; k++ {
				t.Run(fmt.Sprintf("write%d/mode%d/k%d", op.stmt, mode, k), func(t *testing.T) {
					if err := snap.Restore(ctx); err != nil {
						t.Fatal(err)
					}
					f := faultstore.New(raw)
					_, st := open(f)
					f.Arm(k, mode)
					_, err := st[op.stmt].Exec(ctx, op.args...)
					committed := k > commit || (k == commit && mode == faultstore.FailAfter)
					acked := err == nil
					switch {
					case acked && !committed:
						t.Errorf("Exec = nil, but the fault at row mutation %d of %d (mode %d) came before the commit", k, total, mode)
					case !acked && committed && mode != faultstore.Stop && !(total == 1 && errors.Is(err, txnstore.ErrAmbiguous)):
						t.Errorf("Exec = %v: a fault the client survives after the commit (row mutation %d of %d, mode %d) should not fail it", err, k, total, mode)
					}
					// A new client.
					en, st := open(raw)
					var checked int
					in := checkCrashTrial(t, ctx, en, oracleOf(t, m, d), st, []crashOp{*op}, 0, &checked)
					if in != committed {
						t.Errorf("the write is there: %v; committed (fault at row mutation %d of %d, mode %d, after the commit): %v", in, k, total, mode, committed)
					}
					trials++
					if in {
						landed++
					}
				})
			}
		}
	}
	t.Logf("%d trials over %d writes: the write landed in %d", trials, len(ops), landed)
}
