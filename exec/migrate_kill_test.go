//go:build !race

package exec_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/exec"
	"github.com/kvschema/kvschema/internal/oracle/gen"
)

const migrateKillEnv = "KVSCHEMA_MIGRATE_KILL_CHILD"

// The child's lines: one per migration event, one when it is done.
const (
	migrateEventLine = "kvschema-migrate-event"
	migratedLine     = "kvschema-migrated"
)

// eventWriter is the child's stdout: it closes at once the migration
// reports its n-th event or ends.
type eventWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	at     chan struct{}
	closed bool
}

func (w *eventWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.closed && (bytes.Count(w.buf.Bytes(), []byte(migrateEventLine)) >= w.n || bytes.Contains(w.buf.Bytes(), []byte(migratedLine))) {
		w.closed = true
		close(w.at)
	}
	return len(p), nil
}

type migrateKillSpec struct {
	URL, Log string
	Base     int64
}

// TestMigrateKillChild is the child process of TestMigrateKill: it inserts
// bids (each logged, synced, once acknowledged) while it migrates the store
// to migrationTarget, until it is killed.
func TestMigrateKillChild(t *testing.T) {
	raw := os.Getenv(migrateKillEnv)
	if raw == "" {
		t.Skip("the child process of TestMigrateKill")
	}
	var spec migrateKillSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := kvschema.Open(ctx, spec.URL, kvschema.Options{NoWorkloadCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(crashReady)
	go func() {
		r := rand.New(rand.NewPCG(uint64(spec.Base), 3))
		for id := spec.Base; ; id++ {
			item, user := 1+r.IntN(40), 1+r.IntN(20)
			if _, err := db.Exec(ctx, "INSERT INTO bids SET id=?, qty=?, bid=?, date=? AND CONNECT TO item(?), user(?)",
				id, int64(1), 1.5, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), int64(item), int64(user)); err != nil {
				fmt.Println("write:", err)
				os.Exit(3)
			}
			fmt.Fprintln(logf, id, item)
			if err := logf.Sync(); err != nil {
				os.Exit(4)
			}
		}
	}()
	_, to := migrationTarget(t)
	// Each step of the migration reported on stdout, for the parent to
	// kill it at one.
	progress := func(kvschema.MigrateEvent) { fmt.Println(migrateEventLine) }
	if _, err := migrateRUBiS(db, to, kvschema.MigrateOptions{Rate: 800, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	fmt.Println(migratedLine)
	time.Sleep(time.Hour) // the writes go on until the kill
}

// TestMigrateKill kills (SIGKILL) a process that migrates a Pebble store
// while it writes, at random points of the migration, then runs the
// migration again in a new process: it finishes, verify is clean, and
// every write the killed process acknowledged is there.
func TestMigrateKill(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs subprocesses and SIGKILL")
	}
	ctx := context.Background()
	m, _ := loadRUBiS(t, "workload_secondary.kvs")
	from, to := migrationTarget(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	acked, resumed := 0, 0
	for trial := range 5 {
		dir := filepath.Join(t.TempDir(), "db")
		url := "pebble:" + dir
		db, err := kvschema.Open(ctx, url, kvschema.Options{NoWorkloadCounts: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Deploy(ctx, "model.kvs", []byte(examples.RUBiSModel), "schema.kvs", from, cost.Cassandra); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Load(ctx, source(gen.Generate(m, tinyRUBiS, 4, 0)), exec.LoadOptions{Identity: "kill"}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		spec := migrateKillSpec{URL: url, Log: filepath.Join(t.TempDir(), "acked.log"), Base: 1_000_000}
		raw, _ := json.Marshal(spec)
		cmd := osexec.Command(os.Args[0], "-test.run=^TestMigrateKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), migrateKillEnv+"="+string(raw))
		// Killed at a migration event drawn at random (most migrations
		// report a few dozen), then a few milliseconds more, so that
		// the kill lands inside a step: a random time would miss the
		// migration once it got faster than the delays drawn.
		stdout := &readyWriter{ready: make(chan struct{})}
		events := &eventWriter{n: 1 + r.IntN(20), at: make(chan struct{})}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, events), &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-stdout.ready:
		case err := <-done:
			t.Fatalf("the child ended before it was ready: %v\n%s%s", err, stdout, &stderr)
		case <-time.After(60 * time.Second):
			t.Fatal("the child was not ready in 60 s")
		}
		start := time.Now()
		select {
		case err := <-done:
			t.Fatalf("the child ended before the kill: %v\n%s%s", err, stdout, &stderr)
		case <-events.at:
		case <-time.After(60 * time.Second):
			t.Fatal("the migration reported nothing in 60 s")
		}
		time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
		delay := time.Since(start).Round(time.Millisecond)
		_ = cmd.Process.Kill()
		<-done
		if strings.Contains(stdout.String(), "write:") {
			t.Fatalf("a write of the child failed:\n%s", stdout)
		}
		// A new process: the migration resumes and finishes.
		db, err = kvschema.Open(ctx, url, kvschema.Options{NoWorkloadCounts: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := migrateRUBiS(db, to, kvschema.MigrateOptions{})
		if err != nil {
			t.Fatalf("trial %d (killed %v after ready): resuming: %v", trial, delay, err)
		}
		if res.Changes() {
			resumed++
		}
		en, _ := db.Advised(ctx)
		if len(en.Schema().WriteOnly) > 0 || en.Schema().Index("si_users_by_rating") == nil {
			t.Fatalf("trial %d: the migration did not reach the target:\n%s", trial, en.Advised().SchemaSrc)
		}
		rep, err := en.Verify(ctx, exec.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() {
			t.Fatalf("trial %d (killed %v after ready): verify:\n%s", trial, delay, rep)
		}
		f, err := os.Open(spec.Log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n := 0
		if f != nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) != 2 {
					continue // a line cut by the kill
				}
				id, err1 := strconv.ParseInt(f[0], 10, 64)
				item, err2 := strconv.ParseInt(f[1], 10, 64)
				if err1 != nil || err2 != nil {
					continue
				}
				rows, err := db.Query(ctx, "SELECT bids.id FROM items.bids WHERE items.id = ?", item)
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for rows.Next() {
					var got int64
					if err := rows.Scan(&got); err != nil {
						t.Fatal(err)
					}
					found = found || got == id
				}
				rows.Close()
				if !found {
					t.Fatalf("trial %d (killed %v after ready): acknowledged bid %d is missing", trial, delay, id)
				}
				n++
			}
			f.Close()
		}
		acked += n
		db.Close()
		t.Logf("trial %d: killed %v after ready (at event %d), %d acknowledged writes there; the migration left to finish: %v", trial, delay, events.n, n, res.Changes())
	}
	if acked == 0 || resumed == 0 {
		t.Fatalf("%d writes acknowledged, %d migrations killed unfinished: the test checked little", acked, resumed)
	}
}
