// A workload read from a query log.

package workload

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
)

// LogMix is the one mix of a workload read from a query log.
const LogMix = "log"

// LogReport says what ParseLog did with each statement of a log that is
// not a plain part of the workload.
type LogReport struct {
	File string
	// Statements is the number of statements in the log; Total their
	// weight (counts), Ignored ones excepted.
	Statements int
	Total      float64
	// Unusable are the statements kvschema cannot express, each with the
	// reason; their weight is not in the workload.
	Unusable []LogEntry
	// Ignored are session and transaction control statements (BEGIN,
	// COMMIT, SET, SHOW, …): no part of a workload, nor of Total.
	Ignored []LogEntry
	// Notes are remarks on statements that are in the workload: merged into
	// an earlier identical one, or costed without their LIMIT.
	Notes []LogEntry
}

// LogEntry is one statement of a log.
type LogEntry struct {
	At     lang.Pos // where the statement starts
	Weight float64  // its count
	Text   string   // as the log has it, on one line
	Reason string   // why it is unusable, ignored or noted
}

// UnusableWeight is the weight of the statements kvschema cannot express.
func (r *LogReport) UnusableWeight() float64 {
	w := 0.0
	for _, e := range r.Unusable {
		w += e.Weight
	}
	return w
}

// UnusableShare is UnusableWeight as a fraction of Total (0 for an empty
// log).
func (r *LogReport) UnusableShare() float64 {
	if r.Total == 0 {
		return 0
	}
	return r.UnusableWeight() / r.Total
}

// WriteText writes the report for a reader: a summary line, then each
// unusable, noted and ignored statement with its position, weight and
// reason.
func (r *LogReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d statements, weight %s; %d not expressible, weight %s (%.2f%% of the log's weight)",
		r.File, r.Statements, fmtWeight(r.Total), len(r.Unusable), fmtWeight(r.UnusableWeight()), 100*r.UnusableShare())
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, "; %d ignored (session and transaction control)", len(r.Ignored))
	}
	b.WriteByte('\n')
	for _, part := range []struct {
		title   string
		entries []LogEntry
	}{{"not expressible", r.Unusable}, {"notes", r.Notes}, {"ignored", r.Ignored}} {
		if len(part.entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", part.title)
		for _, e := range part.entries {
			fmt.Fprintf(&b, "  %s:%d (weight %s): %s\n      %s\n", e.At.File, e.At.Line, fmtWeight(e.Weight), shorten(e.Text), e.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtWeight(w float64) string { return strconv.FormatFloat(w, 'g', -1, 64) }

// shorten cuts a statement's text for a report line.
func shorten(s string) string {
	const max = 100
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// ignoredWords start the statements a log may hold that are no part of a
// workload: session settings and transaction control.
var ignoredWords = map[string]bool{
	"BEGIN": true, "START": true, "COMMIT": true, "END": true, "ROLLBACK": true, "SAVEPOINT": true,
	"RELEASE": true, "SET": true, "SHOW": true, "RESET": true, "DISCARD": true, "DEALLOCATE": true, "USE": true,
}

// ParseLog reads a query log against a model: one statement per entry, an
// entry being a line `COUNT<TAB>STATEMENT` (COUNT a non-negative number: how
// often the statement ran, as pg_stat_statements' calls or a MySQL digest's
// COUNT_STAR) followed by the lines that continue its statement (any line
// that does not start with a count and a tab). Blank lines and lines
// starting with '#' are skipped.
//
// Each statement is parsed (SELECT with JOINs along foreign keys or comma
// joins, WHERE, ORDER BY, LIMIT; INSERT, UPDATE, DELETE), its constants
// become parameters (lang.Parameterize), and it is resolved against the
// model as a DEFINE WORKLOAD's statements are; it joins the workload with
// its count as its weight in mix LogMix, tagged L<line>. Statements that
// are the same once parameterized are one statement, their counts added. A
// LIMIT that is a parameter is dropped (the advisor costs constant limits
// only), with a note. Statements that cannot be expressed are left out and
// reported with the reason; session and transaction control is ignored.
//
// The error is about the file itself (an entry without a count, a count
// that is no number) and names file:line:col, or says that no statement
// could be used; the report comes with it then.
func ParseLog(m *catalog.Model, file string, src []byte) (*Workload, *LogReport, error) {
	entries, err := logEntries(file, string(src))
	if err != nil {
		return nil, nil, err
	}
	rep := &LogReport{File: file}
	w := &Workload{Name: LogMix, Mixes: []string{LogMix}}
	seen := map[string]*Statement{} // by printed text
	for _, e := range entries {
		if ignoredWords[strings.ToUpper(firstWord(e.text))] {
			rep.Ignored = append(rep.Ignored, LogEntry{At: e.at, Weight: e.weight, Text: oneLine(e.text), Reason: "session or transaction control: no part of a workload"})
			continue
		}
		rep.Statements++
		rep.Total += e.weight
		entry := LogEntry{At: e.at, Weight: e.weight, Text: oneLine(e.text)}
		st, err := lang.ParseStatementAt(e.at, e.text)
		if err == nil {
			switch st.(type) {
			case *lang.Select, *lang.Insert, *lang.Update, *lang.Delete, *lang.Connect:
			default:
				err = &lang.Error{Pos: e.at, Msg: "not a query or a write (SELECT, INSERT, UPDATE, DELETE)"}
			}
		}
		if err != nil {
			entry.Reason = reason(e.at, err)
			rep.Unusable = append(rep.Unusable, entry)
			continue
		}
		lang.Parameterize(st)
		var note string
		if sel, ok := st.(*lang.Select); ok {
			if _, ok := sel.Limit.(*lang.Param); ok {
				sel.Limit = nil
				note = "LIMIT with a parameter: costed without its limit (the advisor costs a constant LIMIT only)"
			}
			if n := starNote(m, sel); n != "" {
				note = strings.TrimPrefix(note+"; "+n, "; ")
			}
		}
		text := lang.Print(st)
		if s := seen[text]; s != nil {
			s.Weights[LogMix] += e.weight
			entry.Reason = "the statement " + s.Tag + " once its constants are parameters: its count is added there"
			rep.Notes = append(rep.Notes, entry)
			continue
		}
		q, wr, err := resolve(m, st)
		if err != nil {
			entry.Reason = reason(e.at, err)
			rep.Unusable = append(rep.Unusable, entry)
			continue
		}
		tag := "L" + strconv.Itoa(e.at.Line)
		s := &Statement{Tag: tag, Group: tag, Weights: map[string]float64{LogMix: e.weight}, Query: q, Write: wr, AST: st}
		read, err := condRead(m, s)
		if err != nil {
			entry.Reason = reason(e.at, err)
			rep.Unusable = append(rep.Unusable, entry)
			continue
		}
		w.Statements = append(w.Statements, s)
		if read != nil {
			w.Statements = append(w.Statements, read)
		}
		seen[text] = s
		if note != "" {
			entry.Reason = note
			rep.Notes = append(rep.Notes, entry)
		}
	}
	if len(w.Statements) == 0 {
		return nil, rep, fmt.Errorf("%s: no statement of the log can be used (%d read, %d not expressible, %d ignored)", file, rep.Statements, len(rep.Unusable), len(rep.Ignored))
	}
	return w, rep, nil
}

// starNote says which foreign-key columns a SELECT's stars leave out: in
// the conceptual model a foreign key is a relationship, not an attribute,
// so `*` (as `items.*` in kvschema's language) means a relation's own
// attributes, where SQL would return the foreign-key columns too.
func starNote(m *catalog.Model, sel *lang.Select) string {
	rel := map[string]string{} // alias or name → relation
	var all []string
	add := func(name, alias string) {
		rel[strings.ToLower(name)] = name
		if alias != "" {
			rel[strings.ToLower(alias)] = name
		}
		all = append(all, name)
	}
	add(sel.Relation, sel.Alias)
	for _, j := range sel.Joins {
		add(j.Relation, j.Alias)
	}
	var starred []string
	if sel.Star {
		starred = all
	}
	for _, c := range sel.Columns {
		if c.Star && c.Agg == "" && len(c.Qual) == 1 {
			if r, ok := rel[strings.ToLower(c.Qual[0])]; ok {
				starred = append(starred, r)
			}
		}
	}
	var fks []string
	seen := map[string]bool{}
	for _, r := range starred {
		e := m.Entity(r)
		if e == nil || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		for _, c := range e.Columns {
			if c.Nav != nil {
				fks = append(fks, e.Name+"."+c.Name)
			}
		}
	}
	if len(fks) == 0 {
		return ""
	}
	return fmt.Sprintf("* returns each relation's own attributes: its foreign keys (%s) are relationships, not returned; to read one, join the relation it references and select that relation's key", strings.Join(fks, ", "))
}

// reason describes why a statement is unusable: the error, with its own
// position if it has one (it points into the statement), else at.
func reason(at lang.Pos, err error) string {
	var le *lang.Error
	if errors.As(err, &le) {
		return err.Error()
	}
	return (&lang.Error{Pos: at, Msg: err.Error()}).Error()
}

// logEntry is one statement of a log, before it is parsed.
type logEntry struct {
	at       lang.Pos // where its text starts
	weight   float64
	text     string
	off, end int // the text's offsets in the log
}

// logEntries splits a log into its entries.
func logEntries(file, src string) ([]logEntry, error) {
	var out []logEntry
	for n, off := 1, 0; off < len(src); n++ {
		end := strings.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		line := strings.TrimSuffix(src[off:end], "\r")
		start := off
		off = end + 1
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		count, _, tab := strings.Cut(line, "\t")
		weight, isCount := parseCount(strings.TrimSpace(count))
		switch {
		case tab && isCount:
			at := lang.Pos{File: file, Line: n, Col: len(count) + 2}
			out = append(out, logEntry{at: at, weight: weight, off: start + len(count) + 1, end: start + len(line)})
		case tab && looksLikeCount(count):
			return nil, &lang.Error{Pos: lang.Pos{File: file, Line: n, Col: 1}, Msg: fmt.Sprintf("count %q is not a number ≥ 0", strings.TrimSpace(count))}
		case len(out) > 0:
			out[len(out)-1].end = start + len(line) // the statement goes on
		default:
			return nil, &lang.Error{Pos: lang.Pos{File: file, Line: n, Col: 1}, Msg: "expected COUNT<TAB>STATEMENT (a query log line: how often the statement ran, a tab, the statement)"}
		}
	}
	for i := range out {
		out[i].text = src[out[i].off:out[i].end]
	}
	return out, nil
}

// parseCount reads a count: digits, with an optional fraction.
func parseCount(s string) (float64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || dot && (frac == "" || !allDigits(frac)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// looksLikeCount reports whether s is meant as a count, though it is not
// one (-1, 1,000, 1e3), rather than a piece of a statement.
func looksLikeCount(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.Trim(s, "0123456789.,-+eE_") == ""
}

// firstWord is the first word of a statement's text.
func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t\r\n(")
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	return s[:i]
}

// oneLine writes a statement's text on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
