package solver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CBC solves models by running the COIN-OR CBC binary (Debian package
// coinor-cbc, tested with 2.10.x) on an LP file in a temporary directory and
// reading back its solution file. The zero value is ready to use. A CBC may
// be used concurrently unless KeepFiles is set (runs would share the files).
type CBC struct {
	// Path is the cbc binary; "" looks up "cbc" in PATH.
	Path string
	// TimeLimit stops the search after this long (cbc "sec"); 0 means no
	// limit. A stopped run reports Feasible or NoSolution. cbc checks the
	// limit only now and then, so it may overrun it slightly.
	TimeLimit time.Duration
	// Threads is cbc's "threads" setting; 0 keeps cbc's default.
	Threads int
	// RelGap is cbc's "ratioGap": stop once the incumbent is proven within
	// this relative gap of the optimum, and report it as Optimal with Gap
	// set. 0 means prove optimality.
	RelGap float64
	// KeepFiles, if non-empty, is a directory (created if missing) where
	// model.lp, solution.txt and cbc.log are written and kept for debugging,
	// overwriting earlier ones.
	KeepFiles string
	// Args are extra cbc parameters placed before "solve", e.g.
	// {"cuts", "off"}.
	Args []string
	// Interrupt, if set, asks a running cbc to stop when it delivers or is
	// closed, as Ctrl-C asks cbc: the solve then returns the best solution
	// found so far (status Feasible, with its proven gap), or NoSolution.
	// Cancelling the context instead kills cbc and loses that solution.
	// With Interrupt set, cbc runs in a process group of its own, so that
	// a terminal's Ctrl-C reaches only the program, which forwards it.
	Interrupt <-chan struct{}
	// Progress, if set, receives a line whenever cbc reports a new
	// incumbent or its periodic node count, e.g. "148 nodes, best 10.4606,
	// bound 10.4074 (gap 0.51%), 4.4s". cbc is run under `stdbuf -oL`
	// where available, so that its reports arrive as it makes them.
	Progress func(report string)
}

const (
	cbcModelFile = "model.lp"
	cbcSolFile   = "solution.txt"
	cbcLPFile    = "relaxation.txt" // the LP relaxation's solution (Tuning.Duals)
	cbcLogFile   = "cbc.log"
	cbcStartFile = "start.sol"
	cbcInstall   = "install it with `apt-get install coinor-cbc`"
)

// Name returns "cbc".
func (c *CBC) Name() string { return "cbc" }

// ErrInterrupted is Solve's error when CBC.Interrupt fired before the
// solve began: there is no solution to return.
var ErrInterrupted = errors.New("solver: interrupted before the solve began")

func (c *CBC) binary() (string, error) {
	name := c.Path
	if name == "" {
		name = "cbc"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("solver: cbc not found (%s): %w", cbcInstall, err)
	}
	return path, nil
}

// Available reports whether the cbc binary can be run: nil if it starts and
// prints its banner, otherwise an error that tells the user how to install
// it.
func (c *CBC) Available() error {
	path, err := c.binary()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// "-quit" makes cbc print its banner and exit without reading stdin.
	out, err := exec.CommandContext(ctx, path, "-quit").CombinedOutput()
	if err != nil {
		return fmt.Errorf("solver: cannot run %s (%s): %w: %s", path, cbcInstall, err, tail(out))
	}
	if !bytes.Contains(out, []byte("CBC")) {
		return fmt.Errorf("solver: %s does not look like COIN-OR CBC (%s): %s", path, cbcInstall, tail(out))
	}
	return nil
}

// Solve writes m as an LP file, runs
//
//	cbc model.lp [timeMode elapsed sec S] [threads N] ratioGap G solve solu solution.txt
//
// in a temporary directory and parses the solution file. An infeasible model
// gives Status Infeasible and a nil error. If ctx is cancelled cbc is killed
// and the context's error returned. A cbc that crashes (dies of a signal) is
// run again with its default search settings, then with Dantzig pricing;
// the crash is reported only when every run crashed.
func (c *CBC) Solve(ctx context.Context, m *Model) (*Solution, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("solver: cbc: %w", err)
	}
	if c.TimeLimit < 0 || c.Threads < 0 || c.RelGap < 0 || math.IsNaN(c.RelGap) {
		return nil, fmt.Errorf("solver: cbc: negative TimeLimit, Threads or RelGap")
	}
	path, err := c.binary()
	if err != nil {
		return nil, err
	}
	if m.NumVars() == 0 || m.NumFixed() == m.NumVars() {
		// cbc cannot read a model without columns; the answer is trivial.
		return trivial(m, "cbc", start), nil
	}

	dir := c.KeepFiles
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kvschema-cbc-"); err != nil {
			return nil, fmt.Errorf("solver: cbc: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("solver: cbc: %w", err)
	}
	if err := writeLPFile(filepath.Join(dir, cbcModelFile), m, c.KeepFiles != ""); err != nil {
		return nil, fmt.Errorf("solver: cbc: writing model: %w", err)
	}
	startFile := ""
	if len(m.start) > 0 {
		startFile = cbcStartFile
		if err := writeStart(filepath.Join(dir, startFile), m); err != nil {
			return nil, fmt.Errorf("solver: cbc: writing start: %w", err)
		}
	}
	// A stale solution file from a kept earlier run must not be mistaken
	// for this run's answer.
	for _, f := range []string{cbcSolFile, cbcLPFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("solver: cbc: %w", err)
		}
	}

	// cbc 2.10 aborts on an internal assertion on some models under some
	// settings (ClpPrimalColumnSteepest on one of TestWideOptimumProperty's
	// instances, with preprocessing and zero-half cuts off). The model is
	// fine: it is solved again with the solver's own search settings, then
	// with plain Dantzig pricing, before the crash is reported.
	attempts := [][]string{c.args(startFile, m.tuning)}
	if plain := m.tuning.searchDefaults(); plain != m.tuning {
		attempts = append(attempts, c.args(startFile, plain))
	}
	attempts = append(attempts, c.args(startFile, m.tuning.searchDefaults(), "primalPivot", "dantzig", "dualPivot", "dantzig"))
	var out *headTail
	var runErr error
	infeasible := false
	for _, args := range attempts {
		out, runErr = c.run(ctx, path, dir, args, m.fixedObjective())
		if runErr == nil || ctx.Err() != nil || !crashed(runErr) {
			break
		}
		// cbc 2.10.8 proves some models infeasible from their bounds
		// alone, before any search, then dies writing the solution file
		// it has not got (TestCBCBoundsInfeasible): the proof stands.
		if bytes.Contains(out.bytes(), []byte("Problem is infeasible - tightenPrimalBounds")) {
			infeasible = true
			break
		}
	}
	if c.KeepFiles != "" {
		_ = os.WriteFile(filepath.Join(dir, cbcLogFile), out.bytes(), 0o644)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("solver: cbc: %w", ctx.Err())
	}
	if errors.Is(runErr, ErrInterrupted) {
		return nil, runErr
	}
	if infeasible {
		sol := m.finish(&Solution{Status: Infeasible, Solver: "cbc"})
		sol.Time = time.Since(start)
		return sol, nil
	}
	if runErr != nil {
		return nil, fmt.Errorf("solver: cbc failed: %w\n%s", runErr, tail(out.bytes()))
	}
	// cbc exits 0 even when it cannot read the model; a missing solution
	// file is the reliable sign of failure.
	data, err := os.ReadFile(filepath.Join(dir, cbcSolFile))
	if err != nil {
		return nil, fmt.Errorf("solver: cbc wrote no solution: %w\n%s", err, tail(out.bytes()))
	}
	sol, err := decodeSolution(m, data)
	if err != nil {
		return nil, fmt.Errorf("solver: cbc: %w\n%s", err, tail(out.bytes()))
	}
	info := parseLog(out.bytes())
	sol.Solver = "cbc"
	sol.Nodes = info.nodes
	if info.version != "" {
		sol.Solver += " " + info.version
	}
	if sol.Status == Feasible || sol.Status == Optimal && c.RelGap > 0 {
		sol.Gap = info.gap(sol.Objective, m.fixedObjective())
	}
	if m.tuning.Duals {
		// Without them (cbc stopped first, or the relaxation has no
		// optimum) the solution is as good; the caller does without.
		if data, err := os.ReadFile(filepath.Join(dir, cbcLPFile)); err == nil {
			sol.Duals = parseDuals(data, m.NumConstraints())
		}
	}
	sol.Time = time.Since(start)
	return sol, nil
}

// run runs cbc with args in dir and waits for it, forwarding Interrupt.
func (c *CBC) run(ctx context.Context, path, dir string, args []string, offset float64) (*headTail, error) {
	// Relative file names with Dir set: cbc parses its command line itself,
	// so paths with spaces or leading dashes never reach it.
	cmd := exec.CommandContext(ctx, path, args...)
	// cbc's stdout is block-buffered on a pipe; stdbuf (coreutils) makes
	// it line-buffered, for the progress lines and for a crash's log,
	// which would otherwise be lost with the buffer (Solve reads it).
	if stdbuf, err := exec.LookPath("stdbuf"); err == nil {
		cmd = exec.CommandContext(ctx, stdbuf, append([]string{"-oL", path}, args...)...)
	}
	out := &headTail{}
	cmd.Stdout, cmd.Stderr = out, out
	if c.Progress != nil {
		rep := &reporter{report: c.Progress, offset: offset}
		cmd.Stdout, cmd.Stderr = io.MultiWriter(out, rep), out
	}
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second // don't hang on pipes held by a killed cbc
	if c.Interrupt != nil {
		ownProcessGroup(cmd)
	}
	select {
	case <-c.Interrupt:
		return out, ErrInterrupted
	default:
	}
	if err := cmd.Start(); err != nil {
		return out, err
	}
	done := make(chan struct{})
	defer close(done)
	if c.Interrupt != nil {
		go func() {
			select {
			case <-c.Interrupt:
			case <-done:
				return
			}
			// cbc heeds SIGINT only inside its branch and bound (during
			// preprocessing and the root heuristics it has no search to
			// stop), so it is told again until it stops.
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				_ = cmd.Process.Signal(os.Interrupt)
				select {
				case <-tick.C:
				case <-done:
					return
				}
			}
		}()
	}
	return out, cmd.Wait()
}

// crashed reports whether cbc died of a signal it did not handle (an
// assertion's abort, a segmentation fault) rather than exiting.
func crashed(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && !ee.Exited()
}

func (c *CBC) args(startFile string, t Tuning, extra ...string) []string {
	// Never cbc's preprocessing (CglPreProcess): cbc 2.10.8 answers
	// "optimal" with a worse objective after it on a model as small as
	// min x0 + 2 x1 s.t. 3 x0 + x1 - x2 + x4 = 2, binaries (2, where 1 is
	// optimal: TestCBCEquationInstance), and on the advisor's programs its
	// passes took longer than the search they shortened (ilp.go).
	args := []string{cbcModelFile, "preprocess", "off"}
	if startFile != "" {
		// A known solution spares cbc its own search for a first one
		// (the feasibility pump takes most of the time on advisor models).
		args = append(args, "mips", startFile)
	}
	if c.TimeLimit > 0 {
		// cbc measures CPU time by default, summed over threads; the
		// limit is meant as wall time.
		args = append(args, "timeMode", "elapsed", "sec", formatNum(c.TimeLimit.Seconds()))
	}
	if c.Threads > 0 {
		args = append(args, "threads", strconv.Itoa(c.Threads))
	}
	if t.NodeLimit > 0 {
		args = append(args, "maxNodes", strconv.Itoa(t.NodeLimit))
	}
	if t.NoHeuristics {
		args = append(args, "heuristicsOnOff", "off")
	}
	if t.NoGomory {
		args = append(args, "gomoryCuts", "off")
	}
	if t.NoZeroHalf {
		args = append(args, "zeroHalfCuts", "off")
	}
	if t.Increment > 0 {
		args = append(args, "increment", formatNum(t.Increment))
	}
	args = append(args, c.Args...)
	args = append(args, extra...)
	if t.Duals {
		// The LP relaxation first, every row's dual written out; the
		// branch and bound then starts from that solved relaxation.
		args = append(args, "initialSolve", "printingOptions", "all", "solu", cbcLPFile, "printingOptions", "normal")
	}
	return append(args, "ratioGap", formatNum(c.RelGap), "solve", "solu", cbcSolFile)
}

// writeStart writes m's start in cbc's solution-file format, which its
// mipstart reader accepts: a status line, then "index name value" for every
// nonzero variable.
func writeStart(path string, m *Model) error {
	var b strings.Builder
	b.WriteString("Feasible - objective value 0\n")
	for i, v := range m.start {
		if _, fixed := m.FixedValue(Var(i)); fixed {
			continue
		}
		if i < len(m.vars) && v != 0 {
			fmt.Fprintf(&b, "%d %s %s 0\n", i, colName(i), formatNum(v))
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func writeLPFile(path string, m *Model, names bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := m.writeLP(f, names); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// trivial solves a model without free variables: the fixed values are the
// only assignment.
func trivial(m *Model, solver string, start time.Time) *Solution {
	values := make([]float64, m.NumVars())
	for v := range values {
		values[v], _ = m.FixedValue(Var(v))
	}
	s := &Solution{Status: Optimal, Values: values, Solver: solver}
	if _, violated := m.Evaluate(values); len(violated) > 0 {
		s.Status, s.Values = Infeasible, nil
	}
	s = m.finish(s)
	s.Time = time.Since(start)
	return s
}

// solFile is the content of a cbc solution file ("solu").
type solFile struct {
	status Status
	// objective is the header's number; for NoSolution it is the LP bound.
	objective float64
	cols      []solCol
	// last holds each line's last number: a column's reduced cost, a
	// row's dual (NaN if unreadable).
	last []float64
}

type solCol struct {
	index int
	name  string
	value float64
}

// parseSolution parses cbc's solution file (or, with printingOptions all,
// an LP relaxation's: its rows come first, named c0, c1, …, then its
// columns). The first line is the status,
// e.g. "Optimal - objective value 17.07", "Infeasible - objective value 3",
// "Integer infeasible - objective value 1.5", "Unbounded - objective value 0",
// "Stopped on time - objective value -6672" (has an incumbent) or
// "Stopped on time (no integer solution - continuous used) - objective value 0".
// Then one line per column cbc chooses to print (at least the nonzero ones):
// index, name, value, reduced cost, prefixed by "**" when cbc flags the value
// as infeasible.
func parseSolution(data []byte) (*solFile, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("empty solution file")
	}
	header := strings.TrimSpace(sc.Text())
	f := &solFile{}
	text := header
	if i := strings.LastIndex(header, " - objective value "); i >= 0 {
		text = header[:i]
		obj, err := strconv.ParseFloat(strings.TrimSpace(header[i+len(" - objective value "):]), 64)
		if err != nil {
			return nil, fmt.Errorf("bad objective in solution header %q", clip(header))
		}
		f.objective = obj
	}
	switch {
	case strings.HasPrefix(text, "Optimal"):
		f.status = Optimal
	case strings.HasPrefix(text, "Infeasible"), strings.HasPrefix(text, "Integer infeasible"),
		strings.HasPrefix(text, "Primal infeasible"):
		f.status = Infeasible
	case strings.HasPrefix(text, "Unbounded"), strings.HasPrefix(text, "Dual infeasible"):
		f.status = Unbounded
	case strings.HasPrefix(text, "Stopped"):
		// cbc falls back to the LP relaxation when it has no incumbent;
		// that point is not a solution.
		f.status = Feasible
		if strings.Contains(text, "no integer solution") {
			f.status = NoSolution
		}
	default:
		return nil, fmt.Errorf("unknown status in solution header %q", clip(header))
	}
	for line := 2; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		s = strings.TrimSpace(strings.TrimPrefix(s, "**"))
		if s == "" {
			continue
		}
		fields := strings.Fields(s)
		if len(fields) != 4 {
			return nil, fmt.Errorf("solution line %d: want 4 fields, got %q", line, clip(s))
		}
		idx, err1 := strconv.Atoi(fields[0])
		val, err2 := strconv.ParseFloat(fields[2], 64)
		if err1 != nil || err2 != nil || idx < 0 || math.IsNaN(val) || math.IsInf(val, 0) {
			return nil, fmt.Errorf("solution line %d: malformed %q", line, clip(s))
		}
		dual, err := strconv.ParseFloat(fields[3], 64)
		if err != nil {
			dual = math.NaN()
		}
		f.cols = append(f.cols, solCol{index: idx, name: fields[1], value: val})
		f.last = append(f.last, dual)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeSolution parses a solution file for m and maps its columns back to
// variables by name. Values are kept only when they form a solution.
func decodeSolution(m *Model, data []byte) (*Solution, error) {
	f, err := parseSolution(data)
	if err != nil {
		return nil, err
	}
	s := &Solution{Status: f.status}
	if f.status != Optimal && f.status != Feasible {
		return m.finish(s), nil
	}
	s.Values = make([]float64, m.NumVars())
	seen := make([]bool, m.NumVars())
	for v := range s.Values {
		if x, ok := m.FixedValue(Var(v)); ok {
			s.Values[v], seen[v] = x, true
		}
	}
	for _, col := range f.cols {
		v, ok := parseColName(col.name, m.NumVars())
		if !ok {
			return nil, fmt.Errorf("solution names unknown column %q", clip(col.name))
		}
		if seen[v] {
			return nil, fmt.Errorf("solution names column %q twice", col.name)
		}
		seen[v] = true
		s.Values[v] = col.value
	}
	return m.finish(s), nil
}

// parseDuals reads the row duals of an LP solution file written with
// printingOptions all ("index name activity dual" per row, then the
// columns), for a model of n constraints; nil unless the relaxation was
// solved to optimality.
func parseDuals(data []byte, n int) []float64 {
	f, err := parseSolution(data)
	if err != nil || f.status != Optimal {
		return nil
	}
	duals := make([]float64, n)
	for k, line := range f.cols {
		digits, ok := strings.CutPrefix(line.name, "c")
		if !ok {
			continue // a column
		}
		if i, err := strconv.Atoi(digits); err == nil && i >= 0 && i < n && rowName(i) == line.name {
			duals[i] = f.last[k]
		}
	}
	return duals
}

// parseColName inverts colName for indices below n; it accepts only the
// canonical spelling so that each variable has exactly one name.
func parseColName(name string, n int) (int, bool) {
	digits, ok := strings.CutPrefix(name, "x")
	if !ok || digits == "" || len(digits) > 1 && digits[0] == '0' ||
		strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i >= n {
		return 0, false
	}
	return i, true
}

// cbcLog is what Solve uses from cbc's console output.
type cbcLog struct {
	version  string  // from the banner, "Version: 2.10.8"
	bound    float64 // "Lower bound:" of the final summary
	hasBound bool
	gapLine  float64 // "Gap:" of the final summary (printed with 2 decimals only)
	hasGap   bool
	nodes    int // "Enumerated nodes:" of the final summary
}

func parseLog(out []byte) cbcLog {
	var l cbcLog
	for line := range strings.Lines(string(out)) {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "Version":
			if l.version == "" && val != "" && !strings.ContainsAny(val, " \t") {
				l.version = val
			}
		case "Lower bound":
			if x, err := strconv.ParseFloat(val, 64); err == nil && !math.IsNaN(x) {
				l.bound, l.hasBound = x, true
			}
		case "Gap":
			if x, err := strconv.ParseFloat(val, 64); err == nil && !math.IsNaN(x) {
				l.gapLine, l.hasGap = x, true
			}
		case "Enumerated nodes":
			if n, err := strconv.Atoi(val); err == nil && n >= 0 {
				l.nodes = n
			}
		}
	}
	return l
}

// gap is the relative gap of objective to the final bound, cbc's bound
// plus offset: the objective of the fixed variables, which the LP file
// leaves out. It prefers the bound over cbc's "Gap:" line, which is
// rounded to two decimals.
func (l cbcLog) gap(objective, offset float64) float64 {
	switch {
	case l.hasBound:
		return math.Abs(objective-(l.bound+offset)) / math.Max(1e-9, math.Abs(objective))
	case l.hasGap:
		return l.gapLine
	}
	return 0
}

// headTail keeps the start of cbc's output (the banner with the version) and
// its end (the summary and any error), dropping the middle of long logs.
type headTail struct {
	head, tail []byte
	dropped    bool
}

const (
	headMax = 4 << 10
	tailMax = 64 << 10
)

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*tailMax {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-tailMax:]...)
		h.dropped = true
	}
	return n, nil
}

func (h *headTail) bytes() []byte {
	t, dropped := h.tail, h.dropped
	if len(t) > tailMax {
		t, dropped = t[len(t)-tailMax:], true
	}
	out := append([]byte{}, h.head...)
	if dropped {
		out = append(out, "\n[... output dropped ...]\n"...)
	}
	return append(out, t...)
}

// tail returns the last lines of cbc's output for error messages.
func tail(out []byte) string {
	const max = 2000
	s := strings.TrimSpace(string(out))
	if len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	return s
}

// clip shortens parser input quoted in errors.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// reporter turns cbc's log lines into progress reports: new incumbents
// (Cbc0004I, Cbc0012I, Cbc0016I) and node counts with the bound
// (Cbc0010I), objectives and bounds plus offset (the objective of the
// fixed variables, which the LP file leaves out).
type reporter struct {
	report      func(string)
	offset      float64
	partial     []byte
	best, bound float64
	hasBest     bool
	hasBound    bool
	nodes       string
}

var (
	cbcNodesLine     = regexp.MustCompile(`^Cbc0010I After (\d+) nodes, \d+ on tree, (\S+) best solution, best possible (\S+) \(([\d.]+) seconds\)`)
	cbcIncumbentLine = regexp.MustCompile(`^Cbc00(?:04|12|16)I Integer solution of (\S+) found .*after \d+ iterations and (\d+) nodes \(([\d.]+) seconds\)`)
)

func (r *reporter) Write(p []byte) (int, error) {
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		r.line(string(bytes.TrimRight(r.partial[:i], "\r")))
		r.partial = r.partial[i+1:]
	}
	if len(r.partial) > 1<<16 { // no newline in sight: not a log line
		r.partial = r.partial[:0]
	}
	return len(p), nil
}

func (r *reporter) line(l string) {
	num := func(s string) (float64, bool) {
		x, err := strconv.ParseFloat(s, 64)
		return x + r.offset, err == nil && !math.IsNaN(x) && math.Abs(x) < 1e49 // cbc prints 1e50 for "none"
	}
	var secs string
	if m := cbcNodesLine.FindStringSubmatch(l); m != nil {
		r.nodes, secs = m[1], m[4]
		if x, ok := num(m[2]); ok {
			r.best, r.hasBest = x, true
		}
		if x, ok := num(m[3]); ok {
			r.bound, r.hasBound = x, true
		}
	} else if m := cbcIncumbentLine.FindStringSubmatch(l); m != nil {
		x, ok := num(m[1])
		if !ok || r.hasBest && x >= r.best {
			return // not an improvement
		}
		r.best, r.hasBest, r.nodes, secs = x, true, m[2], m[3]
	} else {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s nodes", r.nodes)
	if r.hasBest {
		fmt.Fprintf(&b, ", best %.6g", r.best)
	}
	if r.hasBound {
		fmt.Fprintf(&b, ", bound %.6g", r.bound)
		if r.hasBest {
			fmt.Fprintf(&b, " (gap %.2f%%)", 100*math.Abs(r.best-r.bound)/math.Max(1e-9, math.Abs(r.best)))
		}
	}
	fmt.Fprintf(&b, ", %ss", secs)
	r.report(b.String())
}
