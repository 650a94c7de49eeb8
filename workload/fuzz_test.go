package workload

import (
	"os"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/lang"
)

// FuzzResolve feeds arbitrary model and workload texts through parsing,
// model building and statement resolution: errors are fine, panics are not,
// and every error is positioned or names the file.
func FuzzResolve(f *testing.F) {
	m, _ := os.ReadFile("../examples/rubis/model.kvs")
	w, _ := os.ReadFile("../examples/rubis/workload.kvs")
	f.Add(string(m), string(w))
	f.Add("DEFINE RELATION u ROWS 5 { id BIGINT KEY, f BIGINT REFERENCES u REVERSE fs };",
		"DEFINE WORKLOAD w MIXES (a) { GROUP g WEIGHTS (a 1) { SELECT u.f.f.id FROM u JOIN u AS v ON v.f = u.id WHERE u.id = ? ORDER BY v.id; CONNECT u(1) TO fs(?); INSERT INTO u SET id = 1 AND CONNECT TO f(2) } };")
	f.Fuzz(func(t *testing.T, msrc, wsrc string) {
		ss, err := lang.ParseScript("m.kvs", []byte(msrc))
		if err != nil {
			return
		}
		mod, err := catalog.Build(ss)
		if err != nil {
			return
		}
		if _, err := Parse(mod, "w.kvs", []byte(wsrc)); err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
	})
}
