package lang

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/types"
	"pgregory.net/rapid"
)

// The generators below build random ASTs of the shapes the parser produces:
// no NaN or infinite floats, timestamps in UTC at microsecond precision with
// four-digit years, parameters numbered in source order, valid modifier
// arguments, non-empty lists wherever the grammar requires an element.

var identGen = rapid.OneOf(
	// Names that are keywords somewhere, reserved or contextual.
	rapid.SampledFrom([]string{
		"a", "k1", "value", "key", "size", "row", "table", "family", "qualifier", "timestamp",
		"x", "X", "attr_name", "attr_value", "suffix", "prefix", "ordered", "salt", "desc",
		"DESC", "Asc", "select", "from", "NULL", "true", "In", "relation", "schema", "primary",
		"for", "_", "A_1", "string", "int",
	}),
	rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_]{0,8}`),
	rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "bytes"))
	}),
	rapid.StringN(1, 6, -1),
)

// defIdentGen draws the names definitions give to relations, attributes,
// relationships, column families and indexes, and the steps of the paths in
// column families and indexes: identGen's names with every '.' made '_', as
// CheckDefName refuses a '.' there.
var defIdentGen = rapid.Map(identGen, func(s string) string { return strings.ReplaceAll(s, ".", "_") })

var stringGen = rapid.OneOf(
	rapid.SampledFrom([]string{"", "'", "''", "\n", "\x00", "--", "/*", `"`, "a'b''c", "\xff\xfe"}),
	rapid.String(),
	rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "bytes"))
	}),
)

var bytesGen = rapid.SliceOfN(rapid.Byte(), 0, 12)

var intGen = rapid.OneOf(
	rapid.Int64(),
	rapid.SampledFrom([]int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64}),
)

var floatGen = rapid.OneOf(
	// Arbitrary bit patterns reach every magnitude, subnormals included.
	rapid.Custom(func(t *rapid.T) float64 {
		f := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0.25
		}
		return f
	}),
	rapid.Float64Range(-1e6, 1e6),
	rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e21, 1e-7, 5e-324, -5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}),
)

var (
	minTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

var timeGen = rapid.Custom(func(t *rapid.T) time.Time {
	return time.UnixMicro(rapid.Int64Range(minTime, maxTime).Draw(t, "micros")).UTC()
})

// astGen draws one AST; nparam numbers parameters in the order they are
// drawn, which is the order they are printed.
type astGen struct {
	t      *rapid.T
	nparam int
	dollar int      // > 0: the statement's parameters are $n, drawn from 1..dollar
	named  bool     // the statement's parameters are :name
	names  []string // the :names drawn for the statement, by index
}

func (g *astGen) ident() string { return identGen.Draw(g.t, "ident") }

// defIdent draws a name a definition gives (see defIdentGen).
func (g *astGen) defIdent() string { return defIdentGen.Draw(g.t, "defIdent") }

func (g *astGen) idents() []string {
	return rapid.SliceOfN(identGen, 1, 3).Draw(g.t, "idents")
}

func (g *astGen) intn(lo, hi int) int { return rapid.IntRange(lo, hi).Draw(g.t, "n") }

func (g *astGen) literal() *Literal {
	if g.intn(0, 5) == 0 {
		return &Literal{Value: g.collection()}
	}
	return &Literal{Value: g.constant(6)} // 6: NULL
}

// attrType draws an attribute's type: a scalar, or a frozen collection of
// scalars.
func (g *astGen) attrType() types.Type {
	scalar := func() types.Type { return rapid.SampledFrom(types.AllTypes).Draw(g.t, "type") }
	switch g.intn(0, 6) {
	case 0:
		return types.SetOf(scalar()).Frozen()
	case 1:
		return types.ListOf(scalar()).Frozen()
	case 2:
		return types.MapOf(scalar(), scalar()).Frozen()
	}
	return scalar()
}

// collection draws a collection literal as written: `{…}` a Set, `[…]` a
// List, `{k: v, …}` a Map (non-empty: `{}` reads back as a Set).
func (g *astGen) collection() types.Value {
	n := g.intn(0, 3)
	switch g.intn(0, 2) {
	case 0:
		xs := types.Set{}
		for ; n > 0; n-- {
			xs = append(xs, g.constant(5))
		}
		return xs
	case 1:
		xs := types.List{}
		for ; n > 0; n-- {
			xs = append(xs, g.constant(5))
		}
		return xs
	}
	m := types.Map{}
	for n = max(n, 1); n > 0; n-- {
		m = append(m, types.Entry{Key: g.constant(5), Val: g.constant(5)})
	}
	return m
}

// constant draws a literal's value; kinds is 5 for no NULL, 6 to allow it.
func (g *astGen) constant(kinds int) types.Value {
	var v types.Value
	switch g.intn(0, kinds) {
	case 0:
		v = stringGen.Draw(g.t, "string")
	case 1:
		v = bytesGen.Draw(g.t, "bytes")
	case 2:
		v = intGen.Draw(g.t, "int")
	case 3:
		v = floatGen.Draw(g.t, "float")
	case 4:
		v = rapid.Bool().Draw(g.t, "bool")
	case 5:
		v = timeGen.Draw(g.t, "time")
	}
	return v
}

// splitOn draws a SPLIT ON list for a column family with nkeys
// partition-key attributes: nil (none) half of the time.
func (g *astGen) splitOn(nkeys int) []SplitPoint {
	if rapid.Bool().Draw(g.t, "split") {
		return nil
	}
	var out []SplitPoint
	for n := g.intn(1, 3); n > 0; n-- {
		var sp SplitPoint
		for m := g.intn(1, nkeys); m > 0; m-- {
			sp.Values = append(sp.Values, g.constant(5))
		}
		out = append(out, sp)
	}
	return out
}

func (g *astGen) param() *Param {
	if g.dollar > 0 {
		return &Param{Index: g.intn(0, g.dollar-1), Dollar: true}
	}
	if g.named {
		// A name drawn anew or one used before (the same index).
		if len(g.names) > 0 && rapid.Bool().Draw(g.t, "reuse") {
			i := g.intn(0, len(g.names)-1)
			return &Param{Index: i, Name: g.names[i]}
		}
		name := "p" + strconv.Itoa(len(g.names)) + rapid.StringMatching(`[A-Za-z0-9_]{0,5}`).Draw(g.t, "name")
		g.names = append(g.names, name)
		g.nparam++
		return &Param{Index: len(g.names) - 1, Name: name}
	}
	p := &Param{Index: g.nparam}
	g.nparam++
	return p
}

// value is what INSERT rows and UPDATE assignments hold.
func (g *astGen) value() Expr {
	if g.intn(0, 3) == 0 {
		return g.param()
	}
	return g.literal()
}

func (g *astGen) expr(depth int) Expr {
	if depth <= 0 || g.intn(0, 3) == 0 {
		if g.intn(0, 2) == 0 {
			c := g.columnRef(false)
			return &c
		}
		return g.value()
	}
	depth--
	switch g.intn(0, 4) {
	case 0:
		op := rapid.SampledFrom([]Op{OpAnd, OpOr, OpEq, OpNe, OpLt, OpLe, OpGt, OpGe}).Draw(g.t, "op")
		l := g.expr(depth)
		return &Binary{Op: op, L: l, R: g.expr(depth)}
	case 1:
		return &Not{X: g.expr(depth)}
	case 2:
		e := &In{X: g.expr(depth), Not: rapid.Bool().Draw(g.t, "not")}
		for n := g.intn(1, 3); n > 0; n-- {
			e.List = append(e.List, g.expr(depth))
		}
		return e
	case 3:
		x := g.expr(depth)
		lo := g.expr(depth)
		return &Between{X: x, Lo: lo, Hi: g.expr(depth), Not: rapid.Bool().Draw(g.t, "not")}
	}
	if g.intn(0, 3) == 0 {
		c := g.columnRef(false)
		return &Contains{X: &c, Elem: g.value(), Key: rapid.Bool().Draw(g.t, "key")}
	}
	return &IsNull{X: g.expr(depth), Not: rapid.Bool().Draw(g.t, "not")}
}

func (g *astGen) where() Expr {
	if rapid.Bool().Draw(g.t, "where") {
		return g.expr(4)
	}
	return nil
}

// qual draws a qualifier path: usually none.
func (g *astGen) qual() []string {
	n := g.intn(-2, 2)
	if n <= 0 {
		return nil
	}
	q := make([]string, n)
	for i := range q {
		q[i] = g.ident()
	}
	return q
}

// pathRef draws the path of an attribute in a column family or index: a
// columnRef whose steps have no '.'.
func (g *astGen) pathRef() ColumnRef {
	c := ColumnRef{Name: g.defIdent()}
	for n := g.intn(-2, 2); n > 0; n-- {
		c.Qual = append(c.Qual, g.defIdent())
	}
	return c
}

func (g *astGen) columnRef(star bool) ColumnRef {
	c := ColumnRef{Qual: g.qual()}
	if star && len(c.Qual) > 0 && rapid.Bool().Draw(g.t, "qstar") {
		c.Star = true
	} else {
		c.Name = g.ident()
	}
	return c
}

func (g *astGen) connection() Connection {
	return Connection{FK: g.ident(), Value: g.value()}
}

func (g *astGen) dml() Statement {
	switch g.intn(0, 4) {
	case 0:
		s := &Select{Relation: g.ident(), Star: rapid.Bool().Draw(g.t, "star")}
		if !s.Star {
			for n := g.intn(1, 3); n > 0; n-- {
				s.Columns = append(s.Columns, g.columnRef(true))
			}
		}
		switch g.intn(0, 2) {
		case 1:
			s.Path = g.idents()
		case 2:
			if rapid.Bool().Draw(g.t, "alias") {
				s.Alias = g.ident()
			}
			for n := g.intn(0, 2); n > 0; n-- {
				j := Join{Relation: g.ident(), On: g.expr(2)}
				if rapid.Bool().Draw(g.t, "alias") {
					j.Alias = g.ident()
				}
				s.Joins = append(s.Joins, j)
			}
		}
		s.Where = g.where()
		for n := g.intn(0, 3); n > 0; n-- {
			s.OrderBy = append(s.OrderBy, OrderItem{Qual: g.qual(), Column: g.ident(), Desc: rapid.Bool().Draw(g.t, "desc")})
		}
		switch g.intn(0, 2) {
		case 1:
			s.Limit = &Literal{Value: rapid.Int64Min(0).Draw(g.t, "limit")}
		case 2:
			s.Limit = g.param()
		}
		return s
	case 3:
		s := &Insert{Relation: g.ident(), SetForm: true, Columns: g.idents()}
		row := make([]Expr, len(s.Columns))
		for i := range row {
			row[i] = g.value()
		}
		s.Rows = [][]Expr{row}
		for n := g.intn(0, 2); n > 0; n-- {
			s.Connect = append(s.Connect, g.connection())
		}
		s.IfNotExists = rapid.Bool().Draw(g.t, "if not exists")
		return s
	case 4:
		s := &Connect{Disconnect: rapid.Bool().Draw(g.t, "disconnect"), Relation: g.ident(), Key: g.value()}
		s.To = g.connection()
		return s
	case 1:
		s := &Insert{Relation: g.ident()}
		if rapid.Bool().Draw(g.t, "columns") {
			s.Columns = g.idents()
		}
		for n := g.intn(1, 3); n > 0; n-- {
			var row []Expr
			for m := g.intn(1, 4); m > 0; m-- {
				row = append(row, g.value())
			}
			s.Rows = append(s.Rows, row)
		}
		s.IfNotExists = len(s.Rows) == 1 && rapid.Bool().Draw(g.t, "if not exists")
		return s
	case 2:
		s := &Update{Relation: g.ident()}
		for n := g.intn(1, 3); n > 0; n-- {
			s.Set = append(s.Set, Assignment{Column: g.ident(), Value: g.value()})
		}
		s.Where = g.where()
		s.If = g.condition()
		return s
	}
	return &Delete{Relation: g.ident(), Where: g.where(), If: g.condition()}
}

// condition draws the IF clause of an UPDATE or DELETE: usually none.
func (g *astGen) condition() *Condition {
	switch g.intn(0, 3) {
	case 1:
		return &Condition{Exists: true}
	case 2:
		return &Condition{Expr: g.expr(3)}
	}
	return nil
}

func (g *astGen) concat(depth int) Concat {
	var c Concat
	for n := g.intn(1, 3); n > 0; n-- {
		c = append(c, g.elem(depth))
	}
	return c
}

func (g *astGen) elem(depth int) Elem {
	kinds := 4
	if depth > 0 {
		kinds = 5
	}
	switch g.intn(1, kinds) {
	case 1:
		return &AttrRef{Name: g.ident()}
	case 2:
		return &Const{Value: bytesGen.Draw(g.t, "const")}
	case 3:
		return &AttrNames{Exclude: g.excludeList()}
	case 4:
		return &AttrValues{Exclude: g.excludeList()}
	}
	m := &Modifier{Name: rapid.SampledFrom([]string{"suffix", "prefix", "size", "ordered", "desc", "salt"}).Draw(g.t, "modifier")}
	switch m.Name {
	case "suffix", "prefix":
		m.Args = []types.Value{bytesGen.Draw(g.t, "arg")}
	case "size":
		if rapid.Bool().Draw(g.t, "sized") {
			m.Args = []types.Value{rapid.SampledFrom([]int64{1, 2, 4}).Draw(g.t, "arg")}
		}
	case "salt":
		m.Args = []types.Value{rapid.Int64Range(1, 256).Draw(g.t, "arg")}
	}
	m.Body = g.concat(depth - 1)
	return m
}

// excludeList draws the names of attr_name[…] / attr_value[…]: nil for the
// empty list, as the parser returns it, and any strings (they print as
// string literals).
func (g *astGen) excludeList() []string {
	n := g.intn(0, 3)
	if n == 0 {
		return nil
	}
	return rapid.SliceOfN(stringGen, n, n).Draw(g.t, "exclude")
}

// splitKeys draws a schema's SPLIT ON keys: nil (none) half of the time.
func (g *astGen) splitKeys() []*Const {
	if rapid.Bool().Draw(g.t, "split") {
		return nil
	}
	var out []*Const
	for n := g.intn(1, 3); n > 0; n-- {
		out = append(out, &Const{Value: bytesGen.Draw(g.t, "key")})
	}
	return out
}

func (g *astGen) optConcat() Concat {
	if rapid.Bool().Draw(g.t, "field") {
		return g.concat(3)
	}
	return nil
}

func (g *astGen) statement() Statement {
	g.nparam, g.names = 0, nil
	g.dollar = rapid.SampledFrom([]int{0, 0, 3}).Draw(g.t, "dollar")
	g.named = g.dollar == 0 && rapid.Bool().Draw(g.t, "named")
	switch g.intn(0, 7) {
	case 7:
		return &DropSchema{Name: g.ident()}
	case 5:
		refs := func(min int) []ColumnRef {
			out := []ColumnRef{}
			for n := g.intn(min, 3); n > 0; n-- {
				out = append(out, g.pathRef())
			}
			return out
		}
		d := &DefineColumnFamily{Name: g.defIdent(), Relation: g.defIdent(), Partition: refs(1), Clustering: refs(0), Values: refs(0),
			SaltBuckets: rapid.SampledFrom([]int{0, 0, 1, 16, 256}).Draw(g.t, "salt")}
		if d.SaltBuckets == 0 { // SPLIT ON and SALT_BUCKETS exclude each other
			d.SplitOn = g.splitOn(len(d.Partition))
		}
		if d.SaltBuckets == 0 && d.SplitOn == nil && len(d.Clustering) > 0 {
			// PARTITION_BUCKETS excludes both and needs a clustering key.
			d.PartitionBuckets = rapid.SampledFrom([]int{0, 2, 256}).Draw(g.t, "buckets")
		}
		return d
	case 6:
		return &DefineIndex{Name: g.defIdent(), Family: g.defIdent(), Column: g.pathRef()}
	case 4:
		w := &DefineWorkload{Name: g.ident(), Mixes: g.idents()}
		for n := g.intn(0, 3); n > 0; n-- {
			grp := Group{Name: g.ident()}
			for m := g.intn(1, 3); m > 0; m-- {
				wt := rapid.OneOf(rapid.Float64Range(0, 1e6), rapid.SampledFrom([]float64{0, 1, 4.44, 53, 0.53, 1e-9, 1e300})).Draw(g.t, "weight")
				grp.Weights = append(grp.Weights, MixWeight{Mix: g.ident(), Weight: wt})
			}
			for m := g.intn(0, 3); m > 0; m-- {
				g.nparam, g.names = 0, nil
				st := g.dml()
				if _, ok := st.(*Explain); ok {
					continue
				}
				tag := rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[A-Za-z0-9_]{1,8}( [a-z]{1,3})?`)).Draw(g.t, "tag")
				grp.Statements = append(grp.Statements, Tagged{Tag: tag, Stmt: st})
			}
			w.Groups = append(w.Groups, grp)
		}
		return w
	case 0:
		s := &DefineRelation{Name: g.defIdent()}
		if rapid.Bool().Draw(g.t, "rows") {
			s.Rows = rapid.Int64Range(1, math.MaxInt64).Draw(g.t, "rows")
		}
		for n := g.intn(1, 4); n > 0; n-- {
			a := AttrDef{
				Name: g.defIdent(),
				Type: g.attrType(),
				Key:  rapid.Bool().Draw(g.t, "key"),
			}
			if rapid.Bool().Draw(g.t, "stats") {
				a.Size = rapid.Int64Range(1, 1<<40).Draw(g.t, "size")
				a.Cardinality = rapid.Int64Range(1, 1<<40).Draw(g.t, "card")
			}
			if rapid.Bool().Draw(g.t, "fk") {
				a.References, a.Reverse = g.defIdent(), g.defIdent()
			}
			s.Attrs = append(s.Attrs, a)
		}
		return s
	case 1:
		return &DefineSchema{
			Primary:   rapid.Bool().Draw(g.t, "primary"),
			Name:      g.ident(),
			Relation:  g.defIdent(),
			Table:     g.optConcat(),
			Row:       g.concat(3),
			Family:    g.optConcat(),
			Qualifier: g.optConcat(),
			Value:     g.optConcat(),
			SplitOn:   g.splitKeys(),
		}
	case 2:
		return &Explain{Stmt: g.dml()}
	}
	return g.dml()
}

var statementGen = rapid.Custom(func(t *rapid.T) Statement {
	return (&astGen{t: t}).statement()
})

// TestRoundTripProperty checks Parse(Print(x)) == x on random ASTs, and that
// printing is canonical (printing the reparsed AST gives the same text).
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := statementGen.Draw(t, "stmt")
		text := Print(s)
		got, err := ParseStatement("", text)
		if err != nil {
			t.Fatalf("parse of printed statement: %v\n%s", err, text)
		}
		if !EqualIgnoringPos(s, got) {
			t.Fatalf("reparse differs (-printed +reparsed):\n%s\ntext:\n%s", diffIgnoringPos(s, got), text)
		}
		if again := Print(got); again != text {
			t.Fatalf("printing is not canonical:\n%s\nthen\n%s", text, again)
		}
	})
}

func TestScriptRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ss := rapid.SliceOfN(statementGen, 0, 4).Draw(t, "script")
		text := PrintScript(ss)
		got, err := ParseScript("", []byte(text))
		if err != nil {
			t.Fatalf("parse of printed script: %v\n%s", err, text)
		}
		if len(ss) == 0 {
			ss = nil // the parser returns nil for an empty script
		}
		if !EqualIgnoringPos(ss, got) {
			t.Fatalf("reparse differs:\n%s\ntext:\n%s", diffIgnoringPos(ss, got), text)
		}
	})
}

func TestExprRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := (&astGen{t: t}).expr(6)
		text := PrintExpr(e)
		got, err := ParseExpr("", text)
		if err != nil {
			t.Fatalf("parse of printed expression: %v\n%s", err, text)
		}
		if !EqualIgnoringPos(e, got) {
			t.Fatalf("reparse differs:\n%s\ntext:\n%s", diffIgnoringPos(e, got), text)
		}
	})
}
