// Migration states of an advised schema (kvschema migrate).

package catalog

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/lang"
)

// An online schema change (kvschema migrate, DB.Migrate) moves a deployed
// schema through states that each are a catalog version, as F1's online
// schema change and Phoenix's asynchronous index build do: a new index is
// first write-only (every write maintains it, no plan reads it), then
// backfilled, then readable; an index to drop is first write-only (plans
// stop reading it while writers that have not seen that version yet still
// may), then removed from the schema, its table listed as dropping until
// its rows are deleted. The states are directives in the schema script,
// so the stored script is the whole truth and a migration interrupted at
// any point resumes from it.
const (
	// WriteOnlyDirective lists the indexes no plan reads: every write
	// keeps them (Schema.WriteOnly).
	WriteOnlyDirective = "-- kvschema write-only: "
	// DroppingDirective lists the tables of dropped indexes whose rows
	// are still to be deleted (Advised.Dropping).
	DroppingDirective = "-- kvschema dropping: "
)

// directiveList reads the names a directive lists in src (nil when src
// has none), with the line of each.
func directiveList(src, directive string) (names []string, lines []int) {
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	prefix := strings.TrimSpace(directive)
	for line := 1; sc.Scan(); line++ {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		for _, n := range strings.Split(rest, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names, lines = append(names, n), append(lines, line)
			}
		}
	}
	return names, lines
}

// readStates sets s.WriteOnly and a.Dropping from the directives of the
// schema script.
func (a *Advised) readStates(file string) error {
	names, lines := directiveList(a.SchemaSrc, WriteOnlyDirective)
	for i, n := range names {
		x := a.Schema.Index(n)
		if x == nil {
			return fmt.Errorf("%s:%d: the write-only directive names %s, which the schema does not define", file, lines[i], n)
		}
		if a.Schema.WriteOnly == nil {
			a.Schema.WriteOnly = map[*Index]bool{}
		}
		a.Schema.WriteOnly[x] = true
	}
	names, lines = directiveList(a.SchemaSrc, DroppingDirective)
	for i, n := range names {
		if a.Schema.Index(n) != nil {
			return fmt.Errorf("%s:%d: the dropping directive names %s, which the schema defines", file, lines[i], n)
		}
		a.Dropping = append(a.Dropping, n)
	}
	return nil
}

// Readable reports whether plans may read x: it is not write-only.
func (s *Schema) Readable(x *Index) bool { return !s.WriteOnly[x] }

// Stage is one state of a migration: the indexes of the schema, each named
// as its table is in the store, those that are write-only, and the tables
// whose rows are still to be deleted.
type Stage struct {
	Indexes []*Index
	// Names gives the name an index has in the stage (its table's), when
	// it is not x.Name.
	Names map[*Index]string
	// Base maps each SI to its base CF (one of Indexes).
	Base      map[*Index]*Index
	WriteOnly map[*Index]bool
	Dropping  []string
}

// Script writes the stage as a schema script: header (the target and
// profile directives of the schema the migration goes to), the state
// directives, then the definitions.
func (st Stage) Script(header string) string {
	copies := map[*Index]*Index{}
	s := &Schema{Base: map[*Index]*Index{}}
	for _, x := range st.Indexes {
		c := *x
		if n, ok := st.Names[x]; ok {
			c.Name = n
		}
		copies[x] = &c
		s.Indexes = append(s.Indexes, &c)
	}
	for si, b := range st.Base {
		s.Base[copies[si]] = copies[b]
	}
	var b strings.Builder
	b.WriteString(header)
	var wo []string
	for _, x := range st.Indexes {
		if st.WriteOnly[x] {
			wo = append(wo, copies[x].Name)
		}
	}
	if len(wo) > 0 {
		b.WriteString(WriteOnlyDirective + strings.Join(wo, ", ") + "\n")
	}
	if len(st.Dropping) > 0 {
		b.WriteString(DroppingDirective + strings.Join(st.Dropping, ", ") + "\n")
	}
	b.WriteString(lang.PrintScript(s.Statements()))
	return b.String()
}

// Header returns the target and profile directives of a schema script
// (TargetDirective, ProfileDirective), one per line: what a migration's
// stages keep of the schema it goes to.
func Header(src string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	for sc.Scan() {
		t := sc.Text()
		if strings.HasPrefix(t, strings.TrimSpace(TargetDirective)) || strings.HasPrefix(t, strings.TrimSpace(ProfileDirective)) {
			b.WriteString(t + "\n")
		}
	}
	return b.String()
}

// SameIndex reports whether x and y are the same structure in the store:
// the same identity (graph, keys, static and value attributes) and the
// same physical layout (salt and partition buckets, split points), so that one's rows
// are the other's. For SIs, their bases must be the same too (checked by
// the caller, who knows them).
func SameIndex(x, y *Index) bool {
	if x.Kind != y.Kind || x.Key != y.Key || x.SaltBuckets != y.SaltBuckets || x.PartitionBuckets != y.PartitionBuckets || len(x.SplitOn) != len(y.SplitOn) {
		return false
	}
	for i := range x.SplitOn {
		if string(x.SplitOn[i].Key) != string(y.SplitOn[i].Key) {
			return false
		}
	}
	return true
}

// SameShape reports, as an error, how model n differs from m in what a
// schema's rows depend on: entities, their fields (name, type, key) and
// relationships. Statistics may differ.
func (m *Model) SameShape(n *Model) error {
	if len(m.Entities) != len(n.Entities) {
		return fmt.Errorf("the models have %d and %d relations", len(m.Entities), len(n.Entities))
	}
	for _, e := range m.Entities {
		f := n.Entity(e.Name)
		if f == nil {
			return fmt.Errorf("relation %s is not in the new model", e.Name)
		}
		if len(e.Fields) != len(f.Fields) {
			return fmt.Errorf("relation %s has %d attributes, %d in the new model", e.Name, len(e.Fields), len(f.Fields))
		}
		for i, a := range e.Fields {
			b := f.Fields[i]
			if !strings.EqualFold(a.Name, b.Name) || a.Type != b.Type || a.Key != b.Key {
				return fmt.Errorf("attribute %s.%s differs in the new model", e.Name, a.Name)
			}
		}
		if len(e.Navs) != len(f.Navs) {
			return fmt.Errorf("relation %s has %d relationships, %d in the new model", e.Name, len(e.Navs), len(f.Navs))
		}
		for i, a := range e.Navs {
			b := f.Navs[i]
			if !strings.EqualFold(a.Name, b.Name) || a.Many != b.Many || !strings.EqualFold(a.To.Name, b.To.Name) {
				return fmt.Errorf("relationship %s.%s differs in the new model", e.Name, a.Name)
			}
		}
	}
	return nil
}
