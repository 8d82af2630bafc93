package modern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TaskStatus is the status of a modern task.
type TaskStatus string

// The five statuses of the extension (same strings as 2025-11-25).
const (
	StatusWorking       TaskStatus = "working"
	StatusInputRequired TaskStatus = "input_required"
	StatusCompleted     TaskStatus = "completed"
	StatusFailed        TaskStatus = "failed"
	StatusCancelled     TaskStatus = "cancelled"
)

// Valid reports whether s is one of the five statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// IsTerminal reports whether s is completed, failed or cancelled: once
// reached, a task's status never changes (as in legacy, L-26).
func (s TaskStatus) IsTerminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// CanTransition reports whether a task may move from s to next: a
// non-terminal status may become any status (working ↔ input_required, or a
// terminal one); a terminal status may only stay as it is. Unknown statuses
// never transition.
func (s TaskStatus) CanTransition(next TaskStatus) bool {
	if !s.Valid() || !next.Valid() {
		return false
	}
	if s.IsTerminal() {
		return s == next
	}
	return true
}

// timeLayout is RFC 3339 in UTC with milliseconds, the form of the spec
// examples and of JavaScript's Date.toISOString.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t for createdAt/lastUpdatedAt (ISO 8601, UTC, ms).
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// ParseTime parses an ISO 8601 / RFC 3339 createdAt or lastUpdatedAt.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("modern: timestamp %q is not RFC 3339: %w", s, err)
	}
	return t.UTC(), nil
}

// Task is the flat base shape of a modern task. TTLMs is always
// written, null meaning unlimited (ttl renamed ttlMs, required and nullable
// in both eras; L-21).
type Task struct {
	TaskID        string
	Status        TaskStatus
	StatusMessage string // "" = absent
	CreatedAt     string // ISO 8601
	LastUpdatedAt string // ISO 8601
	// TTLMs is the time to live from creation; nil encodes as null (unlimited).
	TTLMs *int64
	// PollIntervalMs is the suggested poll interval; nil = absent.
	PollIntervalMs *int64
}

// Int64 returns a pointer to v, for TTLMs and PollIntervalMs.
func Int64(v int64) *int64 { return &v }

// PollInterval returns the suggested poll interval, or def when it is absent,
// zero or negative (validate defensively, M-24).
func (t Task) PollInterval(def time.Duration) time.Duration {
	if t.PollIntervalMs == nil || *t.PollIntervalMs <= 0 {
		return def
	}
	return time.Duration(*t.PollIntervalMs) * time.Millisecond
}

// ExpiresAt returns createdAt + ttlMs, the backstop after which a client MAY
// give up (M-27); ok is false for an unlimited TTL or an unreadable createdAt.
func (t Task) ExpiresAt() (at time.Time, ok bool) {
	if t.TTLMs == nil {
		return time.Time{}, false
	}
	c, err := ParseTime(t.CreatedAt)
	if err != nil {
		return time.Time{}, false
	}
	// Clamp before multiplying: a ttlMs beyond ~292 years would overflow
	// time.Duration and wrap into the past, making a live task look expired.
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	return c.Add(time.Duration(min(max(*t.TTLMs, 0), maxMs)) * time.Millisecond), true
}

// readTask reads the Task fields leniently: taskId and a known status are
// required; timestamps and ttlMs may be missing (a missing ttlMs reads as
// unlimited).
func readTask(r *reader) (Task, error) {
	var t Task
	var err error
	if t.TaskID, err = r.reqStr("taskId"); err != nil {
		return t, err
	}
	st, err := r.reqStr("status")
	if err != nil {
		return t, err
	}
	t.Status = TaskStatus(st)
	if !t.Status.Valid() {
		return t, r.fail("status", "has unknown value %s (want working, input_required, completed, failed or cancelled)", quoteShort(st))
	}
	if t.StatusMessage, _, err = r.str("statusMessage"); err != nil {
		return t, err
	}
	if t.CreatedAt, _, err = r.str("createdAt"); err != nil {
		return t, err
	}
	if t.LastUpdatedAt, _, err = r.str("lastUpdatedAt"); err != nil {
		return t, err
	}
	if t.TTLMs, err = r.int("ttlMs"); err != nil {
		return t, r.fail("ttlMs", "must be an integer or null, got %s", describe(r.raw("ttlMs")))
	}
	if t.PollIntervalMs, err = r.int("pollIntervalMs"); err != nil {
		return t, err
	}
	return t, nil
}

// Validate checks what the schema requires of a Task we emit.
func (t Task) Validate() error {
	switch {
	case t.TaskID == "":
		return encodeErr("Task: taskId is required")
	case !t.Status.Valid():
		return encodeErr("Task %q: status %q is not a task status", t.TaskID, string(t.Status))
	case t.CreatedAt == "":
		return encodeErr("Task %q: createdAt is required", t.TaskID)
	case t.LastUpdatedAt == "":
		return encodeErr("Task %q: lastUpdatedAt is required", t.TaskID)
	case t.TTLMs != nil && (*t.TTLMs > maxSafeInt || *t.TTLMs < -maxSafeInt):
		return encodeErr("Task %q: ttlMs %d is outside the JSON-safe integer range", t.TaskID, *t.TTLMs)
	case t.PollIntervalMs != nil && (*t.PollIntervalMs > maxSafeInt || *t.PollIntervalMs < -maxSafeInt):
		return encodeErr("Task %q: pollIntervalMs %d is outside the JSON-safe integer range", t.TaskID, *t.PollIntervalMs)
	}
	return nil
}

// writeTask writes the Task fields; ttlMs is always present (null = unlimited).
func writeTask(w *writer, t Task) {
	w.field("taskId", t.TaskID)
	w.field("status", t.Status)
	if t.StatusMessage != "" {
		w.field("statusMessage", t.StatusMessage)
	}
	w.field("createdAt", t.CreatedAt)
	w.field("lastUpdatedAt", t.LastUpdatedAt)
	w.field("ttlMs", t.TTLMs) // nil pointer → null, never omitted
	if t.PollIntervalMs != nil {
		w.field("pollIntervalMs", *t.PollIntervalMs)
	}
}

// DecodeTask decodes the base Task shape leniently (extra fields ignored).
func DecodeTask(data []byte) (Task, error) {
	r, err := topReader("task", data)
	if err != nil {
		return Task{}, err
	}
	return readTask(r)
}

// MarshalJSON encodes the Task strictly.
func (t Task) MarshalJSON() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	writeTask(w, t)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (t *Task) UnmarshalJSON(data []byte) error { return decodeInto(t, DecodeTask, data) }

// CreateTaskResult is the flat result of a task-augmented tools/call:
// Result & Task & {resultType:"task"} (M-52; legacy nests it as {task}, L-12). A server must not
// send it before tasks/get would resolve the taskId (M-53).
type CreateTaskResult struct {
	Task
	Meta Object
}

// DecodeCreateTaskResult decodes a CreateTaskResult; resultType must be "task".
func DecodeCreateTaskResult(data []byte) (CreateTaskResult, error) {
	r, err := topReader("CreateTaskResult", data)
	if err != nil {
		return CreateTaskResult{}, err
	}
	if err := readResultType(r, ResultTask); err != nil {
		return CreateTaskResult{}, err
	}
	t, err := readTask(r)
	if err != nil {
		return CreateTaskResult{}, err
	}
	meta, err := r.object("_meta")
	if err != nil {
		return CreateTaskResult{}, err
	}
	return CreateTaskResult{Task: t, Meta: meta}, nil
}

// MarshalJSON encodes the result strictly, resultType "task" first.
func (c CreateTaskResult) MarshalJSON() ([]byte, error) {
	if err := c.Task.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	w.field("resultType", ResultTask)
	writeTask(w, c.Task)
	if c.Meta != nil {
		w.field("_meta", c.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes (see DecodeCreateTaskResult).
func (c *CreateTaskResult) UnmarshalJSON(data []byte) error {
	return decodeInto(c, DecodeCreateTaskResult, data)
}

// DetailedTask is the Task plus the payload of its status (M-55), as carried
// by tasks/get results and notifications/tasks:
//   - input_required: InputRequests (required; all outstanding requests, M-55);
//   - completed: Result, the raw result of the original request, which may be
//     a CallToolResult with isError:true (M-56);
//   - failed: Error, the JSON-RPC error (only for JSON-RPC errors, M-56);
//   - working, cancelled: no payload.
//
// Decoding is lenient (a missing payload is tolerated); encoding is strict.
type DetailedTask struct {
	Task
	InputRequests InputRequests
	Result        json.RawMessage
	Error         *rpc.Error
}

func readDetailed(r *reader) (DetailedTask, error) {
	t, err := readTask(r)
	if err != nil {
		return DetailedTask{}, err
	}
	d := DetailedTask{Task: t}
	if r.has("inputRequests") {
		c, err := r.child("inputRequests")
		if err != nil {
			return d, err
		}
		if d.InputRequests, err = readInputRequests(c); err != nil {
			return d, err
		}
	}
	d.Result = r.raw("result")
	if r.has("error") {
		c, err := r.child("error")
		if err != nil {
			return d, err
		}
		if d.Error, err = readRPCError(c); err != nil {
			return d, err
		}
	}
	return d, nil
}

// readRPCError reads a JSON-RPC error object {code, message, data?} leniently
// (a missing message reads as "").
func readRPCError(r *reader) (*rpc.Error, error) {
	code, err := r.int("code")
	if err != nil {
		return nil, err
	}
	if code == nil {
		return nil, r.missing("code")
	}
	msg, _, err := r.str("message")
	if err != nil {
		return nil, err
	}
	e := &rpc.Error{Code: *code, Message: msg}
	if v, ok := r.m["data"]; ok {
		e.Data = bytes.TrimSpace(v)
	}
	return e, nil
}

// Validate checks the variant rules: the payload of the status is present,
// and no payload of another status is (strict encoding).
func (d DetailedTask) Validate() error {
	if err := d.Task.Validate(); err != nil {
		return err
	}
	id, st := d.TaskID, d.Status
	if st != StatusInputRequired && d.InputRequests != nil {
		return encodeErr("DetailedTask %q: status %q must not carry inputRequests", id, st)
	}
	if st != StatusCompleted && d.Result != nil {
		return encodeErr("DetailedTask %q: status %q must not carry result", id, st)
	}
	if st != StatusFailed && d.Error != nil {
		return encodeErr("DetailedTask %q: status %q must not carry error", id, st)
	}
	switch st {
	case StatusInputRequired:
		if d.InputRequests == nil {
			return encodeErr("DetailedTask %q: status input_required requires inputRequests (M-55)", id)
		}
		if err := d.InputRequests.Validate(); err != nil {
			return err
		}
	case StatusCompleted:
		if !isObject(d.Result) || !rawjson.Valid(d.Result) {
			return encodeErr("DetailedTask %q: status completed requires result to be a JSON object (M-55)", id)
		}
	case StatusFailed:
		if d.Error == nil {
			return encodeErr("DetailedTask %q: status failed requires error {code, message} (M-56)", id)
		}
		if d.Error.Data != nil && !rawjson.Valid(d.Error.Data) {
			return encodeErr("DetailedTask %q: error.data is not valid JSON", id)
		}
	}
	return nil
}

func writeDetailed(w *writer, d DetailedTask) {
	writeTask(w, d.Task)
	switch d.Status {
	case StatusInputRequired:
		w.field("inputRequests", d.InputRequests)
	case StatusCompleted:
		w.raw("result", d.Result)
	case StatusFailed:
		ew := newWriter()
		ew.field("code", d.Error.Code)
		ew.field("message", d.Error.Message)
		if d.Error.Data != nil {
			ew.raw("data", d.Error.Data)
		}
		b, err := ew.bytes()
		if err != nil {
			w.err = err
			return
		}
		w.raw("error", b)
	}
}

// ResultIsError reports whether a completed task's result is a CallToolResult
// with isError:true — completed in modern, failed in legacy (M-56, L-29).
func (d DetailedTask) ResultIsError() bool {
	return d.Status == StatusCompleted && CallToolResultIsError(d.Result)
}

// CallToolResultIsError reports whether raw is an object with "isError": true.
func CallToolResultIsError(raw json.RawMessage) bool {
	if !isObject(raw) {
		return false
	}
	var probe struct {
		IsError *bool `json:"isError"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.IsError == nil {
		return false
	}
	return *probe.IsError
}

// DecodeDetailedTask decodes a DetailedTask leniently.
func DecodeDetailedTask(data []byte) (DetailedTask, error) {
	r, err := topReader("task", data)
	if err != nil {
		return DetailedTask{}, err
	}
	return readDetailed(r)
}

// MarshalJSON encodes the DetailedTask strictly (see Validate).
func (d DetailedTask) MarshalJSON() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	writeDetailed(w, d)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (d *DetailedTask) UnmarshalJSON(data []byte) error {
	return decodeInto(d, DecodeDetailedTask, data)
}

// GetTaskResult is the result of tasks/get: Result & DetailedTask &
// {resultType:"complete"} (M-55).
type GetTaskResult struct {
	DetailedTask
	Meta Object
}

// DecodeGetTaskResult decodes a tasks/get result. resultType may be missing,
// "complete", or — tolerating the spec examples' erratum — "task" (M-04).
func DecodeGetTaskResult(data []byte) (GetTaskResult, error) {
	r, err := topReader("tasks/get result", data)
	if err != nil {
		return GetTaskResult{}, err
	}
	if err := readResultType(r, "", ResultComplete, ResultTask); err != nil {
		return GetTaskResult{}, err
	}
	d, err := readDetailed(r)
	if err != nil {
		return GetTaskResult{}, err
	}
	meta, err := r.object("_meta")
	if err != nil {
		return GetTaskResult{}, err
	}
	return GetTaskResult{DetailedTask: d, Meta: meta}, nil
}

// MarshalJSON encodes strictly with resultType "complete" (never "task", M-52).
func (g GetTaskResult) MarshalJSON() ([]byte, error) {
	if err := g.DetailedTask.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	w.field("resultType", ResultComplete)
	writeDetailed(w, g.DetailedTask)
	if g.Meta != nil {
		w.field("_meta", g.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (g *GetTaskResult) UnmarshalJSON(data []byte) error {
	return decodeInto(g, DecodeGetTaskResult, data)
}
