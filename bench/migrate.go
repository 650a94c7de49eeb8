package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/bench/chart"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
	"github.com/kvschema/kvschema/workload"
)

// A migration's effect on the application (kvschema bench-migrate): a
// store loaded with one advised schema takes a paced stream of the
// workload's writes from a few goroutines while kvschema.DB.Migrate moves
// it to another schema. Every write's start and latency are recorded, and
// cut by the migration's phases; the report sets each phase's median
// against the one before the migration, and the backfill's throughput
// against the bulk load's.

// MigrationPhases names the phases of a migration timeline, in order:
// before the migration, its steps (kvschema.MigrateEvent's phases: the
// count of the tuples the new indexes hold, a backfill and its catch-up
// as one, the final catalog change with the drop), and after it.
var MigrationPhases = []string{"before", "count", "add", "backfill+catch-up", "verify", "switch", "drop", "after"}

// MigrationConfig is one run of MigrationTimeline.
type MigrationConfig struct {
	// ModelFile and ModelSrc are the model; with ModelSrc nil each schema
	// file is its own model (advise --format ddl writes the model's
	// DEFINE RELATIONs into the schema).
	ModelFile string
	ModelSrc  []byte
	// From is the schema deployed and loaded first; To the one the
	// migration goes to (advised DDL: DEFINE COLUMN FAMILY / SECONDARY
	// INDEX).
	FromFile, ToFile string
	FromSrc, ToSrc   []byte
	// Profile the runtime plans with; nil: the one each schema file
	// records (advise --format ddl), else pebble's.
	Profile *cost.Profile
	// Workload is the workload, parsed against any build of the model; nil
	// parses WorkloadSrc (named WorkloadFile) against the deployed model.
	Workload     *workload.Workload
	WorkloadFile string
	WorkloadSrc  []byte
	// Mix picks the writes the load generator runs: the statements that
	// write (INSERT, UPDATE, CONNECT, DISCONNECT; not DELETE, which would
	// empty the sample the parameters are drawn from) with a weight in it,
	// drawn by weight. Default: the workload's first mix.
	Mix string
	// Generator is GenerateRUBiS or GenerateModel (the default), at Scale
	// with Seed (also the parameter sampling's).
	Generator string
	Scale     float64
	Seed      uint64
	// Writers is the goroutines that write (default 2); Rate the
	// statements a second they start together (default 500), paced: a
	// statement starts at its slot, or at once if its writer is late, and
	// slots a late writer missed are skipped rather than made up in a
	// burst. Latency runs from a statement's start, so it measures the
	// store and not a queue.
	Writers int
	Rate    float64
	// Warmup is how long the writers run before the migration starts,
	// Cooldown after it ends (default 3 s each).
	Warmup, Cooldown time.Duration
	// BackfillRate bounds the rows a second the backfills write and the
	// drops delete (kvschema.MigrateOptions.Rate; 0: no bound).
	BackfillRate float64
	// Dir is where the Pebble store goes (a new directory in it, removed
	// afterwards); "" is the system's temporary directory.
	Dir string
	// Progress receives stage lines; nil is quiet.
	Progress io.Writer
}

// MigrationReport is what MigrationTimeline measured.
type MigrationReport struct {
	Config  MigrationConfig
	Machine string
	Data    string         // where the rows came from
	Counts  map[string]int // rows per entity
	// Statements are the write statements the load generator ran (tags,
	// or the statement's text when it has no tag).
	Statements []string
	// Migration is what Migrate did: the indexes added, dropped and kept,
	// and each backfill's statistics.
	Migration *kvschema.Migration
	// The load: entity rows read, index rows written and the time writing
	// them took (exec.LoadStats.Write); LoadRate is IndexRows over it.
	EntityRows, IndexRows int64
	LoadWrite             time.Duration
	LoadRate              float64
	// The backfills: rows copied plus rows recomputed, over the wall time
	// of the backfill+catch-up phase; BackfillRatio is BackfillRate over
	// LoadRate (NaN when nothing was backfilled).
	BackfillRows  int64
	BackfillTime  time.Duration
	BackfillRate  float64
	BackfillRatio float64
	// Phases are MigrationPhases's spans with the writes that started in
	// each.
	Phases []PhaseResult
	// Writes are every write, in the order they started.
	Writes     []WriteSample
	VerifyRows int // rows verify read after the run
	Took       time.Duration
}

// PhaseResult is one phase of a migration timeline.
type PhaseResult struct {
	Name string
	// Start and End are since the writers started. A phase of the
	// migration runs from the end of the one before (the migration's
	// start, for "add") to its last progress event; Migrate reports
	// most steps when they are done. "drop" ends when Migrate returns.
	Start, End time.Duration
	Writes     int
	P50, P99   time.Duration
	// Ratio is P50 over the "before" phase's, AfterRatio over the "after"
	// phase's (the target schema's writes, no migration running); NaN when
	// either phase has no write.
	Ratio, AfterRatio float64
}

// WriteSample is one write of the load generator.
type WriteSample struct {
	At      time.Duration // its start, since the writers started
	Latency time.Duration
	Tag     string
}

// Phase returns the phase called name (nil if none).
func (r *MigrationReport) Phase(name string) *PhaseResult {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// sampleRowsPerEntity is how many rows per entity the parameters are
// drawn from.
const sampleRowsPerEntity = 1000

func (cfg *MigrationConfig) defaults() error {
	switch {
	case len(cfg.FromSrc) == 0:
		return errors.New("no schema to migrate from")
	case len(cfg.ToSrc) == 0:
		return errors.New("no schema to migrate to")
	case cfg.Workload == nil && len(cfg.WorkloadSrc) == 0:
		return errors.New("no workload: its writes are the load during the migration")
	}
	if cfg.Generator == "" {
		cfg.Generator = GenerateModel
	}
	if cfg.Generator != GenerateModel && cfg.Generator != GenerateRUBiS {
		return fmt.Errorf("unknown generator %q (known: %s, %s)", cfg.Generator, GenerateModel, GenerateRUBiS)
	}
	if !(cfg.Scale > 0) || math.IsInf(cfg.Scale, 0) {
		return fmt.Errorf("scale %v must be > 0", cfg.Scale)
	}
	if cfg.Writers == 0 {
		cfg.Writers = 2
	}
	if cfg.Writers < 0 {
		return fmt.Errorf("writers %d must be > 0", cfg.Writers)
	}
	if cfg.Rate == 0 {
		cfg.Rate = 500
	}
	if !(cfg.Rate > 0) || math.IsInf(cfg.Rate, 0) {
		return fmt.Errorf("rate %v must be a number of statements a second > 0", cfg.Rate)
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = 3 * time.Second
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = 3 * time.Second
	}
	if cfg.Warmup < 0 || cfg.Cooldown < 0 {
		return fmt.Errorf("warmup %v and cooldown %v must be ≥ 0", cfg.Warmup, cfg.Cooldown)
	}
	if cfg.BackfillRate < 0 || math.IsNaN(cfg.BackfillRate) {
		return fmt.Errorf("backfill rate %v must be ≥ 0", cfg.BackfillRate)
	}
	return nil
}

// profileOf is the profile a schema file's plans are made with.
func (cfg *MigrationConfig) profileOf(file string, src []byte) (cost.Profile, error) {
	if cfg.Profile != nil {
		return *cfg.Profile, nil
	}
	_, recorded, err := catalog.AdvisedFor(file, src)
	if err != nil {
		return cost.Profile{}, err
	}
	if recorded != nil {
		return *recorded, nil
	}
	return cost.Builtin[cost.DefaultTarget], nil
}

// model returns the model to go with a schema file.
func (cfg *MigrationConfig) model(schemaFile string, schemaSrc []byte) (string, []byte) {
	if cfg.ModelSrc == nil {
		return schemaFile, schemaSrc
	}
	return cfg.ModelFile, cfg.ModelSrc
}

// writeStmt is one write statement the load generator runs: prepared,
// with its parameter stream (shared by the writers: an INSERT's new keys
// are drawn once).
type writeStmt struct {
	tag    string
	weight float64
	prep   *kvschema.Stmt
	mu     sync.Mutex
	params *stream
}

func (ws *writeStmt) args() ([]any, error) {
	ws.mu.Lock()
	vs, err := ws.params.next()
	ws.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out, nil
}

// pacer hands out the statements' start times, one every interval; a
// writer that comes late starts at once, and the slots it missed are
// skipped, not made up in a burst.
type pacer struct {
	mu    sync.Mutex
	every time.Duration
	next  time.Time
}

func (p *pacer) slot() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.next.Before(now.Add(-p.every)) {
		p.next = now
	}
	t := p.next
	p.next = t.Add(p.every)
	return t
}

// MigrationTimeline measures a migration's effect on the application's
// writes: it deploys cfg's From schema in a new Pebble store (no round
// trip delay), loads the data, starts the writers, lets them run for the
// warmup, migrates to the To schema (kvschema.DB.Migrate) recording when
// each phase ended, lets them run for the cooldown, stops them and
// verifies the store (exec.Engine.Verify on the advised schema). A write
// that fails, a migration that fails, and differences verify finds fail
// the run.
func MigrationTimeline(ctx context.Context, cfg MigrationConfig) (*MigrationReport, error) {
	begin := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "bench-migrate: "+format+"\n", args...)
		}
	}
	fromProf, err := cfg.profileOf(cfg.FromFile, cfg.FromSrc)
	if err != nil {
		return nil, err
	}
	toProf, err := cfg.profileOf(cfg.ToFile, cfg.ToSrc)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.Dir, "kvschema-bench-migrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := pebblestore.Open(filepath.Join(dir, "db"), pebblestore.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	db, err := kvschema.New(ctx, st, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	mf, ms := cfg.model(cfg.FromFile, cfg.FromSrc)
	if _, err := db.Deploy(ctx, mf, ms, cfg.FromFile, cfg.FromSrc, fromProf); err != nil {
		return nil, fmt.Errorf("deploying %s: %w", cfg.FromFile, err)
	}
	en, err := db.Advised(ctx)
	if err != nil {
		return nil, err
	}
	m := en.Model()
	w := cfg.Workload
	if w == nil {
		if w, err = workload.Parse(m, cfg.WorkloadFile, cfg.WorkloadSrc); err != nil {
			return nil, err
		}
	}
	if cfg.Mix == "" {
		cfg.Mix = w.Mixes[0]
	}
	if !w.HasMix(cfg.Mix) {
		return nil, fmt.Errorf("workload %s has no mix %q (its mixes: %s)", cfg.WorkloadFile, cfg.Mix, strings.Join(w.Mixes, ", "))
	}
	rep := &MigrationReport{Config: cfg, Machine: machine()}

	// The load, sampling the rows the writes' parameters come from.
	gen := Config{Generator: cfg.Generator, Scale: cfg.Scale, Seed: cfg.Seed}
	src, err := gen.rowSource(m)
	if err != nil {
		return nil, err
	}
	rep.Data = src.desc
	var d *dataSet
	logf("deploying %s and loading %s", cfg.FromFile, src.desc)
	ls, err := db.Load(ctx, func(yield func(exec.Row) error) error {
		d = &dataSet{src: src, counts: map[string]int{}, samples: map[string][][]types.Value{}, maxKey: map[string]types.Value{}}
		s := newSampler(d, sampleRowsPerEntity, cfg.Seed)
		return src.rows(ctx, func(r exec.Row) error {
			s.add(r.Entity, r.Values)
			return yield(r)
		})
	}, exec.LoadOptions{Identity: src.identity})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	rep.Counts, rep.EntityRows, rep.IndexRows, rep.LoadWrite = d.counts, ls.EntityRows, ls.IndexRows, ls.Write
	rep.LoadRate = float64(ls.IndexRows) / ls.Write.Seconds()
	logf("loaded %d entity rows into %d index rows; writing them took %v (%.0f rows/s)", ls.EntityRows, ls.IndexRows, ls.Write.Round(time.Millisecond), rep.LoadRate)
	if err := st.Compact(ctx); err != nil {
		return nil, err
	}

	// The write statements and their parameters.
	b := &binder{data: d}
	var stmts []*writeStmt
	var total float64
	for _, s := range w.Statements {
		if s.Write == nil || s.Write.Kind == catalog.Delete || s.Weight(cfg.Mix) <= 0 {
			continue
		}
		params, err := b.stream(s, cfg.Seed)
		if err != nil {
			return nil, err
		}
		prep, err := db.Prepare(lang.Print(s.AST))
		if err != nil {
			return nil, fmt.Errorf("statement %s: %w", s.Tag, err)
		}
		tag := s.Tag
		if tag == "" {
			tag = lang.Print(s.AST)
		}
		stmts = append(stmts, &writeStmt{tag: tag, weight: s.Weight(cfg.Mix), prep: prep, params: params})
		total += s.Weight(cfg.Mix)
		rep.Statements = append(rep.Statements, tag)
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("mix %s has no write statement (INSERT, UPDATE, CONNECT) with a weight: nothing to run during the migration", cfg.Mix)
	}
	pick := func(r *rand.Rand) *writeStmt {
		x := r.Float64() * total
		for _, ws := range stmts {
			if x -= ws.weight; x < 0 {
				return ws
			}
		}
		return stmts[len(stmts)-1]
	}

	// The writers.
	var (
		wg      sync.WaitGroup
		stopped = make(chan struct{})
		failed  = make(chan struct{})
		failure atomic.Pointer[error]
		samples = make([][]WriteSample, cfg.Writers)
	)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	pc := &pacer{every: time.Duration(float64(time.Second) / cfg.Rate), next: start}
	fail := func(err error) {
		if failure.CompareAndSwap(nil, &err) {
			close(failed)
			cancel()
		}
	}
	for g := range cfg.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(cfg.Seed, uint64(g)+0x3177))
			timer := time.NewTimer(0)
			defer timer.Stop()
			for {
				due := pc.slot()
				if wait := time.Until(due); wait > 0 {
					timer.Reset(wait)
					select {
					case <-stopped:
						return
					case <-runCtx.Done():
						return
					case <-timer.C:
					}
				}
				select {
				case <-stopped:
					return
				case <-runCtx.Done():
					return
				default:
				}
				ws := pick(r)
				args, err := ws.args()
				if err != nil {
					fail(fmt.Errorf("statement %s: drawing its parameters: %w", ws.tag, err))
					return
				}
				t0 := time.Now()
				_, err = ws.prep.Exec(runCtx, args...)
				lat := time.Since(t0)
				if err != nil {
					if runCtx.Err() != nil && failure.Load() != nil {
						return // another writer failed first
					}
					fail(fmt.Errorf("write %s %v, started %.3fs after the writers: %w", ws.tag, args, t0.Sub(start).Seconds(), err))
					return
				}
				samples[g] = append(samples[g], WriteSample{At: t0.Sub(start), Latency: lat, Tag: ws.tag})
			}
		}()
	}
	stop := func() {
		close(stopped)
		wg.Wait()
	}
	wait := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-failed:
			return *failure.Load()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	logf("%d writers, %g statements/s: %s; warmup %v", cfg.Writers, cfg.Rate, strings.Join(rep.Statements, ", "), cfg.Warmup)
	if err := wait(cfg.Warmup); err != nil {
		stop()
		return nil, fmt.Errorf("before the migration: %w", err)
	}

	// The migration.
	toModelFile, toModelSrc := cfg.model(cfg.ToFile, cfg.ToSrc)
	last := map[string]time.Duration{}
	phaseOf := map[string]string{"count": "count", "add": "add", "backfill": "backfill+catch-up", "catch-up": "backfill+catch-up", "verify": "verify", "switch": "switch", "drop": "drop", "done": "drop"}
	migStart := time.Since(start)
	logf("migrating to %s at %.2fs", cfg.ToFile, migStart.Seconds())
	mig, err := db.Migrate(runCtx, toModelFile, toModelSrc, cfg.ToFile, cfg.ToSrc, toProf, kvschema.MigrateOptions{Rate: cfg.BackfillRate, Progress: func(ev kvschema.MigrateEvent) {
		name := phaseOf[ev.Phase]
		if name == "" {
			return
		}
		// A migration in waves (kvschema.Migration.Waves): the later
		// waves' adds and the earlier ones' verifies and switches are
		// part of building, the last wave's are the phases.
		if ev.Wave > 1 && ev.Phase == "add" || ev.Wave < ev.Waves && (ev.Phase == "verify" || ev.Phase == "switch") {
			name = "backfill+catch-up"
		}
		at := time.Since(start)
		if ev.Waves > 1 && ev.Index == "" && (ev.Phase == "verify" || ev.Phase == "switch") {
			// Where a wave's time goes: its verify and switch.
			state := "begins"
			if ev.Done {
				state = "done"
			}
			logf("wave %d/%d: %s %s at %.2fs", ev.Wave, ev.Waves, ev.Phase, state, at.Seconds())
		}
		if _, seen := last[name]; !seen {
			logf("phase %s at %.2fs", name, at.Seconds())
		}
		last[name] = at
	}})
	migEnd := time.Since(start)
	if err != nil {
		stop()
		if f := failure.Load(); f != nil {
			return nil, fmt.Errorf("during the migration: %w", *f)
		}
		return nil, fmt.Errorf("the migration failed %.2fs after it started: %w", (migEnd - migStart).Seconds(), err)
	}
	if !mig.Changes() {
		stop()
		return nil, fmt.Errorf("%s is the schema %s deploys: the migration has nothing to do", cfg.ToFile, cfg.FromFile)
	}
	rep.Migration = mig
	logf("migration done in %v; cooldown %v", (migEnd - migStart).Round(time.Millisecond), cfg.Cooldown)
	err = wait(cfg.Cooldown)
	end := time.Since(start)
	stop()
	if err != nil {
		return nil, fmt.Errorf("after the migration: %w", err)
	}
	if f := failure.Load(); f != nil {
		return nil, *f
	}
	for _, s := range samples {
		rep.Writes = append(rep.Writes, s...)
	}
	slices.SortStableFunc(rep.Writes, func(a, b WriteSample) int { return cmp.Compare(a.At, b.At) })
	rep.Phases = phaseSpans(migStart, migEnd, end, last)
	phaseStats(rep.Phases, rep.Writes)

	// The backfills' throughput against the load's.
	for _, s := range mig.Stats {
		rep.BackfillRows += s.Rows + s.Recounted
	}
	if bp := rep.Phase("backfill+catch-up"); bp != nil {
		rep.BackfillTime = bp.End - bp.Start
	}
	rep.BackfillRate, rep.BackfillRatio = math.NaN(), math.NaN()
	if rep.BackfillRows > 0 && rep.BackfillTime > 0 {
		rep.BackfillRate = float64(rep.BackfillRows) / rep.BackfillTime.Seconds()
		rep.BackfillRatio = rep.BackfillRate / rep.LoadRate
	}

	// The store must hold what the target schema implies.
	logf("verifying the store")
	after, err := db.Advised(ctx)
	if err != nil {
		return nil, err
	}
	if len(after.Schema().WriteOnly) > 0 || len(after.Advised().Dropping) > 0 {
		return nil, fmt.Errorf("the migration left a state behind (write-only indexes or tables to drop):\n%s", after.Advised().SchemaSrc)
	}
	vr, err := after.Verify(ctx, exec.VerifyOptions{})
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if !vr.Clean() {
		var lines []string
		for i, d := range vr.Differences {
			if i == 10 {
				lines = append(lines, fmt.Sprintf("… and %d more", len(vr.Differences)-10))
				break
			}
			lines = append(lines, d.String())
		}
		return nil, fmt.Errorf("verify after the migration found %d differences:\n%s", len(vr.Differences), strings.Join(lines, "\n"))
	}
	for _, n := range vr.Rows {
		rep.VerifyRows += n
	}
	rep.Took = time.Since(begin)
	return rep, nil
}

// phaseSpans cuts the run, from the writers' start to stop, into
// MigrationPhases: "before" up to the migration's start (migStart); each
// step of the migration from the end of the one before to its last
// progress event (last, by phase name; a step without one is empty);
// "drop" up to Migrate's return (migEnd); "after" from there to stop.
func phaseSpans(migStart, migEnd, stop time.Duration, last map[string]time.Duration) []PhaseResult {
	out := []PhaseResult{{Name: MigrationPhases[0], End: migStart}}
	at := migStart
	steps := MigrationPhases[1 : len(MigrationPhases)-1]
	for i, name := range steps {
		end := at
		if t, ok := last[name]; ok && t > end {
			end = t
		}
		if i == len(steps)-1 {
			end = max(end, migEnd)
		}
		out = append(out, PhaseResult{Name: name, Start: at, End: end})
		at = end
	}
	return append(out, PhaseResult{Name: MigrationPhases[len(MigrationPhases)-1], Start: at, End: max(at, stop)})
}

// phaseStats counts the writes that started in each phase (a phase holds
// its start, not its end; the last one both) and sets their median, 99th
// percentile and the median's ratio to the first phase's.
func phaseStats(phases []PhaseResult, writes []WriteSample) {
	for i := range phases {
		ph := &phases[i]
		var lat []float64
		for _, w := range writes {
			if w.At >= ph.Start && (w.At < ph.End || i == len(phases)-1 && w.At <= ph.End) {
				lat = append(lat, w.Latency.Seconds())
			}
		}
		ph.Writes = len(lat)
		ph.Ratio, ph.AfterRatio = math.NaN(), math.NaN()
		if len(lat) > 0 {
			ph.P50 = time.Duration(percentile(lat, 50) * 1e9)
			ph.P99 = time.Duration(percentile(lat, 99) * 1e9)
		}
	}
	if len(phases) == 0 {
		return
	}
	first, last := phases[0], phases[len(phases)-1]
	for i := range phases {
		ph := &phases[i]
		ph.AfterRatio = math.NaN()
		if ph.Writes > 0 && first.Writes > 0 {
			ph.Ratio = ph.P50.Seconds() / first.P50.Seconds()
		}
		if ph.Writes > 0 && last.Writes > 0 {
			ph.AfterRatio = ph.P50.Seconds() / last.P50.Seconds()
		}
	}
}

// Targets of a migration's effect (issue 19): the backfill writes at
// least half as fast as a bulk load, and the median write latency during
// each phase of a migration is at most twice the one before it.
const (
	TargetBackfillRatio = 0.5
	TargetLatencyRatio  = 2.0
	// minJudgedWrites is the writes a phase needs for its median to be
	// held against the latency target.
	minJudgedWrites = 20
)

// migrating reports whether a phase is one of the migration's steps.
func migrating(name string) bool {
	return name != MigrationPhases[0] && name != MigrationPhases[len(MigrationPhases)-1]
}

// WorstRatio is the largest median ratio of a migration phase with at
// least 20 writes (NaN if none has), and that phase's name.
func (r *MigrationReport) WorstRatio() (float64, string) {
	worst, name := math.NaN(), ""
	for _, ph := range r.Phases {
		if migrating(ph.Name) && ph.Writes >= minJudgedWrites && !math.IsNaN(ph.Ratio) && !(ph.Ratio <= worst) {
			worst, name = ph.Ratio, ph.Name
		}
	}
	return worst, name
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return d.Round(time.Millisecond).String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// String is the report as text: the setup, the migration, a table of the
// phases and the targets.
func (r *MigrationReport) String() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "kvschema bench-migrate: %s → %s\n", c.FromFile, c.ToFile)
	fmt.Fprintf(&b, "workload %s, mix %s; data: %s (%d entity rows)\n", c.WorkloadFile, c.Mix, r.Data, r.EntityRows)
	fmt.Fprintf(&b, "store: pebble in a temporary directory (no fsync per write), no round-trip delay; %s\n", r.Machine)
	fmt.Fprintf(&b, "load generator: %d writers, %g statements/s in all, paced (latency from each statement's start): %s\n", c.Writers, c.Rate, strings.Join(r.Statements, ", "))
	bf := "no bound"
	if c.BackfillRate > 0 {
		bf = fmt.Sprintf("%g rows/s", c.BackfillRate)
	}
	fmt.Fprintf(&b, "warmup %v, cooldown %v; backfill rate: %s\n", c.Warmup, c.Cooldown, bf)
	if m := r.Migration; m != nil {
		names := func(xs []kvschema.MigrationIndex) string {
			var ns []string
			for _, x := range xs {
				ns = append(ns, x.Name)
			}
			if len(ns) == 0 {
				return "none"
			}
			return strings.Join(ns, ", ")
		}
		fmt.Fprintf(&b, "\nmigration: add %d (%s); drop %d (%s); keep %d\n", len(m.Add), names(m.Add), len(m.Drop), names(m.Drop), len(m.Keep))
		for _, x := range m.Add {
			if s, ok := m.Stats[x.Name]; ok {
				fmt.Fprintf(&b, "  backfill %-28s %8d rows copied in %v, %6d recomputed in %d rounds, %v in all\n", x.Name, s.Rows, s.Copy.Round(time.Millisecond), s.Recounted, s.Rounds, s.Elapsed.Round(time.Millisecond))
			}
		}
	}
	fmt.Fprintf(&b, "\n%-18s %8s %8s %7s %9s %10s %10s %13s %10s\n", "phase", "start", "end", "writes", "writes/s", "p50", "p99", "p50/before", "p50/after")
	for _, ph := range r.Phases {
		rate := "-"
		if span := (ph.End - ph.Start).Seconds(); span > 0 && ph.Writes > 0 {
			rate = fmt.Sprintf("%.0f", float64(ph.Writes)/span)
		}
		ratio := func(x float64) string {
			if math.IsNaN(x) {
				return "-"
			}
			s := fmt.Sprintf("%.2f×", x)
			if migrating(ph.Name) && ph.Writes < minJudgedWrites {
				s += " (few)"
			}
			return s
		}
		fmt.Fprintf(&b, "%-18s %7.2fs %7.2fs %7d %9s %10s %10s %13s %10s\n", ph.Name, ph.Start.Seconds(), ph.End.Seconds(), ph.Writes, rate, fmtDur(ph.P50), fmtDur(ph.P99), ratio(ph.Ratio), ratio(ph.AfterRatio))
	}
	r.writeStatements(&b)
	b.WriteString("\n")
	if worst, name := r.WorstRatio(); math.IsNaN(worst) {
		fmt.Fprintf(&b, "write latency: no phase of the migration had %d writes to judge its median by (target ≤ %g× before)\n", minJudgedWrites, TargetLatencyRatio)
	} else {
		fmt.Fprintf(&b, "write latency: the largest median during the migration is %.2f× before's (%s; phases with ≥ %d writes); target ≤ %g×: %s\n", worst, name, minJudgedWrites, TargetLatencyRatio, met(worst <= TargetLatencyRatio))
		if ph := r.Phase(name); ph != nil && !math.IsNaN(ph.AfterRatio) {
			fmt.Fprintf(&b, "  (%.2f× after's: the target schema's writes with no migration running)\n", ph.AfterRatio)
		}
	}
	fmt.Fprintf(&b, "load: %d index rows written in %v: %.0f rows/s\n", r.IndexRows, r.LoadWrite.Round(time.Millisecond), r.LoadRate)
	if math.IsNaN(r.BackfillRatio) {
		b.WriteString("backfill: no rows backfilled\n")
	} else {
		fmt.Fprintf(&b, "backfill: %d rows (copied + recomputed) in %v: %.0f rows/s, %.2f× the load's; target ≥ %g×: %s\n", r.BackfillRows, r.BackfillTime.Round(time.Millisecond), r.BackfillRate, r.BackfillRatio, TargetBackfillRatio, met(r.BackfillRatio >= TargetBackfillRatio))
	}
	fmt.Fprintf(&b, "verify after the run: clean (%d rows read)\n", r.VerifyRows)
	fmt.Fprintf(&b, "took %v\n", r.Took.Round(time.Millisecond))
	return b.String()
}

// writeStatements writes the median latency of each statement in each
// phase ("-": it did not run there).
func (r *MigrationReport) writeStatements(b *strings.Builder) {
	if len(r.Statements) < 2 {
		return
	}
	fmt.Fprintf(b, "\nmedian latency per statement and phase (writes)\n%-10s", "statement")
	for _, ph := range r.Phases {
		fmt.Fprintf(b, " %17s", ph.Name)
	}
	b.WriteString("\n")
	for _, tag := range r.Statements {
		fmt.Fprintf(b, "%-10s", tag)
		for i, ph := range r.Phases {
			var lat []float64
			for _, w := range r.Writes {
				if w.Tag == tag && w.At >= ph.Start && (w.At < ph.End || i == len(r.Phases)-1 && w.At <= ph.End) {
					lat = append(lat, w.Latency.Seconds())
				}
			}
			cell := "-"
			if len(lat) > 0 {
				cell = fmt.Sprintf("%s (%d)", fmtDur(time.Duration(percentile(lat, 50)*1e9)), len(lat))
			}
			fmt.Fprintf(b, " %17s", cell)
		}
		b.WriteString("\n")
	}
}

// writeCSV writes every write: its start and latency in seconds, its
// statement and its phase.
func (r *MigrationReport) writeCSV(path string) error {
	var b strings.Builder
	b.WriteString("start_s,latency_s,statement,phase\n")
	for _, w := range r.Writes {
		phase := ""
		for i, ph := range r.Phases {
			if w.At >= ph.Start && (w.At < ph.End || i == len(r.Phases)-1 && w.At <= ph.End) {
				phase = ph.Name
				break
			}
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%s,%s\n", w.At.Seconds(), w.Latency.Seconds(), csvField(w.Tag), phase)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// Timeline draws the writes' latencies over time with the phases
// (chart.Timeline) into path, a PNG file.
func (r *MigrationReport) Timeline(path string) error {
	pts := make([]chart.TimePoint, len(r.Writes))
	for i, w := range r.Writes {
		pts[i] = chart.TimePoint{At: w.At.Seconds(), Latency: w.Latency.Seconds()}
	}
	spans := make([]chart.PhaseSpan, len(r.Phases))
	for i, ph := range r.Phases {
		spans[i] = chart.PhaseSpan{Name: ph.Name, Start: ph.Start.Seconds(), End: ph.End.Seconds()}
	}
	title := fmt.Sprintf("Write latency during a migration: %s → %s (%d writers, %g writes/s, pebble)", filepath.Base(r.Config.FromFile), filepath.Base(r.Config.ToFile), r.Config.Writers, r.Config.Rate)
	return chart.Timeline(path, title, pts, spans)
}

// Write writes the report into dir: migration.txt (String),
// migration-timeline.png (Timeline) and migration-writes.csv (every
// write: start, latency, statement, phase). It returns the first two's
// paths.
func (r *MigrationReport) Write(dir string) (text, png string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	text, png = filepath.Join(dir, "migration.txt"), filepath.Join(dir, "migration-timeline.png")
	if err := os.WriteFile(text, []byte(r.String()), 0o644); err != nil {
		return "", "", err
	}
	if err := r.Timeline(png); err != nil {
		return "", "", err
	}
	if err := r.writeCSV(filepath.Join(dir, "migration-writes.csv")); err != nil {
		return "", "", err
	}
	return text, png, nil
}
