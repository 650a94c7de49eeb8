package lang

import (
	"math"
	"testing"
	"time"

	"github.com/kvschema/kvschema/types"
)

func TestPrintExpr(t *testing.T) {
	a, b, c := col("a"), col("b"), col("c")
	tests := []struct {
		e    Expr
		want string
	}{
		{or(or(a, b), c), "a OR b OR c"},
		{or(a, or(b, c)), "a OR (b OR c)"},
		{and(and(a, b), c), "a AND b AND c"},
		{and(a, and(b, c)), "a AND (b AND c)"},
		{and(or(a, b), c), "(a OR b) AND c"},
		{or(and(a, b), and(b, c)), "a AND b OR b AND c"},
		{not(a), "NOT a"},
		{not(eq(a, b)), "NOT a = b"},
		{not(and(a, b)), "NOT (a AND b)"},
		{not(not(a)), "NOT (NOT a)"},
		{and(not(a), not(b)), "NOT a AND NOT b"},
		{eq(eq(a, b), c), "(a = b) = c"},
		{eq(a, not(b)), "a = (NOT b)"},
		{&In{X: or(a, b), List: []Expr{and(a, b), c}, Not: true}, "(a OR b) NOT IN ((a AND b), c)"},
		{&Between{X: a, Lo: not(b), Hi: eq(b, c)}, "a BETWEEN (NOT b) AND (b = c)"},
		{&IsNull{X: &IsNull{X: a}, Not: true}, "(a IS NULL) IS NOT NULL"},
		{bin(OpNe, a, lit(int64(math.MinInt64))), "a != -9223372036854775808"},
		{bin(OpLe, lit(1.0), lit(math.Copysign(0, -1))), "1.0 <= -0.0"},
		{bin(OpGt, lit(1e21), lit([]byte{0xab})), "1e+21 > x'ab'"},
		{eq(col("select"), col(`a"b`)), `"select" = "a""b"`},
		{eq(col("Timestamp"), lit(ts("2024-01-02 03:04:05.000001"))), "Timestamp = TIMESTAMP '2024-01-02 03:04:05.000001'"},
		{&In{X: prm(0), List: []Expr{lit(nil), lit(true), lit("it's")}}, "? IN (NULL, TRUE, 'it''s')"},
	}
	for _, tc := range tests {
		got := PrintExpr(tc.e)
		if got != tc.want {
			t.Errorf("PrintExpr = %s, want %s", got, tc.want)
			continue
		}
		// Every tree above is one the parser can produce: it must come back.
		back, err := ParseExpr("", got)
		if err != nil {
			t.Errorf("ParseExpr(%s): %v", got, err)
			continue
		}
		if !EqualIgnoringPos(back, tc.e) {
			t.Errorf("ParseExpr(%s) differs:\n%s", got, diffIgnoringPos(back, tc.e))
		}
	}
}

func TestPrintConcat(t *testing.T) {
	tests := []struct {
		c    Concat
		want string
	}{
		{Concat{}, "''"},
		{Concat{cnst("a'b"), &Const{Value: []byte{0, 1}}, &Const{Value: []byte("\n")}}, "'a''b':x'0001':x'0a'"},
		{Concat{ref("from"), ref("k 1")}, `"from":"k 1"`},
		{Concat{&Modifier{Name: "suffix", Args: []types.Value{[]byte{0xff}}, Body: Concat{ref("a")}}}, "suffix(x'ff'){a}"},
		{Concat{&Modifier{Name: "salt", Args: []types.Value{int64(8)}, Body: Concat{&Modifier{Name: "desc", Body: Concat{ref("a")}}}}}, "salt(8){desc{a}}"},
		{Concat{&AttrNames{Exclude: []string{"it's"}}, &AttrValues{}}, "attr_name['it''s']:attr_value[]"},
	}
	for _, tc := range tests {
		if got := PrintConcat(tc.c); got != tc.want {
			t.Errorf("PrintConcat = %s, want %s", got, tc.want)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	tests := map[string]string{
		"a":         "a",
		"_x9":       "_x9",
		"value":     "value",
		"timestamp": "timestamp",
		"Select":    `"Select"`,
		"desc":      `"desc"`,
		"9a":        `"9a"`,
		"a-b":       `"a-b"`,
		`"`:         `""""`,
		"é":         `"é"`,
	}
	for in, want := range tests {
		if got := quoteIdent(in); got != want {
			t.Errorf("quoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEqualIgnoringPos(t *testing.T) {
	a := &Select{At: Pos{Line: 1, Col: 1}, Star: true, Relation: "r", Where: eq(col("k"), lit([]byte{}))}
	b := &Select{At: Pos{Line: 9, Col: 9}, Star: true, Relation: "r", Where: eq(col("k"), lit([]byte(nil)))}
	if !EqualIgnoringPos(a, b) {
		t.Error("positions or nil vs empty []byte made a difference")
	}
	c := &Select{Star: true, Relation: "r", Where: eq(col("k"), lit(""))}
	if EqualIgnoringPos(a, c) {
		t.Error("[]byte and string literals compared equal")
	}
	t1 := lit(ts("2024-01-02 03:04:05"))
	t2 := lit(ts("2024-01-02 03:04:05").In(time.FixedZone("UTC+2", 2*60*60)))
	if !EqualIgnoringPos(t1, t2) {
		t.Error("equal instants in different zones compared unequal")
	}
}
