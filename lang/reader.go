package lang

import "io"

// Reader reads a script one statement at a time from an io.Reader (or a
// string: NewStringReader). It reads the input only as far as the statement
// it returns needs (up to the ';' that ends it), and keeps nothing of the
// statements before, so memory is bounded by the largest statement, not by
// the script; with SplitInserts, an INSERT … VALUES with many rows is handed
// over in parts, which bounds memory by the part.
//
// It accepts the language ParseScript accepts: the statements it returns,
// parts of a split INSERT joined back (see Part), are those ParseScript
// returns, positions included, and where ParseScript fails, Next returns
// the statements before the failing one and then the same *Error. Unlike
// ParseScript it cannot see a syntax error further on before returning the
// statements ahead of it; and a Reader of a stream (NewReader), which reads
// no further than a statement's ';', does not see a comment after the ';'
// of a CREATE TABLE, which ParseScript reads as the table's annotation
// (`…); -- ROWS n`).
type Reader struct {
	p       *parser
	maxRows int
	ins     *Insert // the INSERT whose rows are being handed over in parts
	part    Part
	err     error // sticky: io.EOF or the first error
}

// Part places a statement that Reader.Next returned within the statement of
// the script it comes from. Only a top-level INSERT … VALUES with more rows
// than SplitInserts allows is split: into *Insert statements with the same
// At, Relation, RelationAt and Columns, each with the next rows of its VALUES list.
// Every other statement is whole: Part{}.
type Part struct {
	// Row is the index, in the script's statement, of the part's first row:
	// the number of rows in the parts before it.
	Row int
	// More is set when further parts of the same statement follow: the
	// statement ends with the part for which it is not set.
	More bool
}

// NewReader returns a Reader of the script that r holds; file is used only
// in positions.
func NewReader(file string, r io.Reader) *Reader {
	return &Reader{p: &parser{lx: newReaderLexer(file, r), toks: make([]token, 0, 16)}}
}

// NewStringReader returns a Reader of the script src, without copying it.
func NewStringReader(file, src string) *Reader {
	return &Reader{p: newParser(file, src)}
}

// SplitInserts makes Next hand over a top-level INSERT … VALUES in parts of
// at most n rows each (the last part holds the rest). n ≤ 0, the default,
// means whole statements.
func (r *Reader) SplitInserts(n int) { r.maxRows = n }

// Part describes the statement the last call of Next returned.
func (r *Reader) Part() Part { return r.part }

// Next returns the next statement (or part of one), or io.EOF after the
// last. Any other error is an *Error naming file:line:col (a syntax error,
// or the input failing to be read), after which Next returns it again.
func (r *Reader) Next() (Statement, error) {
	if r.err != nil {
		return nil, r.err
	}
	s, semicolon, err := r.next()
	if rerr := r.p.lx.readErr; rerr != nil && (err != nil || !semicolon && !r.part.More) {
		// The input ended early: what looked like the end of the script, or
		// an error, or the statement ended by it may all be artifacts.
		s, err = nil, &Error{Pos: r.p.peek().pos, Msg: "cannot read the rest of the input: " + rerr.Error(), Err: rerr}
	}
	if err != nil {
		r.err, r.part, r.ins = err, Part{}, nil
		return nil, err
	}
	return s, nil
}

// next parses the next statement or part; semicolon reports that a ';'
// ended it.
func (r *Reader) next() (s Statement, semicolon bool, err error) {
	p := r.p
	p.drop()
	p.moreRows = false
	if prev := r.ins; prev != nil {
		// The VALUES list goes on after the ',' that ended the last part.
		ins := &Insert{At: prev.At, Relation: prev.Relation, RelationAt: prev.RelationAt, Columns: prev.Columns}
		p.maxRows = r.maxRows
		err = p.insertRows(ins)
		p.maxRows = 0
		if err == nil {
			err = p.insertTail(ins, true) // IF NOT EXISTS and USING TTL refused: the VALUES list has many rows
		}
		if err != nil {
			return nil, false, err
		}
		r.part = Part{Row: r.part.Row + len(prev.Rows)}
		s = ins
	} else {
		for p.acceptPunct(";") {
		}
		if p.peek().kind == tokEOF {
			return nil, false, io.EOF
		}
		if p.isKeyword("INSERT") {
			p.maxRows = r.maxRows
		}
		s, err = p.statement()
		p.maxRows = 0
		if err != nil {
			return nil, false, err
		}
		r.part = Part{}
	}
	if p.moreRows {
		r.part.More = true
		r.ins = s.(*Insert)
		return s, false, nil
	}
	r.ins = nil
	// As ParseScript: a statement ends at ';' or at the end of the input.
	// The ';' is consumed now and nothing after it is read.
	if p.acceptPunct(";") {
		return s, true, nil
	}
	if p.peek().kind != tokEOF {
		return nil, false, p.unexpected("';' or end of input after statement")
	}
	return s, false, nil
}
