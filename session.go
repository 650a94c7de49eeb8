package kvschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvschema/kvschema/lang"
)

// Session runs statements one after another, as a script or the shell
// does, including the transaction statements: BEGIN opens a write
// transaction (DB.Begin, see Tx) that the statements after it run in,
// COMMIT applies its writes in one atomic batch, ROLLBACK drops them. A
// statement that fails inside the transaction writes nothing and leaves
// it open. A Session is for one goroutine at a time.
type Session struct {
	db    *DB
	tx    *Tx
	begun lang.Pos // the open transaction's BEGIN
}

// Session returns a session running statements on db.
func (db *DB) Session() *Session { return &Session{db: db} }

// DB is the DB the session's next statement runs on: the open
// transaction's, else the session's.
func (s *Session) DB() *DB {
	if s.tx != nil {
		return s.tx.DB()
	}
	return s.db
}

// InTx reports whether a transaction is open.
func (s *Session) InTx() bool { return s.tx != nil }

// Run runs one parsed statement (rows is nil except for SELECT and
// EXPLAIN), in the open transaction if there is one. Errors without a
// position get the statement's.
func (s *Session) Run(ctx context.Context, ast lang.Statement, args ...any) (Result, *Rows, error) {
	t, ok := ast.(*lang.Transaction)
	if !ok {
		return s.DB().RunStatement(ctx, ast, args...)
	}
	res := Result{Statement: t.Op.String()}
	fail := func(format string, a ...any) (Result, *Rows, error) {
		return res, nil, positioned(ast, fmt.Errorf(format, a...))
	}
	switch t.Op {
	case lang.Begin:
		if s.tx != nil {
			return fail("a transaction is already open (BEGIN at %d:%d): COMMIT or ROLLBACK it first", s.begun.Line, s.begun.Col)
		}
		tx, err := s.db.Begin(ctx)
		if err != nil {
			return fail("%w", err)
		}
		s.tx, s.begun = tx, t.At
		return res, nil, nil
	case lang.Commit, lang.Rollback:
		if s.tx == nil {
			return fail("no transaction is open (BEGIN opens one)")
		}
		tx := s.tx
		s.tx = nil
		var err error
		if t.Op == lang.Commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			return fail("%w", err)
		}
		return res, nil, nil
	}
	return fail("unknown transaction statement %v", t.Op)
}

// Close ends the session. A transaction left open is rolled back: its
// writes are dropped, and Close reports it (ErrTxOpen, naming where it
// began).
func (s *Session) Close() error {
	if s.tx == nil {
		return nil
	}
	tx := s.tx
	s.tx = nil
	tx.Rollback()
	return &lang.Error{Pos: s.begun, Msg: ErrTxOpen.Error(), Err: ErrTxOpen}
}

// ErrTxOpen is Session.Close's error for a transaction never committed or
// rolled back.
var ErrTxOpen = errors.New("the transaction begun here was neither committed nor rolled back: its writes were dropped")
