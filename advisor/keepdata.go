package advisor

import (
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/workload"
)

// KeepDataGroup is the group of the statements Options.KeepData adds.
const KeepDataGroup = "keep-data"

// keepDataQueries are the lookups that make a schema keep every attribute
// and relationship of m (Options.KeepData), of weight 0 in every mix: for
// each entity, all its fields by its key; for each reference (a to-one
// relationship), the referenced entity's key by the referring one's.
func keepDataQueries(m *catalog.Model) ([]*workload.Statement, error) {
	var out []*workload.Statement
	add := func(tag, text string) error {
		stmts, err := lang.ParseScript(KeepDataGroup, []byte(text))
		if err != nil {
			return fmt.Errorf("keep-data: %s: %w (a bug)", text, err)
		}
		sel := stmts[0].(*lang.Select)
		q, err := m.ResolveSelect(sel)
		if err != nil {
			return fmt.Errorf("keep-data: %s: %w (a bug)", text, err)
		}
		out = append(out, &workload.Statement{Tag: tag, Group: KeepDataGroup, Query: q, AST: sel})
		return nil
	}
	for _, e := range m.Entities {
		id := e.ID()
		fields := []string{e.Name + "." + id.Name}
		for _, f := range e.Fields {
			if f != id {
				fields = append(fields, e.Name+"."+f.Name)
			}
		}
		if err := add("keep-"+e.Name, fmt.Sprintf("SELECT %s FROM %s WHERE %s.%s = ?;", strings.Join(fields, ", "), e.Name, e.Name, id.Name)); err != nil {
			return nil, err
		}
		for _, n := range e.Navs {
			if n.Many {
				continue
			}
			if err := add("keep-"+e.Name+"."+n.Name, fmt.Sprintf("SELECT %s.%s FROM %s.%s WHERE %s.%s = ?;", n.Name, n.To.ID().Name, e.Name, n.Name, e.Name, id.Name)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
