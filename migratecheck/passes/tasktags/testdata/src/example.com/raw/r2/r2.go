// Package r2 exercises rule R2: legacy ttl/pollInterval tags in task-shaped
// structs. This package has no 2025-11-25 server path, but the fix flag is
// off in this run, so no fix is attached (see example.com/fixes/tags).
package r2

import "example.com/std/time"

// Task is a hand-written legacy Task.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
	TTL           *int64 `json:"ttl"`                    // want `^MCP006: json tag "ttl" in task-shaped struct Task is the legacy Task`
	PollInterval  *int64 `json:"pollInterval,omitempty"` // want `^MCP007: json tag "pollInterval" in task-shaped struct Task is the legacy`
	StatusMessage string `json:"statusMessage,omitempty"`
}

// dynamoTaskRecord is a storage record (apptheory style) that nothing in
// this package sends: silent (example.com/raw/r2sent sends one).
type dynamoTaskRecord struct {
	TaskID    string `theorydb:"pk" json:"taskId"`
	Status    string `theorydb:"attr:status" json:"status"`
	CreatedAt string `theorydb:"attr:createdAt" json:"createdAt"`
	TTL       int64  `theorydb:"attr:ttl,omitempty" json:"ttl,omitempty"`
}

// row is a SQL row with db tags plus json tags, never sent: silent.
type row struct {
	TaskID string `db:"task_id" json:"taskId"`
	Status string `db:"status" json:"status"`
	TTL    int64  `db:"ttl" json:"ttl"`
}

// An anonymous task-shaped struct decoded from a tasks/get response.
var decoded struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	PollInterval  int    `json:"pollInterval"` // want `^MCP007: json tag "pollInterval" in task-shaped struct anonymous struct`
}

// taskMeta is the request-side {ttl} shape used under json:"task".
type taskMeta struct {
	TTL int64 `json:"ttl"` // want `^MCP005: json tag "ttl" in taskMeta, the type of a field tagged`
}

type callParams struct {
	Tool string    `json:"tool"`
	Task *taskMeta `json:"task,omitempty"`
}

// Negatives.

// Kubernetes-style CRD spec: pollInterval without taskId.
type ProbeSpec struct {
	Target       string        `json:"target"`
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	Status       string        `json:"status,omitempty"`
}

// Cache entries with ttl but no task shape.
type cacheEntry struct {
	Key string `json:"key"`
	TTL int    `json:"ttl"`
}

// ttlOnly has only ttl but is not used under json:"task".
type ttlOnly struct {
	TTL int `json:"ttl"`
}

// Already migrated: the extension's names.
type ModernTask struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	CreatedAt      string `json:"createdAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// Dual-emit: both keys on purpose.
type dualTask struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	CreatedAt      string `json:"createdAt"`
	TTL            *int64 `json:"ttl"`
	TTLMs          *int64 `json:"ttlMs"`
	PollInterval   *int64 `json:"pollInterval,omitempty"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

var _ = []any{callParams{}, ttlOnly{}, cacheEntry{}, dualTask{}, decoded}
