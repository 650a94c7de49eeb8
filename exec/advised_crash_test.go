//go:build !race

package exec_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/types"

	"github.com/kvschema/kvschema/store/bigtablestore/bttestserver"
	_ "github.com/kvschema/kvschema/store/pebblestore" // pebble: URLs
	"github.com/kvschema/kvschema/store/txnstore"
)

// The crash test runs the writes of the RUBiS workload in a child process
// (this test binary run again with TestCrashChild) against a Pebble store
// and kills it with SIGKILL at random moments. The child appends one line
// to a log, and fsyncs it, after each Exec returns: the logged writes are
// the acknowledged ones. After each kill the parent reopens the store and
// checks that
//   - the copies agree (Verify without a reference);
//   - every acknowledged write is there, read back through the engine, and
//     every value updated is the last acknowledged one or the one of the
//     write in flight;
//   - the store holds exactly the SQLite oracle's data after the
//     acknowledged writes, with or without the write in flight (the only
//     one whose fate is unknown).
//
// Trials run one after the other on the same store, so later trials also
// recover stores that earlier crashes left. KVSCHEMA_CRASH_TRIALS=N runs
// N trials instead of the default (50; 10 with -short), e.g.
//
//	KVSCHEMA_CRASH_TRIALS=1000 go test ./engine -run 'TestCrash$' -timeout 1h
//
// and KVSCHEMA_CRASH_SEED replays a run's write sequences and kill times
// (not the exact moments the kills land).

const (
	crashChildEnv  = "KVSCHEMA_CRASH_CHILD"
	crashTrialsEnv = "KVSCHEMA_CRASH_TRIALS"
	crashSeedEnv   = "KVSCHEMA_CRASH_SEED"
	crashReady     = "KVSCHEMA-CRASH-CHILD-READY"
)

// crashWrites are the RUBiS workload's writes (workload.kvs statements 20,
// 22, 27, 15, 28, 16, 10 and 11) with their weights in the crash workload.
var crashWrites = []struct {
	text   string
	weight int
}{
	{"INSERT INTO bids SET id=?, qty=?, bid=?, date=? AND CONNECT TO item(?), user(?)", 6},
	{"UPDATE items SET nb_of_bids=?, max_bid=? WHERE items.id=?", 4},
	{"UPDATE users SET rating=? WHERE users.id=?", 3},
	{"UPDATE items SET quantity=?, nb_of_bids=?, end_date=? WHERE items.id=?", 1},
	{"INSERT INTO comments SET id=?, rating=?, date=?, comment=? AND CONNECT TO to_user(?), from_user(?), item(?)", 1},
	{"INSERT INTO buynow SET id=?, qty=?, date=? AND CONNECT TO item(?), buyer(?)", 1},
	{"INSERT INTO items SET id=?, name=?, description=?, initial_price=?, quantity=?, reserve_price=?, buy_now=?, nb_of_bids=0, max_bid=0, start_date=?, end_date=? AND CONNECT TO category(?), seller(?)", 1},
	{"INSERT INTO users SET id=?, firstname=?, lastname=?, nickname=?, password=?, email=?, rating=0, balance=0, creation_date=? AND CONNECT TO region(?)", 1},
}

// crashSpec tells the child what to do.
type crashSpec struct {
	URL  string // store URL
	Log  string // acknowledgement log
	Seed uint64 // of the write sequence
	Base int    // first fresh key
	Max  int    // writes before stopping on its own
	// Cancel: some writes run with a context that ends a few milliseconds
	// in, often mid-write. Exec's error says what became of them: nothing
	// (logged as "skipped"), committed (ErrPending: logged "pending",
	// acknowledged), or unknown (ErrAmbiguous: the child stops, that write
	// in flight).
	Cancel bool
}

// crashOp is one write of the sequence: a statement of crashWrites and its
// arguments.
type crashOp struct {
	stmt int
	args []types.Value
}

func (o crashOp) String() string {
	parts := make([]string, len(o.args))
	for i, a := range o.args {
		parts[i] = types.Format(a)
	}
	return fmt.Sprintf("%d(%s)", o.stmt, strings.Join(parts, ", "))
}

// crashSequence returns the write sequence of a seed: the same in the
// child and the parent, since it depends only on the statements' shapes.
// Inserts take fresh keys from base on; links and UPDATE keys are keys of
// the initial data (tinyRUBiS counts), which no write deletes.
func crashSequence(stmts []*exec.Stmt, seed uint64, base int) func() crashOp {
	r := rand.New(rand.NewPCG(seed, 11))
	total := 0
	for _, w := range crashWrites {
		total += w.weight
	}
	next := base
	return func() crashOp {
		x := r.IntN(total)
		k := 0
		for x >= crashWrites[k].weight {
			x -= crashWrites[k].weight
			k++
		}
		w := stmts[k].Write
		var args []types.Value
		put := func(e lang.Expr, v types.Value) {
			if p, ok := e.(*lang.Param); ok {
				for len(args) <= p.Index {
					args = append(args, nil)
				}
				args[p.Index] = v
			}
		}
		existing := func(e *catalog.Entity) types.Value {
			return gen.KeyValue(e.ID().Type, 1+r.IntN(tinyRUBiS(e)))
		}
		for _, a := range w.Set {
			if a.Field.Key {
				put(a.Value, gen.KeyValue(a.Field.Type, next))
				next++
				continue
			}
			put(a.Value, gen.RandomValue(r, a.Field.Type, int(min(a.Field.Cardinality, 1000))))
		}
		for _, l := range w.Links {
			put(l.Value, existing(l.Nav.To))
		}
		for _, p := range w.Preds {
			put(p.Value, existing(w.Entity))
		}
		return crashOp{stmt: k, args: args}
	}
}

func prepareCrashWrites(t testing.TB, en *exec.Engine) []*exec.Stmt {
	t.Helper()
	var out []*exec.Stmt
	for _, w := range crashWrites {
		st, err := en.Prepare(w.text)
		if err != nil {
			t.Fatal(err)
		}
		if st.Write == nil {
			t.Fatalf("%s: not a write", w.text)
		}
		for _, p := range st.Write.Preds {
			if !p.Ref.Field.Key || p.Op != catalog.Eq {
				t.Fatalf("%s: the crash workload expects writes by key", w.text)
			}
		}
		out = append(out, st)
	}
	return out
}

// TestCrashChild is the child process of TestCrash; it does nothing when
// run on its own.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("the child process of TestCrash")
	}
	var spec crashSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, spec.URL)
	if err != nil {
		t.Fatal(err)
	}
	en, err := exec.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	stmts := prepareCrashWrites(t, en)
	logf, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(crashReady)
	next := crashSequence(stmts, spec.Seed, spec.Base)
	cancels := rand.New(rand.NewPCG(spec.Seed, 13))
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < spec.Max && time.Now().Before(deadline); i++ {
		op := next()
		wctx, cancel := ctx, context.CancelFunc(func() {})
		// The write may end by its deadline (gRPC may report it before the
		// context's own timer fires): its error says what became of it, and
		// the parent checks that against the store.
		cancelled := spec.Cancel && cancels.IntN(6) == 0
		if cancelled {
			wctx, cancel = context.WithTimeout(ctx, time.Duration(cancels.IntN(8000))*time.Microsecond)
		}
		_, err := stmts[op.stmt].Exec(wctx, op.args...)
		cancel()
		outcome := ""
		switch {
		case err == nil:
		case cancelled && errors.Is(err, txnstore.ErrPending):
			outcome = " pending"
		case cancelled && errors.Is(err, txnstore.ErrAmbiguous):
			fmt.Printf("write %d %s: outcome unknown (%v): stopping\n", i, op, err)
			return
		case cancelled:
			outcome = " skipped"
		default:
			t.Fatalf("write %d %s: %v", i, op, err)
		}
		// Acknowledged (or known not to have happened): logged and synced
		// before the next write starts.
		if _, err := fmt.Fprintf(logf, "%d %s%s\n", i, op, outcome); err != nil {
			t.Fatal(err)
		}
		if err := logf.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := logf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// readyWriter watches the child's stdout for the ready line.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	seen  bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && bytes.Contains(w.buf.Bytes(), []byte(crashReady)) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestCrash runs on Pebble and on Bigtable (the in-process emulator, which
// the child reaches over TCP): there the engine's multi-row writes go
// through txnstore's intent log, and the checks after a kill hold only if
// the next process finishes (or never shows) the write in flight.
func TestCrash(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs subprocesses and SIGKILL")
	}
	t.Run("pebble", func(t *testing.T) {
		testCrash(t, "pebble:"+filepath.Join(t.TempDir(), "db"), 50)
	})
	t.Run("bigtable", func(t *testing.T) {
		addr, err := bttestserver.Addr()
		if err != nil {
			t.Fatal(err)
		}
		// A write cut short before its commit holds its rows until it is
		// aborted: after a short lock timeout, so that the next child
		// goes on soon.
		testCrash(t, fmt.Sprintf("bigtable://test/%s?emulator=%s&lock_timeout=100ms", bttestserver.Instance(), addr), 40)
	})
}

func testCrash(t *testing.T, url string, trials int) {
	if testing.Short() {
		trials = min(trials, 10)
	}
	if s := os.Getenv(crashTrialsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", crashTrialsEnv, s)
		}
		trials = n
	}
	ctx := context.Background()
	or := deployCrashStore(t, ctx, url)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
	}
	t.Logf("%s=%d (the write sequences and kill times derive from it)", crashSeedEnv, seed)
	r := rand.New(rand.NewPCG(seed, 1))
	logs := t.TempDir()
	var acked, landed, early, readBack, rolledForward int
	var outcomes crashOutcomes
	start := time.Now()
	for trial := 0; trial < trials; trial++ {
		spec := crashSpec{URL: url, Log: filepath.Join(logs, fmt.Sprintf("ack%d.log", trial)), Seed: seed + uint64(trial), Base: 100_000 * (trial + 1), Max: 50_000,
			Cancel: strings.HasPrefix(url, "bigtable:")}
		// Most kills land while the child writes, a few while it opens
		// (and recovers) the store.
		var delay time.Duration
		waitReady := r.IntN(10) != 0
		switch {
		case !waitReady:
			delay = time.Duration(r.IntN(60)) * time.Millisecond
		case r.IntN(2) == 0:
			delay = time.Duration(r.IntN(20_000)) * time.Microsecond
		default:
			delay = 20*time.Millisecond + time.Duration(r.IntN(180))*time.Millisecond
		}
		out := runCrashChild(t, spec, waitReady, delay)
		n, inFlightLanded := afterCrash(t, ctx, spec, or, out, &readBack, &rolledForward, &outcomes)
		acked += n
		if !waitReady {
			early++
		}
		if inFlightLanded {
			landed++
		}
		if t.Failed() {
			t.Fatalf("trial %d (write sequence seed %d, killed %v after the child %s): %d acknowledged writes", trial, spec.Seed, delay, map[bool]string{true: "was ready", false: "started"}[waitReady], n)
		}
	}
	t.Logf("%d trials in %v: %d acknowledged writes (%d rows and fields read back); %d trials killed while opening the store; in %d trials the write in flight landed; %d unfinished multi-row writes rolled forward",
		trials, time.Since(start).Round(time.Millisecond), acked, readBack, early, landed, rolledForward)
	if spec := strings.HasPrefix(url, "bigtable:"); spec {
		t.Logf("writes cancelled mid-way: %d never happened, %d committed and finished by others, %d of unknown outcome (the child stopped there)", outcomes.skipped, outcomes.pending, outcomes.ambiguous)
	}
	if acked == 0 || readBack == 0 {
		t.Fatal("no write was acknowledged: the test checked nothing")
	}
}

// deployCrashStore advises the 36-statement RUBiS workload (mix bidding,
// unlimited budget), deploys the schema in the store at url, loads tiny
// RUBiS data and returns the oracle holding the same data.
func deployCrashStore(t *testing.T, ctx context.Context, url string) *oracle.Oracle {
	t.Helper()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, d := deployCrashStoreOn(t, ctx, st)
	return oracleOf(t, m, d)
}

// deployCrashStoreOn deploys and loads st as deployCrashStore does and
// returns the engine's model and the data loaded.
func deployCrashStoreOn(t *testing.T, ctx context.Context, st store.Store) (*catalog.Model, *gen.Data) {
	t.Helper()
	msrc, ddl := advisedRUBiS(t, "workload.kvs", 0)
	en, err := exec.Deploy(ctx, st, "model.kvs", msrc, "schema.kvs", []byte(ddl), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(en.Model(), tinyRUBiS, 1, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "crash"}); err != nil {
		t.Fatal(err)
	}
	return en.Model(), d
}

// oracleOf returns an oracle of model m holding the data d, closed when
// the test ends.
func oracleOf(t *testing.T, m *catalog.Model, d *gen.Data) *oracle.Oracle {
	t.Helper()
	or, err := oracle.NewOracle(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { or.DB.Close() })
	for _, e := range d.Order {
		for _, row := range d.Rows[e] {
			if err := or.Insert(e, row); err != nil {
				t.Fatal(err)
			}
		}
	}
	return or
}

// runCrashChild starts the child, kills it delay after it is ready (or
// after it started, if !waitReady) and returns its output.
func runCrashChild(t *testing.T, spec crashSpec, waitReady bool, delay time.Duration) string {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	stdout := &readyWriter{ready: make(chan struct{})}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	var werr error
	if waitReady {
		select {
		case <-stdout.ready:
		case werr = <-done:
			exited = true
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("child not ready after 60s:\n%s%s", stdout, &stderr)
		}
	}
	if !exited {
		select {
		case <-time.After(delay):
			_ = cmd.Process.Kill()
			werr = <-done
		case werr = <-done:
		}
	}
	var ee *osexec.ExitError
	switch {
	case werr == nil:
		// Finished before the kill.
	case errors.As(werr, &ee) && !ee.Exited():
		// Killed.
	default:
		t.Fatalf("child failed: %v\n%s%s", werr, stdout, &stderr)
	}
	return stdout.String() + stderr.String()
}

// afterCrash reopens the store after a kill, checks it (see
// checkCrashTrial) and returns the number of acknowledged writes and
// whether the write in flight landed.
// crashOutcomes count what became of the writes cancelled mid-way.
type crashOutcomes struct{ skipped, pending, ambiguous int }

func afterCrash(t *testing.T, ctx context.Context, spec crashSpec, or *oracle.Oracle, childOut string, readBack, rolledForward *int, outcomes *crashOutcomes) (int, bool) {
	t.Helper()
	st, err := store.Open(ctx, spec.URL)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer st.Close()
	en, err := exec.Open(ctx, st)
	if err != nil {
		t.Fatalf("exec.Open after the kill: %v", err)
	}
	stmts := prepareCrashWrites(t, en)
	ops, n := readAcks(t, spec, stmts, childOut, outcomes)
	landed := checkCrashTrial(t, ctx, en, or, stmts, ops, n, readBack)
	if ts, ok := st.(*txnstore.Store); ok {
		*rolledForward += int(ts.RolledForward())
	}
	return n, landed
}

// readAcks reads the child's log, checks it against the write sequence and
// returns the writes that happened (acknowledged, or committed though
// cancelled), then the write perhaps in flight, and the number that
// happened. Writes logged as skipped (cancelled before their commit) are
// left out.
func readAcks(t *testing.T, spec crashSpec, stmts []*exec.Stmt, childOut string, outcomes *crashOutcomes) ([]crashOp, int) {
	t.Helper()
	raw, err := os.ReadFile(spec.Log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	// A kill can only cut the line being written: drop an unfinished one.
	text := string(raw)
	if i := strings.LastIndexByte(text, '\n'); i+1 < len(text) {
		text = text[:i+1]
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	// The parent regenerates the sequence with its own prepared statements.
	next := crashSequence(stmts, spec.Seed, spec.Base)
	var ops []crashOp
	for i, l := range lines {
		op := next()
		want := fmt.Sprintf("%d %s", i, op)
		switch l {
		case want:
		case want + " pending":
			outcomes.pending++
		case want + " skipped":
			outcomes.skipped++
			continue
		default:
			t.Fatalf("log line %d: %q, want %q\nchild output:\n%s", i+1, l, want, childOut)
		}
		ops = append(ops, op)
	}
	if strings.Contains(childOut, "outcome unknown") {
		outcomes.ambiguous++
	}
	return append(ops, next()), len(ops)
}

// checkCrashTrial reopens the store after a kill and checks it; ops are the
// acknowledged writes then the one that was perhaps in flight. It applies
// the writes that landed to the oracle and reports whether the one in
// flight did.
func checkCrashTrial(t *testing.T, ctx context.Context, en *exec.Engine, or *oracle.Oracle, stmts []*exec.Stmt, ops []crashOp, acked int, checked *int) (inFlightLanded bool) {
	t.Helper()
	rep, err := en.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Errorf("copies disagree after the kill:\n%s", rep)
		return false
	}
	// The oracle after the acknowledged writes; then with the write in
	// flight if the store is not the oracle without it.
	for _, op := range ops[:acked] {
		if err := or.Write(stmts[op.stmt].Write, op.args); err != nil {
			t.Fatalf("oracle: %s: %v", op, err)
		}
	}
	without, err := en.Verify(ctx, exec.VerifyOptions{Reference: oracleDataset(t, en, or)})
	if err != nil {
		t.Fatal(err)
	}
	if !without.Clean() {
		op := ops[acked]
		if err := or.Write(stmts[op.stmt].Write, op.args); err != nil {
			t.Fatalf("oracle: %s: %v", op, err)
		}
		with, err := en.Verify(ctx, exec.VerifyOptions{Reference: oracleDataset(t, en, or)})
		if err != nil {
			t.Fatal(err)
		}
		if !with.Clean() {
			t.Errorf("the store is neither the acknowledged writes' state nor that state plus the write in flight %s\nwithout it:\n%s\nwith it:\n%s", op, without, with)
			return false
		}
		inFlightLanded = true
	}
	*checked += checkAcknowledged(t, ctx, en, stmts, ops, acked)
	return inFlightLanded
}

// oracleDataset is the oracle's data as a reference for Verify.
func oracleDataset(t *testing.T, en *exec.Engine, or *oracle.Oracle) *exec.Dataset {
	t.Helper()
	ref := exec.NewDataset(en.Model())
	for _, e := range en.Model().Entities {
		rows, err := or.Rows(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			ref.Add(e, row)
		}
	}
	return ref
}

// checkAcknowledged reads the acknowledged writes back through queries of
// the workload: each inserted bid, item and user is there with the values
// written, and each field an UPDATE set holds the last acknowledged value
// or the value the write in flight set.
func checkAcknowledged(t *testing.T, ctx context.Context, en *exec.Engine, stmts []*exec.Stmt, ops []crashOp, acked int) (checked int) {
	t.Helper()
	prep := func(text string) *exec.Stmt {
		st, err := en.Prepare(text)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	byEntity := map[string]*exec.Stmt{
		"bids":  prep("SELECT bids.* FROM items.bids WHERE items.id = ?"), // workload 6
		"items": prep("SELECT items.* FROM items WHERE items.id = ?"),     // workload 5
		"users": prep("SELECT users.* FROM users WHERE users.id = ?"),     // workload 8
	}
	type fieldKey struct {
		entity, key, field string
	}
	last := map[fieldKey]types.Value{}
	inFlight := map[fieldKey]types.Value{}
	keys := map[fieldKey]types.Value{}
	type insert struct {
		w    *catalog.Write
		args []types.Value
	}
	var inserts []insert
	for i, op := range ops {
		w := stmts[op.stmt].Write
		if w.Kind == catalog.Insert {
			if i < acked && byEntity[w.Entity.Name] != nil {
				inserts = append(inserts, insert{w, op.args})
			}
			continue
		}
		kv := mustValue(t, w.Preds[0].Value, op.args)
		key := types.Format(kv)
		for _, a := range w.Set {
			k := fieldKey{w.Entity.Name, key, a.Field.Name}
			keys[k] = kv
			v := mustValue(t, a.Value, op.args)
			if i < acked {
				last[k] = v
			} else {
				inFlight[k] = v
			}
		}
	}
	// The row of entity e with key k, read by its query.
	lookup := func(e *catalog.Entity, qargs []types.Value, key types.Value) map[string]types.Value {
		st := byEntity[e.Name]
		res, err := st.Query(ctx, qargs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Values() {
			got := map[string]types.Value{}
			for j, r := range st.Resolved.Select {
				if st.Resolved.Graph.Nodes[r.Node].Entity == e {
					got[r.Field.Name] = row[j]
				}
			}
			if types.Compare(got[e.ID().Name], key) == 0 {
				return got
			}
		}
		return nil
	}
	for _, in := range inserts {
		var key types.Value
		qargs := []types.Value{nil}
		for _, a := range in.w.Set {
			if a.Field.Key {
				key = mustValue(t, a.Value, in.args)
				qargs[0] = key
			}
		}
		if in.w.Entity.Name == "bids" {
			for _, l := range in.w.Links {
				if l.Nav.To.Name == "items" {
					qargs[0] = mustValue(t, l.Value, in.args)
				}
			}
		}
		got := lookup(in.w.Entity, qargs, key)
		if got == nil {
			t.Errorf("acknowledged INSERT INTO %s (key %s) is missing", in.w.Entity.Name, types.Format(key))
			continue
		}
		checked++
		for _, a := range in.w.Set {
			v, err := types.Coerce(mustValue(t, a.Value, in.args), a.Field.Type)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := keys[fieldKey{in.w.Entity.Name, types.Format(key), a.Field.Name}]; ok {
				continue // updated since
			}
			if g, ok := got[a.Field.Name]; ok && types.Compare(g, v) != 0 {
				t.Errorf("acknowledged INSERT INTO %s (key %s): %s is %s, want %s", in.w.Entity.Name, types.Format(key), a.Field.Name, types.Format(g), types.Format(v))
			}
		}
	}
	for k, v := range last {
		e := en.Model().Entity(k.entity)
		key := coerceTo(t, e, e.ID().Name, keys[k])
		got := lookup(e, []types.Value{key}, key)
		if got == nil {
			t.Errorf("%s %s is missing", k.entity, k.key)
			continue
		}
		g, ok := got[k.field]
		if !ok {
			t.Fatalf("%s: the query does not select %s", byEntity[k.entity].Text, k.field)
		}
		checked++
		want := coerceTo(t, e, k.field, v)
		if types.Compare(g, want) == 0 {
			continue
		}
		if f, ok := inFlight[k]; ok && types.Compare(g, coerceTo(t, e, k.field, f)) == 0 {
			continue
		}
		t.Errorf("%s %s: %s is %s, but the last acknowledged UPDATE set %s", k.entity, k.key, k.field, types.Format(g), types.Format(want))
	}
	return checked
}

func mustValue(t *testing.T, x lang.Expr, args []types.Value) types.Value {
	t.Helper()
	switch v := x.(type) {
	case *lang.Literal:
		return v.Value
	case *lang.Param:
		return args[v.Index]
	}
	t.Fatalf("%s is not a value", lang.PrintExpr(x))
	return nil
}

func coerceTo(t *testing.T, e *catalog.Entity, field string, v types.Value) types.Value {
	t.Helper()
	for _, c := range e.Columns {
		if c.Name == field {
			cv, err := types.Coerce(v, c.Type)
			if err != nil {
				t.Fatal(err)
			}
			return cv
		}
	}
	t.Fatalf("%s has no field %s", e.Name, field)
	return nil
}
