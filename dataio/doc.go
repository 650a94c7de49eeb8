// Package dataio reads and writes entity data files: the rows of the
// entities of a conceptual model (catalog.Model), one file per entity, named
// after it, in CSV or JSON lines — DIR/<entity>.csv or DIR/<entity>.jsonl.
//
// A row of an entity is a []types.Value with one value per entry of
// Entity.Columns, in that order (foreign keys included), each of the
// column's canonical Go type (see package types) or nil for NULL.
//
// The columns of a file are its entity's own attributes, a foreign key
// holding the key of the entity it references; the attributes of that
// entity go in its own file. A column name never contains '.': names of
// relations and attributes cannot (lang.CheckDefName), as '.' separates the
// steps of a path (items.seller.rating is the rating of the user an item's
// seller references). A CSV header name or JSON key holding '.' is refused
// as such, and no Writer writes one, so a column can never be read as a
// path or a path as a column.
//
// # STRING is text
//
// A STRING value is UTF-8 text in every format: STRING is the text type,
// binary data belongs in a BYTES column (hex in CSV, base64 in JSON). A
// Reader refuses, with the line and the field, a STRING field holding bytes
// that are not valid UTF-8 (overlong forms and encoded surrogates included)
// and, in JSON, any string, key or value, holding such bytes or a \u escape
// of a UTF-16 surrogate that is not half of a pair: it never replaces them
// with U+FFFD, as encoding/json alone would. A Writer refuses such a STRING
// in either format, rather than write a file a Reader would refuse.
//
// # CSV
//
// RFC 4180 as encoding/csv reads and writes it. The first record is a header
// naming columns in any order; a subset is allowed (absent columns are NULL),
// but an unknown, repeated or dotted name is an error, and the key column
// must be present. Each later record has exactly as many fields as the
// header. Values:
//
//	NULL       \N
//	STRING     the text itself, UTF-8 (see the escape below); "" is the
//	           empty string
//	INT BIGINT decimal integer, range-checked
//	FLOAT      strconv 'g' shortest form (bitSize 32), DOUBLE likewise (64);
//	           NaN, +Inf, -Inf as strconv spells them
//	BOOL       true or false (any letter case is read)
//	TIMESTAMP  types.FormatTimestamp ("2024-01-02 03:04:05.123456"); anything
//	           types.ParseTimestamp accepts is read
//	BYTES      \x followed by lowercase hex (\x alone is empty)
//	collection its JSON text (types.JSON): ["a","b"] for a SET or LIST,
//	           {"k":1} for a MAP (keys as strings), elements as in JSON
//	           lines below
//
// STRING escape: a STRING field that begins with a backslash is escaped text.
// Exactly \N is NULL; otherwise the leading backslash is dropped and, in the
// rest, \\ stands for a backslash and \r for a carriage return (any other
// backslash sequence is an error). The Writer escapes exactly the strings that
// begin with a backslash or contain a carriage return (encoding/csv would turn
// a CR LF inside a quoted field into LF), so the text `\N` is written `\\\N`
// and a value starting `\x` as `\\\x…`. An empty string that would be a whole
// record on its own (an entity with one column) is written as `\` so that the
// line is not blank (blank lines are skipped).
//
// # JSON lines
//
// One JSON object per line; blank lines are skipped. Keys are column names:
// an unknown, repeated or dotted key is an error, a missing one is NULL, as
// is JSON null. Values: STRING a JSON string (UTF-8 text, see above); INT
// and BIGINT a JSON number written as an integer (1.5 or 1e3 is rejected,
// so is a number out of range); FLOAT and DOUBLE a JSON number, or one of
// the strings "NaN", "+Inf", "-Inf" for the values JSON numbers cannot hold;
// BOOL a JSON bool; TIMESTAMP a string as for CSV; BYTES a string in
// standard base64; a SET or LIST a JSON array of its elements, a MAP a JSON
// object (its keys strings: "42" for an INT key).
//
// # Invariants
//
//   - Round trip: what a Writer writes, a Reader reads back equal
//     (types.Compare == 0 for every value, NULL stays NULL).
//   - Every error a Reader returns is a *Error carrying the file name, the
//     line and, when the error is about a value, the column; no input makes a
//     Reader panic, and every row it returns holds values of the columns'
//     types (every STRING valid UTF-8) and a non-NULL key.
//   - Files lists the data files of a directory with referenced entities
//     before the entities referencing them, so loading in that order never
//     meets a foreign key whose target is still to come.
package dataio
