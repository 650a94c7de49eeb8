package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/plan"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/faultstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// The concurrency test runs writers on a few hot items and users, so that
// their writes collide, together with readers running every query of the
// workload, then checks that
//   - the copies agree and the store holds exactly the final data (Verify
//     without and with a reference: the initial data, every inserted bid,
//     the final values of the updated fields);
//   - the history is linearizable (porcupine): each item's (nb_of_bids,
//     max_bid, quantity, end_date) and each user's rating is a register
//     that UPDATEs write and every query selecting it reads, whatever
//     column family or index the query's plan reads it from;
//   - every row a query returns satisfies the query's predicates (see
//     TestSIReadChecksPredicate for the deterministic case).
//
// Writes: INSERT INTO bids … AND CONNECT TO item, user (which copies item
// and user fields into several column families), UPDATE items SET
// nb_of_bids, max_bid and SET quantity, nb_of_bids, end_date (fields
// copied into other column families; in the 61-statement workload's
// schema quantity keys a CF and two SIs and end_date clusters a CF),
// UPDATE users SET rating (the partition key of a CF there). Such updates
// move rows from one key to another.
//
// There is no read-modify-write counter: the engine has no transaction
// spanning statements, so SELECT then UPDATE loses increments by design.
// Registers written with unique values (nb_of_bids, max_bid) catch lost
// and misordered updates instead.

// The run's size. KVSCHEMA_CONC_INTENSE=1 runs the intensified test of the
// reliability review instead (16 writers, 8 readers, up to 2000 writes
// each in 6 s), e.g.
//
//	KVSCHEMA_CONC_INTENSE=1 go test ./engine -run TestConcurrentWrites -timeout 30m
var (
	concWriters = 8
	concReaders = 4
	concOps     = 250 // per writer, at most
	concTime    = 1000 * time.Millisecond
	// concCheckTime bounds porcupine's search per register (it is
	// exponential in the worst case; a timeout fails the test).
	concCheckTime = 10 * time.Second
)

func init() {
	if os.Getenv("KVSCHEMA_CONC_INTENSE") != "" {
		concWriters, concReaders, concOps, concTime, concCheckTime = 16, 8, 2000, 6*time.Second, 10*time.Minute
	}
}

// concReadPause paces each reader.
const concReadPause = 3 * time.Millisecond

// concFields are the registers' fields per entity.
var concFields = map[string][]string{
	"items": {"nb_of_bids", "max_bid", "quantity", "end_date"},
	"users": {"rating"},
}

// regState is one register: the formatted values of its entity's
// concFields (unused slots empty).
type regState [4]string

// regInput is a register operation: a write of the fields in mask, or a
// read of them (its output is a regState).
type regInput struct {
	key   string // "items 3"
	write bool
	mask  uint8
	vals  regState
}

var registerModel = porcupine.Model{
	Init: func() interface{} { return regState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s, in := state.(regState), input.(regInput)
		if in.write {
			for i := range s {
				if in.mask&(1<<i) != 0 {
					s[i] = in.vals[i]
				}
			}
			return true, s
		}
		out := output.(regState)
		for i := range s {
			if in.mask&(1<<i) != 0 && s[i] != out[i] {
				return false, state
			}
		}
		return true, state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(regInput)
		if in.write {
			return fmt.Sprintf("write %s %b %v", in.key, in.mask, in.vals)
		}
		return fmt.Sprintf("read %s %b → %v", in.key, in.mask, output)
	},
}

func TestConcurrentWrites(t *testing.T) {
	cases := []struct {
		workload string
		budget   float64
		stores   []string
	}{
		// The paper's setting: rating and quantity are keys of CFs and SIs.
		// txn-rowwise and txn-bigtable go through the intent log (txnstore)
		// over a store that writes rows one at a time (faultstore over
		// memstore) and over the Bigtable emulator.
		{"workload_secondary.kvs", 161e6, []string{"memstore", "pebble", "txn-rowwise", "txn-bigtable"}},
		{"workload.kvs", 0, []string{"pebble", "txn-rowwise"}},
	}
	for _, c := range cases {
		m, w := loadRUBiS(t, c.workload)
		res := advise(t, m, w, advisor.WithSI, c.budget)
		for _, kind := range c.stores {
			budget := "unlimited"
			if c.budget > 0 {
				budget = units.Format(c.budget)
			}
			t.Run(fmt.Sprintf("%s-%s-%s", strings.TrimSuffix(c.workload, ".kvs"), budget, kind), func(t *testing.T) {
				var st store.Store = memstore.New()
				switch kind {
				case "txn-rowwise":
					st = txnstore.New(faultstore.New(memstore.New()))
				case "txn-bigtable":
					if openBigtable == nil {
						t.Skip("the Bigtable emulator is left out of builds with the race detector (see bigtable_test.go)")
					}
					st = txnstore.New(openBigtable(t))
				}
				if kind == "pebble" {
					var err error
					if st, err = store.Open(context.Background(), "pebble:"+filepath.Join(t.TempDir(), "db")+"?sync=false"); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { st.Close() })
				}
				runConcurrency(t, m, w.Statements, res, st, c.workload == "workload_secondary.kvs")
			})
		}
	}
}

// concRun holds one run's shared state.
type concRun struct {
	ctx     context.Context
	en      *exec.Engine
	d       *gen.Data
	start   time.Time
	hotItem []int64
	hotUser []int64
	seq     atomic.Int64 // unique values for writes
	nextBid atomic.Int64

	mu       sync.Mutex
	history  []porcupine.Operation
	bids     [][]types.Value // inserted bid rows
	badPreds []string
	reads    int
}

func (c *concRun) now() int64 { return int64(time.Since(c.start)) }

func (c *concRun) record(ops ...porcupine.Operation) {
	c.mu.Lock()
	c.history = append(c.history, ops...)
	c.mu.Unlock()
}

func runConcurrency(t *testing.T, m *catalog.Model, stmts []*workload.Statement, res *advisor.Result, st store.Store, wantKeyMoves bool) {
	ctx := context.Background()
	en := exec.New(st, m, res.Schema, cost.Cassandra)
	if err := en.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	d := gen.Generate(m, tinyRUBiS, 4, 0)
	if _, err := en.Load(ctx, source(d), exec.LoadOptions{Identity: "concurrency"}); err != nil {
		t.Fatal(err)
	}
	c := &concRun{ctx: ctx, en: en, d: d, start: time.Now()}
	c.nextBid.Store(100_000)
	c.seq.Store(1000)
	// Hot items 1-4, their sellers and a few more users: the bids' users.
	items, users := m.Entity("items"), m.Entity("users")
	sellerCol := colIndex(t, items, "seller")
	hotU := map[int64]bool{}
	for i := 0; i < 4; i++ {
		c.hotItem = append(c.hotItem, d.Rows[items][i][items.Column(items.ID())].(int64))
		if s, ok := d.Rows[items][i][sellerCol].(int64); ok && !hotU[s] {
			hotU[s] = true
			c.hotUser = append(c.hotUser, s)
		}
	}
	for u := int64(1); len(c.hotUser) < 6; u++ {
		if !hotU[u] {
			hotU[u] = true
			c.hotUser = append(c.hotUser, u)
		}
	}
	sort.Slice(c.hotUser, func(i, j int) bool { return c.hotUser[i] < c.hotUser[j] })

	prep := func(text string) *exec.Stmt {
		s, err := en.Prepare(text)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	insBid := prep("INSERT INTO bids SET id=?, qty=?, bid=?, date=? AND CONNECT TO item(?), user(?)")
	updBids := prep("UPDATE items SET nb_of_bids=?, max_bid=? WHERE items.id=?")
	updBuy := prep("UPDATE items SET quantity=?, nb_of_bids=?, end_date=? WHERE items.id=?")
	updRating := prep("UPDATE users SET rating=? WHERE users.id=?")
	moves := 0
	for _, s := range []*exec.Stmt{updBuy, updRating} {
		for _, u := range s.Upkeeps {
			if u.ChangesKey {
				moves++
			}
		}
	}
	t.Logf("%d indexes; %d upkeeps of the UPDATEs move rows (key changes)", len(res.Schema.Indexes), moves)
	if wantKeyMoves && moves == 0 {
		t.Fatal("no UPDATE changes a key: the schema does not exercise key-moving updates")
	}
	var queries []*exec.Stmt
	for _, s := range stmts {
		if s.Query != nil {
			queries = append(queries, prep(lang.Print(s.AST)))
		}
	}
	// The initial value of every register, as a write before anything.
	initial := func(e *catalog.Entity) {
		for _, row := range d.Rows[e] {
			var vals regState
			var mask uint8
			for i, f := range concFields[e.Name] {
				vals[i] = types.Format(row[colIndex(t, e, f)])
				mask |= 1 << i
			}
			c.record(porcupine.Operation{ClientId: concWriters + concReaders, Input: regInput{key: regKey(e.Name, row[e.Column(e.ID())]), write: true, mask: mask, vals: vals}, Call: -2, Return: -1})
		}
	}
	initial(items)
	initial(users)

	deadline := time.Now().Add(concTime)
	var writers, readers sync.WaitGroup
	errs := make(chan error, concWriters+concReaders)
	for g := 0; g < concWriters; g++ {
		writers.Add(1)
		go func(g int) {
			defer writers.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for i := 0; i < concOps && time.Now().Before(deadline); i++ {
				var err error
				switch p := r.IntN(100); {
				case p < 35:
					err = c.insertBid(r, insBid)
				case p < 65:
					seq := c.seq.Add(1)
					err = c.update(g, updBids, "items", 0b0011, []types.Value{seq, float64(seq) + 0.5}, c.hotItem[r.IntN(len(c.hotItem))])
				case p < 75:
					seq := c.seq.Add(1)
					end := time.Date(2026, time.Month(1+r.IntN(3)*4), 1, 0, 0, 0, 0, time.UTC)
					// quantity, nb_of_bids, end_date: register slots 2, 0, 3.
					err = c.update(g, updBuy, "items", 0b1101, []types.Value{int64(r.IntN(3)), seq, end}, c.hotItem[r.IntN(len(c.hotItem))])
				default:
					err = c.update(g, updRating, "users", 0b0001, []types.Value{int64(r.IntN(3))}, c.hotUser[r.IntN(len(c.hotUser))])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	// Readers run until the last writer is done.
	var stop atomic.Bool
	for g := 0; g < concReaders; g++ {
		readers.Add(1)
		go func(g int) {
			defer readers.Done()
			r := rand.New(rand.NewPCG(uint64(g), 77))
			for !stop.Load() {
				// Paced, so that the histories stay small enough to check.
				time.Sleep(concReadPause)
				q := queries[r.IntN(len(queries))]
				if err := c.read(concWriters+g, q, c.readArgs(r, q.Resolved)); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	writes := 0
	for _, op := range c.history {
		if op.Call >= 0 && op.Input.(regInput).write {
			writes++
		}
	}
	t.Logf("%d register writes, %d bids inserted, %d queries run (%d register reads) in %v", writes, len(c.bids), c.reads, len(c.history)-writes-len(d.Rows[items])-len(d.Rows[users]), time.Since(c.start).Round(time.Millisecond))
	if len(c.badPreds) > 0 {
		t.Errorf("%d rows do not satisfy their query's predicates, e.g.:\n%s", len(c.badPreds), strings.Join(c.badPreds[:min(len(c.badPreds), 10)], "\n"))
	}

	// The final state: every register read once more, then the reference.
	final := map[string][]types.Value{}
	finalRead := func(e *catalog.Entity) {
		q := prep("SELECT " + e.Name + ".* FROM " + e.Name + " WHERE " + e.Name + ".id = ?")
		for _, row := range d.Rows[e] {
			k := row[e.Column(e.ID())]
			res, err := q.Query(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 1 {
				t.Fatalf("%s %s: %d rows", e.Name, types.Format(k), len(res.Rows))
			}
			final[regKey(e.Name, k)] = selectedFields(q, e, res.Values()[0], concFields[e.Name])
			if err := c.read(concWriters+concReaders, q, []types.Value{k}); err != nil {
				t.Fatal(err)
			}
		}
	}
	finalRead(items)
	finalRead(users)
	checkLinearizable(t, c.history)

	ref := exec.NewDataset(m)
	for _, e := range m.Entities {
		for _, row := range d.Rows[e] {
			row = append([]types.Value(nil), row...)
			if fv, ok := final[regKey(e.Name, row[e.Column(e.ID())])]; ok {
				for i, f := range concFields[e.Name] {
					row[colIndex(t, e, f)] = fv[i]
				}
			}
			ref.Add(e, row)
		}
	}
	for _, row := range c.bids {
		ref.Add(m.Entity("bids"), row)
	}
	for _, r := range []*exec.Dataset{nil, ref} {
		rep, err := en.Verify(ctx, exec.VerifyOptions{Reference: r})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() {
			t.Fatalf("verify (reference %v) after the concurrent writes:\n%s", r != nil, rep)
		}
	}
}

func regKey(entity string, key types.Value) string { return entity + " " + types.Format(key) }

func colIndex(t testing.TB, e *catalog.Entity, name string) int {
	for i, c := range e.Columns {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("%s has no column %s", e.Name, name)
	return -1
}

// selectedFields returns the values of fields of entity e (the query's
// root) in a result row.
func selectedFields(q *exec.Stmt, e *catalog.Entity, row []types.Value, fields []string) []types.Value {
	out := make([]types.Value, len(fields))
	for j, r := range q.Resolved.Select {
		if r.Node != 0 {
			continue
		}
		for i, f := range fields {
			if r.Field.Name == f {
				out[i] = row[j]
			}
		}
	}
	return out
}

func (c *concRun) insertBid(r *rand.Rand, st *exec.Stmt) error {
	id := c.nextBid.Add(1)
	item := c.hotItem[r.IntN(len(c.hotItem))]
	user := c.hotUser[r.IntN(len(c.hotUser))]
	qty := int64(1 + r.IntN(5))
	bid := float64(r.IntN(1000)) / 4
	date := time.Date(2026, 1, 1+r.IntN(300), 0, 0, 0, 0, time.UTC)
	if _, err := st.Exec(c.ctx, id, qty, bid, date, item, user); err != nil {
		return err
	}
	bids := c.en.Model().Entity("bids")
	row := make([]types.Value, len(bids.Columns))
	for i, col := range bids.Columns {
		row[i] = map[string]types.Value{"id": id, "qty": qty, "bid": bid, "date": date, "item": item, "user": user}[col.Name]
	}
	c.mu.Lock()
	c.bids = append(c.bids, row)
	c.mu.Unlock()
	return nil
}

// update runs an UPDATE … WHERE e.id = key whose SET values, in order,
// are the register slots in mask in this order: for UPDATE items SET
// quantity, nb_of_bids, end_date the mask 0b1101 with vals (quantity,
// nb_of_bids, end_date) — slots 2, 0, 3.
func (c *concRun) update(client int, st *exec.Stmt, entity string, mask uint8, vals []types.Value, key int64) error {
	var in regInput
	in.key, in.write, in.mask = regKey(entity, key), true, mask
	fields := concFields[entity]
	for k, as := range st.Write.Set {
		v, err := types.Coerce(vals[k], as.Field.Type)
		if err != nil {
			return err
		}
		slot := -1
		for i, f := range fields {
			if f == as.Field.Name {
				slot = i
			}
		}
		if slot < 0 || mask&(1<<slot) == 0 {
			return fmt.Errorf("%s: %s is not in the mask %b", st.Text, as.Field.Name, mask)
		}
		in.vals[slot] = types.Format(v)
	}
	call := c.now()
	if _, err := st.Exec(c.ctx, append(append([]types.Value(nil), vals...), key)...); err != nil {
		return err
	}
	c.record(porcupine.Operation{ClientId: client, Input: in, Call: call, Return: c.now()})
	return nil
}

// readArgs draws a query's arguments: mostly the hot items and users for
// their keys, the ratings the writers set, early dates for ranges (so that
// they match), values of the generated data otherwise.
func (c *concRun) readArgs(r *rand.Rand, q *catalog.Query) []types.Value {
	params := q.Params()
	args := make([]types.Value, len(params))
	for i, p := range params {
		if p == nil {
			continue
		}
		e := q.Graph.Nodes[p.Ref.Node].Entity
		f := p.Ref.Field
		var v types.Value
		switch {
		case f.Key && e.Name == "items" && r.IntN(5) != 0:
			v = c.hotItem[r.IntN(len(c.hotItem))]
		case f.Key && e.Name == "users" && r.IntN(5) != 0:
			v = c.hotUser[r.IntN(len(c.hotUser))]
		case f.Key:
			v = gen.KeyValue(f.Type, 1+r.IntN(len(c.d.Rows[e])))
		case e.Name == "users" && f.Name == "rating", e.Name == "items" && f.Name == "quantity":
			// The values the writers set, and one they do not.
			v = int64(r.IntN(4) - 1)
		case p.Op.IsRange() && f.Type == types.Timestamp:
			v = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		default:
			v = gen.RandomValue(r, f.Type, int(min(f.Cardinality, 8)))
		}
		args[i] = v
	}
	return args
}

// read runs a query and records what it saw of the registers: per row and
// per node whose entity has registers, the fields it selects, those one
// plan step read together (one store row, one moment), the others apart
// (each step reads committed data of its own moment).
func (c *concRun) read(client int, st *exec.Stmt, args []types.Value) error {
	q := st.Resolved
	call := c.now()
	res, err := st.Query(c.ctx, args...)
	if err != nil {
		return fmt.Errorf("%s %v: %w", st.Text, args, err)
	}
	ret := c.now()
	vals, err := bindArgs(q, args)
	if err != nil {
		return err
	}
	var ops []porcupine.Operation
	var bad []string
	// Rows repeating a register's values are one observation: identical
	// concurrent reads only slow the checker down.
	type obs struct {
		key  string
		mask uint8
		seen regState
	}
	dup := map[obs]bool{}
	observe := func(rk string, mask uint8, seen regState) {
		for i := range seen {
			if mask&(1<<i) == 0 {
				seen[i] = ""
			}
		}
		if o := (obs{rk, mask, seen}); !dup[o] {
			dup[o] = true
			ops = append(ops, porcupine.Operation{ClientId: client, Input: regInput{key: rk, mask: mask}, Output: seen, Call: call, Return: ret})
		}
	}
	src := fieldSources(st.Plan)
	for _, row := range res.Values() {
		for k, p := range q.Preds {
			for j, r := range q.Select {
				if r == p.Ref && !satisfies(row[j], p.Op, vals[k]) {
					bad = append(bad, fmt.Sprintf("%s %v: row %v has %s = %s", st.Text, fmtValues(args), fmtValues(row), q.Graph.DescribeRef(r), types.Format(row[j])))
				}
			}
		}
		for n, nd := range q.Graph.Nodes {
			fields := concFields[nd.Entity.Name]
			if fields == nil {
				continue
			}
			var key types.Value
			var seen regState
			var mask uint8
			for j, r := range q.Select {
				if r.Node != n {
					continue
				}
				if r.Field.Key {
					key = row[j]
				}
				for i, f := range fields {
					if r.Field.Name == f {
						seen[i] = types.Format(row[j])
						mask |= 1 << i
					}
				}
			}
			if key == nil {
				for k, p := range q.Preds {
					if p.Ref.Node == n && p.Ref.Field.Key && p.Op == catalog.Eq {
						key = vals[k]
					}
				}
			}
			if key == nil || mask == 0 {
				continue
			}
			// The fields one step read come from one store row: one
			// observation per step; a field of unknown origin on its own.
			rk := regKey(nd.Entity.Name, key)
			groups := map[int]uint8{}
			for i, f := range fields {
				if mask&(1<<i) == 0 {
					continue
				}
				if s, ok := src[catalog.FieldRef{Node: n, Field: nd.Entity.Field(f)}]; ok && s >= 0 {
					groups[s] |= 1 << i
				} else {
					observe(rk, 1<<i, seen)
				}
			}
			for _, m := range groups {
				observe(rk, m, seen)
			}
		}
	}
	c.mu.Lock()
	c.history = append(c.history, ops...)
	c.badPreds = append(c.badPreds, bad...)
	c.reads++
	c.mu.Unlock()
	return nil
}

// fieldSources returns, for the query fields the plan's steps read, the
// last step that reads each (later steps overwrite earlier values), or -1
// when it is not known: an SI step's table may hold more attributes than
// its index lists.
func fieldSources(p *plan.Query) map[catalog.FieldRef]int {
	src := map[catalog.FieldRef]int{}
	for s, l := range p.Steps {
		for _, a := range l.Index.Attrs() {
			if a.Node < len(l.Map) && l.Map[a.Node] >= 0 {
				src[catalog.FieldRef{Node: l.Map[a.Node], Field: a.Field}] = s
			}
		}
		if l.Index.Kind != catalog.SI {
			continue
		}
		for _, qn := range l.Map {
			if qn < 0 || qn >= len(p.Query.Graph.Nodes) {
				continue
			}
			for _, f := range p.Query.Graph.Nodes[qn].Entity.Fields {
				if r := (catalog.FieldRef{Node: qn, Field: f}); src[r] != s {
					src[r] = -1
				}
			}
		}
	}
	return src
}

func bindArgs(q *catalog.Query, args []types.Value) ([]types.Value, error) {
	vals := make([]types.Value, len(q.Preds))
	for i, p := range q.Preds {
		var v types.Value
		switch x := p.Value.(type) {
		case *lang.Param:
			v = args[x.Index]
		case *lang.Literal:
			v = x.Value
		}
		if v == nil {
			continue
		}
		cv, err := types.Coerce(v, p.Ref.Field.Type)
		if err != nil {
			return nil, err
		}
		vals[i] = cv
	}
	return vals, nil
}

func satisfies(v types.Value, op catalog.Op, arg types.Value) bool {
	if v == nil || arg == nil {
		return false
	}
	c := types.Compare(v, arg)
	switch op {
	case catalog.Eq:
		return c == 0
	case catalog.Ne:
		return c != 0
	case catalog.Lt:
		return c < 0
	case catalog.Le:
		return c <= 0
	case catalog.Gt:
		return c > 0
	case catalog.Ge:
		return c >= 0
	}
	return false
}

func fmtValues(vs []types.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = types.Format(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// checkLinearizable checks each register's history on its own and prints
// the operations of one that is not linearizable.
func checkLinearizable(t *testing.T, history []porcupine.Operation) {
	t.Helper()
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(regInput).key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	start := time.Now()
	for _, k := range keys {
		ops := byKey[k]
		switch porcupine.CheckOperationsTimeout(registerModel, ops, concCheckTime) {
		case porcupine.Ok:
		case porcupine.Unknown:
			t.Fatalf("register %s: the linearizability check timed out (%d operations)", k, len(ops))
		default:
			sort.Slice(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
			var b strings.Builder
			for _, op := range ops {
				fmt.Fprintf(&b, "  [%d, %d] client %d: %s\n", op.Call, op.Return, op.ClientId, registerModel.DescribeOperation(op.Input, op.Output))
			}
			t.Fatalf("register %s: not linearizable (%d operations):\n%s", k, len(ops), b.String())
		}
	}
	most := 0
	for _, ops := range byKey {
		most = max(most, len(ops))
	}
	t.Logf("%d registers, %d operations (at most %d on one): linearizable (checked in %v)", len(keys), len(history), most, time.Since(start).Round(time.Millisecond))
}

// hookStore calls after once a read of table returned.
type hookStore struct {
	store.Store
	mu    sync.Mutex
	table string
	after func()
}

func (h *hookStore) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	err := h.Store.ReadRows(ctx, table, rs, opts, fn)
	h.mu.Lock()
	var after func()
	if table == h.table {
		after, h.after = h.after, nil
	}
	h.mu.Unlock()
	if after != nil {
		after()
	}
	return err
}

// TestSIReadChecksPredicate: an UPDATE that changes an indexed value
// between a query's secondary-index lookup and its read of the base rows
// must not make the query return a row that fails its WHERE clause. The
// UPDATE runs, deterministically, right after the index lookup.
func TestSIReadChecksPredicate(t *testing.T) {
	ctx := context.Background()
	const modelSrc = `DEFINE RELATION items ROWS 1000 { id BIGINT KEY, quantity BIGINT CARDINALITY 10, name STRING CARDINALITY 1000 };`
	const schemaSrc = modelSrc + `
DEFINE COLUMN FAMILY items_by_id FOR items { PARTITION KEY (items.id), VALUES (items.quantity, items.name) };
DEFINE SECONDARY INDEX items_by_quantity ON items_by_id (items.quantity);`
	// Without local indexes (tablesOnly), as on Bigtable: the hook sees
	// the SI table's read and the base's, two calls.
	hs := &hookStore{Store: tablesOnly{memstore.New()}}
	en, err := exec.Deploy(ctx, hs, "model.kvs", []byte(modelSrc), "schema.kvs", []byte(schemaSrc), cost.Cassandra)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := en.Prepare("INSERT INTO items SET id=?, quantity=?, name=?")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		if _, err := ins.Exec(ctx, i, int64(1), fmt.Sprint("item ", i)); err != nil {
			t.Fatal(err)
		}
	}
	upd, err := en.Prepare("UPDATE items SET quantity=? WHERE items.id=?")
	if err != nil {
		t.Fatal(err)
	}
	q, err := en.Prepare("SELECT items.id, items.quantity, items.name FROM items WHERE items.quantity = ?")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Plan.Steps) != 2 || q.Plan.Steps[0].Index.Name != "items_by_quantity" {
		t.Fatalf("want the plan SI lookup, then base rows:\n%s", q.Explain())
	}
	// Item 2 leaves quantity 1 between the two steps.
	hs.mu.Lock()
	hs.table, hs.after = "items_by_quantity", func() {
		if _, err := upd.Exec(ctx, int64(2), int64(2)); err != nil {
			t.Error(err)
		}
	}
	hs.mu.Unlock()
	res, err := q.Query(ctx, int64(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Values() {
		if types.Compare(row[1], int64(1)) != 0 {
			t.Errorf("SELECT … WHERE items.quantity = 1 returned %v\n%s", fmtValues(row), q.Explain())
		}
	}
}
