package chart

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeline draws a migration's timeline — more points than it draws,
// latencies over three decades (a log axis), an empty phase — and checks
// the PNG; then the errors bad input gets.
func TestTimeline(t *testing.T) {
	dir := t.TempDir()
	phases := []PhaseSpan{{"before", 0, 3}, {"add", 3, 3.01}, {"backfill+catch-up", 3.01, 7}, {"verify", 7, 7.5}, {"switch", 7.5, 7.5}, {"drop", 7.5, 8}, {"after", 8, 11}}
	r := rand.New(rand.NewPCG(1, 2))
	var pts []TimePoint
	for i := range 6000 {
		at := float64(i) * 11 / 6000
		lat := 0.0002 * (1 + r.ExpFloat64())
		if at > 3 && at < 7 {
			lat *= 2
		}
		if i%500 == 0 {
			lat = 0.3 // a stall
		}
		pts = append(pts, TimePoint{At: at, Latency: lat})
	}
	path := filepath.Join(dir, "timeline.png")
	if err := Timeline(path, "Writes during a migration", pts, phases); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("%s: %v, %v", path, fi, err)
	}
	checkPNG(t, path, 1056, 480)
	// Linear, no phases.
	lin := filepath.Join(dir, "linear.png")
	if err := Timeline(lin, "", []TimePoint{{0, 0.001}, {1, 0.002}}, nil); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, lin, 1056, 480)

	png := filepath.Join(dir, "bad.png")
	one := []TimePoint{{1, 0.001}}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"no points", Timeline(png, "", nil, phases), "at least one point"},
		{"not png", Timeline(filepath.Join(dir, "x.svg"), "", one, nil), ".png"},
		{"bad dir", Timeline(filepath.Join(dir, "missing", "x.png"), "", one, nil), "writing"},
		{"negative latency", Timeline(png, "", []TimePoint{{1, -1}}, nil), "negative"},
		{"NaN time", Timeline(png, "", []TimePoint{{math.NaN(), 1}}, nil), "not seconds"},
		{"nameless phase", Timeline(png, "", one, []PhaseSpan{{"", 0, 1}}), "no name"},
		{"backwards phase", Timeline(png, "", one, []PhaseSpan{{"a", 2, 1}}), "before it starts"},
		{"phases out of order", Timeline(png, "", one, []PhaseSpan{{"a", 2, 3}, {"b", 1, 2}}), "time order"},
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
