// Package tracestore owns a Store decorator that prints every operation in
// HBase shell notation, as the kvschema paper lists the operations a
// statement becomes. It serves EXPLAIN-style traces and debugging.
//
// Each operation is printed, then run, so a failing one is shown too. The
// text of one call is written with one Write, so concurrent calls do not
// interleave; write errors are ignored, as tracing must not fail the store.
// Formats, with strings escaped by Escape:
//
//	put "TABLE", "ROW", "FAMILY:QUALIFIER", "VALUE"    a SetCell
//	put "TABLE", "ROW", "FAMILY:QUALIFIER", "VALUE", {EXPIRES=>'2026-01-02T03:04:05.123456Z'}
//	                                                   a SetCell with Expires (UTC, µs)
//	delete "TABLE", "ROW", "FAMILY:QUALIFIER"          a DeleteCell
//	deleteall "TABLE", "ROW"                           a DeleteRow
//	deleteall "TABLE", "ROW", "FAMILY"                 a DeleteFamily
//	batch begin … batch end (N mutations)              brackets an Apply of N ≠ 1 mutations
//	get 'TABLE', 'ROW'                                 ReadRow
//	scan 'TABLE', {STARTROW=>'A', STOPROW=>'B', LIMIT=>N, REVERSED=>true}
//	multi begin … multi end                            brackets a ReadRows that is not one line
//	create 'TABLE', 'FAMILY', …, SPLITS=>['A', …], INDEXES=>['NAME'=>'FAMILY:QUALIFIER', 'NAME'=>'FAMILY', …]
//	                                                   CreateTable
//	list                                               Tables
//	index 'TABLE', 'INDEX', {VALUE=>'V'}               ReadIndex of one value
//	index 'TABLE', 'INDEX', {STARTVALUE=>'A', STOPVALUE=>'B', LIMIT=>N, REVERSED=>true}
//	                                                   ReadIndex of a value range
//
// A DeleteFamily is a deleteall whose column is a family alone, without
// ":QUALIFIER", which HBase's shell reads as every cell of the family; so
// is an element index (store.IndexSpec.Elements), on every cell of its
// family, beside a single-cell index's FAMILY:QUALIFIER.
//
// ReadRows prints one line per range of RowSet.Normalize(), in the order the
// rows come (descending with Reverse): a single-row range [k, k\x00), as an
// explicit key becomes, is a get; any other is a scan, without STARTROW when
// it starts at the first row, without STOPROW when unbounded, and with the
// call's LIMIT and REVERSED options when set. A RowSet that selects nothing
// prints an empty multi block. ReadIndex (store.Indexer; HBase has no
// such call) prints the same way, one index line per range of the values'
// Normalize(): VALUE for a single value, else STARTVALUE and STOPVALUE.
package tracestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kvschema/kvschema/store"
)

// Escape renders b for a quoted string of the trace: printable ASCII (0x20
// to 0x7E) as is, except that a backslash becomes \\ and both quote
// characters are escaped (\" and \') so the result fits in either kind of
// quotes; every other byte becomes \xNN in lowercase hex.
func Escape(b []byte) string {
	const hex = "0123456789abcdef"
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		switch {
		case c == '\\' || c == '"' || c == '\'':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c >= 0x20 && c <= 0x7E:
			sb.WriteByte(c)
		default:
			sb.WriteString(`\x`)
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&0xF])
		}
	}
	return sb.String()
}

func esc(s string) string { return Escape([]byte(s)) }

// Store traces the operations on an inner store to a writer.
type Store struct {
	inner store.Store
	mu    sync.Mutex // serializes writes to w
	w     io.Writer
}

var _ store.Store = (*Store)(nil)

// New returns a decorator of inner that traces to w.
func New(inner store.Store, w io.Writer) *Store { return &Store{inner: inner, w: w} }

func (s *Store) print(text []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(text)
}

// CreateTable prints a create line and forwards the call.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "create '%s'", esc(spec.Name))
	for _, f := range spec.Families {
		fmt.Fprintf(&b, ", '%s'", esc(f))
	}
	if len(spec.Splits) > 0 {
		b.WriteString(", SPLITS=>[")
		for i, sp := range spec.Splits {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "'%s'", Escape(sp))
		}
		b.WriteString("]")
	}
	if len(spec.Indexes) > 0 {
		b.WriteString(", INDEXES=>[")
		for i, ix := range spec.Indexes {
			if i > 0 {
				b.WriteString(", ")
			}
			if ix.Elements {
				fmt.Fprintf(&b, "'%s'=>'%s'", esc(ix.Name), esc(ix.Family))
			} else {
				fmt.Fprintf(&b, "'%s'=>'%s:%s'", esc(ix.Name), esc(ix.Family), Escape(ix.Qualifier))
			}
		}
		b.WriteString("]")
	}
	b.WriteString("\n")
	s.print(b.Bytes())
	return s.inner.CreateTable(ctx, spec)
}

// Tables prints list and forwards the call.
func (s *Store) Tables(ctx context.Context) ([]store.TableSpec, error) {
	s.print([]byte("list\n"))
	return s.inner.Tables(ctx)
}

// ReadRow prints a get line and forwards the call.
func (s *Store) ReadRow(ctx context.Context, table string, key []byte) (store.Row, bool, error) {
	s.print(fmt.Appendf(nil, "get '%s', '%s'\n", esc(table), Escape(key)))
	return s.inner.ReadRow(ctx, table, key)
}

// ReadRows prints a get or scan line per normalized range and forwards the
// call.
func (s *Store) ReadRows(ctx context.Context, table string, rs store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	ranges := rs.Normalize()
	var b bytes.Buffer
	if len(ranges) != 1 {
		b.WriteString("multi begin\n")
	}
	for i := range ranges {
		r := ranges[i]
		if opts.Reverse {
			r = ranges[len(ranges)-1-i]
		}
		if isOneRow(r) {
			fmt.Fprintf(&b, "get '%s', '%s'\n", esc(table), Escape(r.Start))
			continue
		}
		var opt []string
		if len(r.Start) > 0 {
			opt = append(opt, fmt.Sprintf("STARTROW=>'%s'", Escape(r.Start)))
		}
		if r.End != nil {
			opt = append(opt, fmt.Sprintf("STOPROW=>'%s'", Escape(r.End)))
		}
		opt = appendReadOptions(opt, opts)
		fmt.Fprintf(&b, "scan '%s'", esc(table))
		if len(opt) > 0 {
			fmt.Fprintf(&b, ", {%s}", strings.Join(opt, ", "))
		}
		b.WriteString("\n")
	}
	if len(ranges) != 1 {
		b.WriteString("multi end\n")
	}
	s.print(b.Bytes())
	return s.inner.ReadRows(ctx, table, rs, opts, fn)
}

// ReadIndex prints an index line per normalized value range and
// forwards the call (store.Indexer); it fails with an error wrapping
// errors.ErrUnsupported when the inner store is no store.Indexer.
func (s *Store) ReadIndex(ctx context.Context, table, index string, values store.RowSet, opts store.ReadOptions, fn func(store.Row) bool) error {
	ix, ok := s.inner.(store.Indexer)
	if !ok {
		return fmt.Errorf("tracestore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	ranges := values.Normalize()
	var b bytes.Buffer
	if len(ranges) != 1 {
		b.WriteString("multi begin\n")
	}
	for i := range ranges {
		r := ranges[i]
		if opts.Reverse {
			r = ranges[len(ranges)-1-i]
		}
		var opt []string
		switch {
		case isOneRow(r):
			opt = append(opt, fmt.Sprintf("VALUE=>'%s'", Escape(r.Start)))
		default:
			if len(r.Start) > 0 {
				opt = append(opt, fmt.Sprintf("STARTVALUE=>'%s'", Escape(r.Start)))
			}
			if r.End != nil {
				opt = append(opt, fmt.Sprintf("STOPVALUE=>'%s'", Escape(r.End)))
			}
		}
		opt = appendReadOptions(opt, opts)
		fmt.Fprintf(&b, "index '%s', '%s'", esc(table), esc(index))
		if len(opt) > 0 {
			fmt.Fprintf(&b, ", {%s}", strings.Join(opt, ", "))
		}
		b.WriteString("\n")
	}
	if len(ranges) != 1 {
		b.WriteString("multi end\n")
	}
	s.print(b.Bytes())
	return ix.ReadIndex(ctx, table, index, values, opts, fn)
}

// isOneRow reports whether r is [k, k\x00), which selects only row k.
func isOneRow(r store.Range) bool {
	n := len(r.Start)
	return len(r.End) == n+1 && r.End[n] == 0 && bytes.HasPrefix(r.End, r.Start)
}

// Apply prints the mutations and forwards the call.
func (s *Store) Apply(ctx context.Context, muts []store.Mutation) error {
	s.print(formatBatch(nil, muts))
	return s.inner.Apply(ctx, muts)
}

// appendReadOptions appends a read's LIMIT and REVERSED options, as the
// HBase shell writes them.
func appendReadOptions(opt []string, opts store.ReadOptions) []string {
	if opts.Limit > 0 {
		opt = append(opt, fmt.Sprintf("LIMIT=>%d", opts.Limit))
	}
	if opts.Reverse {
		opt = append(opt, "REVERSED=>true")
	}
	return opt
}

// formatBatch appends muts in HBase shell syntax to b, a batch of several
// between batch begin and end.
func formatBatch(b []byte, muts []store.Mutation) []byte {
	buf := bytes.NewBuffer(b)
	if len(muts) != 1 {
		buf.WriteString("batch begin\n")
	}
	for _, m := range muts {
		switch m.Kind {
		case store.SetCell:
			fmt.Fprintf(buf, `put "%s", "%s", "%s:%s", "%s"`, esc(m.Table), Escape(m.Row), esc(m.Family), Escape(m.Qualifier), Escape(m.Value))
			if m.Expires != 0 {
				// An instant, not HBase's relative TTL: a trace reads the
				// same whenever it is run.
				fmt.Fprintf(buf, `, {EXPIRES=>'%s'}`, time.UnixMicro(m.Expires).UTC().Format("2006-01-02T15:04:05.999999Z07:00"))
			}
		case store.DeleteCell:
			fmt.Fprintf(buf, `delete "%s", "%s", "%s:%s"`, esc(m.Table), Escape(m.Row), esc(m.Family), Escape(m.Qualifier))
		case store.DeleteRow:
			fmt.Fprintf(buf, `deleteall "%s", "%s"`, esc(m.Table), Escape(m.Row))
		case store.DeleteFamily:
			fmt.Fprintf(buf, `deleteall "%s", "%s", "%s"`, esc(m.Table), Escape(m.Row), esc(m.Family))
		default: // the store rejects it; show it anyway
			fmt.Fprintf(buf, `%v "%s", "%s"`, m.Kind, esc(m.Table), Escape(m.Row))
		}
		buf.WriteString("\n")
	}
	if len(muts) != 1 {
		fmt.Fprintf(buf, "batch end (%d mutations)\n", len(muts))
	}
	return buf.Bytes()
}

// ApplyGuards prints each guard's row, then the batch, and forwards the
// call (store.Guarded); it fails with an error wrapping
// errors.ErrUnsupported when the inner store is no store.Guarded.
func (s *Store) ApplyGuards(ctx context.Context, gs []store.Guard, muts []store.Mutation) (bool, error) {
	inner, ok := s.inner.(store.Guarded)
	if !ok {
		return false, fmt.Errorf("tracestore: %T: %w", s.inner, errors.ErrUnsupported)
	}
	var head []byte
	for _, g := range gs {
		head = fmt.Appendf(head, "if unchanged \"%s\", \"%s\"\n", esc(g.Table), Escape(g.Row))
	}
	s.print(formatBatch(head, muts))
	return inner.ApplyGuards(ctx, gs, muts)
}

// Capabilities are those of the inner store; nothing is printed.
func (s *Store) Capabilities() store.Capabilities { return s.inner.Capabilities() }

// Close closes the inner store; nothing is printed.
func (s *Store) Close() error { return s.inner.Close() }
