package lang

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvschema/kvschema/types"
)

// Print returns the canonical text of s, without a trailing ';'. Parsing the
// text gives back s (ignoring positions) for every statement the parser can
// produce. It panics on a nil or foreign node, which is a programming error.
func Print(s Statement) string {
	var b strings.Builder
	printStmt(&b, s)
	return b.String()
}

// PrintScript returns the canonical text of a script: each statement
// followed by ";\n".
func PrintScript(ss []Statement) string {
	var b strings.Builder
	for _, s := range ss {
		printStmt(&b, s)
		b.WriteString(";\n")
	}
	return b.String()
}

// PrintExpr returns the canonical text of an expression, with parentheses
// only where the tree needs them.
func PrintExpr(e Expr) string {
	var b strings.Builder
	printExpr(&b, e)
	return b.String()
}

// PrintConcat returns the canonical text of a schema field value; the empty
// Concat prints as the empty string literal.
func PrintConcat(c Concat) string {
	var b strings.Builder
	printConcat(&b, c)
	return b.String()
}

// PrintRows returns the text of rows of an INSERT's VALUES list as Print
// writes them: "(1, 'a'), (2, 'b')". With Reader.Part it prints the rows of
// an INSERT handed over in parts.
func PrintRows(rows [][]Expr) string {
	var b strings.Builder
	printRows(&b, rows)
	return b.String()
}

func printRows(b *strings.Builder, rows [][]Expr) {
	for i, row := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		printList(b, row)
	}
}

// quoteIdent writes a name bare when it lexes back as the same identifier,
// and double-quoted otherwise.
func quoteIdent(s string) string {
	if isBareIdent(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func isBareIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	_, reserved := keyword(s)
	return !reserved
}

// formatBytes writes a byte-string constant as a readable string literal when
// it is printable text and as x'…' otherwise; both lex back to the same bytes.
func formatBytes(b []byte) string {
	if isPrintable(string(b)) {
		return types.QuoteString(string(b))
	}
	return types.Format(b)
}

func printStmt(b *strings.Builder, s Statement) {
	switch s := s.(type) {
	case *DefineRelation:
		b.WriteString("DEFINE RELATION " + quoteIdent(s.Name))
		if s.Rows > 0 {
			fmt.Fprintf(b, " ROWS %d", s.Rows)
		}
		b.WriteString(" {")
		for i, a := range s.Attrs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n  " + quoteIdent(a.Name) + " " + a.Type.String())
			switch {
			case a.Partition:
				b.WriteString(" PARTITION KEY")
			case a.Key:
				b.WriteString(" KEY")
			}
			if a.Static {
				b.WriteString(" STATIC")
			}
			if a.Size > 0 {
				fmt.Fprintf(b, " SIZE %d", a.Size)
			}
			if a.Cardinality > 0 {
				fmt.Fprintf(b, " CARDINALITY %d", a.Cardinality)
			}
			if a.References != "" {
				printReferences(b, a.References, a.RefAttr, a.Reverse)
			}
		}
		b.WriteString("\n}")
	case *AlterTable:
		name := quoteIdent(s.Relation)
		if strings.EqualFold(name, "IF") || strings.EqualFold(name, "ONLY") {
			name = `"` + s.Relation + `"` // not the words that may precede the name
		}
		b.WriteString("ALTER TABLE " + name + " ADD ")
		if s.ForeignKey == "" {
			b.WriteString("PRIMARY KEY (")
			printNames(b, s.PrimaryKey)
			b.WriteByte(')')
			break
		}
		b.WriteString("FOREIGN KEY (" + quoteIdent(s.ForeignKey) + ")")
		printReferences(b, s.References, s.RefAttr, s.Reverse)
	case *DefineWorkload:
		b.WriteString("DEFINE WORKLOAD " + quoteIdent(s.Name) + " MIXES (")
		printNames(b, s.Mixes)
		b.WriteString(") {")
		for _, g := range s.Groups {
			b.WriteString("\n  GROUP " + quoteIdent(g.Name) + " WEIGHTS (")
			for i, w := range g.Weights {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(quoteIdent(w.Mix) + " " + strconv.FormatFloat(w.Weight, 'g', -1, 64))
			}
			b.WriteString(") {")
			for _, t := range g.Statements {
				b.WriteString("\n    ")
				printStmt(b, t.Stmt)
				b.WriteByte(';')
				if t.Tag != "" {
					b.WriteString(" -- " + t.Tag)
				}
			}
			b.WriteString("\n  }")
		}
		b.WriteString("\n}")
	case *DefineColumnFamily:
		b.WriteString("DEFINE COLUMN FAMILY " + quoteIdent(s.Name) + " FOR " + quoteIdent(s.Relation) + " {\n  PARTITION KEY (")
		printRefs(b, s.Partition)
		b.WriteString("),\n  CLUSTERING KEY (")
		printRefs(b, s.Clustering)
		if len(s.Static) > 0 {
			b.WriteString("),\n  STATIC (")
			printRefs(b, s.Static)
		}
		b.WriteString("),\n  VALUES (")
		printRefs(b, s.Values)
		b.WriteString(")")
		if s.SaltBuckets > 0 {
			b.WriteString(",\n  SALT_BUCKETS = " + strconv.Itoa(s.SaltBuckets))
		}
		if s.PartitionBuckets > 0 {
			b.WriteString(",\n  PARTITION_BUCKETS = " + strconv.Itoa(s.PartitionBuckets))
		}
		if len(s.SplitOn) > 0 {
			b.WriteString(",\n  SPLIT ON (")
			printSplitPoints(b, s.SplitOn)
			b.WriteByte(')')
		}
		b.WriteString("\n}")
	case *DefineIndex:
		b.WriteString("DEFINE SECONDARY INDEX " + quoteIdent(s.Name) + " ON " + quoteIdent(s.Family) + " (")
		printColumnRef(b, &s.Column)
		b.WriteByte(')')
	case *Transaction:
		b.WriteString(s.Op.String())
	case *Connect:
		if s.Disconnect {
			b.WriteString("DISCONNECT ")
		} else {
			b.WriteString("CONNECT ")
		}
		b.WriteString(quoteIdent(s.Relation) + "(")
		printExpr(b, s.Key)
		if s.Disconnect {
			b.WriteString(") FROM ")
		} else {
			b.WriteString(") TO ")
		}
		printConnection(b, s.To)
	case *DropSchema:
		b.WriteString("DROP SCHEMA " + quoteIdent(s.Name))
	case *DefineSchema:
		b.WriteString("DEFINE ")
		if s.Primary {
			b.WriteString("PRIMARY ")
		}
		b.WriteString("SCHEMA " + quoteIdent(s.Name) + " FOR " + quoteIdent(s.Relation) + " {")
		first := true
		for _, f := range []struct {
			word string
			c    Concat
		}{{"TABLE", s.Table}, {"ROW", s.Row}, {"FAMILY", s.Family}, {"QUALIFIER", s.Qualifier}, {"VALUE", s.Value}} {
			if f.c == nil {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString("\n  " + f.word + " ")
			printConcat(b, f.c)
		}
		if len(s.SplitOn) > 0 {
			if !first {
				b.WriteByte(',')
			}
			b.WriteString("\n  SPLIT ON (")
			for i, c := range s.SplitOn {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(formatBytes(c.Value))
			}
			b.WriteByte(')')
		}
		b.WriteString("\n}")
	case *Insert:
		b.WriteString("INSERT INTO " + quoteIdent(s.Relation))
		if s.SetForm {
			b.WriteString(" SET ")
			for i, c := range s.Columns {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(quoteIdent(c) + " = ")
				printExpr(b, s.Rows[0][i])
			}
			for i, c := range s.Connect {
				if i == 0 {
					b.WriteString(" AND CONNECT TO ")
				} else {
					b.WriteString(", ")
				}
				printConnection(b, c)
			}
			printInsertTail(b, s)
			break
		}
		if s.Columns != nil {
			b.WriteString(" (")
			printNames(b, s.Columns)
			b.WriteByte(')')
		}
		b.WriteString(" VALUES ")
		printRows(b, s.Rows)
		printInsertTail(b, s)
	case *Select:
		b.WriteString("SELECT ")
		if s.Star {
			b.WriteByte('*')
		} else {
			for i, c := range s.Columns {
				if i > 0 {
					b.WriteString(", ")
				}
				printColumnRef(b, &c)
			}
		}
		b.WriteString(" FROM " + quoteIdent(s.Relation))
		for _, fk := range s.Path {
			b.WriteString("." + quoteIdent(fk))
		}
		if s.Alias != "" {
			b.WriteString(" AS " + quoteIdent(s.Alias))
		}
		for _, j := range s.Joins {
			b.WriteString(" JOIN " + quoteIdent(j.Relation))
			if j.Alias != "" {
				b.WriteString(" AS " + quoteIdent(j.Alias))
			}
			b.WriteString(" ON ")
			printExpr(b, j.On)
		}
		printWhere(b, s.Where)
		if len(s.GroupBy) > 0 {
			b.WriteString(" GROUP BY ")
			printRefs(b, s.GroupBy)
		}
		if s.Having != nil {
			b.WriteString(" HAVING ")
			printExpr(b, s.Having)
		}
		for i, o := range s.OrderBy {
			if i == 0 {
				b.WriteString(" ORDER BY ")
			} else {
				b.WriteString(", ")
			}
			r := o.Ref()
			printColumnRef(b, &r)
			if o.Desc {
				b.WriteString(" DESC")
			}
		}
		if s.Limit != nil {
			b.WriteString(" LIMIT ")
			printExpr(b, s.Limit)
		}
	case *Update:
		b.WriteString("UPDATE " + quoteIdent(s.Relation))
		if s.TTL != nil {
			b.WriteString(" USING TTL ")
			printExpr(b, s.TTL)
		}
		b.WriteString(" SET ")
		for i, a := range s.Set {
			if i > 0 {
				b.WriteString(", ")
			}
			printAssignment(b, a)
		}
		printWhere(b, s.Where)
		printCondition(b, s.If)
	case *Delete:
		b.WriteString("DELETE ")
		for i, a := range s.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			printAssignment(b, a)
		}
		if len(s.Columns) > 0 {
			b.WriteString(" ")
		}
		b.WriteString("FROM " + quoteIdent(s.Relation))
		printWhere(b, s.Where)
		printCondition(b, s.If)
	case *Explain:
		b.WriteString("EXPLAIN ")
		printStmt(b, s.Stmt)
	default:
		panic(fmt.Sprintf("lang: cannot print statement %T", s))
	}
}

// printInsertTail writes what ends an INSERT after its rows.
func printInsertTail(b *strings.Builder, s *Insert) {
	if s.IfNotExists {
		b.WriteString(" IF NOT EXISTS")
	}
	if s.TTL != nil {
		b.WriteString(" USING TTL ")
		printExpr(b, s.TTL)
	}
}

// printAssignment writes one assignment of an UPDATE or column of a DELETE.
func printAssignment(b *strings.Builder, a Assignment) {
	c := quoteIdent(a.Column)
	b.WriteString(c)
	if a.Key != nil {
		b.WriteString("[")
		printExpr(b, a.Key)
		b.WriteString("]")
	}
	switch a.Op {
	case AssignDelete:
		return
	case AssignAdd:
		b.WriteString(" = " + c + " + ")
	case AssignRemove:
		b.WriteString(" = " + c + " - ")
	default:
		b.WriteString(" = ")
	}
	printExpr(b, a.Value)
	if a.Op == AssignPrepend {
		b.WriteString(" + " + c)
	}
}

// printCondition writes the IF clause of a conditional UPDATE or DELETE.
func printCondition(b *strings.Builder, c *Condition) {
	switch {
	case c == nil:
	case c.Exists:
		b.WriteString(" IF EXISTS")
	default:
		b.WriteString(" IF ")
		printExpr(b, c.Expr)
	}
}

// printReferences writes ` REFERENCES rel[(attr)] [REVERSE name]`.
func printReferences(b *strings.Builder, rel, attr, reverse string) {
	b.WriteString(" REFERENCES " + quoteIdent(rel))
	if attr != "" {
		b.WriteString("(" + quoteIdent(attr) + ")")
	}
	if reverse != "" {
		b.WriteString(" REVERSE " + quoteIdent(reverse))
	}
}

// printSplitPoints writes the points of a SPLIT ON list: bare constants when
// every point has one value, parenthesized lists otherwise.
func printSplitPoints(b *strings.Builder, sps []SplitPoint) {
	single := true
	for _, sp := range sps {
		single = single && len(sp.Values) == 1
	}
	for i, sp := range sps {
		if i > 0 {
			b.WriteString(", ")
		}
		if !single {
			b.WriteByte('(')
		}
		for j, v := range sp.Values {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(types.Format(v))
		}
		if !single {
			b.WriteByte(')')
		}
	}
}

func printRefs(b *strings.Builder, cs []ColumnRef) {
	for i := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		printColumnRef(b, &cs[i])
	}
}

func printConnection(b *strings.Builder, c Connection) {
	b.WriteString(quoteIdent(c.FK) + "(")
	printExpr(b, c.Value)
	b.WriteByte(')')
}

func printColumnRef(b *strings.Builder, c *ColumnRef) {
	if c.Agg != "" {
		b.WriteString(c.Agg + "(")
		if c.Distinct {
			b.WriteString("DISTINCT ")
		}
		defer b.WriteByte(')')
	}
	for _, q := range c.Qual {
		b.WriteString(quoteIdent(q) + ".")
	}
	if c.Star {
		b.WriteByte('*')
		return
	}
	b.WriteString(quoteIdent(c.Name))
}

func printNames(b *strings.Builder, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(n))
	}
}

func printWhere(b *strings.Builder, e Expr) {
	if e != nil {
		b.WriteString(" WHERE ")
		printExpr(b, e)
	}
}

func printConcat(b *strings.Builder, c Concat) {
	if len(c) == 0 {
		b.WriteString("''")
		return
	}
	for i, e := range c {
		if i > 0 {
			b.WriteByte(':')
		}
		printElem(b, e)
	}
}

func printElem(b *strings.Builder, e Elem) {
	switch e := e.(type) {
	case *AttrRef:
		b.WriteString(quoteIdent(e.Name))
	case *Const:
		b.WriteString(formatBytes(e.Value))
	case *Modifier:
		b.WriteString(e.Name)
		if len(e.Args) > 0 {
			b.WriteByte('(')
			for i, a := range e.Args {
				if i > 0 {
					b.WriteString(", ")
				}
				if v, ok := a.([]byte); ok {
					b.WriteString(formatBytes(v))
				} else {
					b.WriteString(types.Format(a))
				}
			}
			b.WriteByte(')')
		}
		b.WriteByte('{')
		printConcat(b, e.Body)
		b.WriteByte('}')
	case *AttrNames:
		printAttrList(b, "attr_name", e.Exclude)
	case *AttrValues:
		printAttrList(b, "attr_value", e.Exclude)
	default:
		panic(fmt.Sprintf("lang: cannot print element %T", e))
	}
}

func printAttrList(b *strings.Builder, word string, names []string) {
	b.WriteString(word + "[")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.QuoteString(n))
	}
	b.WriteByte(']')
}

// Precedence levels, loosest first. A child is parenthesized when its level
// is below the minimum its position in the parent allows.
const (
	precOr = iota + 1
	precAnd
	precNot
	precPredicate // comparisons, IN, BETWEEN, IS NULL
	precOperand   // literals, parameters, columns
)

func precedence(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case OpOr:
			return precOr
		case OpAnd:
			return precAnd
		}
		return precPredicate
	case *Not:
		return precNot
	case *In, *Between, *IsNull, *Contains:
		return precPredicate
	}
	return precOperand
}

// printSub prints e, parenthesized if its precedence is below least.
func printSub(b *strings.Builder, e Expr, least int) {
	if precedence(e) < least {
		b.WriteByte('(')
		printExpr(b, e)
		b.WriteByte(')')
		return
	}
	printExpr(b, e)
}

// printList writes (e1, e2, …), each element an operand.
func printList(b *strings.Builder, es []Expr) {
	b.WriteByte('(')
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		printSub(b, e, precOperand)
	}
	b.WriteByte(')')
}

func printExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Literal:
		b.WriteString(types.Format(e.Value))
	case *Param:
		if e.Name != "" {
			b.WriteString(":" + e.Name)
		} else if e.Dollar {
			b.WriteString("$" + strconv.Itoa(e.Index+1))
		} else {
			b.WriteByte('?')
		}
	case *ColumnRef:
		printColumnRef(b, e)
	case *Binary:
		// AND and OR are left-associative: a right child of the same
		// operator needs parentheses, a left one does not.
		switch p := precedence(e); p {
		case precOr, precAnd:
			printSub(b, e.L, p)
			b.WriteString(" " + e.Op.String() + " ")
			printSub(b, e.R, p+1)
		default:
			printSub(b, e.L, precOperand)
			b.WriteString(" " + e.Op.String() + " ")
			printSub(b, e.R, precOperand)
		}
	case *Not:
		b.WriteString("NOT ")
		printSub(b, e.X, precPredicate)
	case *In:
		printSub(b, e.X, precOperand)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN ")
		printList(b, e.List)
	case *Between:
		printSub(b, e.X, precOperand)
		if e.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		printSub(b, e.Lo, precOperand)
		b.WriteString(" AND ")
		printSub(b, e.Hi, precOperand)
	case *Contains:
		printSub(b, e.X, precOperand)
		b.WriteString(" CONTAINS ")
		if e.Key {
			b.WriteString("KEY ")
		}
		printSub(b, e.Elem, precOperand)
	case *IsNull:
		printSub(b, e.X, precOperand)
		b.WriteString(" IS ")
		if e.Not {
			b.WriteString("NOT ")
		}
		b.WriteString("NULL")
	default:
		panic(fmt.Sprintf("lang: cannot print expression %T", e))
	}
}
