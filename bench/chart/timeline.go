package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TimePoint is one statement of a timeline: when it started and how long
// it took.
type TimePoint struct {
	At      float64 // seconds since the run started
	Latency float64 // seconds
}

// PhaseSpan is one phase of a timeline: its name and when it began and
// ended, in seconds since the run started.
type PhaseSpan struct {
	Name       string
	Start, End float64
}

// MaxTimelinePoints bounds the dots Timeline draws: with more points, it
// draws every k-th (in time order), so that the picture stays legible and
// the file small. The per-phase medians are computed on every point.
const MaxTimelinePoints = 5000

const timelineWidth, timelineHeight = 11 * vg.Inch, 5 * vg.Inch

// Phase band colours, in phase order (cycled): light enough that the dots
// stay readable on them; the boundary lines use them darker.
var bandColors = []color.RGBA{
	{R: 0xf2, G: 0xf2, B: 0xf2, A: 0xff}, // grey
	{R: 0xff, G: 0xe9, B: 0xc7, A: 0xff}, // orange
	{R: 0xd9, G: 0xec, B: 0xff, A: 0xff}, // blue
	{R: 0xe0, G: 0xf5, B: 0xd9, A: 0xff}, // green
	{R: 0xf3, G: 0xe1, B: 0xf7, A: 0xff}, // purple
	{R: 0xff, G: 0xde, B: 0xde, A: 0xff}, // red
	{R: 0xfa, G: 0xf3, B: 0xc8, A: 0xff}, // yellow
}

// Timeline draws statement latencies over time: x is seconds since the
// run started, y the latency in milliseconds (logarithmic under the
// package's 50× rule), one small dot per point (at most
// MaxTimelinePoints: every k-th beyond), each phase a shaded band with a
// line at its start and its name at the top, and across each phase a
// line at the median latency of its points. Phases must be in time order;
// one may be empty (Start == End): its line and name still show.
func Timeline(path, title string, points []TimePoint, phases []PhaseSpan) error {
	if err := checkPNGPath(path); err != nil {
		return err
	}
	if len(points) == 0 {
		return errors.New("chart: Timeline needs at least one point")
	}
	pts := slices.Clone(points)
	for i, pt := range pts {
		if math.IsNaN(pt.At) || math.IsInf(pt.At, 0) || pt.At < 0 {
			return fmt.Errorf("chart: point %d: time %v is not seconds since the start", i, pt.At)
		}
		if err := checkValue(pt.Latency); err != nil {
			return fmt.Errorf("chart: point %d: %w", i, err)
		}
	}
	for i, ph := range phases {
		switch {
		case ph.Name == "":
			return fmt.Errorf("chart: phase %d has no name", i)
		case math.IsNaN(ph.Start) || math.IsNaN(ph.End) || math.IsInf(ph.Start, 0) || math.IsInf(ph.End, 0) || ph.Start < 0:
			return fmt.Errorf("chart: phase %q: span %v–%v is not seconds since the start", ph.Name, ph.Start, ph.End)
		case ph.End < ph.Start:
			return fmt.Errorf("chart: phase %q ends (%v) before it starts (%v)", ph.Name, ph.End, ph.Start)
		case i > 0 && ph.Start < phases[i-1].Start:
			return fmt.Errorf("chart: phase %q starts before phase %q: phases must be in time order", ph.Name, phases[i-1].Name)
		}
	}
	slices.SortStableFunc(pts, func(a, b TimePoint) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	ms := make([]float64, len(pts))
	for i, pt := range pts {
		ms[i] = pt.Latency * msPerSecond
	}
	ax := newValueAxis(ms)
	xmin, xmax := 0.0, pts[len(pts)-1].At
	for _, ph := range phases {
		xmax = math.Max(xmax, ph.End)
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}

	// Phase names go in rows at the top, each in the first row where it
	// does not run into the one before it; the value axis is raised so
	// that the rows lie above the data.
	const labelSize = 9 // points
	plotWidth := float64(timelineWidth - 1.2*vg.Inch)
	rowEnds := []float64{}
	rowOf := make([]int, len(phases))
	labelX := make([]float64, len(phases))
	for i, ph := range phases {
		x := (ph.Start - xmin) / (xmax - xmin)
		w := float64(len([]rune(ph.Name))+1) * 0.55 * labelSize / plotWidth
		if x+w > 1 { // a name at the right edge ends there
			x = max(0, 1-w)
		}
		labelX[i] = xmin + x*(xmax-xmin)
		row := -1
		for r, end := range rowEnds {
			if x >= end {
				row = r
				break
			}
		}
		if row < 0 {
			if len(rowEnds) < 4 {
				row = len(rowEnds)
				rowEnds = append(rowEnds, 0)
			} else {
				row = slices.Index(rowEnds, slices.Min(rowEnds))
			}
		}
		rowOf[i] = row
		rowEnds[row] = x + w
	}
	const rowHeight = 0.05 // of the plot's height
	dataTop := 1 - float64(len(rowEnds))*rowHeight - 0.03
	largest, _ := extent(ms)
	if ax.log {
		if need := ax.min * math.Pow(math.Max(largest, ax.min)/ax.min, 1/dataTop); need > ax.max {
			ax.max = need
		}
	} else if need := largest / dataTop; need > ax.max {
		ax.max = need
	}
	yAt := func(frac float64) float64 {
		if ax.log {
			return ax.min * math.Pow(ax.max/ax.min, frac)
		}
		return ax.min + frac*(ax.max-ax.min)
	}

	p := newPlot(title, false)
	p.X.Label.Text = "Seconds since the writers started — dots: one write each; lines: the median of each phase"
	p.Y.Label.Text = axisLabel("Write latency")
	if len(pts) > MaxTimelinePoints {
		stride := (len(pts) + MaxTimelinePoints - 1) / MaxTimelinePoints
		p.X.Label.Text = fmt.Sprintf("Seconds since the writers started — dots: every %d%s of %d writes; lines: the median of each phase", stride, ordinalSuffix(stride), len(pts))
	}

	for i, ph := range phases {
		c := bandColors[i%len(bandColors)]
		if ph.End > ph.Start {
			band, err := plotter.NewPolygon(plotter.XYs{{X: ph.Start, Y: ax.min}, {X: ph.End, Y: ax.min}, {X: ph.End, Y: ax.max}, {X: ph.Start, Y: ax.max}})
			if err != nil {
				return fmt.Errorf("chart: phase %q: %w", ph.Name, err)
			}
			band.Color = c
			band.LineStyle.Width = 0
			p.Add(band)
		}
	}
	p.Add(gridLines(true))
	labelXYs := make(plotter.XYs, len(phases))
	labelTexts := make([]string, len(phases))
	for i, ph := range phases {
		c := bandColors[i%len(bandColors)]
		edge, err := plotter.NewLine(plotter.XYs{{X: ph.Start, Y: ax.min}, {X: ph.Start, Y: ax.max}})
		if err != nil {
			return fmt.Errorf("chart: phase %q: %w", ph.Name, err)
		}
		edge.Color = darker(c)
		edge.Width = vg.Points(1)
		p.Add(edge)
		labelXYs[i] = plotter.XY{X: labelX[i], Y: yAt(1 - 0.035 - float64(rowOf[i])*rowHeight)}
		labelTexts[i] = ph.Name
	}

	stride := max(1, (len(pts)+MaxTimelinePoints-1)/MaxTimelinePoints)
	dots := make(plotter.XYs, 0, len(pts)/stride+1)
	for i := 0; i < len(pts); i += stride {
		dots = append(dots, plotter.XY{X: pts[i].At, Y: ax.clamp(ms[i])})
	}
	sc, err := plotter.NewScatter(dots)
	if err != nil {
		return fmt.Errorf("chart: points: %w", err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: color.NRGBA{R: 0x1f, G: 0x4e, B: 0x99, A: 0x90}, Radius: vg.Points(0.9), Shape: draw.CircleGlyph{}}
	p.Add(sc)

	// The median of each phase, over all of its points.
	for i, ph := range phases {
		var in []float64
		for j, pt := range pts {
			if pt.At >= ph.Start && (pt.At < ph.End || i == len(phases)-1 && pt.At <= ph.End) {
				in = append(in, ms[j])
			}
		}
		if len(in) == 0 {
			continue
		}
		slices.Sort(in)
		med := in[(len(in)-1)/2]
		lo, hi := ph.Start, ph.End
		if hi-lo < (xmax-xmin)/400 { // a short phase: a visible tick
			hi = lo + (xmax-xmin)/400
		}
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: ax.clamp(med)}, {X: hi, Y: ax.clamp(med)}})
		if err != nil {
			return fmt.Errorf("chart: phase %q median: %w", ph.Name, err)
		}
		l.Color = color.RGBA{R: 0xc0, G: 0x10, B: 0x10, A: 0xff}
		l.Width = vg.Points(2)
		p.Add(l)
	}

	if len(phases) > 0 {
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: labelXYs, Labels: labelTexts})
		if err != nil {
			return fmt.Errorf("chart: phase labels: %w", err)
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font.Size = vg.Points(labelSize)
			labels.TextStyle[i].XAlign = text.XLeft
			labels.TextStyle[i].YAlign = text.YCenter
			labels.TextStyle[i].Color = color.Gray{Y: 0x20}
		}
		labels.Offset = vg.Point{X: vg.Points(2)}
		p.Add(labels)
	}
	p.X.Min, p.X.Max = xmin, xmax
	ax.apply(&p.Y)
	return save(p, timelineWidth, timelineHeight, path)
}

// darker is c at two thirds of its brightness, opaque.
func darker(c color.RGBA) color.Color {
	return color.RGBA{R: uint8(uint(c.R) * 2 / 3), G: uint8(uint(c.G) * 2 / 3), B: uint8(uint(c.B) * 2 / 3), A: 0xff}
}

func ordinalSuffix(n int) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}
