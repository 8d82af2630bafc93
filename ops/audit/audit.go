// Package audit writes the bridge's audit log (L-79, L-80): one JSON object
// per line for each task creation, cancel, input answer and result delivery
// (and each task end the bridge observes), with the caller's principal
// hash, session, task id and outcome, and never a credential.
//
// A face records through the Sink interface; a nil Sink records nothing.
// Log is the file-backed Sink of `bridge serve --audit-log PATH`.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Actions (Event.Action).
const (
	ActionCreate = "task.create" // a task handed to a client (or polled for a plain call)
	ActionCancel = "task.cancel" // a client's tasks/cancel
	ActionInput  = "task.input"  // a client's answer to an input request, sent upstream
	ActionResult = "task.result" // a task's outcome delivered to a client (tasks/result or a polled plain call)
	ActionEnd    = "task.end"    // the bridge saw the task end (completed, failed, cancelled)
)

// Event is one audit record. Principal is the hash the session store keys
// tasks by (sessionmap.PrincipalFromAuthorization), never the credential
// itself; "" when the request carried none. Session and Task are the ids
// the client uses.
type Event struct {
	Time      time.Time `json:"time"`
	Action    string    `json:"action"`
	Era       string    `json:"era,omitempty"` // the client's era: legacy or modern
	Principal string    `json:"principal,omitempty"`
	Session   string    `json:"session,omitempty"`
	Task      string    `json:"task,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	// Outcome says how the action ended: for create "created"; for cancel
	// "cancelled" or the refusal ("not_found", "terminal"); for input the
	// client's action ("accept", "decline", "cancel") or "error"; for
	// result and end the task status, or the refusal.
	Outcome string `json:"outcome"`
	// Code is the JSON-RPC error code of a refused or failed action.
	Code int64 `json:"code,omitempty"`
}

// Sink receives audit events. Implementations must be safe for concurrent
// use and must not block for long (they run on request paths).
type Sink interface {
	Record(Event)
}

// Record sends e to s, stamping the time; a nil s records nothing.
func Record(s Sink, e Event) {
	if s == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	s.Record(e)
}

// Memory keeps events in memory (for tests and embedders that inspect
// them); the zero value is ready.
type Memory struct {
	mu     sync.Mutex
	events []Event
}

// Record keeps e.
func (m *Memory) Record(e Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

// Events returns a copy of the events kept so far, in order.
func (m *Memory) Events() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.events...)
}

// Outcome classifies how a request about a task ended: ok, abandoned (the
// client went away or cancelled the request), or error with its JSON-RPC
// code.
func Outcome(err error) (string, int64) {
	switch {
	case err == nil:
		return "ok", 0
	case errors.Is(err, context.Canceled):
		return "abandoned", 0
	}
	return "error", rpc.CodeOf(err)
}

// InputAction is the outcome of an input answer: an elicitation's action,
// or "answered" for sampling and roots.
func InputAction(answer []byte) string {
	var a struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(answer, &a) == nil {
		switch a.Action {
		case "accept", "decline", "cancel":
			return a.Action
		}
	}
	return "answered"
}

// Log appends events as JSON lines to a file.
type Log struct {
	mu     sync.Mutex
	w      io.WriteCloser
	err    error // the first write error, reported once by Err
	closed bool
}

// Open opens path for appending (created with mode 0600; an existing file
// that others may read is refused, since the log holds session and task ids
// that act as bearer credentials for clients without an Authorization
// header, L-71).
func Open(path string) (*Log, error) {
	if path == "" {
		return nil, errors.New("audit: empty log path")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("audit: open log: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		_ = f.Close()
		return nil, fmt.Errorf("audit: %s is readable or writable by others (mode %v); run chmod 600 on it", path, st.Mode().Perm())
	}
	return &Log{w: f}, nil
}

// Record writes e as one line. A write error is kept for Err; the bridge
// goes on serving.
func (l *Log) Record(e Event) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if _, err := l.w.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

// Err returns the first write error, if any.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file; later records are dropped.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.w.Close()
}
