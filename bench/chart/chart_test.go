package chart

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// vgimg's PNG canvas renders at 96 dpi, so an 8×5 in chart is 768×480 px.
const (
	meansPx, meansPy     = 768, 480
	barsPx, barsPy       = 1152, 576
	scatterPx, scatterPy = 768, 480
)

var transactions = []string{
	"BrowseCategories", "BrowseRegions", "SearchItemsByCategory", "SearchItemsByRegion",
	"ViewItem", "ViewUserInfo", "ViewBidHistory", "BuyNow",
	"StoreBuyNow", "PutBid", "StoreBid", "PutComment",
	"StoreComment", "AboutMe", "RegisterItem", "RegisterUser",
}

// checkPNG decodes the file and checks its pixel size and that something was
// drawn on it (more than the background colour).
func checkPNG(t *testing.T, path string, wantW, wantH int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got := img.Bounds().Size(); got != (image.Point{X: wantW, Y: wantH}) {
		t.Errorf("%s: size %v, want %dx%d", path, got, wantW, wantH)
	}
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 3 {
		t.Errorf("%s: only %d colours: nothing drawn", path, len(colours))
	}
}

func TestMeans(t *testing.T) {
	cases := map[string][]Series{
		// Orders of magnitude apart: log scale.
		"log": {{"baseline", []float64{0.9}}, {"cf", []float64{0.02}}, {"si", []float64{0.004}}},
		// Within 50×: linear, with a zero bar.
		"linear_zero": {{"baseline", []float64{0.012}}, {"cf", []float64{0.01}}, {"si", []float64{0}}},
		// Log scale with a zero bar, which is drawn at the floor.
		"log_zero":  {{"baseline", []float64{10}}, {"cf", []float64{1e-5}}, {"si", []float64{0}}},
		"all_zero":  {{"baseline", []float64{0}}, {"si", []float64{0}}},
		"one":       {{"only", []float64{0.5}}},
		"tiny_wide": {{"a", []float64{1e-300}}, {"b", []float64{maxSeconds}}},
	}
	for name, series := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "means.png")
			if err := Means(path, "RUBiS mean latency", series); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, path, meansPx, meansPy)
		})
	}
}

func TestBars(t *testing.T) {
	baseline := make([]float64, len(transactions))
	cf := make([]float64, len(transactions))
	si := make([]float64, len(transactions))
	for i := range transactions {
		// Spans 1e-5..10 s across the variants.
		baseline[i] = 10 / float64(i+1)
		cf[i] = 1e-3 * float64(i+1)
		si[i] = 1e-5 * float64(i+1)
	}
	si[3] = 0
	path := filepath.Join(t.TempDir(), "bars.png")
	series := []Series{{"baseline", baseline}, {"cf", cf}, {"si", si}}
	if err := Bars(path, "RUBiS per transaction", transactions, series); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, barsPx, barsPy)

	// Linear scale, a single category.
	path = filepath.Join(t.TempDir(), "bars_linear.png")
	if err := Bars(path, "", []string{"ViewItem"}, []Series{{"cf", []float64{0.02}}, {"si", []float64{0.01}}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, barsPx, barsPy)
}

func TestScatter(t *testing.T) {
	series := map[string][]Point{
		"si":       {{"5_secondary", 0.004, 0.006}, {"9_secondary", 0.0003, 0.0004}},
		"baseline": {{"5", 1.1, 2.4}, {"9", 0, 0.05}},
		"cf":       {{"5", 1e-5, 10}, {"9", 0.0005, 0}},
	}
	path := filepath.Join(t.TempDir(), "scatter.png")
	if err := Scatter(path, "predicted vs measured", series); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, scatterPx, scatterPy)

	path = filepath.Join(t.TempDir(), "scatter_zero.png")
	if err := Scatter(path, "", map[string][]Point{"si": {{"z", 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, scatterPx, scatterPy)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "x.png")
	ok := []Series{{"baseline", []float64{0.9}}}
	three := []string{"a", "b", "c"}
	cases := []struct {
		name string
		err  error
		want string // a fragment of the message
	}{
		{"means no series", Means(png, "", nil), "no series"},
		{"means two values", Means(png, "", []Series{{"cf", []float64{1, 2}}}), "one value"},
		{"means no values", Means(png, "", []Series{{"cf", nil}}), "no values"},
		{"means negative", Means(png, "", []Series{{"cf", []float64{-1}}}), "negative"},
		{"means NaN", Means(png, "", []Series{{"cf", []float64{math.NaN()}}}), "NaN"},
		{"means Inf", Means(png, "", []Series{{"cf", []float64{math.Inf(1)}}}), "not a latency"},
		{"means huge", Means(png, "", []Series{{"cf", []float64{1e20}}}), "too large"},
		{"means empty name", Means(png, "", []Series{{"", []float64{1}}}), "empty variant name"},
		{"means duplicate", Means(png, "", append(ok, ok...)), "twice"},
		{"means not png", Means(filepath.Join(dir, "x.svg"), "", ok), ".png"},
		{"means bad dir", Means(filepath.Join(dir, "missing", "x.png"), "", ok), "writing"},
		{"bars no categories", Bars(png, "", nil, []Series{{"cf", nil}}), "category"},
		{"bars no series", Bars(png, "", three, nil), "no series"},
		{"bars short", Bars(png, "", three, []Series{{"cf", []float64{1, 2}}}), "2 values for 3 categories"},
		{"bars long", Bars(png, "", three, []Series{{"cf", []float64{1, 2, 3, 4}}}), "4 values for 3 categories"},
		{"bars NaN", Bars(png, "", three, []Series{{"cf", []float64{1, math.NaN(), 3}}}), "NaN"},
		{"bars -Inf", Bars(png, "", three, []Series{{"cf", []float64{1, math.Inf(-1), 3}}}), "not a latency"},
		{"scatter no series", Scatter(png, "", nil), "no series"},
		{"scatter no points", Scatter(png, "", map[string][]Point{"cf": nil}), "no points"},
		{"scatter empty name", Scatter(png, "", map[string][]Point{"": {{"1", 1, 1}}}), "empty variant name"},
		{"scatter negative", Scatter(png, "", map[string][]Point{"cf": {{"1", -1, 1}}}), "predicted cost"},
		{"scatter NaN", Scatter(png, "", map[string][]Point{"cf": {{"1", 1, math.NaN()}}}), "measured latency"},
		{"scatter not png", Scatter(filepath.Join(dir, "x"), "", map[string][]Point{"cf": {{"1", 1, 1}}}), ".png"},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, c.err, c.want)
		}
	}
}

func TestAxisChoice(t *testing.T) {
	if ax := newValueAxis([]float64{50, 1}); ax.log {
		t.Error("exactly 50× should stay linear")
	}
	if ax := newValueAxis([]float64{50.1, 1, 0}); !ax.log {
		t.Error("over 50× should be log")
	}
	// 1e-5 s = 0.01 ms: the floor is the decade below a tenth of it.
	ax := newValueAxis([]float64{0.01, 10000, 0})
	if ax.min != 1e-3 || ax.max != 1e5 {
		t.Errorf("log axis %v..%v, want 0.001..100000", ax.min, ax.max)
	}
	if got := ax.clamp(0); got != ax.min {
		t.Errorf("zero drawn at %v, want the floor %v", got, ax.min)
	}
	// A value far below 1 µs does not drag the axis down with it.
	if ax := newValueAxis([]float64{1e-300, 1000}); ax.min != minFloorMs/10 {
		t.Errorf("floor %v, want %v", ax.min, minFloorMs/10)
	}
}

// The bottom decade keeps its labelled tick even where math.Log10 of it is
// inexact (1e-4, 0.1).
func TestLogTicksKeepFloor(t *testing.T) {
	for _, floor := range []float64{1e-4, 0.1, 1e-3, 1} {
		found := false
		for _, tk := range logTicks().Ticks(floor, floor*1e3) {
			if tk.Value == floor && tk.Label != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no labelled tick at the floor %v", floor)
		}
	}
}

func TestVariantStyle(t *testing.T) {
	fixed := map[any]bool{}
	for _, name := range []string{"baseline", "cf", "si"} {
		fixed[variantColor(name)] = true
	}
	if len(fixed) != 3 {
		t.Error("baseline, cf and si should have distinct colours")
	}
	if variantColor("other") != variantColor("other") || variantGlyph("other") != variantGlyph("other") {
		t.Error("another variant's style should depend only on its name")
	}
}

// TestLabelsApart: labels of points at one spot are moved apart, each to a
// free height; a label with room stays at its point's height.
func TestLabelsApart(t *testing.T) {
	lp := labelPlacer{x: newLogAxis([]float64{0.01, 100}), y: newLogAxis([]float64{0.01, 100})}
	same := plotter.XY{X: 1, Y: 1}
	a, b, c := lp.place(same, "5_secondary"), lp.place(same, "6_secondary"), lp.place(same, "7")
	if a.Y != 1 || b.Y == a.Y || c.Y == a.Y || c.Y == b.Y {
		t.Errorf("labels at one point placed at heights %v, %v, %v", a.Y, b.Y, c.Y)
	}
	for i, bx := range lp.boxes {
		for _, by := range lp.boxes[i+1:] {
			if bx[0] < by[2] && bx[2] > by[0] && bx[1] < by[3] && bx[3] > by[1] {
				t.Errorf("label boxes %v and %v overlap", bx, by)
			}
		}
	}
	if far := lp.place(plotter.XY{X: 50, Y: 0.02}, "far"); far.Y != 0.02 && math.Abs(far.Y-0.02) > 1e-12 {
		t.Errorf("a label with room moved to %v", far.Y)
	}
}

func TestSweep(t *testing.T) {
	nan := math.NaN()
	budgets := []float64{64e6, 80e6, 100e6, 161e6}
	cases := map[string][]SweepSeries{
		// The baseline infeasible at the smallest budget: its lines start
		// at the second; cf and si orders of magnitude below it (log).
		"log_gap": {
			{Name: "baseline", Predicted: []float64{nan, 0.4, 0.4, 0.4}, Measured: []float64{nan, 0.03, 0.03, 0.03}},
			{Name: "cf", Predicted: []float64{0.02, 0.015, 0.012, 0.01}, Measured: []float64{0.009, 0.008, 0.008, 0.007}},
			{Name: "si", Predicted: []float64{0.018, 0.015, 0.012, 0.01}, Measured: []float64{0.01, 0.008, 0.008, 0.007}},
		},
		// A gap inside a line, and a variant with one point only.
		"linear_holes": {
			{Name: "cf", Predicted: []float64{0.02, nan, 0.012, 0.01}, Measured: []float64{0.02, nan, 0.013, 0.011}},
			{Name: "si", Predicted: []float64{nan, nan, 0.011, nan}, Measured: []float64{nan, nan, 0.012, nan}},
		},
		"no_point_for_one": {
			{Name: "cf", Predicted: []float64{0.02, 0.02, 0.012, 0.01}, Measured: []float64{0.02, 0.01, 0.013, 0.011}},
			{Name: "baseline", Predicted: []float64{nan, nan, nan, nan}, Measured: []float64{nan, nan, nan, nan}},
		},
	}
	for name, series := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sweep.png")
			if err := Sweep(path, "RUBiS bidding against the budget", budgets, series); err != nil {
				t.Fatal(err)
			}
			checkPNG(t, path, 768, 480)
		})
	}
	t.Run("one budget", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sweep.png")
		if err := Sweep(path, "", []float64{161e6}, []SweepSeries{{Name: "si", Predicted: []float64{0.01}, Measured: []float64{0.02}}}); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path, 768, 480)
	})

	png := filepath.Join(t.TempDir(), "x.png")
	one := []SweepSeries{{Name: "cf", Predicted: []float64{0.01, 0.01}, Measured: []float64{0.01, 0.01}}}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"not png", Sweep(filepath.Join(t.TempDir(), "x.svg"), "", []float64{1, 2}, one), ".png"},
		{"no budgets", Sweep(png, "", nil, one), "at least one budget"},
		{"decreasing", Sweep(png, "", []float64{2, 1}, one), "must increase"},
		{"zero budget", Sweep(png, "", []float64{0, 1}, one), "not a size"},
		{"no series", Sweep(png, "", []float64{1, 2}, nil), "no series"},
		{"length", Sweep(png, "", []float64{1, 2, 3}, one), "2 values for 3 budgets"},
		{"twice", Sweep(png, "", []float64{1, 2}, append(one, one...)), "twice"},
		{"negative", Sweep(png, "", []float64{1, 2}, []SweepSeries{{Name: "cf", Predicted: []float64{-1, 0}, Measured: []float64{0, 0}}}), "negative"},
		{"nothing", Sweep(png, "", []float64{1, 2}, []SweepSeries{{Name: "cf", Predicted: []float64{nan, nan}, Measured: []float64{nan, nan}}}), "no variant has a value"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, c.err, c.want)
		}
	}
}
