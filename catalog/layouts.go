// Online states of the client's layouts (DEFINE SCHEMA, DROP SCHEMA).

package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/layout"
)

// A layout added to a relation that already has one, or dropped from it,
// goes through states that each are a catalog version, as an advised
// schema's indexes do in a migration (migration.go): a new layout is
// first write-only (every write of its relation keeps it, no plan reads
// it), then backfilled and verified, then readable; a layout to drop is
// first write-only (plans stop reading it while writers that have not
// seen that version yet still keep it), then taken out of its relation
// and listed as dropping until its rows are deleted, then forgotten. The
// states are directives in the stored script of the client's
// definitions, so that every process opening the store sees them and an
// interrupted DEFINE SCHEMA or DROP SCHEMA resumes from them.
const (
	// WriteOnlyLayoutsDirective lists the layouts no plan reads
	// (Index.WriteOnly).
	WriteOnlyLayoutsDirective = "-- kvschema write-only layouts: "
	// DroppingLayoutsDirective lists the layouts taken out of their
	// relations whose rows are still to be deleted (Catalog.Dropping):
	// their DEFINE SCHEMA statements follow the others in the script, so
	// that their tables and families are known.
	DroppingLayoutsDirective = "-- kvschema dropping layouts: "
)

// storedFile names the stored script in errors.
const storedFile = "definitions (stored)"

// defineStored applies the statements of a stored script (src), in the
// states its directives give.
func (c *Catalog) defineStored(src string, stmts []lang.Statement) error {
	dropping, droppingLines := directiveList(src, DroppingLayoutsDirective)
	isDropping := func(name string) bool {
		return slices.ContainsFunc(dropping, func(n string) bool { return strings.EqualFold(n, name) })
	}
	for _, st := range stmts {
		if d, ok := st.(*lang.DefineSchema); ok && isDropping(d.Name) {
			if err := c.defineDropping(d); err != nil {
				return err
			}
			continue
		}
		if err := c.Define(st); err != nil {
			return err
		}
	}
	for i, n := range dropping {
		if c.DroppingLayout(n) == nil {
			return fmt.Errorf("%s:%d: the dropping directive names %s, which the script does not define", storedFile, droppingLines[i], n)
		}
	}
	names, lines := directiveList(src, WriteOnlyLayoutsDirective)
	for i, n := range names {
		if err := c.SetWriteOnly(n, true); err != nil {
			return fmt.Errorf("%s:%d: the write-only directive: %w", storedFile, lines[i], err)
		}
	}
	return nil
}

// defineDropping compiles a dropped layout's definition and lists it as
// dropping.
func (c *Catalog) defineDropping(d *lang.DefineSchema) error {
	r := c.Relation(d.Relation)
	if r == nil {
		return errAt(d.At, "schema %s (being dropped): unknown relation %s", d.Name, d.Relation)
	}
	if c.Layout(d.Name) != nil || c.DroppingLayout(d.Name) != nil {
		return errAt(d.At, "schema %s is already defined", d.Name)
	}
	l, err := layout.Compile(r.LayoutAttrs(), d)
	if err != nil {
		return err
	}
	c.dropping = append(c.dropping, l)
	return nil
}

// script is the stored script: the state directives, the definitions in
// order, then those of the layouts being dropped.
func (c *Catalog) script() string {
	var b strings.Builder
	if wo := c.WriteOnlyLayouts(); len(wo) > 0 {
		b.WriteString(WriteOnlyLayoutsDirective + strings.Join(wo, ", ") + "\n")
	}
	if len(c.dropping) > 0 {
		names := make([]string, len(c.dropping))
		for i, l := range c.dropping {
			names[i] = l.Name
		}
		b.WriteString(DroppingLayoutsDirective + strings.Join(names, ", ") + "\n")
	}
	b.WriteString(lang.PrintScript(c.Defs))
	for _, l := range c.dropping {
		b.WriteString(lang.Print(l.Def) + ";\n")
	}
	return b.String()
}

// WriteOnlyLayouts names the write-only layouts, in order of relation and
// of layout.
func (c *Catalog) WriteOnlyLayouts() []string {
	var out []string
	for _, r := range c.Relations {
		for _, x := range r.Indexes {
			if x.WriteOnly {
				out = append(out, x.Name)
			}
		}
	}
	return out
}

// LayoutIndex returns the index of the client layout called name and its
// relation, or nil.
func (c *Catalog) LayoutIndex(name string) (*Index, *Relation) {
	l := c.Layout(name)
	if l == nil {
		return nil, nil
	}
	r := c.Relation(l.Def.Relation)
	for _, x := range r.Indexes {
		if x.layout == l {
			return x, r
		}
	}
	return nil, nil
}

// SetWriteOnly makes layout name write-only (on) or readable. On a Clone:
// a Catalog is immutable once built.
func (c *Catalog) SetWriteOnly(name string, on bool) error {
	x, _ := c.LayoutIndex(name)
	if x == nil {
		return fmt.Errorf("no schema %s", name)
	}
	x.WriteOnly = on
	return nil
}

// DropLayout takes layout name out of its relation (and its definition
// out of Defs) and lists it as dropping: no write keeps it any more, its
// rows are still to be deleted (ForgetDropped then). On a Clone.
func (c *Catalog) DropLayout(name string) error {
	x, r := c.LayoutIndex(name)
	if x == nil {
		return fmt.Errorf("no schema %s", name)
	}
	r.Indexes = slices.DeleteFunc(r.Indexes, func(y *Index) bool { return y == x })
	delete(c.layByName, strings.ToLower(x.layout.Name))
	c.Defs = slices.DeleteFunc(c.Defs, func(st lang.Statement) bool {
		d, ok := st.(*lang.DefineSchema)
		return ok && strings.EqualFold(d.Name, x.layout.Name)
	})
	c.dropping = append(c.dropping, x.layout)
	return nil
}

// ForgetDropped removes dropping layout name from the catalog: its rows
// are deleted. On a Clone.
func (c *Catalog) ForgetDropped(name string) error {
	n := len(c.dropping)
	c.dropping = slices.DeleteFunc(c.dropping, func(l *layout.Layout) bool { return strings.EqualFold(l.Name, name) })
	if len(c.dropping) == n {
		return fmt.Errorf("schema %s is not being dropped", name)
	}
	return nil
}

// Dropping lists the layouts taken out of their relations whose rows are
// still to be deleted (DroppingLayoutsDirective), in the order they were
// dropped. The slice must not be modified.
func (c *Catalog) Dropping() []*layout.Layout { return c.dropping }

// DroppingLayout returns the dropping layout called name, or nil.
func (c *Catalog) DroppingLayout(name string) *layout.Layout {
	for _, l := range c.dropping {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}
