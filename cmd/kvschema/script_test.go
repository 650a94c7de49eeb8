package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// exec -f reads, runs and echoes a script one statement at a time: a
// statement runs as soon as its ';' has been read, before the rest of the
// script exists (here a FIFO the test writes a statement at a time).
func TestExecStreamsStatements(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "script.kvs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	cmd := rootCmd()
	var out syncBuffer
	cmd.SetArgs([]string{"exec", "--echo", "--store", "mem:", "-f", fifo})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				w.Close() // let the command finish
				<-done
				t.Fatalf("%q not printed before the rest of the script was written; output:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Fprint(w, fig6+"\nINSERT INTO r VALUES ('a1', 'b', 'x', 100);\n")
	waitFor("INSERT 1\n")
	fmt.Fprint(w, "INSERT INTO r VALUES ('a2', 'b', 'y', 200), ('a3', 'b', 'z', 300);\nSELECT k1, v2 FROM r\n")
	waitFor("INSERT 2\n")
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	equalLines(t, "SELECT", after(t, out.String(), "SELECT k1, v2 FROM r;"), []string{"k1  v2", "a1  100", "a2  200", "a3  300", "(3 rows)"})
}

// longInsert is an INSERT of n tuples into seed 003's r, one per line
// after the first (tuple i on line i+1); bad(i), if not "", replaces
// tuple i's text.
func longInsert(n int, bad func(i int) string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO r (k1, k2, v1, v2) VALUES")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		tuple := fmt.Sprintf("('k%d', 'b', 'v', %d)", i, i)
		if s := bad(i); s != "" {
			tuple = s
		}
		b.WriteString("\n" + tuple)
	}
	return b.String() + ";\n"
}

// An INSERT … VALUES of more than 1000 tuples is applied in atomic batches
// of 1000: when one fails, the batches before it stay applied, and the
// error gives the failing tuple's position and how many were applied.
func TestExecLongInsertBatches(t *testing.T) {
	ok := func(int) string { return "" }
	for _, tc := range []struct {
		name    string
		bad     func(i int) string
		applied int
		want    *regexp.Regexp
	}{
		{"all applied", ok, 2500, nil},
		// A value of the wrong type: found with the tuple's position.
		{"bad value", func(i int) string {
			if i == 2417 {
				return "('k2417', 'b', 'v', 'not a number')"
			}
			return ""
		}, 2000, regexp.MustCompile(`^big\.kvs:2418:21: INSERT INTO r stopped at tuple 2417, in batch 3 \(tuples 2001–2500\): attribute v2: cannot use 'not a number' \(string\) as INT; 2000 tuples applied by the batches before it .*none from this batch on$`)},
		// A key the layout cannot encode (its separator in k1): found when
		// the batch is written, so the batch's position is given.
		{"bad key", func(i int) string {
			if i == 1500 {
				return "('k1-500', 'b', 'v', 1)"
			}
			return ""
		}, 1000, regexp.MustCompile(`^big\.kvs:1002:2: INSERT INTO r stopped, in batch 2 \(tuples 1001–2000\): big\.kvs:1:1: .*separator.*; 1000 tuples applied by the batches before it`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			url := "pebble:" + filepath.Join(dir, "db")
			mustRun(t, "", "exec", "--store", url, "--create", "-e", fig6)
			script := filepath.Join(dir, "big.kvs")
			if err := os.WriteFile(script, []byte(longInsert(2500, tc.bad)), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir) // positions name the file as given
			out, err := run(t, "", "exec", "--echo", "--store", url, "-f", "big.kvs")
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("%v", err)
			case tc.want == nil:
				if !strings.HasSuffix(out, ");\nINSERT 2500\n") || strings.Count(out, "INSERT ") != 2 {
					t.Errorf("not one INSERT 2500 after the statement:\n%s", out[max(0, len(out)-300):])
				}
			case err == nil || !tc.want.MatchString(err.Error()):
				t.Fatalf("error %v\ndoes not match %s", err, tc.want)
			}
			out = mustRun(t, "", "exec", "--echo", "--store", url, "-e", "SELECT k1 FROM r")
			if want := fmt.Sprintf("(%d rows)\n", tc.applied); !strings.HasSuffix(out, want) {
				t.Errorf("after the INSERT, want %s:\n%s", want, out[max(0, len(out)-200):])
			}
		})
	}
}

// The echo of a long INSERT, printed as its batches come, is the
// statement itself; and a syntax error at the end of a file stops it
// before any of it runs.
func TestExecLongInsertEcho(t *testing.T) {
	src := longInsert(2100, func(int) string { return "" })
	out := mustRun(t, "", "exec", "--echo", "-e", fig6, "-e", src)
	i := strings.Index(out, "INSERT INTO r (k1")
	if i < 0 || !strings.HasSuffix(out, "\nINSERT 2100\n") {
		t.Fatalf("output:\n%s", out)
	}
	echo := strings.TrimSuffix(out[i:], "\nINSERT 2100\n")
	want := strings.ReplaceAll(strings.TrimSuffix(src, ";\n"), "\n", " ")
	if strings.ReplaceAll(echo, "\n", " ") != want+";" {
		t.Errorf("echo differs from the statement")
	}
	if n := strings.Count(echo, "\n"); n != 2 {
		t.Errorf("echo in %d lines, want 3 (one per batch)", n+1)
	}

	dir := t.TempDir()
	url := "pebble:" + filepath.Join(dir, "db")
	bad := writeFile(t, "bad.kvs", fig6+src+"SELEC;\n")
	if _, err := run(t, "", "exec", "--store", url, "--create", "-f", bad); err == nil || !strings.Contains(err.Error(), ":2124:1: ") {
		t.Fatalf("error %v, want the syntax error at 2124:1", err)
	}
	if out, err := run(t, "", "exec", "--store", url, "-e", "SELECT * FROM r"); err == nil {
		t.Errorf("the file ran up to its syntax error:\n%s", out)
	}
}
