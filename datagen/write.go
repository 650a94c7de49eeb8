package datagen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/dataio"
	"github.com/kvschema/kvschema/types"
)

// WriteDir writes the rows a generator emits into dir (created if needed),
// one file per entity named <entity>.csv or <entity>.jsonl, replacing
// files of those names; generate must emit each entity's rows together.
// It refuses to start if dir holds a data file of the other format for one
// of ents, which would make the directory ambiguous to dataio.Files.
func WriteDir(dir string, ents []*catalog.Entity, f dataio.Format, generate func(Emit) error) error {
	if f != dataio.CSV && f != dataio.JSONL {
		return fmt.Errorf("unknown data file format %v", f)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	other := dataio.JSONL
	if f == dataio.JSONL {
		other = dataio.CSV
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name+other.Ext())
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s exists: remove it or write to another directory", path)
		}
	}
	var (
		cur *catalog.Entity
		fh  *os.File
		bw  *bufio.Writer
		w   *dataio.Writer
	)
	finish := func() error {
		if fh == nil {
			return nil
		}
		err := w.Flush()
		if err == nil {
			err = bw.Flush()
		}
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("writing %s: %w", fh.Name(), err)
		}
		fh = nil
		return err
	}
	err := generate(func(e *catalog.Entity, row []types.Value) error {
		if e != cur {
			if err := finish(); err != nil {
				return err
			}
			cur = e
			var err error
			if fh, err = os.Create(filepath.Join(dir, e.Name+f.Ext())); err != nil {
				return err
			}
			bw = bufio.NewWriterSize(fh, 256<<10)
			if w, err = dataio.NewWriter(bw, f, e); err != nil {
				return err
			}
		}
		return w.Write(row)
	})
	if ferr := finish(); err == nil {
		err = ferr
	}
	return err
}
