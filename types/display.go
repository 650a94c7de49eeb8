package types

import (
	"unicode"
	"unicode/utf8"
)

// The one rule for showing data to people (tables, the shell, EXPLAIN
// output, error messages): text is shown as it is except for the bytes that
// could act on a terminal or garble it, each of which is written \xNN
// (lowercase hex). Those are every byte that is not part of a printable
// UTF-8 rune: control bytes (NUL, BEL, BS, ESC, CR, DEL, …), the bytes of
// non-printable runes (C1 controls, bidirectional overrides, zero-width and
// other format characters; unicode.IsPrint is the test, so ' ' is the only
// space kept) and bytes that are not valid UTF-8. Printable runes, é and 日本
// included, are kept.
//
// Escape applies the rule to one value shown bare (a table cell), where a
// backslash is written \x5c too, so that "\x" in the output always starts
// an escape. EscapeText applies it to a text that is already formatted
// (a plan, a message, an echoed statement): its line breaks and tabs stay,
// and so do its backslashes, which may belong to escapes the text holds
// already.

// Escape returns s with every byte that is not part of a printable UTF-8
// rune, and every backslash, written as \xNN. The result holds only
// printable runes, so printing it cannot emit a control byte or invalid
// UTF-8.
func Escape(s string) string { return escape(s, false) }

// EscapeText is Escape for formatted text: '\n', '\t' and '\\' stay as
// they are.
func EscapeText(s string) string { return escape(s, true) }

// Display formats a value for people (a table cell): a string bare,
// anything else as the literal Format writes, both by Escape's rule.
func Display(v Value) string {
	if s, ok := v.(string); ok {
		return Escape(s)
	}
	return Escape(Format(v))
}

// DisplayLiteral is Format for people (error messages, EXPLAIN): the
// literal with every byte Escape would escape written \xNN. Unlike
// Format's, its output does not always read back as the same value.
func DisplayLiteral(v Value) string {
	s := Format(v)
	if _, ok := v.(string); ok {
		// The quotes stay; inside them the rule for a bare value.
		return "'" + Escape(s[1:len(s)-1]) + "'"
	}
	return Escape(s)
}

// keep reports whether the ASCII byte c is shown as it is.
func keep(c byte, text bool) bool {
	if c >= 0x20 && c < 0x7f {
		return c != '\\' || text
	}
	return text && (c == '\n' || c == '\t')
}

func escape(s string, text bool) string {
	// Most values need nothing: return s itself, without allocating.
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !keep(c, text) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !unicode.IsPrint(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789abcdef"
	b := make([]byte, i, len(s)+16)
	copy(b, s[:i])
	for i < len(s) {
		c := s[i]
		n := 1
		ok := false
		if c < utf8.RuneSelf {
			ok = keep(c, text)
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			ok = !(r == utf8.RuneError && n == 1) && unicode.IsPrint(r)
		}
		if ok {
			b = append(b, s[i:i+n]...)
		} else {
			for _, c := range []byte(s[i : i+n]) {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
			}
		}
		i += n
	}
	return string(b)
}
