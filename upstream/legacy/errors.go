package legacyup

import (
	"errors"
	"fmt"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Kinds of transport failure, matched with errors.Is.
var (
	// ErrUnavailable: the upstream could not be reached or did not answer
	// (connection refused, 5xx, 429, a stream that broke). Retrying later may
	// succeed.
	ErrUnavailable = errors.New("legacy upstream unavailable")
	// ErrSessionGone: the upstream session is over (HTTP 404 for its
	// Mcp-Session-Id, the stdio process exited, or the pool closed it). Tasks
	// created on it cannot be reached through it any more.
	ErrSessionGone = errors.New("legacy upstream session ended")
	// ErrBadResponse: the upstream answered something that is not valid MCP
	// 2025-11-25 (an HTTP error without a JSON-RPC body, an undecodable
	// message). Retrying will not help.
	ErrBadResponse = errors.New("legacy upstream sent an invalid response")
)

// Error is a failure on the way to or from the upstream (a JSON-RPC error the
// upstream sent is returned as *rpc.Error instead). It unwraps to its -32603
// *rpc.Error (so rpc.As gives a face its answer), to its Kind and to its cause.
type Error struct {
	RPC   *rpc.Error
	Kind  error
	Cause error
}

func (e *Error) Error() string { return e.RPC.Message }

// Unwrap exposes the JSON-RPC error, the kind and the cause.
func (e *Error) Unwrap() []error {
	errs := []error{e.RPC, e.Kind}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// Temporary reports whether retrying later may succeed (runtime/watch
// classifies errors through this method without importing the package).
func (e *Error) Temporary() bool { return e.Kind == ErrUnavailable }

func newError(kind error, cause error, format string, a ...any) *Error {
	msg := fmt.Sprintf(format, a...)
	return &Error{RPC: rpc.Errorf(rpc.CodeInternalError, "%s", msg), Kind: kind, Cause: cause}
}

// Retryable reports whether err is worth retrying later (ErrUnavailable).
func Retryable(err error) bool { return errors.Is(err, ErrUnavailable) }

// unsent marks a failure that came before the upstream processed the
// request: the session had already ended, or the upstream answered HTTP 404
// for it (2025-11-25 transport: it does not know the session, so it did
// nothing with the request).
type unsent struct{ error }

func (e unsent) Unwrap() error { return e.error }

// Unsent reports whether err says the request never reached a session the
// upstream knows: sending it again on another session cannot run it twice.
func Unsent(err error) bool {
	var u unsent
	return errors.As(err, &u)
}
