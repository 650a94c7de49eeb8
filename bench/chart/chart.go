// Package chart draws the RUBiS benchmark report's charts as PNG files, in the
// style of Fig. 4 and Fig. 5 of the NoSE-with-secondary-index paper (seed
// 000): bar charts comparing schema variants ("baseline", "cf", "si"), a
// scatter of the cost model's predictions against measured latencies, and
// the lines of a budget sweep (predicted and measured against the budget).
//
// It owns the look of those charts only: callers hand it finished numbers in
// seconds; it validates them, converts them to milliseconds for the axes and
// writes the files with gonum.org/v1/plot.
//
// Log scale: a value axis turns logarithmic when its largest value is more
// than 50× its smallest positive one (the variants differ by orders of
// magnitude). A log axis cannot show zero, so on a log axis values below a
// floor, zeros included, are drawn at the floor, which is the axis bottom:
// the power of ten at or below a tenth of the smallest positive value, with
// that smallest value taken as at least 1 µs so that a stray tiny value
// cannot stretch the axis over dozens of decades. Printed values stay exact.
package chart

import (
	"errors"
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one schema variant's values.
type Series struct {
	Name   string    // variant name: "baseline", "cf", "si" (legend label)
	Values []float64 // seconds; one per category (Bars) or a single value (Means)
}

// Point is one statement: its predicted cost and measured latency.
type Point struct {
	Label     string  // statement tag, e.g. "5_secondary"
	Predicted float64 // model cost (the cost profile's unit: seconds)
	Measured  float64 // mean latency, seconds
}

// Chart sizes. Bars is wider because it holds ~16 groups of bars.
const (
	meansWidth, meansHeight     = 8 * vg.Inch, 5 * vg.Inch
	barsWidth, barsHeight       = 12 * vg.Inch, 6 * vg.Inch
	scatterWidth, scatterHeight = 8 * vg.Inch, 5 * vg.Inch
	sweepWidth, sweepHeight     = 8 * vg.Inch, 5 * vg.Inch
)

const (
	// logRatio is how many times the largest value must exceed the smallest
	// positive one before a value axis turns logarithmic.
	logRatio = 50
	// minFloorMs is the smallest value (in ms, i.e. 1 µs) that sets a log
	// axis's floor; anything smaller is treated as noise at the floor.
	minFloorMs = 1e-3
	// msPerSecond converts the callers' seconds to the axes' milliseconds.
	msPerSecond = 1e3
	// maxSeconds bounds accepted values: anything larger is a unit mistake,
	// and far larger would overflow to +Inf in milliseconds.
	maxSeconds = 1e9
)

// Means draws Fig. 4: one bar per variant, its height the value (seconds,
// shown in milliseconds on the axis), the value printed above each bar.
// Log scale on the y axis when the largest value is more than 50× the
// smallest positive one (variants differ by orders of magnitude).
func Means(path, title string, series []Series) error {
	if err := checkPNGPath(path); err != nil {
		return err
	}
	if err := checkSeries(series); err != nil {
		return err
	}
	ms := make([]float64, len(series))
	for i, s := range series {
		if len(s.Values) != 1 {
			return fmt.Errorf("chart: Means takes one value per variant; %q has %d", s.Name, len(s.Values))
		}
		ms[i] = s.Values[0] * msPerSecond
	}
	ax := newValueAxis(ms)

	p := newPlot(title, false)
	p.X.Label.Text = "Schema variant"
	p.Y.Label.Text = axisLabel("Latency")

	width := min(0.5*categorySlot(meansWidth, len(series)), 1.5*vg.Inch)
	names := make([]string, len(series))
	tops := make(plotter.XYs, len(series))
	valueTexts := make([]string, len(series))
	for i, s := range series {
		// One single-bar chart per variant so each gets its own colour.
		bar, err := newBars([]float64{ms[i]}, width, ax)
		if err != nil {
			return fmt.Errorf("chart: %q: %w", s.Name, err)
		}
		bar.XMin = float64(i)
		bar.Color = variantColor(s.Name)
		p.Add(bar)
		names[i] = s.Name
		tops[i] = plotter.XY{X: float64(i), Y: ax.clamp(ms[i])}
		valueTexts[i] = formatMs(ms[i])
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: tops, Labels: valueTexts})
	if err != nil {
		return fmt.Errorf("chart: value labels: %w", err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = text.XCenter
	}
	labels.Offset = vg.Point{Y: 3 * vg.Millimeter}
	p.Add(labels)
	setCategoryAxis(p, names)
	ax.apply(&p.Y)
	return save(p, meansWidth, meansHeight, path)
}

// Bars draws Fig. 5: for each category (a RUBiS transaction, e.g. "ViewItem"),
// one bar per variant side by side (grouped bar chart with a legend),
// milliseconds on the y axis; log scale under the same rule as Means. Category
// labels are rotated so ~16 long names stay readable.
func Bars(path, title string, categories []string, series []Series) error {
	if err := checkPNGPath(path); err != nil {
		return err
	}
	if len(categories) == 0 {
		return errors.New("chart: Bars needs at least one category")
	}
	if err := checkSeries(series); err != nil {
		return err
	}
	var all []float64
	for _, s := range series {
		if len(s.Values) != len(categories) {
			return fmt.Errorf("chart: %q has %d values for %d categories", s.Name, len(s.Values), len(categories))
		}
		for _, v := range s.Values {
			all = append(all, v*msPerSecond)
		}
	}
	ax := newValueAxis(all)

	p := newPlot(title, false)
	p.Y.Label.Text = axisLabel("Latency")
	p.Legend.Top = true

	// A category's group of bars fills 80% of its slot so neighbouring
	// groups stay apart.
	width := 0.8 * categorySlot(barsWidth, len(categories)) / vg.Length(len(series))
	for j, s := range series {
		ms := make([]float64, len(s.Values))
		for i, v := range s.Values {
			ms[i] = v * msPerSecond
		}
		bar, err := newBars(ms, width, ax)
		if err != nil {
			return fmt.Errorf("chart: %q: %w", s.Name, err)
		}
		bar.Color = variantColor(s.Name)
		bar.Offset = vg.Length(float64(j)-float64(len(series)-1)/2) * width
		p.Add(bar)
		p.Legend.Add(s.Name, bar)
	}
	setCategoryAxis(p, categories)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = text.XRight
	p.X.Tick.Label.YAlign = text.YCenter
	ax.apply(&p.Y)
	return save(p, barsWidth, barsHeight, path)
}

// Scatter draws predicted cost (x) against measured latency (y) on log-log
// axes, one colour/glyph per variant with a legend, each point labelled with
// its Label in small type.
func Scatter(path, title string, series map[string][]Point) error {
	if err := checkPNGPath(path); err != nil {
		return err
	}
	if len(series) == 0 {
		return errors.New("chart: no series to draw")
	}
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	sort.Strings(names)
	var xs, ys []float64
	for _, name := range names {
		if name == "" {
			return errors.New("chart: a series has an empty variant name")
		}
		pts := series[name]
		if len(pts) == 0 {
			return fmt.Errorf("chart: %q has no points", name)
		}
		for _, pt := range pts {
			if err := checkValue(pt.Predicted); err != nil {
				return fmt.Errorf("chart: %q point %q predicted cost: %w", name, pt.Label, err)
			}
			if err := checkValue(pt.Measured); err != nil {
				return fmt.Errorf("chart: %q point %q measured latency: %w", name, pt.Label, err)
			}
			xs = append(xs, pt.Predicted*msPerSecond)
			ys = append(ys, pt.Measured*msPerSecond)
		}
	}
	// Both axes are always logarithmic: statement costs span decades.
	xAx, yAx := newLogAxis(xs), newLogAxis(ys)

	p := newPlot(title, true)
	p.X.Label.Text = axisLabel("Predicted cost")
	p.Y.Label.Text = axisLabel("Measured latency")
	p.Legend.Top = true
	p.Legend.Left = true

	var placed labelPlacer
	placed.x, placed.y = xAx, yAx
	for _, name := range names {
		pts := series[name]
		xys := make(plotter.XYs, len(pts))
		tags := make([]string, len(pts))
		for i, pt := range pts {
			xys[i] = plotter.XY{X: xAx.clamp(pt.Predicted * msPerSecond), Y: yAx.clamp(pt.Measured * msPerSecond)}
			tags[i] = pt.Label
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("chart: %q: %w", name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: variantColor(name), Radius: vg.Points(3.5), Shape: variantGlyph(name)}
		p.Add(sc)
		p.Legend.Add(name, sc)

		// Labels are placed apart: one that would cover another moves up or
		// down, with a thin leader line back to its point.
		at := make(plotter.XYs, len(xys))
		for i, xy := range xys {
			at[i] = placed.place(xy, tags[i])
			if at[i].Y != xy.Y {
				leader, err := plotter.NewLine(plotter.XYs{xy, {X: xy.X, Y: at[i].Y}})
				if err != nil {
					return fmt.Errorf("chart: %q leader: %w", name, err)
				}
				leader.Color = color.Gray{Y: 0xB0}
				leader.Width = vg.Points(0.5)
				p.Add(leader)
			}
		}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: tags})
		if err != nil {
			return fmt.Errorf("chart: %q labels: %w", name, err)
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font.Size = vg.Points(6.5)
			labels.TextStyle[i].YAlign = text.YCenter
			labels.TextStyle[i].Color = color.Gray{Y: 0x40}
		}
		labels.Offset = vg.Point{X: vg.Points(7)}
		p.Add(labels)
	}

	// The diagonal is where the model is exactly right; it shows at a glance
	// whether it over- or under-predicts.
	lo, hi := math.Max(xAx.min, yAx.min), math.Min(xAx.max, yAx.max)
	if lo < hi {
		diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		if err != nil {
			return fmt.Errorf("chart: diagonal: %w", err)
		}
		diag.Color = color.Gray{Y: 0x99}
		diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(diag)
		p.Legend.Add("measured = predicted", diag)
	}
	xAx.apply(&p.X)
	yAx.apply(&p.Y)
	return save(p, scatterWidth, scatterHeight, path)
}

// labelPlacer keeps the scatter's point labels from covering each other.
// It works in the plot's own proportions: log axes mapped to the data area,
// whose size it takes as a fixed share of the image (the axes and legend
// take the rest), and a label's box estimated from its length in the small
// type labels use.
type labelPlacer struct {
	x, y  valueAxis
	boxes [][4]float64 // placed labels: x0, y0, x1, y1 in points
}

const (
	labelCharWidth = 6.5 * 0.6 // points per character at 6.5 pt
	labelHeight    = 8.0       // points
	labelOffset    = 7.0       // points right of the point, as Labels.Offset
)

// place returns where the label of the point at xy goes: at the point's
// height if that is free, else the nearest free height above or below.
func (lp *labelPlacer) place(xy plotter.XY, tag string) plotter.XY {
	w, h := 0.8*float64(scatterWidth.Points()), 0.75*float64(scatterHeight.Points())
	toPt := func(a valueAxis, v, size float64) float64 {
		return (math.Log10(v) - math.Log10(a.min)) / (math.Log10(a.max) - math.Log10(a.min)) * size
	}
	px, py := toPt(lp.x, xy.X, w)+labelOffset, toPt(lp.y, xy.Y, h)
	width := float64(len([]rune(tag))) * labelCharWidth
	free := func(y float64) bool {
		for _, b := range lp.boxes {
			if px < b[2] && px+width > b[0] && y-labelHeight/2 < b[3] && y+labelHeight/2 > b[1] {
				return false
			}
		}
		return true
	}
	y := py
	for step := 1; !free(y) && step <= 12; step++ {
		d := float64((step+1)/2) * labelHeight
		if step%2 == 1 {
			y = py + d
		} else {
			y = py - d
		}
	}
	if !free(y) {
		y = py // crowded beyond help: keep it at its point
	}
	lp.boxes = append(lp.boxes, [4]float64{px, y - labelHeight/2, px + width, y + labelHeight/2})
	// Back to data units on the log axis.
	ly := math.Pow(10, math.Log10(lp.y.min)+y/h*(math.Log10(lp.y.max)-math.Log10(lp.y.min)))
	return plotter.XY{X: xy.X, Y: ly}
}

// setCategoryAxis names the categories at x = 0..n-1 and gives each a slot
// one unit wide. Without the half-slot margins the outer bars would end flush
// with the image edge (gonum pads the data area just enough for glyphs to
// fit), and with them the y-axis padding NominalX adds for a first label at
// the very edge is not needed.
func setCategoryAxis(p *plot.Plot, names []string) {
	padding := p.Y.Padding
	p.NominalX(names...)
	p.Y.Padding = padding
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
}

// categorySlot estimates the width of one category's slot on a chart
// canvasWidth wide: bar widths are absolute lengths in gonum, so they are
// sized from the canvas, less about an inch for the y axis.
func categorySlot(canvasWidth vg.Length, n int) vg.Length {
	return (canvasWidth - vg.Inch) / vg.Length(n)
}

// valueAxis is the scale chosen for one value axis, in milliseconds.
type valueAxis struct {
	log      bool
	min, max float64 // axis bounds; on a log axis min is the floor
}

// newValueAxis picks linear or log scale for the values (ms) by the 50× rule.
func newValueAxis(ms []float64) valueAxis {
	largest, smallest := extent(ms)
	if largest > logRatio*smallest {
		return newLogAxis(ms)
	}
	if largest == 0 {
		largest = 1 // all zero: any positive range keeps gonum's scale sane
	}
	return valueAxis{min: 0, max: largest * 1.2} // headroom for the legend
}

// extent is the largest value and the smallest positive one (+Inf if none).
func extent(ms []float64) (largest, smallest float64) {
	largest, smallest = 0, math.Inf(1)
	for _, v := range ms {
		largest = math.Max(largest, v)
		if v > 0 {
			smallest = math.Min(smallest, v)
		}
	}
	return largest, smallest
}

// newLogAxis bounds a log axis on whole decades: the floor (see the package
// doc) at the bottom; at the top, the decade above the largest value with
// room for the legend and value labels.
func newLogAxis(ms []float64) valueAxis {
	largest, smallest := extent(ms)
	smallest = math.Max(smallest, minFloorMs)
	if math.IsInf(smallest, 1) {
		smallest = minFloorMs // no positive value at all
	}
	lowExp := math.Floor(math.Log10(smallest / 10))
	highExp := math.Ceil(math.Log10(math.Max(largest, smallest) * 4))
	if highExp <= lowExp {
		highExp = lowExp + 1
	}
	return valueAxis{log: true, min: math.Pow10(int(lowExp)), max: math.Pow10(int(highExp))}
}

// clamp returns where v is drawn: on a log axis, no lower than the floor.
func (a valueAxis) clamp(v float64) float64 {
	if a.log {
		return math.Max(v, a.min)
	}
	return v
}

// axisLabel names a value axis. Keep it short: on a log axis gonum reserves
// room for the axis label around the arithmetic midpoint of the range, which
// sits near the top (or right) end, so a long label leaves a blank margin
// there.
func axisLabel(what string) string {
	return what + " (ms)"
}

// apply sets the axis's scale, ticks and bounds. Plot.Add widens the bounds
// to the data, so callers apply after adding the last plotter.
func (a valueAxis) apply(axis *plot.Axis) {
	axis.Min, axis.Max = a.min, a.max
	if a.log {
		axis.Scale = plot.LogScale{}
		axis.Tick.Marker = logTicks()
	}
}

// logTicks wraps plot.LogTicks, which truncates log10(min) toward zero: since
// math.Log10 of some exact decades (1e-4, 0.1) comes out a hair above the
// integer, a floor on such a decade would lose its ticks. Nudging min down
// first keeps them.
func logTicks() plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		return plot.LogTicks{Prec: -1}.Ticks(min*(1-1e-9), max)
	})
}

// newBars makes a bar chart of the values (ms). On a log axis a bar cannot
// start at zero, so it is stacked on an undrawn chart of floor-high bars:
// the bar then spans floor..value.
func newBars(ms []float64, width vg.Length, ax valueAxis) (*plotter.BarChart, error) {
	if !ax.log {
		bar, err := plotter.NewBarChart(plotter.Values(ms), width)
		if err != nil {
			return nil, err
		}
		bar.LineStyle.Width = vg.Points(0.5)
		return bar, nil
	}
	base := make(plotter.Values, len(ms))
	heights := make(plotter.Values, len(ms))
	for i, v := range ms {
		base[i] = ax.min
		heights[i] = ax.clamp(v) - ax.min
	}
	floor, err := plotter.NewBarChart(base, width)
	if err != nil {
		return nil, err
	}
	bar, err := plotter.NewBarChart(heights, width)
	if err != nil {
		return nil, err
	}
	bar.StackOn(floor)
	bar.LineStyle.Width = vg.Points(0.5)
	return bar, nil
}

// newPlot is a titled plot with grid lines behind the data: horizontal ones
// always, vertical ones too when x is a value axis.
func newPlot(title string, verticalGrid bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(p.Title.TextStyle.Font, vg.Points(14))
	p.Title.Padding = vg.Points(8)
	p.Add(gridLines(verticalGrid))
	return p
}

func gridLines(vertical bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Horizontal.Color = color.Gray{Y: 0xdd}
	if vertical {
		g.Vertical.Color = color.Gray{Y: 0xdd}
	} else {
		g.Vertical.Color = nil
	}
	return g
}

func save(p *plot.Plot, w, h vg.Length, path string) error {
	if err := p.Save(w, h, path); err != nil {
		return fmt.Errorf("chart: writing %s: %w", path, err)
	}
	return nil
}

// checkPNGPath rejects paths gonum would write in another format: Save picks
// the format from the extension.
func checkPNGPath(path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("chart: %q: the file name must end in .png", path)
	}
	return nil
}

// checkSeries validates what Means and Bars have in common: at least one
// variant, distinct non-empty names (a name is a legend entry and a colour),
// and values that are latencies.
func checkSeries(series []Series) error {
	if len(series) == 0 {
		return errors.New("chart: no series to draw")
	}
	seen := make(map[string]bool, len(series))
	for _, s := range series {
		if s.Name == "" {
			return errors.New("chart: a series has an empty variant name")
		}
		if seen[s.Name] {
			return fmt.Errorf("chart: variant %q appears twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Values) == 0 {
			return fmt.Errorf("chart: %q has no values", s.Name)
		}
		for i, v := range s.Values {
			if err := checkValue(v); err != nil {
				return fmt.Errorf("chart: %q value %d: %w", s.Name, i, err)
			}
		}
	}
	return nil
}

// checkValue accepts a latency or cost in seconds: finite, non-negative and
// at most maxSeconds.
func checkValue(v float64) error {
	switch {
	case math.IsNaN(v):
		return errors.New("NaN is not a latency")
	case math.IsInf(v, 0):
		return fmt.Errorf("%v is not a latency", v)
	case v < 0:
		return fmt.Errorf("%v s is negative", v)
	case v > maxSeconds:
		return fmt.Errorf("%v s is too large to be a latency (over %v s)", v, float64(maxSeconds))
	}
	return nil
}

// formatMs prints a value for the top of its bar: whole ms from 100 ms to
// 100 s, else three significant digits.
func formatMs(ms float64) string {
	if ms >= 100 && ms < 1e5 {
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
}

// Fixed colours and glyphs for the report's variants, so a variant looks the
// same in every chart.
var (
	variantColors = map[string]color.Color{
		"baseline": color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}, // grey
		"cf":       color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
		"si":       color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	}
	variantGlyphs = map[string]draw.GlyphDrawer{
		"baseline": draw.CircleGlyph{},
		"cf":       draw.BoxGlyph{},
		"si":       draw.PyramidGlyph{},
	}
	otherColors = []color.Color{
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
		color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
	}
	otherGlyphs = []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
)

// variantColor is the variant's fixed colour, or for another name a palette
// colour picked by hashing the name: the same name gets the same colour in
// every chart, whatever else is drawn with it.
func variantColor(name string) color.Color {
	if c, ok := variantColors[name]; ok {
		return c
	}
	return otherColors[nameHash(name)%uint32(len(otherColors))]
}

// variantGlyph is variantColor's counterpart for scatter glyphs.
func variantGlyph(name string) draw.GlyphDrawer {
	if g, ok := variantGlyphs[name]; ok {
		return g
	}
	return otherGlyphs[nameHash(name)%uint32(len(otherGlyphs))]
}

func nameHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

// SweepSeries is one schema variant along a budget sweep.
type SweepSeries struct {
	Name string // variant name (legend label and colour)
	// Predicted and Measured are seconds, one per budget: the advisor's
	// weighted cost and the measured weighted mean. NaN where the variant
	// has no schema within the budget: no point is drawn there and the
	// line breaks.
	Predicted, Measured []float64
}

// Sweep draws a budget sweep: the storage budget on the x axis (bytes,
// shown in MB), the weighted mean response time on the y axis (seconds,
// shown in ms; logarithmic under the same rule as Means), and per variant
// a solid line through its measured values and a dashed one through its
// predicted ones, in the variant's colour, each point marked with its
// glyph. budgets must increase.
func Sweep(path, title string, budgets []float64, series []SweepSeries) error {
	if err := checkPNGPath(path); err != nil {
		return err
	}
	if len(budgets) == 0 {
		return errors.New("chart: Sweep needs at least one budget")
	}
	for i, b := range budgets {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("chart: budget %v is not a size", b)
		}
		if i > 0 && b <= budgets[i-1] {
			return fmt.Errorf("chart: budgets must increase: %v after %v", b, budgets[i-1])
		}
	}
	if len(series) == 0 {
		return errors.New("chart: no series to draw")
	}
	seen := map[string]bool{}
	var all []float64
	for _, s := range series {
		if s.Name == "" {
			return errors.New("chart: a series has an empty variant name")
		}
		if seen[s.Name] {
			return fmt.Errorf("chart: variant %q appears twice", s.Name)
		}
		seen[s.Name] = true
		for _, vs := range [][]float64{s.Predicted, s.Measured} {
			if len(vs) != len(budgets) {
				return fmt.Errorf("chart: %q has %d values for %d budgets", s.Name, len(vs), len(budgets))
			}
			for i, v := range vs {
				if math.IsNaN(v) {
					continue
				}
				if err := checkValue(v); err != nil {
					return fmt.Errorf("chart: %q at budget %v: %w", s.Name, budgets[i], err)
				}
				all = append(all, v*msPerSecond)
			}
		}
	}
	if len(all) == 0 {
		return errors.New("chart: no variant has a value at any budget")
	}
	ax := newValueAxis(all)

	p := newPlot(title, true)
	p.X.Label.Text = "Storage budget (MB)"
	p.Y.Label.Text = axisLabel("Weighted mean")
	p.Legend.Top = true
	for _, s := range series {
		for _, kind := range []struct {
			vals   []float64
			label  string
			dashed bool
		}{{s.Measured, "measured", false}, {s.Predicted, "predicted", true}} {
			var pts plotter.XYs
			var legend []plot.Thumbnailer
			// One line per run of budgets with a value: a gap where the
			// variant is infeasible.
			flush := func(seg plotter.XYs) error {
				if len(seg) < 2 {
					return nil
				}
				l, err := plotter.NewLine(seg)
				if err != nil {
					return err
				}
				l.Color = variantColor(s.Name)
				l.Width = vg.Points(1.5)
				if kind.dashed {
					l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				}
				p.Add(l)
				if legend == nil {
					legend = append(legend, l)
				}
				return nil
			}
			var seg plotter.XYs
			for i, v := range kind.vals {
				if math.IsNaN(v) {
					if err := flush(seg); err != nil {
						return fmt.Errorf("chart: %q: %w", s.Name, err)
					}
					seg = nil
					continue
				}
				xy := plotter.XY{X: budgets[i] / 1e6, Y: ax.clamp(v * msPerSecond)}
				seg = append(seg, xy)
				pts = append(pts, xy)
			}
			if err := flush(seg); err != nil {
				return fmt.Errorf("chart: %q: %w", s.Name, err)
			}
			if len(pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return fmt.Errorf("chart: %q: %w", s.Name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: variantColor(s.Name), Radius: vg.Points(3), Shape: variantGlyph(s.Name)}
			p.Add(sc)
			p.Legend.Add(s.Name+" "+kind.label, append(legend, sc)...)
		}
	}
	// Half a step of margin either side, so that the end points are not on
	// the frame (a single budget gets ±10%).
	lo, hi := budgets[0]/1e6, budgets[len(budgets)-1]/1e6
	pad := (hi - lo) / float64(2*max(len(budgets)-1, 1))
	if pad == 0 {
		pad = lo / 10
	}
	p.X.Min, p.X.Max = lo-pad, hi+pad
	ax.apply(&p.Y)
	return save(p, sweepWidth, sweepHeight, path)
}
