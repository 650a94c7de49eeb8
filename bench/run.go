package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvschema/kvschema/advisor"
	"github.com/kvschema/kvschema/calibrate"
	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/solver"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/bigtablestore"
	"github.com/kvschema/kvschema/store/countstore"
	"github.com/kvschema/kvschema/store/memstore"
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/store/prefixstore"
	"github.com/kvschema/kvschema/store/rttstore"
	"github.com/kvschema/kvschema/store/txnstore"
	"github.com/kvschema/kvschema/store/undostore"
	"github.com/kvschema/kvschema/workload"
)

// Variants maps the benchmark's variant names to advisor modes, in report
// order.
var Variants = []struct {
	Name string
	Mode advisor.Mode
	Desc string
}{
	{"baseline", advisor.Normalized, "normalized baseline: one CF per entity plus CFs from each query's equality attributes to keys, joined at the client"},
	{"cf", advisor.NoSI, "column families only (NoSE)"},
	{"si", advisor.WithSI, "column families and secondary indexes (seed 000)"},
}

func modeOf(name string) (advisor.Mode, bool) {
	for _, v := range Variants {
		if v.Name == name {
			return v.Mode, true
		}
	}
	return 0, false
}

// Config is one benchmark run.
type Config struct {
	// Model is the conceptual model's statements (lang.ParseModel's:
	// DEFINE RELATION or SQL DDL); ModelFiles are the files they come from,
	// which the report names (and which are read when Model is nil). With
	// neither, the run is RUBiS's benchmark: its model
	// (examples/rubis/model.kvs), one of its shipped workloads, its data
	// generator and the paper's budget.
	Model      []lang.Statement
	ModelFiles []string
	// Workload is a file holding one DEFINE WORKLOAD; for RUBiS, the name
	// of a shipped one: "workload.kvs" or "workload_secondary.kvs" (the
	// default). WorkloadLog is a query log instead (COUNT<TAB>STATEMENT
	// lines, workload.ParseLog), whose one mix is "log".
	Workload    string
	WorkloadLog string
	// Data is a directory of RELATION.csv / RELATION.jsonl files (package
	// dataio) to run on; empty generates the data with Generator.
	Data string
	// Generator is GenerateModel (package datagen: data matching the
	// model's statistics; the default) or GenerateRUBiS (RUBiS's own data
	// set; the default for RUBiS's benchmark).
	Generator string
	// Scale is the generator's: a fraction of the full RUBiS data (1.0 =
	// 200,000 users), or of each relation's ROWS.
	Scale float64
	Skew  float64 // GenerateModel: Zipf exponent of foreign keys; 0: uniform
	Seed  uint64  // of the generator and of the parameter sampling
	// Mix is the workload's mix to advise for and run; default: bidding
	// for RUBiS, else the workload's first mix.
	Mix      string
	Variants []string // subset of baseline, cf, si
	// Budget in bytes; 0 means PaperBudget scaled to the data for RUBiS,
	// and no budget otherwise.
	Budget float64
	// Budgets, two or more, make the run a budget sweep (sweep.go): each
	// variant advised and measured at each budget, on the same data, with
	// the same profile. Sweep does the same with SweepBudgets's budgets
	// (RUBiS only). Budget is then unused.
	Budgets []float64
	Sweep   bool
	// Executor runs the plans' join steps (exec.Engine.SetExecutor):
	// exec.Batched (one store request per step, the default) or
	// exec.PerPartition (one per partition probed, as NoSE's Cassandra
	// executor). The calibration, if any, runs batched.
	Executor exec.Executor
	// Store is "pebble" (temporary directories), "pebble:DIR" (one
	// database per variant under DIR, kept), "mem:", or
	// "bigtable://PROJECT/INSTANCE[?emulator=HOST:PORT]" (one table
	// namespace "VARIANT." per variant, dropped first; writes undone by
	// undostore, since Bigtable has no cheap snapshot).
	Store string
	// PebbleCache is the Pebble block cache in bytes (0:
	// pebblestore.DefaultCacheSize). A local secondary index reads its base
	// rows one seek each, wherever they lie: with data larger than the
	// cache, each costs a block load, as a scan's rows do not.
	PebbleCache int64
	// RTTs are the simulated round-trip delays of the measurement passes.
	// The schemas are advised, and the profile calibrated, for the last
	// one (the realistic setting); the others run the same schemas.
	RTTs       []time.Duration
	Iterations int // timed runs per statement (default 100)
	Warmup     int // untimed runs before them (default 5)
	// Profile is a cost profile (a built-in name or a JSON file); empty
	// calibrates the store with the last RTT.
	Profile string
	Out     string // report directory
	Solver  solver.Solver
	// Progress receives progress bars and stage lines; nil is quiet.
	Progress io.Writer
	// Notes receives notes on the inputs — a query log's report (what it
	// could not use and why), relations the data leaves empty; nil
	// discards them. The report lists the notes on the data too.
	Notes io.Writer
}

// Report is what a run measured.
type Report struct {
	Config Config
	// RUBiS is set for RUBiS's benchmark, where the paper's targets and
	// results apply.
	RUBiS                   bool
	ModelFile, WorkloadFile string   // as the report names them
	Data                    string   // where the rows came from
	DataNotes               []string // relations the data leaves empty
	Machine                 string
	Counts                  map[string]int
	SampleRows              int // rows sampled per entity for parameters
	Budget                  float64
	Profile                 cost.Profile
	Calibration             *calibrate.Result // nil when Config.Profile named one
	Variants                []*VariantResult
	// Sweep holds a budget sweep's points, by increasing budget (Variants
	// is then empty: each point has its own); nil for one budget.
	Sweep []*BudgetPoint
	Took  time.Duration
	// point is set on the report of one budget of a sweep, written into
	// that budget's directory: the sweep's budgets, for its Budget line.
	point *BudgetPoint
}

// VariantResult is one schema variant: its recommendation and its passes.
type VariantResult struct {
	Name            string
	Mode            advisor.Mode
	ModelCost, Size float64
	Structures, SIs int
	Schema          string // the DDL
	IndexRows       int64
	AdviseTime      time.Duration
	LoadTime        time.Duration
	Passes          []*Pass
	// In a budget sweep, AdvisedAt is the larger budget whose schema this
	// one is (0: advised at its own budget; see BudgetPoint), and
	// MeasuredAs names the run whose measurement it shares, "cf at 80MB",
	// when its schema is the same as one measured before (empty: measured
	// itself).
	AdvisedAt  float64
	MeasuredAs string
}

// Pass is one measurement of every statement of the mix at one RTT.
type Pass struct {
	RTT          time.Duration
	RealizedRTT  time.Duration // mean delay a round trip actually waited
	Statements   []*StatementResult
	Groups       []*GroupResult
	WeightedMean float64 // seconds: Σ weight·mean / Σ weight over the mix
	Spearman     float64 // predicted cost vs measured mean, per statement
	// PredictedMean is the advisor's counterpart of WeightedMean: Σ
	// weight·predicted cost / Σ weight over the same statements.
	PredictedMean float64
}

// StatementResult is one statement's measurement.
type StatementResult struct {
	Tag, Group, Kind string
	Weight           float64
	Predicted        float64 // the advisor's cost of the statement's plan
	Steps            int     // lookups of a query's plan; writes: upkept indexes
	Mean, P50        float64 // seconds
	P95, P99         float64
	RoundTrips, Rows float64 // per run (rows: returned, or changed by a write)
	Runs             int
}

// GroupResult is one transaction: the sum of its statements' means.
type GroupResult struct {
	Name   string
	Weight float64
	Mean   float64
}

// Run runs the benchmark and writes its report into cfg.Out.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	in, err := cfg.resolve(cfg.Notes)
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	root, cleanup, err := cfg.storeRoot()
	if err != nil {
		return nil, err
	}
	defer cleanup()

	logf("bench: reading %s to measure it and sample parameters", in.src.desc)
	sampleRows := max(cfg.Iterations+cfg.Warmup, 1000)
	d, err := analyze(ctx, in, &cfg, sampleRows, cfg.Notes)
	if err != nil {
		return nil, err
	}
	// The workload again, against the model with the data's statistics
	// (the advisor's estimates come from the model its statements name).
	w, err := in.parseWorkload(d.model, nil)
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Machine: machine(), Counts: d.counts, Budget: cfg.Budget, SampleRows: sampleRows,
		RUBiS: in.rubis, Data: in.src.desc, DataNotes: d.notes, WorkloadFile: in.workloadFile, ModelFile: in.modelName(&cfg)}
	if rep.Budget == 0 && in.rubis {
		rep.Budget = PaperBudget * d.budgetScale
	}
	budgets := cfg.Budgets
	if cfg.Sweep {
		if !in.rubis {
			return nil, errors.New("--sweep scales the paper's budget to RUBiS's data; for another model give the budgets (--budget 10MB,20MB,40MB)")
		}
		budgets = SweepBudgets(d.budgetScale)
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "model.kvs"), d.modelSrc, 0o644); err != nil {
		return nil, err
	}

	realistic := cfg.RTTs[len(cfg.RTTs)-1]
	if cfg.Profile != "" {
		if rep.Profile, err = cost.Load(cfg.Profile); err != nil {
			return nil, err
		}
	} else {
		logf("bench: calibrating %s with rtt %v", cfg.storeName(), realistic)
		if rep.Calibration, err = cfg.calibrate(ctx, root, realistic); err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		rep.Profile = rep.Calibration.Profile
		logf("%s", strings.TrimRight(rep.Calibration.Report(), "\n"))
	}
	if err := writeProfile(filepath.Join(cfg.Out, "profile.json"), rep.Profile); err != nil {
		return nil, err
	}

	b := &binder{data: d}
	if budgets != nil {
		rep.Budget = 0
		if err := cfg.runSweep(ctx, budgets, root, d, w, b, rep, start, logf); err != nil {
			return nil, err
		}
		return rep, nil
	}
	var vs []*variant
	for _, name := range cfg.Variants {
		v, err := cfg.setupVariant(ctx, name, root, d, w, rep.Budget, rep.Profile, logf)
		if err != nil {
			for _, v := range vs {
				v.st.Close()
			}
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		vs = append(vs, v)
		rep.Variants = append(rep.Variants, v.result)
	}
	if err := cfg.measure(ctx, vs, w, b, rep.Profile, logf); err != nil {
		return nil, err
	}
	rep.Took = time.Since(start)
	if err := rep.write(cfg.Out); err != nil {
		return nil, err
	}
	return rep, nil
}

func (cfg *Config) defaults() error {
	switch {
	case cfg.Data != "" && cfg.Generator != "":
		return fmt.Errorf("data %s and generator %s: give one", cfg.Data, cfg.Generator)
	case cfg.Data != "":
	case cfg.Generator == "" && cfg.isRUBiS():
		cfg.Generator = GenerateRUBiS
	case cfg.Generator == "":
		cfg.Generator = GenerateModel
	}
	if cfg.Data == "" && !(cfg.Scale > 0 && !math.IsInf(cfg.Scale, 0)) {
		return fmt.Errorf("scale %v must be > 0", cfg.Scale)
	}
	if cfg.Skew != 0 && cfg.Generator != GenerateModel {
		return fmt.Errorf("skew %g is for the model generator", cfg.Skew)
	}
	if cfg.Skew < 0 || math.IsNaN(cfg.Skew) {
		return fmt.Errorf("skew %v must be ≥ 0", cfg.Skew)
	}
	if cfg.isRUBiS() && cfg.WorkloadLog == "" {
		if cfg.Mix == "" {
			cfg.Mix = "bidding"
		}
		if cfg.Workload == "" {
			cfg.Workload = "workload_secondary.kvs"
		}
	}
	if len(cfg.Variants) == 0 {
		for _, v := range Variants {
			cfg.Variants = append(cfg.Variants, v.Name)
		}
	}
	seen := map[string]bool{}
	for _, v := range cfg.Variants {
		if _, ok := modeOf(v); !ok {
			return fmt.Errorf("unknown variant %q (baseline, cf, si)", v)
		}
		if seen[v] {
			return fmt.Errorf("variant %q given twice", v)
		}
		seen[v] = true
	}
	if cfg.Store == "" {
		cfg.Store = "pebble"
	}
	if len(cfg.RTTs) == 0 {
		cfg.RTTs = []time.Duration{0}
	}
	for _, r := range cfg.RTTs {
		if r < 0 {
			return fmt.Errorf("rtt %v is negative", r)
		}
	}
	if cfg.Iterations <= 0 {
		cfg.Iterations = 100
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = 0
	}
	if cfg.Out == "" {
		return errors.New("no output directory")
	}
	if cfg.Budget < 0 || math.IsNaN(cfg.Budget) {
		return fmt.Errorf("budget %v must be ≥ 0", cfg.Budget)
	}
	if err := cfg.sweepDefaults(); err != nil {
		return err
	}
	if cfg.Executor != exec.Batched && cfg.Executor != exec.PerPartition {
		return fmt.Errorf("unknown executor %v", cfg.Executor)
	}
	if cfg.Solver == nil {
		cfg.Solver = &solver.CBC{}
	}
	return nil
}

func (cfg *Config) storeName() string {
	switch {
	case cfg.Store == "mem:":
		return "memstore"
	case strings.HasPrefix(cfg.Store, "bigtable:"):
		if o, err := bigtablestore.ParseURL(strings.TrimPrefix(cfg.Store, "bigtable:")); err == nil && (o.Emulator != "" || os.Getenv("BIGTABLE_EMULATOR_HOST") != "") {
			return "bigtable emulator"
		}
		return "bigtable"
	}
	return "pebble"
}

// storeRoot returns the directory the Pebble databases go in (empty for
// mem:) and what removes it when it is temporary.
func (cfg *Config) storeRoot() (string, func(), error) {
	switch {
	case cfg.Store == "mem:" || strings.HasPrefix(cfg.Store, "bigtable:"):
		return "", func() {}, nil
	case cfg.Store == "pebble":
		dir, err := os.MkdirTemp("", "kvschema-bench-")
		if err != nil {
			return "", nil, err
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	case strings.HasPrefix(cfg.Store, "pebble:"):
		dir := strings.TrimPrefix(cfg.Store, "pebble:")
		if dir == "" || strings.Contains(dir, "?") {
			return "", nil, fmt.Errorf("store %q: want pebble:DIR (a directory for one database per variant)", cfg.Store)
		}
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	return "", nil, fmt.Errorf("store %q: the bench runs on pebble, pebble:DIR, mem: or bigtable://PROJECT/INSTANCE (it creates one database per variant and restores it between runs that write)", cfg.Store)
}

// openStore opens an empty store called name. Pebble skips the fsync of
// each write, like Cassandra's default periodic commit-log sync.
func (cfg *Config) openStore(ctx context.Context, root, name string) (store.Store, error) {
	if strings.HasPrefix(cfg.Store, "bigtable:") {
		return openBigtable(ctx, cfg.Store, name)
	}
	if root == "" {
		return memstore.New(), nil
	}
	dir := filepath.Join(root, name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return pebblestore.Open(dir, pebblestore.Options{NoSync: true, CacheSize: cfg.PebbleCache})
}

// openBigtable opens the namespace name+"." of a Bigtable instance, after
// dropping the tables an earlier run left in it, as txnstore over the raw
// store (what store.Open gives), with undo images for restores.
func openBigtable(ctx context.Context, url, name string) (store.Store, error) {
	o, err := bigtablestore.ParseURL(strings.TrimPrefix(url, "bigtable:"))
	if err != nil {
		return nil, err
	}
	raw, err := bigtablestore.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	prefix := name + "."
	specs, err := raw.Tables(ctx)
	if err != nil {
		raw.Close()
		return nil, err
	}
	for _, spec := range specs {
		if strings.HasPrefix(spec.Name, prefix) {
			if err := raw.DropTable(ctx, spec.Name); err != nil {
				raw.Close()
				return nil, err
			}
		}
	}
	return undostore.New(owned{prefixstore.New(txnstore.New(raw), prefix), raw}), nil
}

// owned is a namespace that closes the store it is in.
type owned struct {
	store.Store
	raw *bigtablestore.Store
}

func (o owned) Close() error { return errors.Join(o.Store.Close(), o.raw.Close()) }

func (cfg *Config) calibrate(ctx context.Context, root string, rtt time.Duration) (*calibrate.Result, error) {
	st, err := cfg.openStore(ctx, root, "calibrate")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	name := fmt.Sprintf("calibrated %s rtt=%v", cfg.storeName(), rtt)
	opt := calibrate.Options{RTT: rtt}
	var meter *progress.Meter
	if cfg.Progress != nil {
		meter = progress.New(cfg.Progress, "calibrate", "runs", 0)
		opt.Progress = func(done, total int) { meter.Update("micro-benchmarks", int64(done), int64(total)) }
	}
	res, err := calibrate.Run(ctx, rttstore.New(st, rtt), name, opt)
	if meter != nil {
		meter.Finish()
	}
	return res, err
}

// variant is a deployed, loaded schema variant.
type variant struct {
	result    *VariantResult
	st        store.Store
	en        *exec.Engine
	predicted map[*workload.Statement]float64 // the advisor's cost of each statement
}

// setupVariant advises the variant's schema, deploys it in a new store and
// loads the data. The caller closes v.st.
func (cfg *Config) setupVariant(ctx context.Context, name, root string, d *dataSet, w *workload.Workload, budget float64, prof cost.Profile, logf func(string, ...any)) (*variant, error) {
	v, _, err := cfg.adviseVariant(ctx, name, d, w, budget, prof, logf)
	if err != nil {
		return nil, err
	}
	if cfg.Out != "" {
		if err := os.WriteFile(filepath.Join(cfg.Out, "schema-"+name+".kvs"), []byte(v.result.Schema), 0o644); err != nil {
			return nil, err
		}
	}
	return v, cfg.deployVariant(ctx, v, root, d, prof, logf)
}

// adviseVariant advises the variant's schema under budget: v holds the
// result and the predicted cost of each statement, not yet a store.
// proven says the schema is optimal and the smallest of its cost, so that
// it is also the recommendation for any smaller budget it fits in.
func (cfg *Config) adviseVariant(ctx context.Context, name string, d *dataSet, w *workload.Workload, budget float64, prof cost.Profile, logf func(string, ...any)) (v *variant, proven bool, err error) {
	mode, _ := modeOf(name)
	vr := &VariantResult{Name: name, Mode: mode}
	t0 := time.Now()
	res, err := advisor.Advise(ctx, d.model, w, advisor.Options{Mix: cfg.Mix, Budget: budget, Profile: prof, Mode: mode, Solver: cfg.Solver,
		Progress: func(s string) { logf("advise %s: %s", name, s) }})
	if err != nil {
		return nil, false, err
	}
	vr.AdviseTime = time.Since(t0)
	vr.ModelCost, vr.Size, vr.Structures = res.TotalCost, res.TotalSize, len(res.Schema.Indexes)
	for _, x := range res.Schema.Indexes {
		if x.Kind == catalog.SI {
			vr.SIs++
		}
	}
	var ddl bytes.Buffer
	if err := res.WriteDDL(&ddl, d.modelStmts); err != nil {
		return nil, false, err
	}
	vr.Schema = ddl.String()
	v = &variant{result: vr, predicted: map[*workload.Statement]float64{}}
	for _, q := range res.Queries {
		v.predicted[q.Statement] = q.Plan.Cost
	}
	for _, wp := range res.Writes {
		v.predicted[wp.Statement] = wp.Cost
	}
	return v, res.Stats.Optimal && res.Stats.Smallest, nil
}

// deployVariant deploys an advised variant's schema in a new store (named
// after the variant: a sweep reuses it from budget to budget) and loads
// the data. The caller closes v.st.
func (cfg *Config) deployVariant(ctx context.Context, v *variant, root string, d *dataSet, prof cost.Profile, logf func(string, ...any)) error {
	vr, name := v.result, v.result.Name
	var err error
	if v.st, err = cfg.openStore(ctx, root, name); err != nil {
		return err
	}
	if v.en, err = exec.Deploy(ctx, v.st, "model.kvs", d.modelSrc, "schema-"+name+".kvs", []byte(vr.Schema), prof); err != nil {
		v.st.Close()
		return err
	}
	t0 := time.Now()
	if vr.IndexRows, err = cfg.load(ctx, v.en, d, name); err != nil {
		v.st.Close()
		return err
	}
	if ps, ok := v.st.(*pebblestore.Store); ok {
		if err := ps.Compact(ctx); err != nil {
			v.st.Close()
			return err
		}
	}
	vr.LoadTime = time.Since(t0)
	logf("bench %s: %d structures (%d SIs), cost %.6g, size %s; loaded %d index rows in %v", name, vr.Structures, vr.SIs, vr.ModelCost,
		units.Format(vr.Size), vr.IndexRows, vr.LoadTime.Round(time.Millisecond))
	return nil
}

// load fills the variant's store with the data.
func (cfg *Config) load(ctx context.Context, en *exec.Engine, d *dataSet, name string) (int64, error) {
	opt := exec.LoadOptions{Identity: d.src.identity}
	var meter *progress.Meter
	if cfg.Progress != nil {
		meter = progress.New(cfg.Progress, "load "+name, "rows", len(en.Schema().Indexes))
		opt.Progress = func(ev exec.LoadEvent) {
			if ev.Index != "" {
				meter.Task(ev.Index, ev.Rows, ev.Estimate, ev.Done, ev.Earlier)
			}
		}
	}
	ls, err := en.Load(ctx, func(yield func(exec.Row) error) error {
		return d.src.rowsOf(ctx, en.Model(), yield)
	}, opt)
	if meter != nil {
		meter.Finish()
	}
	if err != nil {
		return 0, err
	}
	return ls.IndexRows, nil
}

// measure runs every pass on deployed variants, interleaved: each
// statement runs on every variant in turn (the order reversed from one
// statement to the next) before the next statement, so that the drift of
// a shared machine, slow against one statement's runs, falls alike on
// every variant's mean rather than on whichever ran later. Writes are
// undone after each statement that writes (the stores' snapshots). The
// stores are closed at the end.
func (cfg *Config) measure(ctx context.Context, vs []*variant, w *workload.Workload, b *binder, prof cost.Profile, logf func(string, ...any)) error {
	snaps := make([]store.Snapshot, len(vs))
	defer func() {
		for i, v := range vs {
			if snaps[i] != nil {
				snaps[i].Release()
			}
			v.st.Close()
		}
	}()
	for i, v := range vs {
		snapper, ok := v.st.(store.Snapshotter)
		if !ok {
			return fmt.Errorf("store %T cannot take snapshots, which the bench needs to undo writes", v.st)
		}
		var err error
		if snaps[i], err = snapper.Snapshot(ctx); err != nil {
			return err
		}
	}
	var stmts []*workload.Statement
	for _, s := range w.Statements {
		if s.Weight(cfg.Mix) > 0 {
			stmts = append(stmts, s)
		}
	}
	for _, rtt := range cfg.RTTs {
		var meter *runMeter
		if cfg.Progress != nil {
			names := make([]string, len(vs))
			for i, v := range vs {
				names[i] = v.result.Name
			}
			meter = &runMeter{Meter: progress.New(cfg.Progress, fmt.Sprintf("%s rtt=%v", strings.Join(names, ", "), rtt), "runs", 0),
				total: int64(len(vs) * len(stmts) * (cfg.Warmup + cfg.Iterations))}
		}
		passes := make([]*pass, len(vs))
		for i, v := range vs {
			passes[i] = newPass(v, prof, rtt, cfg.Executor)
		}
		for k, s := range stmts {
			for j := range vs {
				i := j
				if k%2 == 1 {
					i = len(vs) - 1 - j
				}
				sr, err := cfg.runStatement(ctx, passes[i].en, passes[i].counted, s, b, meter)
				if err != nil {
					return fmt.Errorf("variant %s: statement %s: %w", vs[i].result.Name, s.Tag, err)
				}
				if s.Write != nil {
					if err := snaps[i].Restore(ctx); err != nil {
						return fmt.Errorf("variant %s: restore after statement %s: %w", vs[i].result.Name, s.Tag, err)
					}
				}
				sr.Predicted = vs[i].predicted[s]
				passes[i].add(s, sr, cfg.Mix)
			}
		}
		if meter != nil {
			meter.Finish()
		}
		for i, v := range vs {
			p := passes[i].finish()
			v.result.Passes = append(v.result.Passes, p)
			logf("bench %s rtt=%v: weighted mean %s, Spearman %.3f", v.result.Name, rtt, fmtSeconds(p.WeightedMean), p.Spearman)
		}
	}
	return nil
}

// pass is a Pass being measured on one variant: its engine runs on the
// variant's store with round trips delayed by the pass's rtt, and counted.
type pass struct {
	*Pass
	delayed           *rttstore.Store
	counted           *countstore.Store
	en                *exec.Engine
	groups            map[string]*GroupResult
	wsum, wlat, wpred float64
	pred, meas        []float64
}

func newPass(v *variant, prof cost.Profile, rtt time.Duration, executor exec.Executor) *pass {
	delayed := rttstore.New(v.st, rtt)
	counted := countstore.New(delayed)
	en := exec.New(counted, v.en.Model(), v.en.Schema(), prof)
	en.SetExecutor(executor)
	return &pass{Pass: &Pass{RTT: rtt}, delayed: delayed, counted: counted, en: en, groups: map[string]*GroupResult{}}
}

// add records statement s's measurement.
func (p *pass) add(s *workload.Statement, sr *StatementResult, mix string) {
	p.Statements = append(p.Statements, sr)
	g := p.groups[s.Group]
	if g == nil {
		g = &GroupResult{Name: s.Group, Weight: s.Weight(mix)}
		p.groups[s.Group] = g
		p.Groups = append(p.Groups, g)
	}
	g.Mean += sr.Mean
	p.wsum += sr.Weight
	p.wlat += sr.Weight * sr.Mean
	p.wpred += sr.Weight * sr.Predicted
	p.pred = append(p.pred, sr.Predicted)
	p.meas = append(p.meas, sr.Mean)
}

// finish computes the pass's means and rank correlation.
func (p *pass) finish() *Pass {
	p.WeightedMean, p.PredictedMean = p.wlat/p.wsum, p.wpred/p.wsum
	if n := p.delayed.RoundTrips(); n > 0 && p.RTT > 0 {
		p.RealizedRTT = p.delayed.Waited() / time.Duration(n)
	}
	p.Spearman = spearman(p.pred, p.meas)
	return p.Pass
}

// runMeter counts the runs of a pass.
type runMeter struct {
	*progress.Meter
	done, total int64
}

func (m *runMeter) add() {
	m.done++
	m.Update("statements", m.done, m.total)
}

func (cfg *Config) runStatement(ctx context.Context, en *exec.Engine, counted *countstore.Store, s *workload.Statement, b *binder, meter *runMeter) (*StatementResult, error) {
	stmt, err := en.PrepareAST(s.AST)
	if err != nil {
		return nil, err
	}
	params, err := b.stream(s, cfg.Seed)
	if err != nil {
		return nil, err
	}
	sr := &StatementResult{Tag: s.Tag, Group: s.Group, Weight: s.Weight(cfg.Mix), Runs: cfg.Iterations}
	if s.Query != nil {
		sr.Kind, sr.Steps = "query", len(stmt.Plan.Steps)
	} else {
		sr.Kind, sr.Steps = strings.ToLower(s.Write.Kind.String()), len(stmt.Upkeeps)
	}
	lat := make([]float64, 0, cfg.Iterations)
	var rows int
	for i := 0; i < cfg.Warmup+cfg.Iterations; i++ {
		args, err := params.next()
		if err != nil {
			return nil, err
		}
		if i == cfg.Warmup {
			counted.Reset()
		}
		t0 := time.Now()
		var n int
		if s.Query != nil {
			res, err := stmt.Query(ctx, args...)
			if err != nil {
				return nil, err
			}
			n = len(res.Rows)
		} else if n, err = stmt.Exec(ctx, args...); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		if i >= cfg.Warmup {
			lat = append(lat, el.Seconds())
			rows += n
		}
		if meter != nil {
			meter.add()
		}
	}
	c := counted.Stats()
	runs := float64(cfg.Iterations)
	sr.RoundTrips, sr.Rows = float64(c.RoundTrips)/runs, float64(rows)/runs
	sr.Mean, sr.P50, sr.P95, sr.P99 = mean(lat), percentile(lat, 50), percentile(lat, 95), percentile(lat, 99)
	return sr, nil
}

// machine describes the computer the benchmark ran on.
func machine() string {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb float64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
				mem = fmt.Sprintf(", %.0f GiB", kb/(1<<20))
			}
		}
	}
	if cpu == "" {
		cpu = "unknown CPU"
	}
	return fmt.Sprintf("%s/%s, %d cores (%s)%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, mem, runtime.Version())
}

func fmtSeconds(s float64) string {
	if math.IsNaN(s) {
		return "NaN"
	}
	return time.Duration(s * 1e9).Round(time.Microsecond).String()
}
