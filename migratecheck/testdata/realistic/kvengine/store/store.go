// Package store persists the engine's tasks in a key-value database. It
// stores the wire struct as it is: the rename belongs to the wire type.
package store

import (
	"encoding/json"
	"time"

	"example.com/kvengine/wire"
)

// KV is the database.
type KV interface {
	Get(key string) ([]byte, error)
	Set(key string, value []byte, ttl time.Duration) error
}

// Store keeps tasks and their results.
type Store struct{ DB KV }

// envelope is one stored task with its result.
type envelope struct {
	Task    wire.Task       `json:"task"`
	Result  json.RawMessage `json:"result,omitempty"`
	SavedAt time.Time       `json:"savedAt"`
}

// Save persists a task for its time to live.
func (s *Store) Save(t wire.Task, result json.RawMessage) error {
	b, err := json.Marshal(envelope{Task: t, Result: result, SavedAt: time.Now()})
	if err != nil {
		return err
	}
	keep := 24 * time.Hour
	if t.TTL != nil {
		keep = time.Duration(*t.TTL) * time.Millisecond
	}
	return s.DB.Set("task/"+t.TaskID, b, keep)
}

// Load reads a task.
func (s *Store) Load(id string) (wire.Task, error) {
	var e envelope
	b, err := s.DB.Get("task/" + id)
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	return e.Task, err
}

// Result reads a task's stored result.
func (s *Store) Result(id string) (json.RawMessage, error) {
	var e envelope
	b, err := s.DB.Get("task/" + id)
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	return e.Result, err
}

// Snapshot is the admin export of one stored task, as a raw document.
func (s *Store) Snapshot(t wire.Task) map[string]any {
	return map[string]any{"task": t, "savedAt": time.Now().Format(time.RFC3339)}
}
