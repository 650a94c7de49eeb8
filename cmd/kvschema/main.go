// Command kvschema is the command-line interface of kvschema: it wires the
// Go API to files, a REPL and a demo.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/internal/progress"
	"github.com/kvschema/kvschema/lang"
	_ "github.com/kvschema/kvschema/store/all" // mem:, pebble: and bigtable: URLs
	"github.com/kvschema/kvschema/store/pebblestore"
	"github.com/kvschema/kvschema/types"
)

func main() {
	stop, err := startProfiles()
	if err == nil {
		err = rootCmd().Execute()
		stop()
	}
	if err != nil {
		// Messages quote names and values from scripts and stores.
		fmt.Fprintln(os.Stderr, "kvschema:", types.EscapeText(err.Error()))
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "kvschema",
		Short:         "Design and run schemas for wide-column key-value stores",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(execCmd(), shellCmd(), demoCmd(), modelCmd(), statsCmd(), generateCmd(), adviseCmd(), costCmd(), exportCmd(), loadCmd(), verifyCmd(), repairCmd(), workloadCmd(), migrateCmd(), benchCmd(), benchMigrateCmd(), calibrateCmd(), versionCmd())
	return root
}

// runner runs scripts against a DB and prints results.
type runner struct {
	db      *kvschema.DB
	out     io.Writer
	explain bool
	// echo: print each statement before its result (exec --echo, the
	// demo); quiet: no counts of written tuples, only results (rows,
	// plans); format: how rows print (table, vertical, csv, json, jsonl;
	// "" is table).
	echo   bool
	quiet  bool
	format string
	// inserted counts the tuples of the INSERT being applied in batches.
	inserted int64
	// sess runs the statements (BEGIN … COMMIT across scripts too); nil
	// until the first.
	sess *kvschema.Session
}

// session is the session the runner's statements run in.
func (r *runner) session() *kvschema.Session {
	if r.sess == nil {
		r.sess = r.db.Session()
	}
	return r.sess
}

// end ends the runner's session: a transaction left open is rolled back,
// and reported (kvschema.ErrTxOpen).
func (r *runner) end() error {
	if r.sess == nil {
		return nil
	}
	return r.sess.Close()
}

// run runs a script held in memory.
func (r *runner) run(ctx context.Context, file string, src []byte) error {
	return r.runScript(ctx, textScript(file, string(src)))
}

// runScript echoes each statement, prints its plan when asked, runs it (the
// trace, if on, prints its key-value operations) and prints its result. A
// long INSERT … VALUES runs in atomic batches of insertBatch tuples.
func (r *runner) runScript(ctx context.Context, s script) error {
	return echoEach(r.out, r.echo, s, func(st lang.Statement, part lang.Part) error {
		if _, isExplain := st.(*lang.Explain); r.explain && !isExplain && !isDefine(st) && !isTx(st) {
			// Explain the parsed statement itself, not a reprint of it, so
			// that an error names the script's file:line:col.
			res, _, err := r.session().Run(ctx, &lang.Explain{At: st.Pos(), Stmt: st})
			if err != nil {
				return err
			}
			fmt.Fprint(r.out, indent(types.EscapeText(res.Plan)))
		}
		if part.Row == 0 {
			r.inserted = 0
		}
		res, rows, err := r.session().Run(ctx, st)
		if err != nil {
			if part.Row > 0 || part.More {
				return batchError(st.(*lang.Insert), part, err)
			}
			return err
		}
		switch {
		case rows != nil:
			if err := r.writeRows(rows); err != nil {
				return err
			}
		case res.Plan != "":
			fmt.Fprint(r.out, types.EscapeText(res.Plan))
		case part.More:
			r.inserted += res.RowsAffected // the count follows the last batch
		case isTx(st):
			if !r.quiet {
				fmt.Fprintln(r.out, res.Statement)
			}
		case !isDefine(st) && !r.quiet:
			fmt.Fprintf(r.out, "%s %d\n", res.Statement, r.inserted+res.RowsAffected)
		}
		return nil
	})
}

// formats are the ways exec prints rows.
var formats = []string{"table", "vertical", "csv", "json", "jsonl"}

// writeRows prints a result in the runner's format.
func (r *runner) writeRows(rows *kvschema.Rows) error {
	switch r.format {
	case "csv":
		return rows.WriteCSV(r.out)
	case "json", "jsonl":
		return rows.WriteJSON(r.out, r.format == "jsonl")
	case "vertical":
		return rows.WriteVertical(r.out)
	}
	return rows.WriteTable(r.out)
}

// insertBatch is how many tuples of an INSERT … VALUES are applied in one
// atomic batch: the script reader hands a longer one over in parts of this
// many tuples, so that memory does not grow with the statement.
const insertBatch = 1000

// batchError reports the failure of one batch of a long INSERT: the
// batches before it stay applied. It names the failing tuple and its
// position when the error points into the batch (a value that does not fit
// its attribute, say), and the batch's first tuple otherwise.
func batchError(ins *lang.Insert, part lang.Part, err error) error {
	first, last := part.Row+1, part.Row+len(ins.Rows)
	at, msg, where := ins.Rows[0][0].Pos(), err.Error(), ""
	var le *lang.Error
	if errors.As(err, &le) {
		msg = le.Msg
		if le.Pos != ins.At && !before(le.Pos, at) {
			for i, row := range ins.Rows {
				if before(le.Pos, row[0].Pos()) {
					break
				}
				where = fmt.Sprintf(" at tuple %d", part.Row+i+1)
			}
		}
		if where != "" {
			at = le.Pos
		} else {
			msg = le.Error() // keep the position it names
		}
	}
	return &lang.Error{Pos: at, Err: err, Msg: fmt.Sprintf("INSERT INTO %s stopped%s, in batch %d (tuples %d–%d): %s; %d tuples applied by the batches before it (each of up to %d tuples is atomic), none from this batch on",
		ins.Relation, where, part.Row/insertBatch+1, first, last, msg, part.Row, insertBatch)}
}

// before reports whether position a comes before b in the same file.
func before(a, b lang.Pos) bool {
	return a.File == b.File && (a.Line < b.Line || a.Line == b.Line && a.Col < b.Col)
}

// script is a script to run: the name its positions give, and how to read
// it.
type script struct {
	name string
	text *string // the script, if it is held in memory; else open reads it
	open func() (io.ReadCloser, error)
	// checkFirst makes echoEach read the script once to check its syntax
	// before it runs any of it (the script can be read twice).
	checkFirst bool
	size       int64 // in bytes
}

// keepBelow is the size of script whose statements echoEach keeps from
// checking to running rather than parse the script twice.
const keepBelow = 64 << 10

// textScript is a script held in memory (-e, the shell, the demo).
func textScript(name, text string) script {
	return script{name: name, text: &text, checkFirst: true, size: int64(len(text))}
}

// readerScript is a script read once from r (standard input): not checked
// in full before it runs, as a pipe is not.
func readerScript(name string, r io.Reader) script {
	return script{name: name, size: -1, open: func() (io.ReadCloser, error) {
		return io.NopCloser(r), nil
	}}
}

// fileScript is a script file. A regular file is checked in full before it
// runs; a pipe or device, which can be read only once, is not.
func fileScript(path string) (script, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return script{}, err
	}
	return script{name: path, checkFirst: fi.Mode().IsRegular(), size: fi.Size(), open: func() (io.ReadCloser, error) {
		return os.Open(path)
	}}, nil
}

// echoEach reads a script one statement at a time and, for each in turn,
// prints it and runs it through one; it stops at the first error. Memory is
// bounded by the largest statement, not by the script: an INSERT … VALUES
// of more than insertBatch tuples comes in parts (see lang.Reader), each
// echoed as it comes — the first with the statement's head, the next ones
// as rows — and each run on its own. With s.checkFirst, a syntax error
// anywhere in the script stops it before anything runs.
func echoEach(out io.Writer, echo bool, s script, one func(lang.Statement, lang.Part) error) error {
	echoOne := func(st lang.Statement, part lang.Part) error {
		if !echo {
			return one(st, part)
		}
		var text string
		if part.Row == 0 {
			text = "\n" + lang.Print(st)
		} else {
			text = lang.PrintRows(st.(*lang.Insert).Rows)
		}
		if part.More {
			text += ",\n"
		} else {
			text += ";\n"
		}
		fmt.Fprint(out, types.EscapeText(text))
		return one(st, part)
	}
	switch {
	case s.checkFirst && s.size <= keepBelow:
		// A short script (a shell statement, -e): check it whole, keeping
		// its statements, then run them.
		type item struct {
			st   lang.Statement
			part lang.Part
		}
		var items []item
		if err := eachStatement(s, func(st lang.Statement, part lang.Part) error {
			items = append(items, item{st, part})
			return nil
		}); err != nil {
			return err
		}
		for _, it := range items {
			if err := echoOne(it.st, it.part); err != nil {
				return err
			}
		}
		return nil
	case s.checkFirst:
		if err := eachStatement(s, func(lang.Statement, lang.Part) error { return nil }); err != nil {
			return err
		}
	}
	return eachStatement(s, echoOne)
}

// eachStatement reads s one statement (or INSERT part) at a time.
func eachStatement(s script, fn func(lang.Statement, lang.Part) error) error {
	var rd *lang.Reader
	if s.text != nil {
		rd = lang.NewStringReader(s.name, *s.text)
	} else {
		rc, err := s.open()
		if err != nil {
			return err
		}
		defer rc.Close()
		rd = lang.NewReader(s.name, rc)
	}
	rd.SplitInserts(insertBatch)
	for {
		st, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(st, rd.Part()); err != nil {
			return err
		}
	}
}

func isTx(st lang.Statement) bool {
	_, ok := st.(*lang.Transaction)
	return ok
}

func isDefine(st lang.Statement) bool {
	switch st.(type) {
	case *lang.DefineRelation, *lang.DefineSchema, *lang.DropSchema:
		return true
	}
	return false
}

func indent(s string) string {
	return "  | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  | ") + "\n"
}

// storeEnv names the environment variable that gives the store URL when
// --store does not.
const storeEnv = "KVSCHEMA_STORE"

// storeURL is the --store flag's URL, else $KVSCHEMA_STORE's.
func storeURL(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if url := os.Getenv(storeEnv); url != "" {
		return url, nil
	}
	return "", fmt.Errorf("no store: give --store URL (pebble:DIR, mem: for a throwaway one, bigtable://PROJECT/INSTANCE) or set %s", storeEnv)
}

// storeFlag adds --store to c, and --create when create is not nil.
func storeFlag(c *cobra.Command, url *string, create *bool) {
	c.Flags().StringVar(url, "store", "", "store URL: pebble:DIR, mem: (in memory, gone at exit) or bigtable://PROJECT/INSTANCE; default $"+storeEnv)
	if create != nil {
		c.Flags().BoolVar(create, "create", false, "make a new Pebble store if the directory holds none")
	}
}

// open opens the store url (from --store or $KVSCHEMA_STORE) as a DB. A
// pebble: directory that holds no store is an error unless create is set,
// so that a mistyped path does not silently give an empty store.
func open(ctx context.Context, url string, trace io.Writer, create bool) (*kvschema.DB, error) {
	return openWith(ctx, url, create, kvschema.Options{Trace: trace})
}

// openWith is open with the DB's options.
func openWith(ctx context.Context, url string, create bool, opts kvschema.Options) (*kvschema.DB, error) {
	url, err := storeURL(url)
	if err != nil {
		return nil, err
	}
	if dir, ok := strings.CutPrefix(url, "pebble:"); ok && !create {
		dir, _, _ = strings.Cut(dir, "?")
		exists, err := pebblestore.Exists(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		if !exists {
			return nil, fmt.Errorf("%s: no store in %s (check the path; --create makes a new one, and so does kvschema load)", url, dir)
		}
	}
	return kvschema.Open(ctx, url, opts)
}

func execCmd() *cobra.Command {
	var url string
	var files []string
	var exprs []string
	var trace, explain, quiet, echo, create bool
	var format string
	var schemaRate float64
	cmd := &cobra.Command{
		Use: "exec --store URL [-f FILE | -e STATEMENT]... [-q] [--format table|vertical|csv|json|jsonl]",
		Example: `  kvschema exec --store pebble:/tmp/db -f schema.kvs
  kvschema exec --store pebble:/tmp/db -e "SELECT * FROM r WHERE k1 = 'a1'" --explain
  echo "SELECT * FROM r;" | kvschema exec --store pebble:/tmp/db -q --format csv`,
		Short: "Run statements from files or the command line",
		Long: `Run kvschema statements (DEFINE RELATION, DEFINE SCHEMA, INSERT, SELECT,
UPDATE, DELETE, EXPLAIN) against a store. Store URLs: mem: (in memory),
pebble:DIR (on disk), bigtable://PROJECT/INSTANCE[?emulator=HOST:PORT] (Cloud
Bigtable or its emulator; the parameter timeout=30s bounds each call).
Definitions persist in the store.

On a store loaded with an advisor schema (kvschema load), statements are
written against the conceptual model (path notation or joins along foreign
keys; INSERT … AND CONNECT TO, CONNECT, DISCONNECT) and run on the plans the
advisor's planner picks over the deployed column families and indexes.

Scripts are read and run one statement at a time (--echo prints each before
its result), so memory does not
grow with the script. A file's syntax is checked in full before its first
statement runs (a regular file is read twice; a pipe is read once, and runs
up to its first syntax error). Each statement is atomic, except that an
INSERT … VALUES of more than 1000 tuples is applied in batches of 1000
tuples, each batch atomic: if batch k fails, batches 1 to k-1 stay applied
and nothing from batch k on is; the error says how many tuples were applied
and gives the position of the failing tuple (or of its batch's first).

Without -f or -e, the script is read from standard input (so does -f -):

  kvschema exec --store pebble:/tmp/db < script.kvs
  echo 'SELECT * FROM r;' | kvschema exec --store pebble:/tmp/db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 && len(exprs) == 0 {
				if f, ok := cmd.InOrStdin().(*os.File); ok && f == os.Stdin && isTerminal() {
					return errors.New("nothing to run: give -f FILE or -e STATEMENT, or pipe a script on standard input")
				}
				files = []string{"-"}
			}
			out := cmd.OutOrStdout()
			var tw io.Writer
			if trace {
				tw = out
			}
			if schemaRate < 0 || math.IsNaN(schemaRate) {
				return fmt.Errorf("--schema-rate %v: want a number of rows a second ≥ 0", schemaRate)
			}
			// An online layout change (DEFINE SCHEMA of a relation that
			// holds tuples, DROP SCHEMA) shows its copy or deletion.
			meter := progress.New(cmd.ErrOrStderr(), "schema", "rows", 0)
			defer meter.Finish()
			db, err := openWith(cmd.Context(), url, create, kvschema.Options{Trace: tw, SchemaRate: schemaRate, SchemaProgress: func(ev kvschema.SchemaEvent) {
				name := ev.Step + " " + ev.Schema
				if ev.Done {
					meter.Done(name, ev.Rows)
				} else {
					meter.Update(name, ev.Rows, 0)
				}
			}})
			if err != nil {
				return err
			}
			defer db.Close()
			if !slices.Contains(formats, format) {
				return fmt.Errorf("--format %s: want one of %s", format, strings.Join(formats, ", "))
			}
			// One session for every script: BEGIN in one may COMMIT in a
			// later one. An error, or the end, rolls an open transaction
			// back.
			r := &runner{db: db, out: out, explain: explain, quiet: quiet, echo: echo, format: format}
			defer r.end()
			for _, f := range files {
				var s script
				if f == "-" {
					s = readerScript("stdin", cmd.InOrStdin())
				} else if s, err = fileScript(f); err != nil {
					return err
				}
				if err := r.runScript(cmd.Context(), s); err != nil {
					return err
				}
			}
			for i, e := range exprs {
				if err := r.runScript(cmd.Context(), textScript(fmt.Sprintf("-e#%d", i+1), e)); err != nil {
					return err
				}
			}
			return r.end()
		},
	}
	storeFlag(cmd, &url, &create)
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "script file to run (repeatable; - is standard input)")
	cmd.Flags().StringArrayVarP(&exprs, "execute", "e", nil, "statement(s) to run (repeatable)")
	cmd.Flags().BoolVar(&trace, "trace", false, "print every key-value operation (put, get, scan, delete with their keys)")
	cmd.Flags().BoolVar(&explain, "explain", false, "print each statement's plan before running it")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only results (rows, plans), no counts of written tuples")
	cmd.Flags().BoolVar(&echo, "echo", false, "print each statement before its result")
	cmd.Flags().Float64Var(&schemaRate, "schema-rate", 0, "tuples a second an online DEFINE SCHEMA copies into its new layout and rows a second DROP SCHEMA deletes (0: no bound)")
	cmd.Flags().StringVar(&format, "format", "table", "how rows print: table, vertical (a block of column | value lines per row), csv, json (an array per query) or jsonl (an object per row)")
	return cmd
}

func shellCmd() *cobra.Command {
	var url string
	var create bool
	cmd := &cobra.Command{
		Use:     "shell --store URL",
		Example: `  kvschema shell --store pebble:/tmp/db`,
		Short:   "Interactive shell (statements end with ';'; help lists its commands)",
		Long: `An interactive shell over a store: the statements exec runs, on the
relations defined with DEFINE RELATION / DEFINE SCHEMA and on an advised
schema loaded into the store (kvschema load) alike.

` + shellHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return shell(cmd.Context(), url, create, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	storeFlag(cmd, &url, &create)
	return cmd
}

func demoCmd() *cobra.Command {
	var keep, client bool
	var scale float64
	var iterations int
	cmd := &cobra.Command{
		Use: "demo",
		Example: `  kvschema demo
  kvschema demo --client`,
		Short: "Advise RUBiS, load generated data into a temporary Pebble store, run statements with EXPLAIN, verify",
		Long: `The main job end to end on a temporary Pebble store: advise the paper's
61-statement RUBiS workload (mix bidding, 161MB, so secondary indexes appear),
load generated data into every column family and index, run statements with
their plans, time every workload query and verify the store.
With --client: a walk-through of relations mapped onto hand-written layouts
(DEFINE RELATION / DEFINE SCHEMA) instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "kvschema-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			out := cmd.OutOrStdout()
			url := "pebble:" + filepath.Join(dir, "db")
			if !client {
				fmt.Fprintf(out, "-- store %s\n", url)
				return rubisDemo(cmd.Context(), dir, scale, iterations, out, cmd.ErrOrStderr())
			}
			fmt.Fprintf(out, "-- store %s\n", url)
			db, err := open(cmd.Context(), url, out, true)
			if err != nil {
				return err
			}
			defer db.Close()
			r := &runner{db: db, out: out, echo: true}
			return r.run(cmd.Context(), "examples/seed003.kvs", []byte(examples.Seed003))
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary store")
	cmd.Flags().BoolVar(&client, "client", false, "walk through relations on hand-written layouts instead")
	cmd.Flags().Float64Var(&scale, "scale", 0.002, "RUBiS data scale (1.0 = 200,000 users)")
	cmd.Flags().IntVar(&iterations, "iterations", 50, "runs of each workload query")
	return cmd
}

func isTerminal() bool {
	fi, err := os.Stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
