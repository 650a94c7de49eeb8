package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/rubis"
	"github.com/kvschema/kvschema/store/bigtablestore"
)

// emulatorBinary finds cbtemulator from the Debian package
// google-cloud-cli-bigtable-emulator, or on the PATH.
func emulatorBinary() string {
	if out, err := exec.Command("dpkg", "-L", "google-cloud-cli-bigtable-emulator").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if filepath.Base(line) == "cbtemulator" {
				if fi, err := os.Stat(line); err == nil && !fi.IsDir() {
					return line
				}
			}
		}
	}
	if p, err := exec.LookPath("cbtemulator"); err == nil {
		return p
	}
	return ""
}

var emulatorAddr = regexp.MustCompile(`running on (\S+:\d+)`)

// startEmulator starts the shipped emulator on a free port and returns its
// address; it is stopped when the test ends.
func startEmulator(t *testing.T) string {
	t.Helper()
	bin := emulatorBinary()
	if bin == "" {
		t.Skip("cbtemulator not found (Debian package google-cloud-cli-bigtable-emulator); the bttest emulator covers the store tests")
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := emulatorAddr.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("cbtemulator printed no address in 30s")
	}
	return ""
}

// TestEmulatorEndToEnd runs the CLI against the emulator process: the
// README's advise → load → exec → verify path; a load killed midway and
// run again; repair; and the cbt export script executed with cbt.
func TestEmulatorEndToEnd(t *testing.T) {
	needCBC(t)
	addr := startEmulator(t)
	url := func(instance string) string { return "bigtable://kvschema/" + instance + "?emulator=" + addr }

	ddl := adviseLoadQueryVerify(t, url("e2e"), "bigtable")
	out := mustRun(t, "", "repair", "--store", url("e2e"))
	if !strings.Contains(out, "0 unfinished writes rolled forward") {
		t.Errorf("repair:\n%s", out)
	}

	// Issue 17's chat application: static columns and a set of tags
	// stored one cell per element, advised, loaded, queried, updated
	// (a tag added without reading the others), verified and exported.
	t.Run("chat with static columns and tags", func(t *testing.T) {
		dir := t.TempDir()
		model, workload := "../../examples/chat/model.kvs", "../../examples/chat/workload.kvs"
		chat := filepath.Join(dir, "chat.kvs")
		mustRun(t, "", "advise", "-q", "--model", model, "--workload", workload, "--mix", "chat", "--static-columns", "--format", "ddl", "-o", chat)
		u := url("chat")
		mustRun(t, "", "load", "--store", u, "--schema", chat, "--generate", "model", "--scale", "0.0002", "-q")
		const tagged = "SELECT rooms.messages.id, rooms.messages.tags FROM rooms.messages WHERE rooms.id = 1 AND rooms.messages.tags CONTAINS 'urgent'"
		if out := mustRun(t, "", "exec", "--store", u, "-e", tagged); !strings.Contains(out, "(0 rows)") {
			t.Fatalf("no message is tagged urgent yet:\n%s", out)
		}
		mustRun(t, "", "exec", "--store", u,
			"-e", "INSERT INTO messages SET id = 900001, at = '2099-06-01', body = 'down', tags = {'urgent'} AND CONNECT TO room(1)",
			"-e", "UPDATE messages SET tags = tags + {'ops'} WHERE messages.id = 900001",
			"-e", "UPDATE rooms SET updated = '2025-06-01' WHERE rooms.id = 1")
		out := mustRun(t, "", "exec", "--store", u, "--format", "json", "-e", tagged,
			"-e", "SELECT rooms.updated, rooms.messages.id FROM rooms.messages WHERE rooms.id = 1 ORDER BY rooms.messages.at DESC LIMIT 1")
		for _, want := range []string{`"rooms.messages.id":900001,"rooms.messages.tags":["ops","urgent"]`, `"rooms.updated":"2025-06-01T00:00:00.000000Z","rooms.messages.id":900001`} {
			if !strings.Contains(out, want) {
				t.Errorf("no %s in:\n%s", want, out)
			}
		}
		if out := mustRun(t, "", "verify", "--store", u); !strings.Contains(out, "verify: clean") {
			t.Errorf("verify:\n%s", out)
		}
		if out := mustRun(t, "", "export", "--schema", chat, "--to", "cql"); !strings.Contains(out, " set<text>,") || !strings.Contains(out, " STATIC,") {
			t.Errorf("CQL export without the static columns and the set of tags:\n%s", out)
		}
	})

	t.Run("killed load resumes", func(t *testing.T) {
		bin := binary(t)
		m, _, _, err := rubis.Parse("workload.kvs")
		if err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(t.TempDir(), "data")
		if err := rubis.WriteDir(context.Background(), data, m, rubis.Config{Scale: 0.002, Seed: 5}, dataio.CSV); err != nil {
			t.Fatal(err)
		}
		u := url("killed")
		// Every command runs the built binary, as separate client
		// processes do (and without the race detector's slowdown).
		loadArgs := []string{"load", "--store", u, "--model", "../../examples/rubis/model.kvs", "--schema", ddl, "--data", data, "-q"}
		load := exec.Command(bin, loadArgs...)
		var lout strings.Builder
		load.Stdout, load.Stderr = &lout, &lout
		if err := load.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- load.Wait() }()
		select {
		case err := <-done:
			t.Fatalf("the load finished before the kill (%v); make the data larger:\n%s", err, &lout)
		case <-time.After(time.Second):
			_ = load.Process.Kill()
			<-done
		}
		out, err := exec.Command(bin, loadArgs...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "loaded") {
			t.Fatalf("load after the kill: %v\n%s", err, out)
		}
		t.Logf("after the kill: %s", strings.TrimSpace(string(out)))
		out, err = exec.Command(bin, "verify", "--store", u, "--data", data).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "verify: clean") {
			t.Fatalf("verify after the resumed load: %v\n%s", err, out)
		}
	})

	t.Run("cbt script", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "tables.sh")
		if err := os.WriteFile(script, []byte(mustRun(t, "", "export", "--schema", ddl, "--to", "cbt")), 0o644); err != nil {
			t.Fatal(err)
		}
		cbt, err := exec.LookPath("cbt")
		if err != nil {
			t.Skip("cbt not on the PATH (Debian package google-cloud-cli-cbt)")
		}
		// cbt takes the project and instance from a wrapper first in PATH.
		bin := t.TempDir()
		wrapper := fmt.Sprintf("#!/bin/sh\nexec %s -project kvschema -instance cbt \"$@\"\n", cbt)
		if err := os.WriteFile(filepath.Join(bin, "cbt"), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		sh := exec.Command("sh", script)
		sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "BIGTABLE_EMULATOR_HOST="+addr)
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("sh %s: %v\n%s", script, err, out)
		}
		// The tables are the ones kvschema creates for the schema.
		raw, err := bigtablestore.Open(t.Context(), bigtablestore.Options{Project: "kvschema", Instance: "cbt", Emulator: addr})
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		specs, err := raw.Tables(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, s.Name+":"+strings.Join(s.Families, ","))
		}
		src, err := os.ReadFile(ddl)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range regexp.MustCompile(`DEFINE (?:COLUMN FAMILY|SECONDARY INDEX) (\w+)`).FindAllStringSubmatch(string(src), -1) {
			want = append(want, m[1]+":v")
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("tables after the cbt script:\n%v\nwant\n%v", got, want)
		}
	})
}

// TestBigtableUnreachable: with nothing answering at the emulator address,
// every command that opens the store exits non-zero at once with "cannot
// reach Bigtable at HOST:PORT (…)" instead of waiting forever.
func TestBigtableUnreachable(t *testing.T) {
	bin := binary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	// A listener that accepts and never answers: ConnectTimeout ends the wait.
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			go io.Copy(io.Discard, c)
		}
	}()
	store := func(addr, params string) string { return "bigtable://p/i?emulator=" + addr + params }
	for _, c := range []struct {
		name, addr string
		args       []string
	}{
		{"verify", refused, []string{"verify", "--store", store(refused, "")}},
		{"exec", refused, []string{"exec", "--store", store(refused, ""), "-e", "SELECT * FROM r"}},
		{"shell", refused, []string{"shell", "--store", store(refused, "")}},
		{"load", refused, []string{"load", "--store", store(refused, ""), "--model", "../../examples/rubis/model.kvs", "--generate", "rubis", "-q"}},
		{"verify blackhole", hole.Addr().String(), []string{"verify", "--store", store(hole.Addr().String(), "&connect_timeout=2s")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Far above the limits (the default ConnectTimeout is 10s): only
			// a command that waits forever reaches it.
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, c.args...)
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("kvschema %q did not exit within 40s (killed):\n%s", c.args, out)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("kvschema %q: %v, want a non-zero exit\n%s", c.args, err, out)
			}
			want := fmt.Sprintf("kvschema: cannot reach Bigtable at %s (", c.addr)
			if !strings.Contains(string(out), want) {
				t.Errorf("kvschema %q printed\n%s\nwant %q", c.args, out, want)
			}
			t.Logf("%s", bytes.TrimSpace(out))
		})
	}
}
