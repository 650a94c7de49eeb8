// Command kvschema is the command-line interface of kvschema: it wires the
// Go API to files, a REPL and a demo.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/engine"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/store"
	"github.com/kvschema/kvschema/store/tracestore"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kvschema:", err)
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
	root.AddCommand(execCmd(), shellCmd(), demoCmd(), adviseCmd(), costCmd(), exportCmd(), loadCmd(), verifyCmd(), repairCmd(), benchCmd(), calibrateCmd())
	return root
}

// runner runs scripts against a DB and prints results.
type runner struct {
	db      *kvschema.DB
	out     io.Writer
	explain bool
}

// run echoes each statement, prints its plan when asked, runs it (the trace,
// if on, prints its key-value operations) and prints its result.
func (r *runner) run(ctx context.Context, file string, src []byte) error {
	return echoEach(r.out, file, src, func(st lang.Statement) error {
		if _, isExplain := st.(*lang.Explain); r.explain && !isExplain && !isDefine(st) {
			// Explain the parsed statement itself, not a reprint of it, so
			// that an error names the script's file:line:col.
			res, _, err := r.db.RunStatement(ctx, &lang.Explain{At: st.Pos(), Stmt: st})
			if err != nil {
				return err
			}
			fmt.Fprint(r.out, indent(res.Plan))
		}
		res, rows, err := r.db.RunStatement(ctx, st)
		if err != nil {
			return err
		}
		switch {
		case rows != nil:
			if err := rows.WriteTable(r.out); err != nil {
				return err
			}
		case res.Plan != "":
			fmt.Fprint(r.out, res.Plan)
		case res.Statement != "DEFINE":
			fmt.Fprintf(r.out, "%s %d\n", res.Statement, res.RowsAffected)
		}
		return nil
	})
}

// echoEach parses a script and, for each statement in turn, prints it and
// runs it through one; it stops at the first error.
func echoEach(out io.Writer, file string, src []byte, one func(lang.Statement) error) error {
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		fmt.Fprintf(out, "\n%s;\n", lang.Print(st))
		if err := one(st); err != nil {
			return err
		}
	}
	return nil
}

func isDefine(st lang.Statement) bool {
	switch st.(type) {
	case *lang.DefineRelation, *lang.DefineSchema:
		return true
	}
	return false
}

func indent(s string) string {
	return "  | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  | ") + "\n"
}

func open(ctx context.Context, url string, trace io.Writer) (*kvschema.DB, error) {
	return kvschema.Open(ctx, url, kvschema.Options{Trace: trace})
}

func execCmd() *cobra.Command {
	var url string
	var files []string
	var exprs []string
	var trace, explain bool
	cmd := &cobra.Command{
		Use:   "exec --store URL (-f FILE | -e STATEMENT)...",
		Short: "Run statements from files or the command line",
		Long: `Run kvschema statements (DEFINE RELATION, DEFINE SCHEMA, INSERT, SELECT,
UPDATE, DELETE, EXPLAIN) against a store. Store URLs: mem: (in memory),
pebble:DIR (on disk), bigtable://PROJECT/INSTANCE[?emulator=HOST:PORT] (Cloud
Bigtable or its emulator). Definitions persist in the store.

On a store loaded with an advisor schema (kvschema load), statements are
written against the conceptual model (path notation or joins along foreign
keys; INSERT … AND CONNECT TO, CONNECT, DISCONNECT) and run on the plans the
advisor's planner picks over the deployed column families and indexes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 && len(exprs) == 0 {
				return errors.New("nothing to run: give -f FILE or -e STATEMENT")
			}
			out := cmd.OutOrStdout()
			var tw io.Writer
			if trace {
				tw = out
			}
			st, err := store.Open(cmd.Context(), url)
			if err != nil {
				return err
			}
			defer st.Close()
			var r interface {
				run(ctx context.Context, file string, src []byte) error
			}
			traced := st
			if tw != nil {
				traced = tracestore.New(st, tw)
			}
			if en, err := engine.Open(cmd.Context(), traced); err == nil {
				// A store loaded with an advisor schema: model-level statements.
				r = &engineRunner{en: en, out: out, explain: explain}
			} else if !errors.Is(err, engine.ErrNoSchema) {
				return err
			} else {
				db, err := kvschema.New(cmd.Context(), st, kvschema.Options{Trace: tw})
				if err != nil {
					return err
				}
				defer db.Close()
				r = &runner{db: db, out: out, explain: explain}
			}
			for _, f := range files {
				src, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if err := r.run(cmd.Context(), f, src); err != nil {
					return err
				}
			}
			for i, e := range exprs {
				if err := r.run(cmd.Context(), fmt.Sprintf("-e#%d", i+1), []byte(e)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "store", "mem:", "store URL: mem: or pebble:DIR")
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "script file to run (repeatable)")
	cmd.Flags().StringArrayVarP(&exprs, "execute", "e", nil, "statement(s) to run (repeatable)")
	cmd.Flags().BoolVar(&trace, "trace", false, "print every key-value operation (seed 003 notation)")
	cmd.Flags().BoolVar(&explain, "explain", false, "print each statement's plan before running it")
	return cmd
}

func shellCmd() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "shell --store URL",
		Short: "Interactive shell (statements end with ';'; .help for commands)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return shell(cmd.Context(), url, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&url, "store", "mem:", "store URL: mem: or pebble:DIR")
	return cmd
}

func demoCmd() *cobra.Command {
	var keep, client bool
	var scale float64
	var iterations int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Advise RUBiS, load generated data into a temporary Pebble store, run statements with EXPLAIN, verify",
		Long: `The main job end to end on a temporary Pebble store: advise the paper's
61-statement RUBiS workload (mix bidding, 161MB, so secondary indexes appear),
load generated data into every column family and index, run statements with
their plans, time every workload query and verify the store.
With --client: seed 003's walk-through of the schema-defined client instead.`,
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
			db, err := open(cmd.Context(), url, out)
			if err != nil {
				return err
			}
			defer db.Close()
			r := &runner{db: db, out: out}
			return r.run(cmd.Context(), "examples/seed003.kvs", []byte(examples.Seed003))
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary store")
	cmd.Flags().BoolVar(&client, "client", false, "seed 003's walk-through of the schema-defined client")
	cmd.Flags().Float64Var(&scale, "scale", 0.002, "RUBiS data scale (1.0 = 200,000 users)")
	cmd.Flags().IntVar(&iterations, "iterations", 50, "runs of each workload query")
	return cmd
}

// shell is the REPL: line editing and history (liner), statements spanning
// lines until ';', dot-commands for settings.
func shell(ctx context.Context, url string, in io.Reader, out io.Writer) error {
	var trace traceSwitch
	trace.w = out
	db, err := open(ctx, url, &trace)
	if err != nil {
		return err
	}
	defer db.Close()
	r := &runner{db: db, out: out}

	next, closeInput := lineReader(in, out)
	defer closeInput()
	var buf strings.Builder
	for {
		prompt := "kvschema> "
		if buf.Len() > 0 {
			prompt = "      ... "
		}
		line, err := next(prompt)
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(out)
			if strings.TrimSpace(buf.String()) != "" {
				// Say so rather than drop the statement silently.
				fmt.Fprintln(out, "error: statement not run: input ended before its ';'")
			}
			return nil
		}
		if err != nil {
			return err
		}
		trimmed := strings.TrimSpace(line)
		if buf.Len() == 0 && strings.HasPrefix(trimmed, ".") {
			if quit := dotCommand(trimmed, r, &trace, out); quit {
				return nil
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if !strings.HasSuffix(trimmed, ";") {
			continue
		}
		src := buf.String()
		buf.Reset()
		if err := r.run(ctx, "shell", []byte(src)); err != nil {
			fmt.Fprintln(out, "error:", err)
		}
	}
}

// traceSwitch lets the shell turn tracing on and off.
type traceSwitch struct {
	w  io.Writer
	on bool
}

func (t *traceSwitch) Write(p []byte) (int, error) {
	if !t.on {
		return len(p), nil
	}
	return t.w.Write(p)
}

func dotCommand(cmd string, r *runner, trace *traceSwitch, out io.Writer) (quit bool) {
	f := strings.Fields(cmd)
	on := len(f) > 1 && f[1] == "on"
	switch f[0] {
	case ".quit", ".exit":
		return true
	case ".trace":
		trace.on = on
	case ".explain":
		r.explain = on
	case ".schema":
		fmt.Fprint(out, lang.PrintScript(r.db.Catalog().Defs))
	default:
		fmt.Fprintln(out, `.trace on|off     print key-value operations
.explain on|off   print plans before running statements
.schema           print the definitions
.quit             leave`)
	}
	return false
}

// lineReader reads lines with editing and history on a terminal, plainly
// otherwise (pipes, tests).
func lineReader(in io.Reader, out io.Writer) (next func(prompt string) (string, error), closeFn func()) {
	if f, ok := in.(*os.File); ok && f == os.Stdin && isTerminal() {
		st := liner.NewLiner()
		st.SetMultiLineMode(true)
		hist := filepath.Join(os.Getenv("HOME"), ".kvschema_history")
		if h, err := os.Open(hist); err == nil {
			st.ReadHistory(h)
			h.Close()
		}
		return func(prompt string) (string, error) {
				line, err := st.Prompt(prompt)
				if errors.Is(err, liner.ErrPromptAborted) {
					return "", io.EOF
				}
				if err == nil && strings.TrimSpace(line) != "" {
					st.AppendHistory(line)
				}
				return line, err
			}, func() {
				if h, err := os.Create(hist); err == nil {
					st.WriteHistory(h)
					h.Close()
				}
				st.Close()
			}
	}
	data, err := io.ReadAll(in)
	lines := strings.SplitAfter(string(data), "\n")
	return func(prompt string) (string, error) {
		if err != nil {
			return "", err
		}
		for len(lines) > 0 && lines[0] == "" {
			lines = lines[1:]
		}
		if len(lines) == 0 {
			return "", io.EOF
		}
		fmt.Fprint(out, prompt)
		l := strings.TrimSuffix(lines[0], "\n")
		lines = lines[1:]
		fmt.Fprintln(out, l)
		return l, nil
	}, func() {}
}

func isTerminal() bool {
	fi, err := os.Stdin.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
