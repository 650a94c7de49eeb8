package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestMigrationPhases: the run is cut into the phases at the migration's
// start, each step's last event and its end; writes go to the phase they
// started in, and each phase's median is set against the first's and the
// last's.
func TestMigrationPhases(t *testing.T) {
	s := time.Second
	last := map[string]time.Duration{"count": 3*s + 50*time.Millisecond, "add": 3*s + 100*time.Millisecond, "backfill+catch-up": 6 * s, "verify": 7 * s, "switch": 7*s + 10*time.Millisecond}
	ph := phaseSpans(3*s, 8*s, 11*s, last)
	want := []struct {
		name       string
		start, end time.Duration
	}{{"before", 0, 3 * s}, {"count", 3 * s, last["count"]}, {"add", last["count"], last["add"]}, {"backfill+catch-up", last["add"], 6 * s}, {"verify", 6 * s, 7 * s},
		{"switch", 7 * s, last["switch"]}, {"drop", last["switch"], 8 * s}, {"after", 8 * s, 11 * s}}
	if len(ph) != len(want) || len(ph) != len(MigrationPhases) {
		t.Fatalf("%d phases, want %d", len(ph), len(want))
	}
	for i, w := range want {
		if ph[i].Name != w.name || ph[i].Start != w.start || ph[i].End != w.end {
			t.Errorf("phase %d: %s %v–%v, want %s %v–%v", i, ph[i].Name, ph[i].Start, ph[i].End, w.name, w.start, w.end)
		}
	}
	// A step without an event is empty, at the end of the one before.
	if e := phaseSpans(s, 2*s, 3*s, map[string]time.Duration{"add": s})[4]; e.Name != "verify" || e.Start != s || e.End != s {
		t.Errorf("a migration without verify: %+v", e)
	}

	ms := time.Millisecond
	writes := []WriteSample{{At: 0, Latency: 1 * ms, Tag: "a"}, {At: s, Latency: 3 * ms, Tag: "a"}, {At: 2 * s, Latency: 2 * ms, Tag: "b"},
		{At: 3 * s, Latency: 10 * ms, Tag: "a"},                                         // the start of count: count's
		{At: 4 * s, Latency: 8 * ms, Tag: "b"}, {At: 11 * s, Latency: 4 * ms, Tag: "a"}} // the end of the last phase: its
	phaseStats(ph, writes)
	if ph[0].Writes != 3 || ph[0].P50 != 2*ms || ph[0].Ratio != 1 {
		t.Errorf("before: %+v", ph[0])
	}
	if ph[1].Writes != 1 || ph[1].P50 != 10*ms || ph[1].Ratio != 5 || ph[1].AfterRatio != 2.5 {
		t.Errorf("count: %+v", ph[1])
	}
	if ph[4].Writes != 0 || !math.IsNaN(ph[4].Ratio) || ph[4].P50 != 0 {
		t.Errorf("verify: %+v", ph[4])
	}
	if ph[7].Writes != 1 || ph[7].AfterRatio != 1 {
		t.Errorf("after: %+v", ph[7])
	}

	rep := &MigrationReport{Config: MigrationConfig{FromFile: "from.kvs", ToFile: "to.kvs", Writers: 2, Rate: 500}, Phases: ph, Writes: writes,
		Statements: []string{"a", "b"}, BackfillRatio: math.NaN()}
	if worst, _ := rep.WorstRatio(); !math.IsNaN(worst) {
		t.Errorf("worst ratio %v over phases of one write, want NaN", worst)
	}
	text := rep.String()
	for _, want := range []string{"before ", "count ", "add ", "backfill+catch-up ", "verify ", "switch ", "drop ", "after ", "5.00× (few)", "no phase of the migration had 20 writes", "no rows backfilled"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
}
