package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestMeterOffTerminal: written to a file or pipe, a Meter writes whole
// lines — a status line at most every 5 s, a line per finished task —
// never carriage returns; rates appear only after a second and count what
// was done; estimates are marked.
func TestMeterOffTerminal(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(1000, 0)
	m := New(&out, "load", "rows", 3)
	m.now = func() time.Time { return clock }
	m.start, m.shown = clock, clock
	m.Done("one", 1)

	m.Update("a", 10, 100) // within 5 s of the start: nothing
	clock = clock.Add(2 * time.Second)
	m.Update("b", 30, 0)
	if out.String() != "load: one: 1 row in 0s\n" {
		t.Fatalf("a status line before 5 s:\n%s", out.String())
	}
	clock = clock.Add(4 * time.Second)
	m.Update("a", 50, 100)
	m.Done("c", 20)
	m.Skip("d", "loaded by an earlier run")
	clock = clock.Add(6 * time.Second)
	m.Tick()
	m.Finish()
	want := strings.Join([]string{
		"load: one: 1 row in 0s",
		"load: 1/3 done · a 50/≈100 rows · b 30 rows · 13 rows/s · 6s",
		"load: c: 20 rows in 6s",
		"load: d: loaded by an earlier run",
		"load: 3/3 done · a 50/≈100 rows · b 30 rows · 8 rows/s · 12s",
		"",
	}, "\n")
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(out.String(), "\r") {
		t.Error("carriage return off a terminal")
	}
}

// TestMeterNoRateAtStart: no rate in the first second, however many rows
// (the old bars printed 88888888889 rows/s).
func TestMeterNoRateAtStart(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(1000, 0)
	m := New(&out, "load", "rows", 0)
	m.now = func() time.Time { return clock }
	m.start = clock
	clock = clock.Add(time.Millisecond)
	m.Done("x", 1_000_000)
	m.Tick()
	if strings.Contains(out.String(), "/s") {
		t.Errorf("a rate within the first second:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "load: x: 1,000,000 rows in 1ms") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %s, want %s", n, got, want)
		}
	}
}
