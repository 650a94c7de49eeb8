package solver

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strconv"
)

// lpWrap is where expressions are wrapped. CPLEX-format readers reject lines
// of 255 characters or more; one term is at most ~40 characters, so breaking
// before a term that would pass lpWrap keeps every line well below the limit.
const lpWrap = 78

// lpCommentMax bounds a quoted human name in a comment line for the same
// reason.
const lpCommentMax = 200

// WriteLP writes the model in the CPLEX LP format that CBC reads. Variables
// are named x0, x1, … and constraints c0, c1, … by index, so human names
// (which may contain any characters) never reach the parser; they appear only
// in leading comment lines, quoted, as a debugging aid. Every variable is
// listed in the objective, with coefficient 0 if need be, so that each one is
// declared and columns are numbered in index order; but fixed variables
// (Fix) are left out, their terms moved to the right-hand sides, and rows
// that hold whatever the free variables are within their bounds
// (redundant) are dropped: after fixing, most rows of the advisor's
// programs are (x_i - x_j <= 0 with x_j fixed to 1), and cbc, run without
// its preprocessing (CBC.args), would carry them through every LP of its
// search; and without its preprocessing cbc 2.10.8 aborts on a row
// written 0 x0 <= 0 beside an equation (TestCBCEmptyRow). A dropped row's
// dual is 0 (the relaxation's optimum, and one optimal dual with it, stay
// those of the full model). A row that cannot hold, with no free
// variable left, is written as 0 x0 (sense) rhs. Numbers use strconv's
// shortest 'g' form. The output depends only on the model: the same model
// always gives the same bytes. A model without variables cannot be written
// (the format has no way to declare an empty objective).
func (m *Model) WriteLP(w io.Writer) error { return m.writeLP(w, true) }

// writeLP is WriteLP, with the comment lines naming the variables and
// constraints only if names: a solver run reads none of them, and they
// are half of the file.
func (m *Model) writeLP(w io.Writer, names bool) error {
	if len(m.vars) == 0 {
		return errors.New("solver: cannot write an LP file for a model without variables")
	}
	// Fixed variables are left out (see Fix): their terms move to the
	// right-hand sides.
	free := make([]bool, len(m.vars))
	first := -1
	for i := range m.vars {
		if _, ok := m.FixedValue(Var(i)); !ok {
			free[i] = true
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return errors.New("solver: cannot write an LP file for a model whose variables are all fixed")
	}
	lw := &lpWriter{w: bufio.NewWriter(w)}

	lw.str(`\ kvschema model: ` + strconv.Itoa(len(m.vars)) + " variables, " +
		strconv.Itoa(len(m.cons)) + " constraints")
	if n := len(m.vars) - countTrue(free); n > 0 {
		lw.str(", " + strconv.Itoa(n) + " variables fixed")
	}
	lw.newline()
	for i, v := range m.vars {
		if !names {
			break
		}
		if x, ok := m.FixedValue(Var(i)); ok {
			lw.str(`\ ` + colName(i) + " " + kindNames[v.kind] + " = " + formatNum(x) + " " + quoteComment(v.name))
		} else {
			lw.str(`\ ` + colName(i) + " " + kindNames[v.kind] + " " + quoteComment(v.name))
		}
		lw.newline()
	}
	for i, c := range m.cons {
		if !names {
			break
		}
		lw.str(`\ ` + rowName(i) + " " + quoteComment(c.name))
		lw.newline()
	}

	lw.str("Minimize")
	lw.newline()
	lw.str(" obj:")
	obj := make([]float64, len(m.vars))
	for _, t := range m.obj {
		obj[t.Var] = t.Coef
	}
	firstTerm := true
	for i, c := range obj {
		if free[i] {
			lw.term(firstTerm, c, i)
			firstTerm = false
		}
	}
	lw.newline()

	lw.str("Subject To")
	lw.newline()
	var terms []Term
	for i, c := range m.cons {
		terms = terms[:0]
		rhs := c.rhs
		for _, t := range c.terms {
			if free[t.Var] {
				terms = append(terms, t)
			} else {
				x, _ := m.FixedValue(t.Var)
				rhs -= t.Coef * x
			}
		}
		if len(terms) == 0 && satisfied(constraint{sense: c.sense, rhs: rhs}, nil) ||
			len(terms) > 0 && m.redundant(c.sense, terms, rhs) {
			continue // holds whatever the free variables are
		}
		lw.str(" " + rowName(i) + ":")
		if len(terms) == 0 {
			// The format needs a variable in every row; 0·x keeps the
			// row (and so its infeasibility) without changing it.
			lw.term(true, 0, first)
		}
		for j, t := range terms {
			lw.term(j == 0, t.Coef, int(t.Var))
		}
		lw.token(senseOps[c.sense] + " " + formatNum(posZero(rhs)))
		lw.newline()
	}

	var bins, gens []int
	bounded := false
	for i, v := range m.vars {
		if !free[i] {
			continue
		}
		switch v.kind {
		case Binary:
			bins = append(bins, i)
		case Integer:
			gens = append(gens, i)
			bounded = true
		default:
			bounded = true
		}
	}
	if bounded {
		lw.str("Bounds")
		lw.newline()
		for i, v := range m.vars {
			if free[i] && v.kind != Binary {
				lw.str(" " + boundLine(colName(i), v.lo, v.hi))
				lw.newline()
			}
		}
	}
	lw.nameList("Binaries", bins)
	lw.nameList("Generals", gens)
	lw.str("End")
	lw.newline()
	return lw.w.Flush()
}

// redundant reports whether Σ terms (sense) rhs holds for every value of
// the terms' variables within their bounds: exactly, with no tolerance, so
// that a row is dropped only when it cannot cut anything off.
func (m *Model) redundant(sense Sense, terms []Term, rhs float64) bool {
	lo, hi, _ := m.activity(terms)
	switch sense {
	case LE:
		return hi <= rhs
	case GE:
		return lo >= rhs
	default:
		return false // an equation holds for every value only without terms
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

var kindNames = [...]string{Binary: "binary", Integer: "integer", Continuous: "continuous"}

var senseOps = [...]string{LE: "<=", GE: ">=", EQ: "="}

func colName(i int) string { return "x" + strconv.Itoa(i) }
func rowName(i int) string { return "c" + strconv.Itoa(i) }

// formatNum prints the shortest representation that parses back exactly.
func formatNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// quoteComment makes an arbitrary name safe for a one-line comment: ASCII
// only, escaped, and short.
func quoteComment(name string) string {
	q := strconv.QuoteToASCII(name)
	if len(q) > lpCommentMax {
		q = q[:lpCommentMax] + "..."
	}
	return q
}

// boundLine writes explicit bounds for a non-binary column, so the file does
// not rely on the format's default bounds.
func boundLine(col string, lo, hi float64) string {
	switch {
	case lo == hi:
		return col + " = " + formatNum(lo)
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return col + " free"
	case math.IsInf(hi, 1):
		return col + " >= " + formatNum(lo)
	case math.IsInf(lo, -1):
		return "-inf <= " + col + " <= " + formatNum(hi)
	default:
		return formatNum(lo) + " <= " + col + " <= " + formatNum(hi)
	}
}

// lpWriter writes lines, wrapping before a token that would make the current
// line longer than lpWrap. bufio.Writer keeps the first error, so callers
// only check Flush.
type lpWriter struct {
	w   *bufio.Writer
	col int    // length of the current line
	tok []byte // term's scratch: a term is built without allocating
}

func (lw *lpWriter) str(s string) {
	lw.w.WriteString(s)
	lw.col += len(s)
}

func (lw *lpWriter) newline() {
	lw.w.WriteByte('\n')
	lw.col = 0
}

// token appends " tok", or starts an indented continuation line with it.
// Continuation lines start with a space so a reader never takes them for a
// section keyword or a row label.
func (lw *lpWriter) token(tok string) {
	if lw.col+1+len(tok) > lpWrap {
		lw.newline()
		lw.str(" ")
	}
	lw.str(" " + tok)
}

// term appends coef·x<col> with an explicit sign ("- 3 x1", "+ 0 x2"); the
// first term of an expression omits a leading "+".
func (lw *lpWriter) term(first bool, coef float64, col int) {
	b := append(lw.tok[:0], ' ')
	if coef < 0 {
		b, coef = append(b, "- "...), -coef
	} else if !first {
		b = append(b, "+ "...)
	}
	b = strconv.AppendFloat(b, coef, 'g', -1, 64)
	b = append(b, " x"...)
	b = strconv.AppendInt(b, int64(col), 10)
	lw.tok = b
	// As token does, from the bytes.
	if lw.col+len(b) > lpWrap {
		lw.newline()
		lw.str(" ")
	}
	lw.w.Write(b)
	lw.col += len(b)
}

func (lw *lpWriter) nameList(section string, cols []int) {
	if len(cols) == 0 {
		return
	}
	lw.str(section)
	lw.newline()
	for _, i := range cols {
		lw.token(colName(i))
	}
	lw.newline()
}
