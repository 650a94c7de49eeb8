package lang

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrUnknownName is wrapped by the errors that name a relation, attribute
// or relationship the catalog does not define, so that a caller can tell
// them from errors about values (Prepare reports them before any value is
// known).
var ErrUnknownName = errors.New("unknown name")

// UnknownAt returns an *Error at pos wrapping ErrUnknownName.
func UnknownAt(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Err: ErrUnknownName}
}

// Error is a syntax error: the position of the offending token and what was
// expected there. Every error returned by the parse functions is an *Error.
type Error struct {
	Pos Pos
	Msg string
	Err error // the cause, when a statement failed for a reason found later (e.g. by the store)
}

// Unwrap returns the cause, so errors.Is sees through the position.
func (e *Error) Unwrap() error { return e.Err }

// Error formats the error as "file:line:col: msg", leaving out "file:" when
// the source has no file name.
func (e *Error) Error() string {
	s := strconv.Itoa(e.Pos.Line) + ":" + strconv.Itoa(e.Pos.Col) + ": " + e.Msg
	if e.Pos.File != "" {
		s = e.Pos.File + ":" + s
	}
	return s
}

func errorAt(pos Pos, msg string) *Error {
	return &Error{Pos: pos, Msg: msg}
}
