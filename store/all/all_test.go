package all_test

import (
	"slices"
	"testing"

	"github.com/kvschema/kvschema/store"
	_ "github.com/kvschema/kvschema/store/all"
)

func TestSchemes(t *testing.T) {
	for _, s := range []string{"mem", "pebble", "bigtable"} {
		if !slices.Contains(store.Schemes(), s) {
			t.Errorf("scheme %q not registered: %q", s, store.Schemes())
		}
	}
}
