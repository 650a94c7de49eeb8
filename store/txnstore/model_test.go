package txnstore

// A model-based test of the intent log: rapid interleaves multi-row and
// one-row writes from several processes (Store values over one store),
// pausing a write at any of its store calls while others read, write,
// repair; resuming, cancelling or killing it; and failing single row
// mutations before or after they are applied. The model is the store's
// content as the committed writes make it, each applied at the moment its
// commit reaches the store (observed below the Store, so the model never
// guesses). Checked:
//   - every read returns exactly the model's rows (nothing commits while a
//     read runs, so this is linearizability of reads);
//   - Apply's error tells the truth: nil or ErrPending means the write
//     committed; any error but ErrAmbiguous means it did not, and never
//     will; no write commits twice;
//   - a third of the writes are guarded (ApplyGuards) by a row, in the
//     batch or not, as the model had it when the write was made: such a
//     write commits only while that row is still so, and "not applied"
//     means it never commits;
//   - after every process is done and Repair has run, the store holds the
//     model's content and no bookkeeping.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/memstore"
)

var (
	errDead     = errors.New("process died")
	errInjected = errors.New("injected failure")
)

// Fault kinds of a write call.
const (
	failBefore = 1 + iota // the call fails, nothing applied
	failAfter             // the call is applied, then fails (reply lost)
)

// model is the content the committed writes make, and what each write's
// Apply said.
type model struct {
	mu        sync.Mutex
	rows      map[string]map[string]string // "t/a" → "f:q" → value
	committed map[string]bool              // write token → committed
	refused   map[string]error             // write token → Apply's error saying it never happens
	// guards are the guarded writes' conditions: token → the guard row
	// and its content when the write decided to be made.
	guards  map[string]guardExpect
	failure string
}

// guardExpect is a guarded write's condition: row k holds exactly want.
type guardExpect struct{ k, want string }

// errNotApplied stands for ApplyGuards returning applied == false: the
// write did not happen, and never will.
var errNotApplied = errors.New("guard did not hold")

func (m *model) fail(format string, args ...any) {
	if m.failure == "" {
		m.failure = fmt.Sprintf(format, args...)
	}
}

// token is the write a batch belongs to: the value of its "tok" cell.
func token(muts []store.Mutation) string {
	for _, mu := range muts {
		if mu.Kind == store.SetCell && string(mu.Qualifier) == "tok" {
			return string(mu.Value)
		}
	}
	return ""
}

// commit applies the batch of write tok to the model.
func (m *model) commit(muts []store.Mutation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tok := token(muts)
	if m.committed[tok] {
		m.fail("write %s committed twice", tok)
	}
	if err := m.refused[tok]; err != nil {
		m.fail("write %s committed after its Apply returned %v", tok, err)
	}
	m.committed[tok] = true
	if g, ok := m.guards[tok]; ok {
		if got := formatCells(m.rows[g.k]); got != g.want {
			m.fail("guarded write %s committed while its guard row %s held %q, not %q", tok, g.k, got, g.want)
		}
	}
	for _, mu := range muts {
		k := mu.Table + "/" + string(mu.Row)
		switch mu.Kind {
		case store.SetCell:
			if m.rows[k] == nil {
				m.rows[k] = map[string]string{}
			}
			m.rows[k][mu.Family+":"+string(mu.Qualifier)] = string(mu.Value)
		case store.DeleteCell:
			delete(m.rows[k], mu.Family+":"+string(mu.Qualifier))
			if len(m.rows[k]) == 0 {
				delete(m.rows, k)
			}
		case store.DeleteRow:
			delete(m.rows, k)
		case store.DeleteFamily:
			for c := range m.rows[k] {
				if strings.HasPrefix(c, mu.Family+":") {
					delete(m.rows[k], c)
				}
			}
			if len(m.rows[k]) == 0 {
				delete(m.rows, k)
			}
		}
	}
}

// outcome checks what Apply returned for write tok.
func (m *model) outcome(tok string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil || errors.Is(err, ErrPending):
		if !m.committed[tok] {
			m.fail("write %s: Apply = %v, but it did not commit", tok, err)
		}
	case errors.Is(err, ErrAmbiguous):
	default:
		if m.committed[tok] {
			m.fail("write %s: Apply = %v, but it committed", tok, err)
		}
		m.refused[tok] = err
	}
}

func (m *model) row(k string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return formatCells(m.rows[k])
}

func formatCells(cells map[string]string) string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(cells)) {
		out = append(out, c+"="+cells[c])
	}
	return strings.Join(out, ",")
}

func formatRow(r store.Row) string {
	cells := map[string]string{}
	for _, c := range r.Cells {
		cells[c.Family+":"+string(c.Qualifier)] = string(c.Value)
	}
	return formatCells(cells)
}

// gate is one process's view of the shared store: it can pause the
// process at a write call (the process is then frozen: every call of it
// waits), fail write calls, and kill the process; it reports commits to
// the model as they reach the store.
type gate struct {
	Inner
	m *model

	mu      sync.Mutex
	cond    *sync.Cond
	dead    bool
	paused  bool
	pauseAt int // write call that pauses the process (0: none)
	calls   int // write calls of the current Apply
	active  int // calls inside the store
	faults  map[int]int
}

func newGate(inner Inner, m *model) *gate {
	g := &gate{Inner: inner, m: m}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// enter waits until the process may call the store; for a write call it
// returns the fault planned for it.
func (g *gate) enter(write bool) (fault int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if write {
		g.calls++
		if g.calls == g.pauseAt {
			g.paused = true
			g.cond.Broadcast()
		}
		fault = g.faults[g.calls]
	}
	for g.paused && !g.dead {
		g.cond.Wait()
	}
	if g.dead {
		return 0, errDead
	}
	g.active++
	return fault, nil
}

func (g *gate) exit() {
	g.mu.Lock()
	g.active--
	g.cond.Broadcast()
	g.mu.Unlock()
}

func (g *gate) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	if _, err := g.enter(false); err != nil {
		return store.Row{}, false, err
	}
	defer g.exit()
	return g.Inner.ReadRow(ctx, table, key)
}

func (g *gate) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	if _, err := g.enter(false); err != nil {
		return err
	}
	defer g.exit()
	return g.Inner.ReadRows(ctx, table, rs, opts, fn)
}

func (g *gate) Apply(ctx context.Context, muts []store.Mutation) error {
	fault, err := g.enter(true)
	if err != nil {
		return err
	}
	defer g.exit()
	if fault == failBefore {
		return errInjected
	}
	if err := g.Inner.Apply(ctx, muts); err != nil {
		return err
	}
	if fault == failAfter {
		return errInjected
	}
	return nil
}

func (g *gate) ApplyIf(ctx context.Context, table string, row []byte, cond store.Cond, then, otherwise []store.Mutation) (bool, error) {
	fault, err := g.enter(true)
	if err != nil {
		return false, err
	}
	defer g.exit()
	if fault == failBefore {
		return false, errInjected
	}
	matched, err := g.Inner.ApplyIf(ctx, table, row, cond, then, otherwise)
	if err != nil {
		return false, err
	}
	switch {
	case table == IntentTable && matched && len(then) == 1 && string(then[0].Qualifier) == string(statusQ) && string(then[0].Value) == string(commited):
		// A commit: the intent's mutations are the write.
		r, _, err := g.Inner.ReadRow(context.Background(), IntentTable, row)
		if err != nil {
			panic(err)
		}
		for _, c := range r.Cells {
			if string(c.Qualifier) == string(intentQ) {
				_, muts, err := decodeIntent(c.Value)
				if err != nil {
					panic(err)
				}
				g.m.commit(muts)
			}
		}
	case table != IntentTable && !matched && len(otherwise) > 0 && otherwise[0].Family != Family:
		// A one-row write applied.
		g.m.commit(otherwise)
	}
	if fault == failAfter {
		return matched, errInjected
	}
	return matched, nil
}

// proc is a process: a Store over its gate, and its write in flight.
type proc struct {
	s      *Store
	g      *gate
	cancel context.CancelFunc
	tok    string
	busy   bool // a write is in flight
	ended  bool // it returned (guarded by g.mu)
	result error
}

// start runs Apply (ApplyGuards when guard is set) in the background and
// returns once it returned or the process is frozen at its pause.
func (p *proc) start(ctx context.Context, tok string, guard *store.Guard, muts []store.Mutation) {
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	p.cancel, p.tok, p.busy, p.ended = cancel, tok, true, false
	go func() {
		var err error
		if guard == nil {
			err = p.s.Apply(wctx, muts)
		} else if applied, gerr := p.s.ApplyGuards(wctx, []store.Guard{*guard}, muts); gerr != nil {
			err = gerr
		} else if !applied {
			err = errNotApplied
		}
		p.g.mu.Lock()
		p.ended, p.result = true, err
		p.g.cond.Broadcast()
		p.g.mu.Unlock()
	}()
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	for !p.ended && !(p.g.paused && p.g.active == 0) {
		p.g.cond.Wait()
	}
}

// release lets a frozen process go on (dead, or with its context
// cancelled, if so arranged) and waits for its Apply to return.
func (p *proc) release() error {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	p.g.paused, p.g.pauseAt = false, 0
	p.g.cond.Broadcast()
	for !p.ended {
		p.g.cond.Wait()
	}
	return p.result
}

var modelRows = []struct{ table, key string }{{"t", "a"}, {"t", "b"}, {"u", "x"}, {"u", "y"}}

func TestModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		raw := memstore.New()
		for _, name := range []string{"t", "u"} {
			if err := raw.CreateTable(ctx, store.TableSpec{Name: name, Families: []string{"f", "g", Family}}); err != nil {
				rt.Fatal(err)
			}
		}
		m := &model{rows: map[string]map[string]string{}, committed: map[string]bool{}, refused: map[string]error{}, guards: map[string]guardExpect{}}
		opts := Options{LockTimeout: 10 * time.Millisecond}
		newProc := func() *proc {
			g := newGate(raw, m)
			return &proc{s: New(g, opts), g: g}
		}
		procs := []*proc{newProc(), newProc(), newProc()}
		writes := 0

		check := func() {
			m.mu.Lock()
			f := m.failure
			m.mu.Unlock()
			if f != "" {
				rt.Fatal(f)
			}
		}
		// finish records the outcome of p's write once its Apply returned.
		finish := func(p *proc) {
			p.cancel()
			m.outcome(p.tok, p.result)
			p.busy, p.tok = false, ""
			p.g.mu.Lock()
			p.g.pauseAt, p.g.faults, p.g.calls = 0, nil, 0
			p.g.mu.Unlock()
			check()
		}
		idle := func(rt *rapid.T) *proc {
			var ps []*proc
			for _, p := range procs {
				if !p.busy {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				rt.Skip("every process is paused")
			}
			return rapid.SampledFrom(ps).Draw(rt, "process")
		}
		pausedProc := func(rt *rapid.T) *proc {
			var ps []*proc
			for _, p := range procs {
				if p.busy {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				rt.Skip("no process is paused")
			}
			return rapid.SampledFrom(ps).Draw(rt, "paused process")
		}

		rt.Repeat(map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				p := idle(rt)
				writes++
				tok := fmt.Sprintf("w%d", writes)
				idx := rapid.SliceOfNDistinct(rapid.IntRange(0, len(modelRows)-1), 1, len(modelRows), rapid.ID[int]).Draw(rt, "rows")
				var muts []store.Mutation
				for _, i := range idx {
					r := modelRows[i]
					mut := store.Mutation{Table: r.table, Row: []byte(r.key), Family: rapid.SampledFrom([]string{"f", "g"}).Draw(rt, "family")}
					switch rapid.IntRange(0, 4).Draw(rt, "kind") {
					case 0:
						mut.Kind = store.DeleteRow
					case 1:
						mut.Kind, mut.Qualifier = store.DeleteCell, []byte(rapid.SampledFrom([]string{"q", "r"}).Draw(rt, "qualifier"))
					case 2:
						mut.Kind = store.DeleteFamily // in the intent of a multi-row write, replayed by whoever finishes it
					default:
						mut.Kind, mut.Qualifier, mut.Value = store.SetCell, []byte(rapid.SampledFrom([]string{"q", "r"}).Draw(rt, "qualifier")), []byte(tok)
					}
					muts = append(muts, mut)
				}
				last := modelRows[idx[len(idx)-1]]
				muts = append(muts, store.Mutation{Kind: store.SetCell, Table: last.table, Row: []byte(last.key), Family: "f", Qualifier: []byte("tok"), Value: []byte(tok)})
				faults := map[int]int{}
				for range rapid.IntRange(0, 2).Draw(rt, "faults") {
					faults[rapid.IntRange(1, 12).Draw(rt, "fault at")] = rapid.IntRange(failBefore, failAfter).Draw(rt, "fault kind")
				}
				pauseAt := rapid.IntRange(0, 12).Draw(rt, "pause at")
				// A guarded write decides on a row as the model has it now
				// (what a read would return): at its commit the row must
				// still be so, whether or not the batch writes it.
				var guard *store.Guard
				if rapid.IntRange(0, 2).Draw(rt, "guarded") == 0 {
					gr := modelRows[rapid.IntRange(0, len(modelRows)-1).Draw(rt, "guard row")]
					k := gr.table + "/" + gr.key
					want := m.row(k)
					m.mu.Lock()
					m.guards[tok] = guardExpect{k, want}
					m.mu.Unlock()
					guard = &store.Guard{Table: gr.table, Row: []byte(gr.key), Holds: func(cells []store.Cell) bool {
						return formatRow(store.Row{Cells: cells}) == want
					}}
				}
				p.g.mu.Lock()
				p.g.calls, p.g.faults, p.g.pauseAt = 0, faults, pauseAt
				p.g.mu.Unlock()
				p.start(ctx, tok, guard, muts)
				if p.ended {
					finish(p)
				}
			},
			"resume": func(rt *rapid.T) {
				p := pausedProc(rt)
				p.release()
				finish(p)
			},
			"cancel": func(rt *rapid.T) {
				p := pausedProc(rt)
				p.cancel()
				p.release()
				finish(p)
			},
			"kill": func(rt *rapid.T) {
				i := rapid.IntRange(0, len(procs)-1).Draw(rt, "process")
				p := procs[i]
				p.g.mu.Lock()
				p.g.dead = true
				p.g.mu.Unlock()
				if p.busy {
					p.release()
					finish(p)
				}
				procs[i] = newProc()
			},
			"read": func(rt *rapid.T) {
				p := idle(rt)
				r := rapid.SampledFrom(modelRows).Draw(rt, "row")
				got, found, err := p.s.ReadRow(ctx, r.table, []byte(r.key))
				if err != nil {
					rt.Fatalf("ReadRow(%s/%s): %v", r.table, r.key, err)
				}
				want := m.row(r.table + "/" + r.key)
				if g := formatRow(got); g != want || found != (want != "") {
					rt.Fatalf("ReadRow(%s/%s) = %q (found %v), want %q", r.table, r.key, g, found, want)
				}
			},
			"scan": func(rt *rapid.T) {
				p := idle(rt)
				table := rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "table")
				opts := store.ReadOptions{Limit: rapid.IntRange(0, 2).Draw(rt, "limit"), Reverse: rapid.Bool().Draw(rt, "reverse")}
				var got []string
				err := p.s.ReadRows(ctx, table, store.All(), opts, func(r store.Row) bool {
					got = append(got, string(r.Key)+"{"+formatRow(r)+"}")
					return true
				})
				if err != nil {
					rt.Fatalf("ReadRows(%s): %v", table, err)
				}
				var want []string
				for _, r := range modelRows {
					if c := m.row(r.table + "/" + r.key); r.table == table && c != "" {
						want = append(want, r.key+"{"+c+"}")
					}
				}
				if opts.Reverse {
					slices.Reverse(want)
				}
				if opts.Limit > 0 && len(want) > opts.Limit {
					want = want[:opts.Limit]
				}
				if !slices.Equal(got, want) {
					rt.Fatalf("ReadRows(%s, %+v) = %v, want %v", table, opts, got, want)
				}
			},
			"": func(rt *rapid.T) { check() },
		})

		// Finish every write in flight, then repair and compare.
		for _, p := range procs {
			if p.busy {
				p.release()
				finish(p)
			}
		}
		final := New(raw, opts)
		if _, err := final.Repair(ctx, nil); err != nil {
			rt.Fatal(err)
		}
		check()
		for _, r := range modelRows {
			got, _, err := raw.ReadRow(ctx, r.table, []byte(r.key))
			if err != nil {
				rt.Fatal(err)
			}
			if g, want := formatRow(got), m.row(r.table+"/"+r.key); g != want {
				rt.Fatalf("after Repair, raw row %s/%s = %q, want %q (no bookkeeping)", r.table, r.key, g, want)
			}
		}
		n := 0
		if err := raw.ReadRows(ctx, IntentTable, store.All(), store.ReadOptions{}, func(store.Row) bool { n++; return true }); err != nil && !errors.Is(err, store.ErrNoTable) {
			rt.Fatal(err)
		}
		if n > 0 {
			rt.Fatalf("%d intents left after Repair", n)
		}
	})
}
