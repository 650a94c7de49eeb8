package dataio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/types"
)

// Format is the encoding of a data file. The zero Format is invalid.
type Format int

// The data file formats.
const (
	CSV   Format = iota + 1 // comma-separated values with a header line
	JSONL                   // one JSON object per line
)

// String names the format as ParseFormat reads it: "csv" or "jsonl".
func (f Format) String() string {
	switch f {
	case CSV:
		return "csv"
	case JSONL:
		return "jsonl"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Ext is the file name extension of the format, with its dot.
func (f Format) Ext() string { return "." + f.String() }

func (f Format) valid() bool { return f == CSV || f == JSONL }

// ParseFormat maps "csv" or "jsonl" (any letter case) to a Format.
func ParseFormat(name string) (Format, bool) {
	switch strings.ToLower(name) {
	case "csv":
		return CSV, true
	case "jsonl":
		return JSONL, true
	}
	return 0, false
}

// FormatOf tells the format of a data file by its extension (.csv or .jsonl,
// any letter case).
func FormatOf(path string) (Format, bool) {
	ext := filepath.Ext(path)
	if ext == "" {
		return 0, false
	}
	return ParseFormat(ext[1:])
}

// Error is every error of a Reader (and of a Writer, without File and Line).
// Its text reads FILE:LINE: field NAME: message; the field part is left out
// when the error is not about one value.
type Error struct {
	File  string
	Line  int    // 1-based; 0 if unknown
	Field string // the column at fault, or ""
	Msg   string
	Err   error // the underlying error of a failed read or write, or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	case e.File != "":
		b.WriteString(e.File)
		b.WriteString(": ")
	case e.Line > 0:
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying I/O error, if any.
func (e *Error) Unwrap() error { return e.Err }

// File is one data file of a directory.
type File struct {
	Path   string
	Entity *catalog.Entity
	Format Format
}

// Files lists the data files (*.csv and *.jsonl) of dir, referenced entities
// before referencing ones: in topological order of the to-one foreign keys,
// ties (and cycles) broken by entity name. Other files and subdirectories are
// ignored. A data file named after no entity of m, or a second file for the
// same entity, is an error.
func Files(dir string, m *catalog.Model) ([]File, error) { return FilesExcept(dir, m, nil) }

// FilesExcept is Files without the data files whose name (without its
// extension) skip accepts: those of other relations of the same store.
func FilesExcept(dir string, m *catalog.Model, skip func(name string) bool) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byEntity := map[*catalog.Entity]File{}
	for _, de := range ents {
		if de.IsDir() {
			continue
		}
		name := de.Name()
		f, ok := FormatOf(name)
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		base := strings.TrimSuffix(name, filepath.Ext(name))
		if skip != nil && skip(base) {
			continue
		}
		e := m.Entity(base)
		if e == nil {
			return nil, fmt.Errorf("unknown entity %q (file %s)", base, path)
		}
		if prev, dup := byEntity[e]; dup {
			return nil, fmt.Errorf("entity %s has two data files: %s and %s", e.Name, prev.Path, path)
		}
		byEntity[e] = File{Path: path, Entity: e, Format: f}
	}
	var out []File
	for _, e := range ParentsFirst(m) {
		if f, ok := byEntity[e]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// ParentsFirst orders the entities of m so that the target of every to-one
// foreign key comes before the entity holding it, breaking ties by name. An
// entity of a reference cycle (self-references aside) may come before one it
// references: among entities whose references are all placed, or when none
// is, the smallest name goes first.
func ParentsFirst(m *catalog.Model) []*catalog.Entity {
	rest := m.SortedEntities()
	done := make(map[*catalog.Entity]bool, len(rest))
	out := make([]*catalog.Entity, 0, len(rest))
	ready := func(e *catalog.Entity) bool {
		for _, c := range e.Columns {
			if c.Nav != nil && c.Nav.To != e && !done[c.Nav.To] {
				return false
			}
		}
		return true
	}
	for len(rest) > 0 {
		pick := 0 // a cycle: the smallest name
		for i, e := range rest {
			if ready(e) {
				pick = i
				break
			}
		}
		e := rest[pick]
		done[e] = true
		out = append(out, e)
		rest = append(rest[:pick], rest[pick+1:]...)
	}
	return out
}

// keyColumn is the index in e.Columns of e's key, or -1.

// describe quotes text for a message, shortened if long.
func describe(s string) string {
	const maxLen = 60
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// ReadFile reads every row of a data file, calling fn with each (the slice is
// reused after fn returns). An error of fn is returned as is.
func ReadFile(f File, fn func(row []types.Value) error) error {
	return ReadLines(f, func(row []types.Value, _ int) error { return fn(row) })
}

// ReadLines is ReadFile with each row's line number (Reader.Line), for
// errors found later to name where the row is.
func ReadLines(f File, fn func(row []types.Value, line int) error) error {
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	r, err := NewReader(fh, f.Path, f.Format, f.Entity)
	if err != nil {
		return err
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(row, r.Line()); err != nil {
			return err
		}
	}
}
