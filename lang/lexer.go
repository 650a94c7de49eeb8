package lang

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kvschema/kvschema/types"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tokEOF     tokKind = iota
	tokError           // a lexical error; token.err says what, and lexing stops there
	tokIdent           // bare identifier; str is its text
	tokQuoted          // quoted identifier; str is the name without quotes
	tokKeyword         // reserved word; str is its upper-case spelling
	tokString          // string literal; str is its value
	tokBinary          // binary literal; val is its []byte value
	tokInt             // integer literal (sign folded in); val is its int64 value
	tokFloat           // float literal (sign folded in); val is its float64 value
	tokParam           // '?', or '$n' (val: n as an int)
	tokPunct           // punctuation or operator; str is its text
)

// token is one lexical token.
type token struct {
	kind tokKind
	pos  Pos
	raw  string // the token's source text, for error messages
	// trail is the text of a `--` comment that follows the token on the
	// same line, trimmed (workload statement tags: `SELECT …; -- 1`;
	// CREATE TABLE annotations: `id integer, -- SIZE 16`); trailAt is
	// where that text starts.
	trail   string
	trailAt Pos
	str     string
	val     any
	err     *Error
}

// describe names the token for "found …" in error messages.
func (t *token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "string " + snippet(t.raw)
	case tokBinary:
		return "binary literal " + snippet(t.raw)
	case tokInt, tokFloat:
		return "number " + t.raw
	}
	return "'" + snippet(t.raw) + "'"
}

// snippet shortens s for an error message and escapes it if it holds bytes
// that would garble a terminal.
func snippet(s string) string {
	const max = 32
	cut := len(s) > max
	if cut {
		s = s[:max]
	}
	if !isPrintable(s) {
		s = types.Escape(s)
	}
	if cut {
		s += "..."
	}
	return s
}

// isPrintable reports whether s is valid UTF-8 made only of printable runes
// (spaces included, other whitespace not).
func isPrintable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// reservedWords maps each reserved word (upper case) to itself, so looking a
// word up yields an interned string.
var reservedWords = map[string]string{}

// maxKeywordLen is the length of the longest reserved word.
const maxKeywordLen = 7

func init() {
	for _, w := range strings.Fields(`SELECT FROM WHERE AND OR NOT IN BETWEEN IS
		NULL TRUE FALSE ORDER BY ASC DESC LIMIT INSERT INTO VALUES UPDATE SET
		DELETE EXPLAIN DEFINE`) {
		reservedWords[w] = w
	}
}

// keyword returns the upper-case spelling of s if s is a reserved word.
func keyword(s string) (string, bool) {
	if len(s) > maxKeywordLen {
		return "", false
	}
	var buf [maxKeywordLen]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	kw, ok := reservedWords[string(buf[:len(s)])]
	return kw, ok
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// lexer splits a source text into tokens, one at a time, as the parser asks
// for them. The source is either complete (a string) or read from an
// io.Reader as far as the tokens asked for need: src then holds what has
// been read and not yet lexed, so memory is bounded by the longest token
// (plus one read), not by the source.
type lexer struct {
	file      string
	src       string
	off       int // offset of the next unread byte
	line      int // line of off
	lineStart int // offset of the first byte of line (negative once the line's start was dropped)
	// trail is the first `--` comment skipped before any newline since the
	// previous token, trimmed, and trailAt where its text starts; the
	// parser attaches them to that token.
	trail   string
	trailAt Pos
	newline bool // a newline was skipped since the previous token

	rd      io.Reader // nil: src is the whole source
	eof     bool      // src holds the rest of the source: no more input
	readErr error     // the error, other than io.EOF, that ended the input
	// hitEnd is set when lexing looked at, or past, the end of src: the
	// token might continue in input not read yet.
	hitEnd bool
	buf    []byte // read scratch
	reads  int    // reads so far
}

// The lexer asks a reader for firstRead bytes, then for twice as many at
// each read up to maxRead (a short script costs little, a long one is
// read in large blocks), and for more when a token is longer.
const (
	firstRead = 512
	maxRead   = 64 << 10
)

func newLexer(file, src string) lexer {
	return lexer{file: file, src: src, line: 1, eof: true}
}

func newReaderLexer(file string, rd io.Reader) lexer {
	return lexer{file: file, line: 1, rd: rd}
}

// scan returns the next token (a tokEOF token at the end, or a tokError
// token at a lexical error) with trail and newline describing what was
// skipped before it. A token that reaches the end of what has been read
// is lexed again once more input is in, so tokens and errors are those of
// the whole source.
func (l *lexer) scan() token {
	for {
		off, line, lineStart := l.off, l.line, l.lineStart
		l.trail, l.newline, l.hitEnd = "", false, false
		t := l.next()
		if !l.hitEnd || l.eof {
			return t
		}
		l.off, l.line, l.lineStart = off, line, lineStart
		l.fill()
	}
}

// fill drops the lexed part of src (tokens keep their own substrings) and
// appends at least one byte of input, or sets eof.
func (l *lexer) fill() {
	rest := l.src[l.off:]
	l.src = rest
	l.lineStart -= l.off
	l.off = 0
	// Ask for at least as much as is pending: a token longer than one
	// read then takes a number of rounds logarithmic in its length (when
	// reads return what is asked, as files do).
	size := max(min(firstRead<<l.reads, maxRead), len(rest))
	l.reads = min(l.reads+1, 16)
	if len(l.buf) < size {
		l.buf = make([]byte, size)
	}
	for range 100 {
		n, err := l.rd.Read(l.buf[:size])
		if n > 0 {
			l.src = rest + string(l.buf[:n])
		}
		if err != nil {
			l.eof = true
			if !errors.Is(err, io.EOF) {
				l.readErr = err
			}
		}
		if n > 0 || err != nil {
			return
		}
	}
	l.eof, l.readErr = true, io.ErrNoProgress
}

// more reports whether offset i is inside src, noting when it is not.
func (l *lexer) more(i int) bool {
	if i < len(l.src) {
		return true
	}
	l.hitEnd = true
	return false
}

func (l *lexer) pos() Pos {
	return Pos{File: l.file, Line: l.line, Col: l.off - l.lineStart + 1}
}

// at returns the byte at offset i, or 0 past the end.
func (l *lexer) at(i int) byte {
	if l.more(i) {
		return l.src[i]
	}
	return 0
}

// advanceTo moves to offset end, keeping track of the newlines passed.
func (l *lexer) advanceTo(end int) {
	seg := l.src[l.off:end]
	if n := strings.Count(seg, "\n"); n > 0 {
		l.line += n
		l.lineStart = l.off + strings.LastIndexByte(seg, '\n') + 1
	}
	l.off = end
}

func (l *lexer) errorToken(pos Pos, format string, args ...any) token {
	return token{kind: tokError, pos: pos, err: errorAt(pos, fmt.Sprintf(format, args...))}
}

// skipSpace skips whitespace and comments.
func (l *lexer) skipSpace() *Error {
	for l.more(l.off) {
		switch c := l.src[l.off]; {
		case c == '\n':
			l.off++
			l.line++
			l.lineStart = l.off
			l.newline = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case c == '#' || c == '-' && l.at(l.off+1) == '-':
			end := strings.IndexByte(l.src[l.off:], '\n')
			if end < 0 {
				end = len(l.src) - l.off
				l.hitEnd = true
			}
			if c == '-' && !l.newline && l.trail == "" {
				body := l.src[l.off+2 : l.off+end]
				l.trail = strings.TrimSpace(body)
				lead := len(body) - len(strings.TrimLeftFunc(body, unicode.IsSpace))
				l.trailAt = Pos{File: l.file, Line: l.line, Col: l.off + 2 + lead - l.lineStart + 1}
			}
			l.off += end // the newline itself is handled above
		case c == '/' && l.at(l.off+1) == '*':
			end := strings.Index(l.src[l.off+2:], "*/")
			if end < 0 {
				l.hitEnd = true
				return errorAt(l.pos(), "unterminated comment")
			}
			l.advanceTo(l.off + 2 + end + 2)
		default:
			return nil
		}
	}
	return nil
}

// next returns the next token.
func (l *lexer) next() token {
	if err := l.skipSpace(); err != nil {
		return token{kind: tokError, pos: err.Pos, err: err}
	}
	pos := l.pos()
	if !l.more(l.off) {
		return token{kind: tokEOF, pos: pos}
	}
	start := l.off
	c := l.src[l.off]
	var t token
	switch {
	case (c == 'x' || c == 'X') && l.at(l.off+1) == '\'':
		t = l.binary(pos)
	case isIdentStart(c):
		end := l.off + 1
		for l.more(end) && isIdentChar(l.src[end]) {
			end++
		}
		l.off = end
		t = token{kind: tokIdent, str: l.src[start:end]}
		if kw, ok := keyword(t.str); ok {
			t.kind, t.str = tokKeyword, kw
		}
	case isDigit(c) || c == '.' && isDigit(l.at(l.off+1)) ||
		c == '-' && (isDigit(l.at(l.off+1)) || l.at(l.off+1) == '.' && isDigit(l.at(l.off+2))):
		t = l.number(pos)
	case c == '\'':
		s, ok := l.quoted('\'')
		if !ok {
			return l.errorToken(pos, "unterminated string literal")
		}
		t = token{kind: tokString, str: s}
	case c == '"' || c == '`':
		// "name", or `name` as MySQL quotes it.
		s, ok := l.quoted(c)
		if !ok {
			return l.errorToken(pos, "unterminated quoted identifier")
		}
		if s == "" {
			return l.errorToken(pos, "empty quoted identifier")
		}
		t = token{kind: tokQuoted, str: s}
	case c == '?':
		l.off++
		t = token{kind: tokParam}
	case c == '$' && isDigit(l.at(l.off+1)):
		// $n, PostgreSQL's numbered parameter.
		l.off++
		n := 0
		for isDigit(l.at(l.off)) {
			if n > 1<<16 {
				return l.errorToken(pos, "parameter number too large")
			}
			n = n*10 + int(l.at(l.off)-'0')
			l.off++
		}
		if n == 0 {
			return l.errorToken(pos, "parameters are numbered from $1")
		}
		t = token{kind: tokParam, val: n}
	default:
		t = l.punct(pos)
	}
	if t.kind == tokError {
		return t
	}
	t.pos = pos
	t.raw = l.src[start:l.off]
	return t
}

// quoted reads a literal enclosed in q, where a doubled q stands for one q.
// It returns the unescaped body and false if the literal is unterminated.
func (l *lexer) quoted(q byte) (string, bool) {
	i := l.off + 1
	var b strings.Builder // used only once an escape is seen
	for {
		j := strings.IndexByte(l.src[i:], q)
		if j < 0 {
			l.hitEnd = true
			return "", false
		}
		j += i
		if l.at(j+1) == q {
			b.WriteString(l.src[i : j+1])
			i = j + 2
			continue
		}
		body := l.src[i:j]
		if b.Len() > 0 {
			b.WriteString(body)
			body = b.String()
		}
		l.advanceTo(j + 1)
		return body, true
	}
}

// binary reads x'…'.
func (l *lexer) binary(pos Pos) token {
	end := strings.IndexByte(l.src[l.off+2:], '\'')
	if end < 0 {
		l.hitEnd = true
		return l.errorToken(pos, "unterminated binary literal")
	}
	digits := l.src[l.off+2 : l.off+2+end]
	b, err := hex.DecodeString(digits)
	var invalid hex.InvalidByteError
	switch {
	case errors.As(err, &invalid):
		return l.errorToken(pos, "invalid hex digit %q in binary literal", rune(invalid))
	case err != nil:
		return l.errorToken(pos, "binary literal must have an even number of hex digits")
	}
	l.advanceTo(l.off + 2 + end + 1)
	return token{kind: tokBinary, val: b}
}

// number reads an integer or float literal, with an optional leading '-'.
func (l *lexer) number(pos Pos) token {
	start := l.off
	i := start
	if l.src[i] == '-' {
		i++
	}
	i = l.skipDigits(i)
	isFloat := false
	if l.at(i) == '.' {
		isFloat = true
		i = l.skipDigits(i + 1)
	}
	if c := l.at(i); c == 'e' || c == 'E' {
		j := i + 1
		if c := l.at(j); c == '+' || c == '-' {
			j++
		}
		if isDigit(l.at(j)) {
			isFloat = true
			i = l.skipDigits(j)
		}
	}
	if c := l.at(i); isIdentChar(c) || c == '.' {
		// Something like 12abc or 1.2.3: say so here rather than let the
		// parser complain about a confusing second token.
		end := i
		for l.more(end) && (isIdentChar(l.src[end]) || l.src[end] == '.') {
			end++
		}
		return l.errorToken(pos, "malformed number '%s'", snippet(l.src[start:end]))
	}
	text := l.src[start:i]
	l.off = i
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil { // only ErrRange is possible, and only for ±Inf
			return l.errorToken(pos, "float out of range: %s", snippet(text))
		}
		return token{kind: tokFloat, val: f}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil { // only ErrRange is possible: text is all digits
		return l.errorToken(pos, "integer out of range: %s", snippet(text))
	}
	return token{kind: tokInt, val: n}
}

func (l *lexer) skipDigits(i int) int {
	for l.more(i) && isDigit(l.src[i]) {
		i++
	}
	return i
}

// punct reads punctuation and operators.
func (l *lexer) punct(pos Pos) token {
	c := l.src[l.off]
	n := 1
	switch c {
	case '(', ')', '{', '}', '[', ']', ',', ';', ':', '.', '*', '=',
		'+', '-', '/', '%', '|', '&', '^', '~':
		// The arithmetic and bit operators are no part of the language;
		// they lex so that SQL DDL can carry them inside the expressions
		// it ignores (CHECK (a - b > 0), DEFAULT, GENERATED … AS (…)).
	case '!':
		if l.at(l.off+1) != '=' {
			return l.errorToken(pos, "unexpected character '!' (did you mean '!='?)")
		}
		n = 2
	case '<':
		if c := l.at(l.off + 1); c == '=' || c == '>' {
			n = 2
		}
	case '>':
		if l.at(l.off+1) == '=' {
			n = 2
		}
	default:
		if !utf8.FullRuneInString(l.src[l.off:]) {
			l.hitEnd = true
		}
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		if r == utf8.RuneError && size == 1 {
			return l.errorToken(pos, "unexpected byte 0x%02x", c)
		}
		return l.errorToken(pos, "unexpected character %q", r)
	}
	s := l.src[l.off : l.off+n]
	l.off += n
	return token{kind: tokPunct, str: s}
}
