package advisor

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/internal/units"
	"github.com/kvschema/kvschema/plan"
)

// WriteSVG draws the result as an SVG picture a person reads at 100%, laid
// out without a graph tool: with tag "", the schema (one box per column
// family and secondary index, with its key, values and size); with the tag
// of a workload statement, that statement's plan — a query's steps left to
// right, or a write's upkeep of each index with the support queries that
// feed it.
func (r *Result) WriteSVG(w io.Writer, tag string) error {
	var d drawing
	if tag == "" {
		d.title(fmt.Sprintf("kvschema schema: %d column families and indexes, %s, total cost %.4g", len(r.Indexes), units.Format(r.TotalSize), r.TotalCost))
		d.grid(r.indexBoxes(), 3)
		return d.write(w)
	}
	for _, q := range r.Queries {
		if q.Statement.Tag == tag {
			d.title(fmt.Sprintf("[%s] %s", tag, q.Statement.Text()))
			d.subtitle(fmt.Sprintf("query, weight %.4g, cost %.4g per run", q.Weight, q.Plan.Cost))
			d.chain(stepBoxes(q.Plan))
			return d.write(w)
		}
	}
	for _, wp := range r.Writes {
		if wp.Statement.Tag != tag {
			continue
		}
		d.title(fmt.Sprintf("[%s] %s", tag, wp.Statement.Text()))
		d.subtitle(fmt.Sprintf("write, weight %.4g, cost %.4g per run; it keeps %d indexes correct", wp.Weight, wp.Cost, len(wp.Indexes)))
		for _, u := range wp.Indexes {
			target := box{lines: []string{"write " + u.Index.Name, u.Index.Describe(),
				fmt.Sprintf("put %s, delete %s, cost %.4g", plural(u.Puts, "row"), plural(u.Deletes, "row"), u.WriteCost)}, strong: true}
			if len(u.Support) == 0 {
				d.chain([]box{target})
				continue
			}
			for i, sq := range u.Support {
				steps := stepBoxes(sq)
				steps[0].lines = append([]string{fmt.Sprintf("support query %d", i+1)}, steps[0].lines...)
				d.chain(append(steps, target))
			}
		}
		return d.write(w)
	}
	return fmt.Errorf("no statement of the workload is tagged %s", tag)
}

// indexBoxes are the boxes of the schema's indexes.
func (r *Result) indexBoxes() []box {
	var out []box
	for _, x := range r.Indexes {
		kind := "column family"
		if x.Kind == catalog.SI {
			kind = "secondary index"
			if base := r.Schema.Base[x]; base != nil {
				kind += " on " + base.Name
			}
		}
		out = append(out, box{lines: []string{x.Name, kind, x.Describe(),
			fmt.Sprintf("%s, %s", plural(x.Entries, "row"), units.Format(x.Size))}, strong: x.Kind == catalog.CF})
	}
	return out
}

// stepBoxes are the boxes of a plan's steps.
func stepBoxes(p *plan.Query) []box {
	var out []box
	for _, s := range p.Steps {
		kind := "Index Lookup CF"
		if s.Index.Kind == catalog.SI {
			kind = "Index Lookup SI"
		}
		out = append(out, box{lines: []string{kind + " " + s.Index.Name, s.Index.Describe(),
			fmt.Sprintf("%s, %s, cost %.4g", plural(s.Partitions, "partition"), plural(s.Rows, "row"), s.Cost)}})
	}
	return out
}

// plural writes n (an estimate, so to 3 digits) and unit, in the plural
// unless n is 1.
func plural(n float64, unit string) string {
	switch {
	case n == 1:
		return "1 " + unit
	case n == math.Trunc(n) && n < 1e12:
		return fmt.Sprintf("%.0f %ss", n, unit)
	}
	return fmt.Sprintf("%.3g %ss", n, unit)
}

// Geometry of the drawing, in pixels: a monospace font of fontSize, whose
// characters are charWidth wide, so that text fits its box exactly.
const (
	fontSize   = 12
	charWidth  = 7.3
	lineHeight = 16
	pad        = 8
	gap        = 36 // between boxes (room for an arrow)
	wrapAt     = 56 // characters per line in a box
	margin     = 16
)

// box is a rectangle of text lines; strong draws it with a heavier frame.
type box struct {
	lines  []string
	strong bool
}

func (b box) wrapped() []string {
	var out []string
	for _, l := range b.lines {
		out = append(out, wrap(l, wrapAt)...)
	}
	return out
}

func (b box) size() (w, h float64) {
	lines := b.wrapped()
	n := 0
	for _, l := range lines {
		n = max(n, len([]rune(l)))
	}
	return float64(n)*charWidth + 2*pad, float64(len(lines))*lineHeight + 2*pad
}

// wrap breaks s into lines of at most n runes, at spaces where it can.
func wrap(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > n {
		cut := n
		for i := n; i > n/2; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		r = []rune(strings.TrimLeft(string(r[cut:]), " "))
	}
	return append(out, string(r))
}

// drawing lays elements out top to bottom.
type drawing struct {
	body  strings.Builder
	y     float64 // top of the next element
	width float64
}

func (d *drawing) title(s string) {
	for _, l := range wrap(s, 110) {
		d.text(margin, d.y+margin+fontSize, l, true)
		d.y += lineHeight + 2
		d.width = max(d.width, 2*margin+float64(len([]rune(l)))*charWidth*1.1)
	}
	d.y += 4
}

func (d *drawing) subtitle(s string) {
	d.text(margin, d.y+margin+fontSize, s, false)
	d.y += lineHeight + 8
	d.width = max(d.width, 2*margin+float64(len([]rune(s)))*charWidth)
}

func (d *drawing) text(x, y float64, s string, bold bool) {
	weight := ""
	if bold {
		weight = ` font-weight="bold"`
	}
	fmt.Fprintf(&d.body, `<text x="%.1f" y="%.1f"%s>%s</text>`+"\n", x, y, weight, html.EscapeString(s))
}

// place draws b with its top left corner at (x, y).
func (d *drawing) place(b box, x, y float64) {
	w, h := b.size()
	stroke := 1.0
	if b.strong {
		stroke = 2
	}
	fmt.Fprintf(&d.body, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="6" fill="#f7f9fc" stroke="#334" stroke-width="%.0f"/>`+"\n", x, y, w, h, stroke)
	for i, l := range b.wrapped() {
		d.text(x+pad, y+pad+float64(i)*lineHeight+fontSize, l, i == 0)
	}
}

// chain draws boxes left to right, each with an arrow to the next.
func (d *drawing) chain(bs []box) {
	top := d.y + margin
	x, rowH := float64(margin), 0.0
	for i, b := range bs {
		w, h := b.size()
		d.place(b, x, top)
		rowH = max(rowH, h)
		if i < len(bs)-1 {
			ay := top + h/2
			fmt.Fprintf(&d.body, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#334" stroke-width="1.5" marker-end="url(#arrow)"/>`+"\n", x+w, ay, x+w+gap-2, ay)
		}
		x += w + gap
	}
	d.width = max(d.width, x-gap+margin)
	d.y = top + rowH
}

// grid draws boxes in rows of cols.
func (d *drawing) grid(bs []box, cols int) {
	for i := 0; i < len(bs); i += cols {
		top := d.y + margin
		x, rowH := float64(margin), 0.0
		for _, b := range bs[i:min(i+cols, len(bs))] {
			w, h := b.size()
			d.place(b, x, top)
			rowH = max(rowH, h)
			x += w + gap/2
		}
		d.width = max(d.width, x+margin)
		d.y = top + rowH
	}
}

func (d *drawing) write(w io.Writer) error {
	height := d.y + 2*margin
	_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="%d">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#334"/></marker></defs>
<rect width="100%%" height="100%%" fill="white"/>
%s</svg>
`, d.width, height, fontSize, d.body.String())
	return err
}
