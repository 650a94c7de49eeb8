package exec

import "testing"

// TestStmtCacheLRU: the cache keeps the most recently used statements and
// evicts the least recently used one, not everything.
func TestStmtCacheLRU(t *testing.T) {
	c := stmtCache{limit: 3}
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, &Stmt{Text: k})
	}
	if c.get("a") == nil {
		t.Fatal("a missing")
	}
	c.put("d", &Stmt{Text: "d"})
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if got := c.get(k) != nil; got != want {
			t.Errorf("%s cached: %v, want %v", k, got, want)
		}
	}
	if c.lru.Len() != 3 || len(c.byKey) != 3 {
		t.Errorf("%d statements in the list, %d in the map", c.lru.Len(), len(c.byKey))
	}
}
