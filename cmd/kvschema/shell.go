package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/peterh/liner"
	"golang.org/x/term"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/types"
)

// shellHelp lists what the shell takes besides statements.
const shellHelp = `Statements (DEFINE, DROP SCHEMA, INSERT, SELECT, UPDATE, DELETE, CONNECT,
DISCONNECT, EXPLAIN) end with ';' and may span lines. BEGIN; opens a transaction (the
prompt shows kvschema*>): later statements see its writes, nobody else does
until COMMIT; applies them all at once; ROLLBACK; drops them. A select list
takes COUNT(*), COUNT, MIN, MAX, SUM and AVG (of DISTINCT values too), with
GROUP BY, HAVING and ORDER BY of aggregates. Ctrl-C clears
the statement being typed (or stops the one running); Ctrl-D leaves (an
open transaction is rolled back). Tab completes keywords and names. Shell
commands (one line, ';' optional, any case):
  DESCRIBE [SCHEMA | name]   the definitions of a relation, layout, column
                             family or index (all of them without a name)
  SHOW TABLES                relations, layouts, column families, indexes
  TIMING ON|OFF              print how long each statement took
  EXPAND ON|OFF              print each row as a block of column | value lines
  PAGING ON|OFF              long results through $PAGER (less) on a terminal
  TRACING ON|OFF             print every key-value operation (also .trace)
  SOURCE 'file'              run a script file
  CAPTURE 'file' | OFF       also write results to a file (appending)
  .explain on|off            print plans before running statements
  .schema                    the same as DESCRIBE SCHEMA
  help                       this text
  exit, quit                 leave
`

// shellKeywords are the words tab completion offers besides names.
var shellKeywords = strings.Fields(`SELECT FROM WHERE AND OR NOT IN BETWEEN IS NULL TRUE FALSE
	ORDER BY ASC DESC LIMIT INSERT INTO VALUES UPDATE SET DELETE EXPLAIN DEFINE RELATION
	SCHEMA PRIMARY KEY TABLE ROW FAMILY QUALIFIER VALUE COLUMN SECONDARY INDEX ON CONNECT
	DISCONNECT TO JOIN STRING INT BIGINT FLOAT DOUBLE BOOL BYTES TIMESTAMP DESCRIBE SHOW
	TABLES TIMING EXPAND PAGING TRACING SOURCE CAPTURE OFF HELP EXIT QUIT BEGIN COMMIT ROLLBACK
	GROUP COUNT MIN MAX SUM AVG DROP`)

// session is one shell: its settings and where its output goes.
type session struct {
	r       *runner
	trace   *traceSwitch
	term    io.Writer // the shell's own output
	capture *os.File  // CAPTURE's file, or nil
	timing  bool
	paging  bool // possible only when term is a terminal (pageable)
	// pageable: output goes to a terminal whose height is known, so a
	// long result can go through a pager.
	pageable bool
	// interrupts delivers Ctrl-C pressed while a statement runs.
	interrupts chan os.Signal
}

// shell is the REPL: line editing, history and completion on a terminal
// (liner), statements spanning lines until ';', shell commands for
// settings and descriptions.
func shell(ctx context.Context, url string, create bool, in io.Reader, out io.Writer) error {
	var trace traceSwitch
	trace.w = out
	db, err := open(ctx, url, &trace, create)
	if err != nil {
		return err
	}
	defer db.Close()
	s := &session{r: &runner{db: db, out: out}, trace: &trace, term: out}
	interactive := false
	if f, ok := in.(*os.File); ok && f == os.Stdin && isTerminal() {
		interactive = true
	}
	if f, ok := out.(*os.File); ok && interactive && term.IsTerminal(int(f.Fd())) {
		s.pageable, s.paging = true, true
	}
	if interactive {
		// Ctrl-C between prompts (while a statement runs) cancels the
		// statement instead of killing the shell.
		s.interrupts = make(chan os.Signal, 1)
		signal.Notify(s.interrupts, os.Interrupt)
		defer signal.Stop(s.interrupts)
	}
	next, closeInput := s.lineReader(ctx, in, out, interactive)
	defer func() {
		closeInput()
		if s.capture != nil {
			s.capture.Close()
		}
	}()
	// Leaving rolls back a transaction left open, and says so.
	defer func() {
		if err := s.r.end(); err != nil {
			fmt.Fprintln(out, "error: "+err.Error())
		}
	}()
	var buf strings.Builder
	for {
		prompt := "kvschema> "
		if s.r.sess != nil && s.r.sess.InTx() {
			prompt = "kvschema*> "
		}
		if buf.Len() > 0 {
			prompt = strings.Repeat(" ", len(prompt)-4) + "... "
		}
		line, err := next(prompt)
		if errors.Is(err, liner.ErrPromptAborted) {
			buf.Reset() // Ctrl-C: drop what was typed, as psql and cqlsh do
			continue
		}
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
		if buf.Len() == 0 {
			if trimmed == "" {
				continue
			}
			if handled, quit := s.command(ctx, trimmed); quit {
				return nil
			} else if handled {
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if !strings.HasSuffix(trimmed, ";") {
			continue
		}
		src := buf.String()
		buf.Reset()
		s.statement(ctx, "shell", func(ctx context.Context) error {
			return s.r.run(ctx, "shell", []byte(src))
		}, src, true)
	}
}

// statement runs one statement (or script) with its output paged (when
// page is set and paging is on: a script's output streams instead) and
// captured as set, then prints its error, with a caret under the position
// it names when src is the text it was read from, and its time.
func (s *session) statement(ctx context.Context, file string, run func(context.Context) error, src string, page bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.interrupts != nil {
		select {
		case <-s.interrupts: // pressed before this statement began
		default:
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-s.interrupts:
				cancel()
			case <-done:
			}
		}()
	}
	var buf bytes.Buffer
	var out io.Writer = s.term
	if page && s.paging && s.pageable {
		out = &buf
	}
	if s.capture != nil {
		out = io.MultiWriter(out, s.capture)
	}
	s.r.out = out
	start := time.Now()
	err := run(ctx)
	took := time.Since(start)
	s.r.out = s.term
	if buf.Len() > 0 {
		s.page(buf.Bytes())
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			err = errors.New("cancelled (Ctrl-C)")
		}
		msg := "error: " + types.EscapeText(err.Error()) + "\n" + caret(err, file, src)
		fmt.Fprint(s.term, msg)
		if s.capture != nil {
			fmt.Fprint(s.capture, msg)
		}
	}
	if s.timing {
		fmt.Fprintf(s.term, "Time: %.3f ms\n", float64(took.Microseconds())/1000)
	}
}

// caret returns the line of src an error's position names, with a caret
// under the column, when the error is positioned in file.
func caret(err error, file, src string) string {
	var le *lang.Error
	if src == "" || !errors.As(err, &le) || le.Pos.File != file || le.Pos.Line < 1 {
		return ""
	}
	lines := strings.Split(src, "\n")
	if le.Pos.Line > len(lines) {
		return ""
	}
	line := lines[le.Pos.Line-1]
	col := min(max(le.Pos.Col, 1), len(line)+1)
	// Columns count bytes; the caret goes under the escaped text's rune.
	lead := utf8.RuneCountInString(types.EscapeText(line[:col-1]))
	return "  " + types.EscapeText(line) + "\n  " + strings.Repeat(" ", lead) + "^\n"
}

// page prints a result, through the pager when it is taller than the
// terminal.
func (s *session) page(b []byte) {
	f, _ := s.term.(*os.File)
	_, height, err := term.GetSize(int(f.Fd()))
	if err != nil || bytes.Count(b, []byte("\n")) < height-1 {
		s.term.Write(b)
		return
	}
	pager := os.Getenv("PAGER")
	if pager == "" {
		pager = "less -FRX"
	}
	cmd := osexec.Command("sh", "-c", pager)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(b), f, os.Stderr
	if err := cmd.Run(); err != nil {
		s.term.Write(b) // no pager: print it all
	}
}

// command runs a shell command (help, exit, DESCRIBE, settings, …);
// handled is false when line is the start of a statement instead.
func (s *session) command(ctx context.Context, line string) (handled, quit bool) {
	words := strings.Fields(strings.TrimSpace(strings.TrimSuffix(line, ";")))
	if len(words) == 0 {
		return false, false
	}
	arg := func(i int) string {
		if i < len(words) {
			return strings.ToLower(words[i])
		}
		return ""
	}
	out := s.term
	switch arg(0) {
	case "help", "?", ".help", `\?`, `\h`:
		fmt.Fprint(out, shellHelp)
	case "exit", "quit", ".exit", ".quit", `\q`:
		return true, true
	case ".trace", "tracing":
		s.setting(words, "Tracing", &s.trace.on)
	case ".explain":
		s.setting(words, "Plans", &s.r.explain)
	case "timing":
		s.setting(words, "Timing", &s.timing)
	case "paging":
		s.setting(words, "Paging", &s.paging)
		if s.paging && !s.pageable {
			fmt.Fprintln(out, "(output is not a terminal: results print whole)")
		}
	case "expand":
		on := s.r.format == "vertical"
		s.setting(words, "Expanded display", &on)
		s.r.format = map[bool]string{true: "vertical", false: "table"}[on]
	case ".schema":
		s.describe(ctx, "")
	case ".tables":
		s.showTables(ctx)
	case "show":
		if arg(1) != "tables" || len(words) > 2 {
			fmt.Fprintln(out, "error: SHOW takes TABLES")
			break
		}
		s.showTables(ctx)
	case "describe", "desc":
		name := ""
		if len(words) > 1 {
			name = strings.Trim(words[len(words)-1], `"'`)
		}
		if strings.EqualFold(name, "tables") {
			s.showTables(ctx)
			break
		}
		s.describe(ctx, name)
	case "source":
		path := strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line[len(words[0]):]), ";")), `'"`)
		if path == "" {
			fmt.Fprintln(out, "error: SOURCE takes a file name")
			break
		}
		scr, err := fileScript(path)
		if err != nil {
			fmt.Fprintln(out, "error:", types.EscapeText(err.Error()))
			break
		}
		s.statement(ctx, path, func(ctx context.Context) error { return s.r.runScript(ctx, scr) }, "", false)
	case "capture":
		s.setCapture(strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line[len(words[0]):]), ";")), `'"`))
	default:
		return false, false
	}
	return true, false
}

// setting sets a flag from ON or OFF, or says how it is set.
func (s *session) setting(words []string, what string, flag *bool) {
	state := func() string { return map[bool]string{true: "on", false: "off"}[*flag] }
	switch {
	case len(words) == 1:
		fmt.Fprintf(s.term, "%s is %s.\n", what, state())
		return
	case len(words) == 2 && strings.EqualFold(words[1], "on"):
		*flag = true
	case len(words) == 2 && strings.EqualFold(words[1], "off"):
		*flag = false
	default:
		fmt.Fprintf(s.term, "error: %s takes ON or OFF\n", strings.ToUpper(strings.TrimPrefix(words[0], ".")))
		return
	}
	fmt.Fprintf(s.term, "%s is %s.\n", what, state())
}

func (s *session) setCapture(path string) {
	if s.capture != nil {
		s.capture.Close()
		s.capture = nil
	}
	switch {
	case path == "":
		fmt.Fprintln(s.term, "error: CAPTURE takes a file name or OFF")
	case strings.EqualFold(path, "off"):
		fmt.Fprintln(s.term, "Capture is off.")
	default:
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(s.term, "error:", types.EscapeText(err.Error()))
			return
		}
		s.capture = f
		fmt.Fprintf(s.term, "Capturing results to %s.\n", types.EscapeText(path))
	}
}

func (s *session) describe(ctx context.Context, name string) {
	text, err := s.r.db.Describe(ctx, name)
	s.print(text, err)
}

func (s *session) showTables(ctx context.Context) {
	objs, err := s.r.db.Objects(ctx)
	if err != nil {
		s.print("", err)
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tkind\tof\ttable\tdefined by")
	for _, o := range objs {
		by := "DEFINE"
		if o.Advised {
			by = "advised schema"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", o.Name, o.Kind, o.Of, o.Table, by)
	}
	tw.Flush()
	fmt.Fprintf(&b, "(%d row%s)\n", len(objs), map[bool]string{true: "", false: "s"}[len(objs) == 1])
	s.print(b.String(), nil)
}

// print prints a command's text or error, captured as results are.
func (s *session) print(text string, err error) {
	if err != nil {
		text = "error: " + err.Error() + "\n"
	}
	text = types.EscapeText(text)
	fmt.Fprint(s.term, text)
	if s.capture != nil {
		fmt.Fprint(s.capture, text)
	}
}

// complete is liner's word completer: keywords (in the case of what was
// typed) and the names of the catalog's relations, attributes, layouts,
// column families and indexes.
func (s *session) complete(ctx context.Context, line string, pos int) (head string, out []string, tail string) {
	head, tail = line[:pos], line[pos:]
	start := strings.LastIndexFunc(head, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) + 1
	word := head[start:]
	head = head[:start]
	if word == "" {
		return head, nil, tail
	}
	prefix := strings.ToLower(word)
	lower := strings.ToLower(word) == word
	for _, k := range shellKeywords {
		if strings.HasPrefix(strings.ToLower(k), prefix) {
			if lower {
				k = strings.ToLower(k)
			}
			out = append(out, k)
		}
	}
	for _, n := range s.names(ctx) {
		if strings.HasPrefix(strings.ToLower(n), prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return head, slices.Compact(out), tail
}

// names lists the catalog's names for completion.
func (s *session) names(ctx context.Context) []string {
	objs, err := s.r.db.Objects(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.Name)
	}
	cat := s.r.db.Catalog()
	for _, r := range cat.Relations {
		for _, a := range r.Attrs {
			out = append(out, a.Name)
		}
	}
	if a := cat.Advised; a != nil {
		for _, e := range a.Model.Entities {
			for _, c := range e.Columns {
				out = append(out, c.Name)
			}
			for _, n := range e.Navs {
				out = append(out, n.Name)
			}
		}
	}
	return out
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

// lineReader reads lines with editing, history and completion on a
// terminal, plainly otherwise (pipes, tests): Ctrl-C gives
// liner.ErrPromptAborted, Ctrl-D io.EOF.
func (s *session) lineReader(ctx context.Context, in io.Reader, out io.Writer, interactive bool) (next func(prompt string) (string, error), closeFn func()) {
	if interactive {
		st := liner.NewLiner()
		st.SetMultiLineMode(true)
		st.SetCtrlCAborts(true)
		st.SetTabCompletionStyle(liner.TabPrints)
		st.SetWordCompleter(func(line string, pos int) (string, []string, string) {
			return s.complete(ctx, line, pos)
		})
		hist := filepath.Join(os.Getenv("HOME"), ".kvschema_history")
		if h, err := os.Open(hist); err == nil {
			st.ReadHistory(h)
			h.Close()
		}
		return func(prompt string) (string, error) {
				line, err := st.Prompt(prompt)
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
	// A line at a time (never the whole input), echoed — escaped, like
	// everything printed — so that the transcript reads as on a terminal.
	br := bufio.NewReader(in)
	return func(prompt string) (string, error) {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			return "", err
		}
		fmt.Fprint(out, prompt)
		l := strings.TrimSuffix(line, "\n")
		fmt.Fprintln(out, types.EscapeText(l))
		return l, nil
	}, func() {}
}
