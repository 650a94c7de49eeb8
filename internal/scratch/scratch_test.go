package scratch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRemoveStale: Open deletes the maps of processes that are gone, and
// keeps its own process's and other files.
func TestRemoveStale(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run a process:", err)
	}
	dead := filepath.Join(parent, fmt.Sprintf("%s%d-1", prefix, cmd.Process.Pid))
	mine := filepath.Join(parent, fmt.Sprintf("%s%d-2", prefix, os.Getpid()))
	other := filepath.Join(parent, "kvschema-scratch-notapid")
	for _, d := range []string{dead, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Open(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the map of a finished process is still there (%v)", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	b := m.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(nil, []byte("k")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("batch get: %q %v %v", v, ok, err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := m.Get(nil, []byte("k")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	dir := m.dir
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s (%v)", dir, err)
	}
}
