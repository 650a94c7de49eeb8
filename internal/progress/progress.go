// Package progress shows how a long job (a load, a verify, a benchmark's
// calibration) advances, for people: on a terminal, one status line redrawn
// in place; elsewhere (a file, a pipe, CI logs), a plain line every few
// seconds, never the frames of an animation. Finished tasks get a line of
// their own either way.
//
// Invariants: counts and rates are what was done (a rate only once a second
// has passed, so a fast start cannot claim billions of rows per second);
// estimates are marked with "≈" and never replace a count; a Meter is safe
// for concurrent use (tasks of one job often run in parallel).
package progress

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Meter reports the progress of one job made of named tasks.
type Meter struct {
	// Terse: finished tasks get no line of their own, only a count in the
	// status line (for jobs whose result lists the tasks anyway).
	Terse bool

	w     io.Writer
	tty   bool
	cols  int // the terminal's width (a longer status line would wrap and never be redrawn)
	job   string
	unit  string
	tasks int // how many the job has; 0: unknown
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	start    time.Time
	running  map[string]*task
	finished int
	count    int64 // units done, all tasks together
	shown    time.Time
	width    int // of the status line on the terminal
}

type task struct {
	done, estimate int64
	start          time.Time
}

// New returns a Meter writing to w for a job of tasks tasks (0: unknown)
// counting unit ("rows"). Nothing is written until the first report.
func New(w io.Writer, job, unit string, tasks int) *Meter {
	m := &Meter{w: w, job: job, unit: unit, tasks: tasks, every: 5 * time.Second, now: time.Now, running: map[string]*task{}}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		m.tty, m.every = true, 200*time.Millisecond
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 1 {
			m.cols = cols
		}
	}
	m.start = m.now()
	m.shown = m.start // the first status line comes after one period
	return m
}

// Update reports that task has done done units, of an estimated estimate
// (0: no estimate).
func (m *Meter) Update(name string, done, estimate int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.running[name]
	if t == nil {
		t = &task{start: m.now()}
		m.running[name] = t
	}
	m.count += done - t.done
	t.done, t.estimate = done, estimate
	m.show(false)
}

// Done reports that task finished with n units, on a line of its own.
func (m *Meter) Done(name string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start := m.start // a task never reported ran, as far as known, since the job began
	if t := m.running[name]; t != nil {
		m.count += n - t.done
		start = t.start
		delete(m.running, name)
	} else {
		m.count += n
	}
	m.finished++
	if m.Terse {
		m.show(false)
		return
	}
	m.clear()
	fmt.Fprintf(m.w, "%s: %s: %s %s in %s\n", m.job, name, group(n), m.units(n), m.since(start))
	m.show(true)
}

// Skip reports that task needs no work (done earlier), on a line of its
// own.
func (m *Meter) Skip(name, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.running, name)
	m.finished++
	m.clear()
	fmt.Fprintf(m.w, "%s: %s: %s\n", m.job, name, why)
	m.show(true)
}

// Task reports a task as a loader sees it: done earlier (earlier), just
// finished with n units (finished), or under way with n of an estimated
// estimate.
func (m *Meter) Task(name string, n, estimate int64, finished, earlier bool) {
	switch {
	case earlier:
		m.Skip(name, "loaded by an earlier run")
	case finished:
		m.Done(name, n)
	default:
		m.Update(name, n, estimate)
	}
}

// Tick redraws the status line if it is due (for jobs that report
// nothing for long stretches, such as a solver: a heartbeat).
func (m *Meter) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.show(false)
}

// Finish ends the job's status line.
func (m *Meter) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
}

// show writes the status line when due (or when forced, on a terminal).
func (m *Meter) show(force bool) {
	now := m.now()
	if !(force && m.tty) && now.Sub(m.shown) < m.every {
		return
	}
	m.shown = now
	line := m.status(now)
	if m.tty {
		if r := []rune(line); m.cols > 0 && len(r) >= m.cols {
			line = string(r[:m.cols-2]) + "…"
		}
		pad := max(m.width-len([]rune(line)), 0)
		fmt.Fprint(m.w, "\r"+line+strings.Repeat(" ", pad))
		m.width = len([]rune(line))
		return
	}
	fmt.Fprintln(m.w, line)
}

// clear removes the status line from the terminal.
func (m *Meter) clear() {
	if m.tty && m.width > 0 {
		fmt.Fprint(m.w, "\r"+strings.Repeat(" ", m.width)+"\r")
		m.width = 0
	}
}

// status is the status line: tasks finished, the running ones with their
// counts, the rate and the time so far.
func (m *Meter) status(now time.Time) string {
	var parts []string
	if m.tasks > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d done", m.finished, m.tasks))
	} else if m.finished > 0 {
		parts = append(parts, fmt.Sprintf("%d done", m.finished))
	}
	names := make([]string, 0, len(m.running))
	for n := range m.running {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := m.running[n]
		s := n + " " + group(t.done)
		if t.estimate > 0 {
			s += "/≈" + group(t.estimate)
		}
		parts = append(parts, s+" "+m.units(t.done))
	}
	elapsed := now.Sub(m.start)
	if elapsed >= time.Second && m.count > 0 {
		parts = append(parts, fmt.Sprintf("%s %s/s", group(int64(float64(m.count)/elapsed.Seconds())), m.unit))
	}
	parts = append(parts, m.since(m.start))
	return m.job + ": " + strings.Join(parts, " · ")
}

// units is the unit, singular for one.
func (m *Meter) units(n int64) string {
	if n == 1 {
		return strings.TrimSuffix(m.unit, "s")
	}
	return m.unit
}

func (m *Meter) since(t time.Time) string {
	d := m.now().Sub(t)
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// group writes n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
