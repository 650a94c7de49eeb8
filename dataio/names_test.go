package dataio

import (
	"errors"
	"strings"
	"testing"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// dottedEntity is an entity with a column whose name holds a '.', built by
// hand: catalog.Build refuses to make one (a '.' separates the steps of a
// path).
func dottedEntity() *catalog.Entity {
	key := &catalog.Field{Name: "id", Type: types.BigInt, Key: true, Size: 8, Cardinality: 10}
	f := &catalog.Field{Name: "seller.rating", Type: types.BigInt, Size: 8, Cardinality: 10}
	e := &catalog.Entity{Name: "items", Count: 10, Fields: []*catalog.Field{key, f}, Key: []*catalog.Field{key}, Columns: []catalog.Column{
		{Name: "id", Type: types.BigInt, Field: key},
		{Name: "seller.rating", Type: types.BigInt, Field: f},
	}}
	key.Entity, f.Entity = e, e
	return e
}

const dotMsg = `"seller.rating" cannot contain '.': the columns of a data file are its entity's own attributes, and a '.' separates the steps of a path (an attribute of a related entity goes in that entity's file)`

// A column of a data file is one attribute of its entity, never a path: a
// header name or JSON key holding '.' is refused, even for an entity that
// has such a column, and no Writer writes one.
func TestDottedColumnNames(t *testing.T) {
	// The repro's items.csv (shared/repro/dotname), against its model with
	// the dotted attribute renamed as the model now requires.
	m := buildModel(t, `DEFINE RELATION users ROWS 10 { id BIGINT KEY, rating BIGINT CARDINALITY 10 };
DEFINE RELATION items ROWS 10 { id BIGINT KEY, seller_rating BIGINT CARDINALITY 10, seller BIGINT REFERENCES users REVERSE items_sold };`)
	dotted := dottedEntity()
	for _, tc := range []struct {
		name   string
		ent    *catalog.Entity
		format Format
		file   string
		src    string
		want   string
	}{
		{"repro CSV header", m.Entity("items"), CSV, "items.csv", "id,seller.rating,seller\n7,5,1\n",
			"items.csv:1: column " + dotMsg},
		{"repro JSON key", m.Entity("items"), JSONL, "items.jsonl", `{"id":7,"seller.rating":5,"seller":1}`,
			"items.jsonl:1: key " + dotMsg},
		{"CSV header of a dotted column", dotted, CSV, "items.csv", "id,seller.rating\n7,5\n",
			"items.csv:1: column " + dotMsg},
		{"JSON key of a dotted column", dotted, JSONL, "items.jsonl", "{\"id\":6}\n{\"id\":7,\"seller.rating\":5}\n",
			"items.jsonl:2: key " + dotMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := readAll(t, []byte(tc.src), tc.file, tc.format, tc.ent)
			if err == nil {
				t.Fatalf("no error; rows %v", rows)
			}
			var de *Error
			if !errors.As(err, &de) || err.Error() != tc.want {
				t.Fatalf("error (%T)\n got %v\nwant %s", err, err, tc.want)
			}
		})
	}
	for _, f := range []Format{CSV, JSONL} {
		var out strings.Builder
		w, err := NewWriter(&out, f, dotted)
		if err == nil {
			err = w.Write([]types.Value{int64(1), int64(2)})
		}
		if err == nil {
			err = w.Flush()
		}
		if want := "entity items: column " + dotMsg; err == nil || err.Error() != want {
			t.Errorf("%s writer: got %v (wrote %q)\nwant %s", f, err, out.String(), want)
		}
		if out.Len() > 0 {
			t.Errorf("%s writer wrote %q before refusing", f, out.String())
		}
	}
}
