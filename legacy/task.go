package legacy

import (
	"encoding/json"
	"time"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Task is the schema's Task: the flat object that tasks/get, tasks/cancel,
// tasks/list and notifications/tasks/status carry, and that CreateTaskResult
// nests under "task".
type Task struct {
	TaskID        string
	Status        TaskStatus
	StatusMessage string // optional; "" is omitted
	// CreatedAt and LastUpdatedAt are ISO 8601 strings kept as received, so a
	// proxy forwards them unchanged; build them with FormatTime (L-18, L-19).
	CreatedAt     string
	LastUpdatedAt string
	// TTL is the actual retention in ms from creation; nil means unlimited
	// and encodes as "ttl": null. The key is never omitted (L-21).
	TTL *int64
	// PollInterval is the suggested polling interval in ms; nil omits it (L-22).
	PollInterval *int64
}

// taskWire is Task's JSON form, plus the _meta member of the result and
// notification types that are "Result & Task".
type taskWire struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	TTL           *int64     `json:"ttl"` // no omitempty: nil must be null
	PollInterval  *int64     `json:"pollInterval,omitempty"`
	Meta          Meta       `json:"_meta,omitempty"`
}

func (t Task) wire(meta Meta) taskWire {
	return taskWire{t.TaskID, t.Status, t.StatusMessage, t.CreatedAt, t.LastUpdatedAt, t.TTL, t.PollInterval, meta}
}

// NewTask returns a task in status working (L-17) created at now, with
// createdAt = lastUpdatedAt = FormatTime(now).
func NewTask(taskID string, now time.Time, ttl, pollInterval *int64) Task {
	ts := FormatTime(now)
	return Task{TaskID: taskID, Status: StatusWorking, CreatedAt: ts, LastUpdatedAt: ts, TTL: ttl, PollInterval: pollInterval}
}

// Millis returns a pointer to ms, for Task.TTL and Task.PollInterval.
func Millis(ms int64) *int64 { return &ms }

// DurationMillis converts d to a millisecond pointer (negative → 0).
func DurationMillis(d time.Duration) *int64 { return Millis(max(d.Milliseconds(), 0)) }

// Created parses CreatedAt leniently (see ParseTime).
func (t Task) Created() (time.Time, error) { return ParseTime(t.CreatedAt) }

// LastUpdated parses LastUpdatedAt leniently (see ParseTime).
func (t Task) LastUpdated() (time.Time, error) { return ParseTime(t.LastUpdatedAt) }

// ExpiresAt reports when the task may be deleted (createdAt + ttl, L-64);
// ok is false for an unlimited ttl or an unparsable createdAt.
func (t Task) ExpiresAt() (at time.Time, ok bool) {
	if t.TTL == nil {
		return time.Time{}, false
	}
	c, err := t.Created()
	if err != nil {
		return time.Time{}, false
	}
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	return c.Add(time.Duration(min(*t.TTL, maxMs)) * time.Millisecond), true
}

// Validate checks what the schema and the receiver rules require of every
// Task a bridge sends: a non-empty taskId, a valid status, parseable
// createdAt/lastUpdatedAt (L-18, L-19) and non-negative ttl/pollInterval.
func (t Task) Validate() error { return t.validate("Task") }

func (t Task) validate(what string) error {
	switch {
	case t.TaskID == "":
		return InternalError("%s: taskId must not be empty", what)
	case !t.Status.Valid():
		return InternalError("%s: status %q is not one of working, input_required, completed, failed, cancelled", what, t.Status)
	case t.CreatedAt == "":
		return InternalError("%s: createdAt is required", what)
	case t.LastUpdatedAt == "":
		return InternalError("%s: lastUpdatedAt is required", what)
	case t.TTL != nil && *t.TTL < 0:
		return InternalError("%s: ttl must not be negative", what)
	case t.PollInterval != nil && *t.PollInterval < 0:
		return InternalError("%s: pollInterval must not be negative", what)
	}
	if _, err := ParseTime(t.CreatedAt); err != nil {
		return InternalError("%s: createdAt %q is not an ISO 8601 timestamp", what, t.CreatedAt)
	}
	if _, err := ParseTime(t.LastUpdatedAt); err != nil {
		return InternalError("%s: lastUpdatedAt %q is not an ISO 8601 timestamp", what, t.LastUpdatedAt)
	}
	return nil
}

// MarshalJSON validates t and encodes it; "ttl" is always present.
func (t Task) MarshalJSON() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(t.wire(nil))
}

// UnmarshalJSON decodes like DecodeTask.
func (t *Task) UnmarshalJSON(data []byte) error {
	v, err := DecodeTask(data)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// DecodeTask decodes a Task. Required: taskId, status (one of the five),
// createdAt, lastUpdatedAt (strings) and ttl (the key must be present; a
// number or null). Unknown members are ignored.
func DecodeTask(data []byte) (Task, error) {
	f, err := openObject(data, "Task", rpc.CodeInvalidParams)
	if err != nil {
		return Task{}, err
	}
	return decodeTaskFields(f)
}

// decodeTaskFields reads the Task members of f (which may also hold _meta or
// other members of a "Result & Task").
func decodeTaskFields(f fields) (Task, error) {
	var t Task
	var err error
	if t.TaskID, err = f.taskID(); err != nil {
		return Task{}, err
	}
	st, _, err := f.str("status", true)
	if err != nil {
		return Task{}, err
	}
	if t.Status = TaskStatus(st); !t.Status.Valid() {
		return Task{}, f.errf("status", "must be one of working, input_required, completed, failed, cancelled, got %s", quote(st))
	}
	if t.StatusMessage, _, err = f.str("statusMessage", false); err != nil {
		return Task{}, err
	}
	if t.CreatedAt, _, err = f.str("createdAt", true); err != nil {
		return Task{}, err
	}
	if t.LastUpdatedAt, _, err = f.str("lastUpdatedAt", true); err != nil {
		return Task{}, err
	}
	// ttl must be present (number or null): TS clients reject a Task without
	// it, so a peer that omits it is broken and should hear so (L-21).
	if _, ok := f.get("ttl"); !ok {
		return Task{}, f.errf("ttl", "is required (milliseconds, or null for unlimited)")
	}
	if t.TTL, err = f.millis("ttl"); err != nil {
		return Task{}, err
	}
	if t.PollInterval, err = f.millis("pollInterval"); err != nil {
		return Task{}, err
	}
	return t, nil
}
