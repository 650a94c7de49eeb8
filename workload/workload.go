// Package workload owns an application's workload as the advisor sees it:
// the statements of a DEFINE WORKLOAD, resolved against a conceptual model,
// grouped into transactions and weighted per mix; or the statements of a
// query log (ParseLog: COUNT<TAB>STATEMENT lines, as pg_stat_statements or a
// MySQL digest exports them), each weighted by its count in one mix, "log",
// with a report of what could not be used and why.
//
// Invariants: every statement resolved without error (a query has a graph
// and at least one equality predicate, a write names existing fields and
// relationships); Weight(mix) is the group's weight of that mix (0 when the
// group does not run in it); tags are unique within a workload.
package workload

import (
	"fmt"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
)

// Workload is a resolved DEFINE WORKLOAD.
type Workload struct {
	Name       string
	Mixes      []string
	Statements []*Statement
}

// Statement is one statement of a group.
type Statement struct {
	Tag     string // the `-- tag` comment, or "<group>#<n>" without one
	Group   string
	Weights map[string]float64
	Query   *catalog.Query // a SELECT
	Write   *catalog.Write // any other statement
	AST     lang.Statement
	// CondOf is the conditional write whose read of the tuple it names
	// this statement is (Query.CondOf): the workload adds one after each
	// conditional write, of the same weights, tagged "<its tag>-if".
	CondOf *Statement
}

// Weight is the statement's weight in mix (0 when it does not run there).
func (s *Statement) Weight(mix string) float64 { return s.Weights[mix] }

// Text is the statement's canonical text.
func (s *Statement) Text() string { return lang.Print(s.AST) }

// Parse reads a workload file against a model. The file must hold exactly
// one DEFINE WORKLOAD (other statements are not allowed there).
func Parse(m *catalog.Model, file string, src []byte) (*Workload, error) {
	stmts, err := lang.ParseScript(file, src)
	if err != nil {
		return nil, err
	}
	var def *lang.DefineWorkload
	for _, st := range stmts {
		d, ok := st.(*lang.DefineWorkload)
		if !ok {
			return nil, &lang.Error{Pos: st.Pos(), Msg: "a workload file holds one DEFINE WORKLOAD (found " + kind(st) + ")"}
		}
		if def != nil {
			return nil, &lang.Error{Pos: st.Pos(), Msg: "a workload file holds one DEFINE WORKLOAD (found a second one)"}
		}
		def = d
	}
	if def == nil {
		return nil, fmt.Errorf("%s: no DEFINE WORKLOAD", file)
	}
	return Resolve(m, def)
}

func kind(st lang.Statement) string {
	text := lang.Print(st)
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return text
}

// Resolve resolves a DEFINE WORKLOAD against a model.
func Resolve(m *catalog.Model, def *lang.DefineWorkload) (*Workload, error) {
	w := &Workload{Name: def.Name, Mixes: def.Mixes}
	mixes := map[string]bool{}
	for _, mix := range def.Mixes {
		if mixes[mix] {
			return nil, &lang.Error{Pos: def.At, Msg: "mix " + mix + " is listed twice"}
		}
		mixes[mix] = true
	}
	tags := map[string]lang.Pos{}
	groups := map[string]bool{}
	for _, g := range def.Groups {
		if groups[g.Name] {
			return nil, &lang.Error{Pos: g.At, Msg: "group " + g.Name + " is defined twice"}
		}
		groups[g.Name] = true
		weights := map[string]float64{}
		for _, mw := range g.Weights {
			if !mixes[mw.Mix] {
				return nil, &lang.Error{Pos: mw.At, Msg: fmt.Sprintf("group %s: unknown mix %s (the workload declares %v)", g.Name, mw.Mix, def.Mixes)}
			}
			if _, dup := weights[mw.Mix]; dup {
				return nil, &lang.Error{Pos: mw.At, Msg: fmt.Sprintf("group %s: mix %s is weighted twice", g.Name, mw.Mix)}
			}
			weights[mw.Mix] = mw.Weight
		}
		for i, t := range g.Statements {
			s := &Statement{Tag: t.Tag, Group: g.Name, Weights: weights, AST: t.Stmt}
			if s.Tag == "" {
				s.Tag = fmt.Sprintf("%s#%d", g.Name, i+1)
			}
			if at, dup := tags[s.Tag]; dup {
				return nil, &lang.Error{Pos: t.Stmt.Pos(), Msg: fmt.Sprintf("tag %s is already used at %d:%d", s.Tag, at.Line, at.Col)}
			}
			tags[s.Tag] = t.Stmt.Pos()
			var err error
			if s.Query, s.Write, err = resolve(m, t.Stmt); err != nil {
				return nil, err
			}
			w.Statements = append(w.Statements, s)
			read, err := condRead(m, s)
			if err != nil {
				return nil, err
			}
			if read != nil {
				if at, dup := tags[read.Tag]; dup {
					return nil, &lang.Error{Pos: t.Stmt.Pos(), Msg: fmt.Sprintf("tag %s, of this conditional write's read, is already used at %d:%d", read.Tag, at.Line, at.Col)}
				}
				tags[read.Tag] = t.Stmt.Pos()
				w.Statements = append(w.Statements, read)
			}
		}
	}
	return w, nil
}

// condRead is the read write s makes of the tuple it names
// (catalog.Write.ReadsTuple), as a statement of the workload that runs as
// often as s does (its weights are s's own map), tagged "<s's tag>-if"
// for a conditional write, "<s's tag>-read" for one changing a list's
// elements by position or value; nil when s reads no tuple.
func condRead(m *catalog.Model, s *Statement) (*Statement, error) {
	if s.Write == nil || !s.Write.ReadsTuple() {
		return nil, nil
	}
	q, err := m.CondQuery(s.Write)
	if err != nil {
		return nil, &lang.Error{Pos: s.AST.Pos(), Msg: err.Error()}
	}
	tag := s.Tag + "-if"
	if s.Write.Cond == catalog.Unconditional {
		tag = s.Tag + "-read"
	}
	return &Statement{Tag: tag, Group: s.Group, Weights: s.Weights, Query: q, AST: q.Stmt, CondOf: s}, nil
}

// resolve resolves a workload statement: a SELECT into a query with an
// equality predicate, any other statement into a write.
func resolve(m *catalog.Model, st lang.Statement) (*catalog.Query, *catalog.Write, error) {
	sel, ok := st.(*lang.Select)
	if !ok {
		w, err := m.ResolveWrite(st)
		return nil, w, err
	}
	q, err := m.ResolveSelect(sel)
	if err == nil && !q.HasEquality() {
		err = &lang.Error{Pos: sel.At, Msg: "the query needs an equality predicate (or a CONTAINS of a SET, a CONTAINS KEY of a MAP, stored one cell per element): every plan the advisor considers starts with a key lookup (add e.g. a constant attribute, as RUBiS does with dummy = 1)"}
	}
	return q, nil, err
}

// HasMix reports whether the workload declares mix.
func (w *Workload) HasMix(mix string) bool {
	for _, m := range w.Mixes {
		if m == mix {
			return true
		}
	}
	return false
}
